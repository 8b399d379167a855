// A reader for the subset of YAML that launch configs use (LLaMA-Factory, axolotl, torchtune and
// accelerate configs): block maps and lists, flow lists and maps ([a, b], {k: v}), plain, single-
// and double-quoted scalars, literal and folded block scalars (| and >), comments, and several
// documents separated by "---". Scalars resolve as PyYAML's safe_load does (YAML 1.1: yes/no/on/off
// are booleans, ~ and empty are null). Anchors, aliases, tags and complex keys are refused.
//
// Hostile input never crashes it: the document size, nesting depth, string length, items per
// collection and total values are bounded by the same limits as JSON input (io/input_limits.h),
// checked before anything larger is built; recursion is bounded by the nesting limit. Every error
// names its line ("line 12: ...") and the key path it was reading.
#pragma once

#include <string_view>
#include <vector>

#include "io/json_reader.h"
#include "vramplan/error.h"

namespace vramplan::launch {

// Parses every document of `text` into `*documents` (an empty document is a null). False with one
// Issue (code "invalid_yaml", or a limit's code) on the first problem.
bool ParseYamlDocuments(std::string_view text, std::vector<io::Json>* documents, Issues* errors);

}  // namespace vramplan::launch
