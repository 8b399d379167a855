// Limits on user JSON (scenarios, pasted or inline config.json files), enforced while parsing,
// before any tree larger than the limits exists and before any code recurses over one (copying,
// dumping, reading). Every refusal is an Issue naming the field path where the limit was hit.
// docs/limits.md ("Input limits") lists these values and why; keep the two in step.
#pragma once

#include <cstddef>
#include <string_view>

#include "io/json_reader.h"
#include "vramplan/error.h"

namespace vramplan::io {

// A whole document: a scenario, or a config.json given on its own. The largest real config.json
// files are classification checkpoints whose id2label/label2id tables take a few hundred KB (the
// 21,841-class ImageNet-22k heads: about 1 MB); a scenario is that plus a few hundred bytes.
inline constexpr size_t kMaxDocumentBytes = size_t{4} << 20;  // 4 MiB
// Arrays and objects inside one another. A scenario is 3 deep (train.lora.targets), a config.json
// about 5 (text_config.quantization_config.config_groups.group_0.weights); the core copies, dumps
// and reads JSON recursively, so depth also bounds its stack use.
inline constexpr size_t kMaxNestingDepth = 64;
// One string value. Ids and names are far shorter (and each field has its own, smaller cap); the
// longest strings in real configs are paths and auto_map entries of a few hundred bytes.
inline constexpr size_t kMaxStringBytes = size_t{64} << 10;  // 64 KiB
// One object key. Real keys are identifiers or, in label2id, class names.
inline constexpr size_t kMaxKeyBytes = 1024;
// Items of one array (layer_types has one per layer, at most 4096) and keys of one object
// (id2label of a 21,841-class head).
inline constexpr size_t kMaxArrayItems = 65536;
inline constexpr size_t kMaxObjectMembers = 65536;
// Values in a whole document (every scalar, array and object counts one): a 21,841-class
// config.json holds about 44,000. Bounds the memory the parsed tree takes (about 100 bytes per
// value at worst, so at most about 25 MB), which the WebAssembly heap never gives back.
inline constexpr size_t kMaxValues = size_t{1} << 18;  // 262,144

// Parses `text` as JSON into `*out`, or returns false with one Issue in `*errors`: a limit above
// (code "too_large", "too_deep", "too_long" or "too_many"), a number beyond the range of a double
// ("out_of_range", naming its field), or a syntax error ("invalid_json", with the byte offset).
// `root_path` prefixes every field path ("" for a scenario, "model" for a config); `what` names
// the document in messages ("scenario", "config").
bool ParseUserJson(std::string_view text, std::string_view root_path, std::string_view what, Json* out, Issues* errors);

// Caps a list of errors at kMaxReportedErrors, replacing the rest by one "too_many_errors" issue,
// so that an input with thousands of bad keys still gives a short answer.
inline constexpr size_t kMaxReportedErrors = 20;
void CapIssues(Issues* issues);

}  // namespace vramplan::io
