// A minimal streaming JSON writer for the hot path (the result of every estimate): appends to one
// string, no intermediate tree. nlohmann builds and sorts a std::map tree first, which cost ~10x
// more than the estimate itself.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vramplan::io {

class JsonWriter {
 public:
  JsonWriter() { out_.reserve(8192); }
  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view key);
  JsonWriter& String(std::string_view value);
  JsonWriter& Int(int64_t value);
  JsonWriter& Number(double value);
  JsonWriter& Bool(bool value);
  JsonWriter& Raw(std::string_view json);  // an already serialized JSON value
  JsonWriter& StringList(const std::vector<std::string>& values);
  // key + value shorthands
  template <typename T>
  JsonWriter& Field(std::string_view key, const T& value);
  std::string Take() { return std::move(out_); }

 private:
  void Separator();
  void Escaped(std::string_view s);
  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

template <>
inline JsonWriter& JsonWriter::Field(std::string_view key, const int64_t& v) { return Key(key).Int(v); }
template <>
inline JsonWriter& JsonWriter::Field(std::string_view key, const int& v) { return Key(key).Int(v); }
template <>
inline JsonWriter& JsonWriter::Field(std::string_view key, const double& v) { return Key(key).Number(v); }
template <>
inline JsonWriter& JsonWriter::Field(std::string_view key, const bool& v) { return Key(key).Bool(v); }
template <>
inline JsonWriter& JsonWriter::Field(std::string_view key, const std::string& v) { return Key(key).String(v); }
template <>
inline JsonWriter& JsonWriter::Field(std::string_view key, const std::string_view& v) { return Key(key).String(v); }
template <>
inline JsonWriter& JsonWriter::Field(std::string_view key, const std::vector<std::string>& v) { return Key(key).StringList(v); }

}  // namespace vramplan::io
