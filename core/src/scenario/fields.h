// The scenario field table: every field of the scenario JSON (schema v1) with its path, JSON type,
// range, default, allowed values and a one-line doc with units, in one place. Generated from it:
//   - the reader's per-field checks (io/scenario_json.cpp: types, ranges, enum values, unknown keys
//     with "did you mean"); cross-field validation stays code there;
//   - the normalized scenario echoed in every result (io/result_json.cpp);
//   - the JSON Schema (SchemaJson(); checked in as docs/scenario.schema.json) and the field
//     reference in docs/schema.md (scenario/schema_gen.cpp; scripts/regen-schema rewrites both,
//     tests/core/fields_test.cpp fails when the checked-in copies differ).
// A new scenario field is one row in fields.cpp plus its struct member in vramplan/scenario.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "vramplan/scenario.h"

namespace vramplan::fields {

enum class Type {
  kObject,       // a nested object: its fields follow in the table
  kInt,          // an integer in [min, max], except [gap_min, gap_max] when that is not empty
  kNumber,       // a number in [min_number, max_number]
  kBool,         // true or false
  kString,       // a string of at most `max` characters
  kEnum,         // one of the strings in `values`
  kIntChoice,    // one of the integers in `int_values`
  kStringList,   // a list of at most `max` non-empty names (at most 100 characters each)
  kIntList,      // a list of at most `max` integers, each in [min, max_item]
  kBoolOrEnum,   // true, false, or one of the strings in `values` other than "true"/"false"
  kListOrConst,  // a kStringList of at least one name, or the string values[0] (LoRA targets)
  kModel,        // union: a preset id, or a Hugging Face config.json object
  kGpu,          // union: a catalogue id, or an object of the fields that follow
};

// Where a field's value lives in a Scenario, type-erased: the reader writes through it, the echo
// reads through it. Enums go through their underlying value (set_enum / get_enum know the type).
struct Slot {
  enum class Kind { kNone, kInt64, kInt, kDouble, kBool, kString, kStringList, kIntList, kEnum, kOptInt64, kOptBool, kOptEnum };
  Kind kind = Kind::kNone;
  void* p = nullptr;
  int (*get_enum)(const void*) = nullptr;  // the enum's value; -1 for an unset optional
  void (*set_enum)(void*, int) = nullptr;

  Slot() = default;
  Slot(int64_t& v) : kind(Kind::kInt64), p(&v) {}
  Slot(int& v) : kind(Kind::kInt), p(&v) {}
  Slot(double& v) : kind(Kind::kDouble), p(&v) {}
  Slot(bool& v) : kind(Kind::kBool), p(&v) {}
  Slot(std::string& v) : kind(Kind::kString), p(&v) {}
  Slot(std::vector<std::string>& v) : kind(Kind::kStringList), p(&v) {}
  Slot(std::vector<int64_t>& v) : kind(Kind::kIntList), p(&v) {}
  Slot(std::optional<int64_t>& v) : kind(Kind::kOptInt64), p(&v) {}
  Slot(std::optional<bool>& v) : kind(Kind::kOptBool), p(&v) {}
  template <typename E, std::enable_if_t<std::is_enum_v<E>, int> = 0>
  Slot(E& v) : kind(Kind::kEnum), p(&v) {
    get_enum = [](const void* q) { return static_cast<int>(*static_cast<const E*>(q)); };
    set_enum = [](void* q, int code) { *static_cast<E*>(q) = static_cast<E>(code); };
  }
  template <typename E, std::enable_if_t<std::is_enum_v<E>, int> = 0>
  Slot(std::optional<E>& v) : kind(Kind::kOptEnum), p(&v) {
    get_enum = [](const void* q) {
      const auto& o = *static_cast<const std::optional<E>*>(q);
      return o ? static_cast<int>(*o) : -1;
    };
    set_enum = [](void* q, int code) { *static_cast<std::optional<E>*>(q) = static_cast<E>(code); };
  }
};

struct Field {
  std::string_view path;          // dotted JSON path: "train.lora.rank"
  Type type = Type::kObject;
  std::string_view doc;           // one line, with units
  // The default as JSON text; "" when there is none: a required field, an object, or a default
  // that depends on other fields (the doc says which).
  std::string_view default_json;
  int64_t min = 0, max = 0;       // kInt: the range; kString / kStringList / kListOrConst: `max` characters / items
  int64_t max_item = 0;           // kIntList: the largest item (items are at least `min`)
  int64_t gap_min = 0, gap_max = -1;  // kInt: refused inside the range too (empty when gap_max < gap_min)
  double min_number = 0, max_number = 0;  // kNumber
  std::vector<std::string_view> values;   // kEnum, kBoolOrEnum, kListOrConst: the allowed strings
  std::vector<int> enum_codes;            // kEnum, kBoolOrEnum: the C++ enum value of each of `values`
  std::vector<int64_t> int_values;        // kIntChoice
  std::vector<std::string_view> item_values;  // kStringList: the allowed names when the set is fixed
  // The rest of the error sentence "<path> must be ..." for the types with their own wording
  // (kIntChoice, kBoolOrEnum, kListOrConst, kInt with a gap), and the message of a missing
  // required field.
  std::string_view message;
  bool required = false;
  bool echo_last = false;  // written after its siblings in the normalized echo (v1's byte layout)
  Slot (*slot)(Scenario&) = nullptr;  // the struct member; nullptr for objects and unions
  // kInt whose unset value (0 in the struct) stands for a default computed from other fields: the
  // value the estimate uses, which the normalized echo writes instead of the stored one.
  int64_t (*resolved)(const Scenario&) = nullptr;
  std::string_view key_, parent_;     // split from `path` once, when the table is built

  std::string_view key() const { return key_; }        // the last path component: "rank"
  std::string_view parent() const { return parent_; }  // the enclosing object's path: "train.lora" ("" at the top)
  // The name of an enum value (kEnum, kBoolOrEnum), nullptr when the code is not in the table.
  const char* NameOf(int code) const;
};

// Every field, each object before its fields, siblings in the order the reader reads them (the
// order of the "allowed:" list in an unknown-key error).
const std::vector<Field>& Fields();
const Field* Find(std::string_view path);
// The fields of the object at `parent` ("" = the document): in read order, and in the order of the
// normalized echo (echo_last fields after the others), which is also the schema's and the doc's.
const std::vector<const Field*>& Children(std::string_view parent);
const std::vector<const Field*>& EchoChildren(std::string_view parent);
// The same for an object's row (nullptr = the document), without a lookup by path.
const std::vector<const Field*>& Children(const Field* object);
const std::vector<const Field*>& EchoChildren(const Field* object);

// The JSON Schema of the scenario document (draft 2020-12), one space indent, ending in a newline:
// exactly docs/scenario.schema.json.
std::string GenerateSchemaJson();
// The field reference tables of docs/schema.md (the text between the markers below).
std::string GenerateReferenceMarkdown();
inline constexpr std::string_view kDocBeginMarker =
    "<!-- BEGIN generated field reference: edit core/src/scenario/fields.cpp, then run scripts/regen-schema -->";
inline constexpr std::string_view kDocEndMarker = "<!-- END generated field reference -->";

}  // namespace vramplan::fields
