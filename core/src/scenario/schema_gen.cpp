// The JSON Schema and the docs/schema.md field reference, generated from the field table.
#include <cmath>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "io/json_reader.h"
#include "scenario/fields.h"

namespace vramplan::fields {
namespace {

using OJson = nlohmann::ordered_json;  // keeps the keys in the order written

OJson ParseDefault(std::string_view text) { return OJson::parse(text.begin(), text.end(), nullptr, false); }

OJson NameItems() {
  return OJson{{"type", "string"}, {"minLength", 1}, {"maxLength", io::kMaxListItemChars}};
}

OJson Node(const Field& f);

// The "properties" (and "required") of an object node, from the fields under `parent`.
void AddProperties(OJson* node, std::string_view parent) {
  OJson properties = OJson::object();
  OJson required = OJson::array();
  for (const Field* c : EchoChildren(parent)) {
    properties[std::string(c->key())] = Node(*c);
    if (c->required) required.push_back(std::string(c->key()));
  }
  (*node)["additionalProperties"] = false;
  if (!required.empty()) (*node)["required"] = required;
  (*node)["properties"] = properties;
}

OJson Node(const Field& f) {
  OJson n = OJson::object();
  switch (f.type) {
    case Type::kObject:
      n["type"] = "object";
      AddProperties(&n, f.path);
      break;
    case Type::kInt:
      n["type"] = "integer";
      n["minimum"] = f.min;
      n["maximum"] = f.max;
      if (f.gap_min <= f.gap_max) n["not"] = OJson{{"minimum", f.gap_min}, {"maximum", f.gap_max}};
      break;
    case Type::kNumber:
      n["type"] = "number";
      n["minimum"] = f.min_number;
      n["maximum"] = f.max_number;
      break;
    case Type::kBool: n["type"] = "boolean"; break;
    case Type::kString:
      n["type"] = "string";
      n["maxLength"] = f.max;
      break;
    case Type::kEnum:
      n["type"] = "string";
      n["enum"] = OJson::array();
      for (auto v : f.values) n["enum"].push_back(std::string(v));
      break;
    case Type::kIntChoice:
      n["type"] = "integer";
      n["enum"] = f.int_values;
      break;
    case Type::kStringList: {
      n["type"] = "array";
      if (f.item_values.empty()) {
        n["items"] = NameItems();
      } else {
        OJson items = OJson::array();
        for (auto v : f.item_values) items.push_back(std::string(v));
        n["items"] = OJson{{"enum", items}};
      }
      n["maxItems"] = f.max;
      break;
    }
    case Type::kBoolOrEnum: {
      OJson one = OJson::array({OJson{{"type", "boolean"}}});
      for (auto v : f.values) {
        if (v != "true" && v != "false") one.push_back(OJson{{"const", std::string(v)}});
      }
      n["oneOf"] = one;
      break;
    }
    case Type::kListOrConst:
      n["oneOf"] = OJson::array({OJson{{"const", std::string(f.values[0])}},
                                 OJson{{"type", "array"}, {"items", NameItems()}, {"minItems", 1}, {"maxItems", f.max}}});
      break;
    case Type::kModel:
      n["oneOf"] = OJson::array({OJson{{"type", "string"}, {"description", "preset id (vramplan models)"}},
                                 OJson{{"type", "object"}, {"description", "a Hugging Face config.json, as on the Hub"}}});
      break;
    case Type::kGpu: {
      OJson custom{{"type", "object"}};
      AddProperties(&custom, f.path);
      n["oneOf"] = OJson::array({OJson{{"type", "string"}, {"description", "catalogue id (vramplan gpus)"}}, custom});
      break;
    }
  }
  if (!f.default_json.empty()) n["default"] = ParseDefault(f.default_json);
  n["description"] = std::string(f.doc);
  return n;
}

// ------------------------------------------------------------------ markdown

// 16777216 -> "16,777,216"; 0.05 -> "0.05"; 1e6 -> "1,000,000".
std::string Num(double v) {
  if (std::floor(v) == v && std::fabs(v) < 1e18) {
    const long long i = static_cast<long long>(v);
    std::string digits = std::to_string(i < 0 ? -i : i);
    std::string out;
    for (size_t k = 0; k < digits.size(); ++k) {
      if (k > 0 && (digits.size() - k) % 3 == 0) out += ',';
      out += digits[k];
    }
    return i < 0 ? "-" + out : out;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string Range(double min, double max) { return min == max ? Num(min) : Num(min) + ".." + Num(max); }

std::string Code(std::string_view s) { return "`" + std::string(s) + "`"; }

std::string CodeList(const std::vector<std::string_view>& values) {
  std::string out;
  for (auto v : values) out += (out.empty() ? "" : ", ") + Code(v);
  return out;
}

std::string TypeWord(const Field& f) {
  switch (f.type) {
    case Type::kObject: return "object";
    case Type::kInt: return "integer";
    case Type::kNumber: return "number";
    case Type::kBool: return "bool";
    case Type::kString: return "string";
    case Type::kEnum: return "string";
    case Type::kIntChoice: return "integer";
    case Type::kStringList: return "list of strings";
    case Type::kBoolOrEnum: return "bool or string";
    case Type::kListOrConst: return "list or string";
    case Type::kModel: return "string or object";
    case Type::kGpu: return "string or object";
  }
  return "";
}

std::string Allowed(const Field& f) {
  switch (f.type) {
    case Type::kObject: return "see below";
    case Type::kInt:
      if (f.gap_min <= f.gap_max) return Range(f.min, f.gap_min - 1) + " or " + Range(f.gap_max + 1, f.max);
      return Range(f.min, f.max);
    case Type::kNumber: return Range(f.min_number, f.max_number);
    case Type::kBool: return "`true`, `false`";
    case Type::kString: return "at most " + Num(f.max) + " characters";
    case Type::kEnum: return CodeList(f.values);
    case Type::kIntChoice: {
      std::string out;
      for (auto v : f.int_values) out += (out.empty() ? "" : ", ") + Code(std::to_string(v));
      return out;
    }
    case Type::kStringList:
      return (f.item_values.empty() ? "names" : CodeList(f.item_values)) + "; at most " + Num(f.max) + " entries";
    case Type::kBoolOrEnum: {
      std::string out = "`false`, `true`";
      for (auto v : f.values) {
        if (v != "true" && v != "false") out += ", " + Code("\"" + std::string(v) + "\"");
      }
      return out;
    }
    case Type::kListOrConst:
      return Code("\"" + std::string(f.values[0]) + "\"") + " or a list of 1.." + Num(f.max) + " module names";
    case Type::kModel: return "preset id or `config.json` object";
    case Type::kGpu: return "catalogue id or `{\"name\", \"memory_bytes\"}` (below)";
  }
  return "";
}

std::string Cell(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

void Row(std::string* out, const Field& f, std::string_view section) {
  std::string_view name = f.path;
  if (!section.empty()) name.remove_prefix(section.size() + 1);
  std::string def = f.required ? "required" : f.default_json.empty() ? (f.type == Type::kObject ? "" : "see meaning")
                                                                      : Code(f.default_json);
  *out += "| " + Code(name) + " | " + TypeWord(f) + " | " + Cell(def) + " | " + Cell(Allowed(f)) + " | " + Cell(f.doc) + " |\n";
}

void Rows(std::string* out, std::string_view parent, std::string_view section) {
  for (const Field* f : EchoChildren(parent)) {
    Row(out, *f, section);
    if (f->type == Type::kObject) Rows(out, f->path, section);
  }
}

constexpr std::string_view kHeader = "| field | type | default | allowed | meaning |\n|---|---|---|---|---|\n";

}  // namespace

std::string GenerateSchemaJson() {
  OJson root;
  root["$schema"] = "https://json-schema.org/draft/2020-12/schema";
  root["$id"] = "https://vramplan/scenario.schema.json";
  root["title"] = "vramplan scenario v1";
  root["type"] = "object";
  AddProperties(&root, "");
  return root.dump(1, ' ', false, OJson::error_handler_t::replace) + "\n";
}

std::string GenerateReferenceMarkdown() {
  std::string out;
  out += "\n### Top level\n\n";
  out += kHeader;
  for (const Field* f : EchoChildren("")) Row(&out, *f, "");
  for (const Field* f : EchoChildren("")) {
    if (EchoChildren(f->path).empty()) continue;
    out += "\n### `" + std::string(f->path) + "`" + (f->type == Type::kGpu ? " (a custom GPU)" : "") + "\n\n";
    out += kHeader;
    Rows(&out, f->path, f->path);
  }
  out += "\n";
  return out;
}

}  // namespace vramplan::fields
