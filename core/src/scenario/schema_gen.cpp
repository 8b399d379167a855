// The JSON Schema and the docs/schema.md field reference, generated from the field table.
#include <cmath>
#include <cstdio>
#include <string>

#include "io/json_reader.h"
#include "io/json_writer.h"
#include "scenario/fields.h"

namespace vramplan::fields {
namespace {

// Written with the streaming writer (a second nlohmann instantiation, ordered_json, would add
// ~90 KB to the WASM module), then indented.
using io::JsonWriter;

void NameItems(JsonWriter& w) {
  w.BeginObject().Key("type").String("string").Key("minLength").Int(1).Key("maxLength").Int(io::kMaxListItemChars).EndObject();
}

void Strings(JsonWriter& w, const std::vector<std::string_view>& values) {
  w.BeginArray();
  for (auto v : values) w.String(v);
  w.EndArray();
}

void Node(JsonWriter& w, const Field& f);

// The "additionalProperties", "required" and "properties" of an object node, from the fields
// under `object` (nullptr: the document).
void Properties(JsonWriter& w, const Field* object) {
  w.Key("additionalProperties").Bool(false);
  std::vector<std::string_view> required;
  for (const Field* c : EchoChildren(object)) {
    if (c->required) required.push_back(c->key());
  }
  if (!required.empty()) Strings(w.Key("required"), required);
  w.Key("properties").BeginObject();
  for (const Field* c : EchoChildren(object)) {
    w.Key(c->key());
    Node(w, *c);
  }
  w.EndObject();
}

void Node(JsonWriter& w, const Field& f) {
  w.BeginObject();
  switch (f.type) {
    case Type::kObject:
      w.Key("type").String("object");
      Properties(w, &f);
      break;
    case Type::kInt:
      w.Key("type").String("integer").Key("minimum").Int(f.min).Key("maximum").Int(f.max);
      if (f.gap_min <= f.gap_max) w.Key("not").BeginObject().Key("minimum").Int(f.gap_min).Key("maximum").Int(f.gap_max).EndObject();
      break;
    case Type::kNumber:
      w.Key("type").String("number").Key("minimum").Number(f.min_number).Key("maximum").Number(f.max_number);
      break;
    case Type::kBool: w.Key("type").String("boolean"); break;
    case Type::kString: w.Key("type").String("string").Key("maxLength").Int(f.max); break;
    case Type::kEnum:
      w.Key("type").String("string");
      Strings(w.Key("enum"), f.values);
      break;
    case Type::kIntChoice:
      w.Key("type").String("integer").Key("enum").BeginArray();
      for (auto v : f.int_values) w.Int(v);
      w.EndArray();
      break;
    case Type::kIntList:
      w.Key("type").String("array").Key("items").BeginObject().Key("type").String("integer").Key("minimum").Int(f.min);
      w.Key("maximum").Int(f.max_item).EndObject().Key("maxItems").Int(f.max);
      break;
    case Type::kStringList:
      w.Key("type").String("array").Key("items");
      if (f.item_values.empty()) {
        NameItems(w);
      } else {
        Strings(w.BeginObject().Key("enum"), f.item_values);
        w.EndObject();
      }
      w.Key("maxItems").Int(f.max);
      break;
    case Type::kBoolOrEnum:
      w.Key("oneOf").BeginArray().BeginObject().Key("type").String("boolean").EndObject();
      for (auto v : f.values) {
        if (v != "true" && v != "false") w.BeginObject().Key("const").String(v).EndObject();
      }
      w.EndArray();
      break;
    case Type::kListOrConst:
      w.Key("oneOf").BeginArray().BeginObject().Key("const").String(f.values[0]).EndObject();
      w.BeginObject().Key("type").String("array").Key("items");
      NameItems(w);
      w.Key("minItems").Int(1).Key("maxItems").Int(f.max).EndObject().EndArray();
      break;
    case Type::kModel:
      w.Key("oneOf").BeginArray();
      w.BeginObject().Key("type").String("string").Key("description").String("preset id (vramplan models)").EndObject();
      w.BeginObject().Key("type").String("object").Key("description").String("a Hugging Face config.json, as on the Hub").EndObject();
      w.EndArray();
      break;
    case Type::kGpu:
      w.Key("oneOf").BeginArray();
      w.BeginObject().Key("type").String("string").Key("description").String("catalogue id (vramplan gpus)").EndObject();
      w.BeginObject().Key("type").String("object");
      Properties(w, &f);
      w.EndObject().EndArray();
      break;
  }
  if (!f.default_json.empty()) w.Key("default").Raw(f.default_json);
  if (!f.doc.empty()) w.Key("description").String(f.doc);  // empty only in the page module (fields.cpp, DOC)
  w.EndObject();
}

// Compact JSON -> one key or value per line, one space of indent per level, "key": value.
std::string Indent(std::string_view compact) {
  std::string out;
  int depth = 0;
  bool in_string = false;
  auto newline = [&] {
    out += '\n';
    out.append(static_cast<size_t>(depth), ' ');
  };
  for (size_t i = 0; i < compact.size(); ++i) {
    const char c = compact[i];
    if (in_string) {
      out += c;
      if (c == '\\') out += compact[++i];
      else if (c == '"') in_string = false;
      continue;
    }
    switch (c) {
      case '"': in_string = true; out += c; break;
      case '{':
      case '[':
        out += c;
        if (i + 1 < compact.size() && (compact[i + 1] == '}' || compact[i + 1] == ']')) {
          out += compact[++i];  // an empty container stays on its line
        } else {
          ++depth;
          newline();
        }
        break;
      case '}':
      case ']':
        --depth;
        newline();
        out += c;
        break;
      case ',': out += c; newline(); break;
      case ':': out += ": "; break;
      default: out += c;
    }
  }
  return out;
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
    case Type::kIntList: return "list of integers";
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
    case Type::kIntList: return "at most " + Num(f.max) + " integers, each " + Range(f.min, f.max_item) + " (empty: the default)";
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
  JsonWriter w;
  w.BeginObject();
  w.Key("$schema").String("https://json-schema.org/draft/2020-12/schema");
  w.Key("$id").String("https://vramplan/scenario.schema.json");
  w.Key("title").String("vramplan scenario v1");
  w.Key("type").String("object");
  Properties(w, nullptr);
  w.EndObject();
  return Indent(w.Take()) + "\n";
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
