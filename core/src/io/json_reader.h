// Path-aware, exception-free reading of nlohmann::json objects. Every accessor checks the type
// before reading (the core is built with JSON_NOEXCEPTION, where a wrong get<>() would abort),
// records which keys were consumed, and reports problems as Issues naming the JSON path and what
// is allowed. Unknown keys are an error with a "did you mean" suggestion.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "vramplan/error.h"

namespace vramplan::io {

using Json = nlohmann::json;

// Serializes without ever throwing on invalid UTF-8 in user strings.
std::string Dump(const Json& j, int indent = -1);

// Joins a parent path and a key: ("train", "lora") -> "train.lora"; ("", "mode") -> "mode".
std::string JoinPath(std::string_view parent, std::string_view key);

// Closest candidate by edit distance, or "" when nothing is close.
std::string Suggest(std::string_view key, const std::vector<std::string>& candidates);

// A short, printable rendering of a user value for messages: strings quoted and escaped
// (io/message_text.h), anything longer than about 40 characters cut with "...".
std::string Preview(const Json& v);

// The type of a JSON value in words ("a string", "an integer", ...), for messages.
std::string Describe(const Json& j);

template <typename E>
struct EnumName {
  const char* name;
  E value;
};

class ObjectReader {
 public:
  // `obj` must outlive the reader. If it is not an object an error is recorded and every read is a no-op.
  ObjectReader(const Json& obj, std::string path, Issues* errors);

  bool valid() const { return obj_ != nullptr; }
  bool Has(std::string_view key) const;
  const Json* Raw(std::string_view key);  // marks the key as allowed; nullptr if absent

  // Each reader leaves *out unchanged when the key is absent (the struct default applies).
  void Int(std::string_view key, int64_t* out, int64_t min, int64_t max);
  void Int(std::string_view key, int* out, int min, int max);
  void Number(std::string_view key, double* out, double min, double max);
  void Bool(std::string_view key, bool* out);
  void String(std::string_view key, std::string* out, size_t max_len = 200);
  void StringList(std::string_view key, std::vector<std::string>* out, size_t max_items = 64);
  // Optional fields (the default depends on other fields): set only when present and valid.
  void Int(std::string_view key, std::optional<int64_t>* out, int64_t min, int64_t max);
  void Bool(std::string_view key, std::optional<bool>* out);

  template <typename E, size_t N>
  void Enum(std::string_view key, E* out, const EnumName<E> (&table)[N]) {
    const Json* v = Raw(key);
    if (v == nullptr) return;
    EnumFrom(*v, JoinPath(path_, key), out, table);
  }

  template <typename E, size_t N>
  void Enum(std::string_view key, std::optional<E>* out, const EnumName<E> (&table)[N]) {
    const Json* v = Raw(key);
    E value{};
    if (v != nullptr && EnumFrom(*v, JoinPath(path_, key), &value, table)) *out = value;
  }

  template <typename E, size_t N>
  bool EnumFrom(const Json& v, const std::string& path, E* out, const EnumName<E> (&table)[N]) {
    std::vector<std::string> names;
    for (const auto& entry : table) names.emplace_back(entry.name);
    if (v.is_string()) {
      const std::string& s = v.get_ref<const std::string&>();
      for (const auto& entry : table) {
        if (s == entry.name) {
          *out = entry.value;
          return true;
        }
      }
    }
    AddEnumError(path, v, names);
    return false;
  }

  // One of `names` (a table-driven enum): true and *index set when present and valid; an error
  // (as Enum's) when present and not one of them.
  bool Choice(std::string_view key, const std::vector<std::string_view>& names, size_t* index);

  // Records an error for every key that no accessor asked for (call after all reads).
  void RejectUnknownKeys();
  const std::string& path() const { return path_; }
  Issues* errors() { return errors_; }

 private:
  void AddEnumError(const std::string& path, const Json& v, const std::vector<std::string>& names);
  const Json* obj_ = nullptr;
  std::string path_;
  Issues* errors_;
  std::vector<std::string> asked_;  // every key an accessor looked up: the allowed set
};

void AddError(Issues* errors, std::string code, std::string path, std::string message);

// The most characters of one name in a list of names (ReadStringList).
inline constexpr size_t kMaxListItemChars = 100;

// A list of module names (non-empty strings of at most kMaxListItemChars characters) at `path`; on a problem an
// error is recorded and *out is left unchanged.
void ReadStringList(const Json& v, const std::string& path, std::vector<std::string>* out, size_t max_items, Issues* errors);

// Name of an enum value from a table (for serializing the normalized scenario).
template <typename E, size_t N>
const char* NameOf(E value, const EnumName<E> (&table)[N]) {
  for (const auto& entry : table) {
    if (entry.value == value) return entry.name;
  }
  return "?";
}

// The enum value a table names `name`, if it names one (a name from another source than the
// scenario, where an unknown one is not the user's error: the checkpoint's format, say).
template <typename E, size_t N>
std::optional<E> ValueOf(std::string_view name, const EnumName<E> (&table)[N]) {
  for (const auto& entry : table) {
    if (name == entry.name) return entry.value;
  }
  return std::nullopt;
}

}  // namespace vramplan::io
