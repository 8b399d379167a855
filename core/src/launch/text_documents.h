// Reading and writing the documents of a launch config: one or more JSON values in one text
// (an HF TrainingArguments object followed by a PEFT LoraConfig object), a YAML writer for the
// exports (maps, flow lists of scalars, quoted strings where YAML would read them otherwise), and
// the "# vramplan: {...}" comment that carries what a format cannot express.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/json_reader.h"
#include "vramplan/error.h"

namespace vramplan::launch {

// The exports are built as io::Json, whose objects keep their keys sorted: a second instantiation
// of nlohmann's templates for insertion order (nlohmann::ordered_json) costs the page's module tens
// of KB, and every format here reads its keys in any order (accelerate's own writer sorts them too).
using OrderedJson = io::Json;

// Every top-level JSON value of `text` (whitespace between them), each parsed under the input
// limits (io/input_limits.h). False with the errors otherwise.
bool ParseJsonDocuments(std::string_view text, std::vector<io::Json>* documents, Issues* errors);

// `doc` (an object) as block YAML, keys in sorted order.
std::string ToYaml(const OrderedJson& doc);

// The comment line that carries scenario fields a format cannot express, and its reader.
inline constexpr std::string_view kExtrasPrefix = "# vramplan: ";
std::string ExtrasComment(const io::Json& extras);
// The extras of the first "# vramplan: {...}" line of `text` (null when none); errors name the line.
io::Json FindExtrasComment(std::string_view text, Issues* errors);

}  // namespace vramplan::launch
