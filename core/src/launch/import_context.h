// What an importer builds: the scenario (as JSON, in the scenario's own paths) and the notes that
// say, key by key, what was read, what has no memory effect and what could not be read. Typed
// readers take a source value (a YAML/JSON value or a command-line word) and either return it or
// record an error naming the source key ("per_device_train_batch_size: expected an integer ...").
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/json_reader.h"
#include "vramplan/error.h"

namespace vramplan::launch {

// One key of the source config. status: "read" (mapped onto `path`), "default" (absent: the
// framework's default applied to `path`), "ignored" (no memory effect), "unsupported" (has or may
// have a memory effect the estimate cannot represent, or an unknown key), "model" (the model must
// be chosen), "extra" (read from the vramplan comment), "not_expressed" (export: a scenario field
// the format has no key for; kept in the vramplan comment).
struct Note {
  std::string status;
  std::string key;
  std::string message;
};

class ImportContext {
 public:
  io::Json scenario = io::Json::object();
  std::vector<Note> notes;
  Issues errors;

  // Sets a scenario field by its dotted path ("train.lora.rank").
  void Set(std::string_view path, io::Json value);
  bool IsSet(std::string_view path) const;
  const io::Json* Get(std::string_view path) const;

  void AddNote(std::string status, std::string key, std::string message);
  // Sets `path` and notes that `key` was read into it.
  void Read(std::string_view key, std::string_view path, io::Json value);
  // Sets `path` unless set already, noting the framework default the absent key implies.
  void Default(std::string_view path, io::Json value, std::string_view why);
  void Ignored(std::string_view key, std::string_view why = "no memory effect");
  void Unsupported(std::string_view key, std::string_view why);
  void Error(std::string_view key, std::string message, const char* code = "bad_value");

  // Typed readers: a JSON value, or a string spelling one (command-line words, quoted YAML).
  std::optional<int64_t> Int(const io::Json& v, std::string_view key, int64_t min, int64_t max);
  std::optional<double> Number(const io::Json& v, std::string_view key, double min, double max);
  std::optional<bool> Bool(const io::Json& v, std::string_view key);
  std::optional<std::string> String(const io::Json& v, std::string_view key);
  // A list of strings, or one string split at commas ("q_proj,v_proj").
  std::optional<std::vector<std::string>> StringList(const io::Json& v, std::string_view key);

  // Moves the "vramplan" member of an exported JSON document into `extras` (applied after the
  // format's keys, by the caller).
  void TakeExtras(io::Json* document);
  io::Json extras;
  // Merges extras (the scenario fields the format cannot express) over the scenario.
  void ApplyExtras(const io::Json& carried);

  static constexpr size_t kMaxNotes = 400;
};

// "auto" (or null) in a config: the value comes from elsewhere (HF fills DeepSpeed's "auto").
bool IsAuto(const io::Json& v);

// Whether `key` is one of `names` (the importers' key tables).
inline bool OneOf(std::string_view key, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), key) != names.end();
}

}  // namespace vramplan::launch
