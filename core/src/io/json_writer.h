// A minimal streaming JSON writer for the hot path (the result of every estimate): appends to one
// string, no intermediate tree. nlohmann builds and sorts a std::map tree first, which cost ~10x
// more than the estimate itself.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace vramplan::io {

class JsonWriter {
 public:
  JsonWriter() { out_.resize(8192); }
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
  std::string Take() {
    out_.resize(size_);
    size_ = 0;
    return std::move(out_);
  }

 private:
  void Separator();
  void Escaped(std::string_view s);
  // Appends go to out_[0, size_) in a buffer that doubles when full: one inline capacity check and
  // a memcpy, instead of std::string's out-of-line append for each of the thousands of pieces of a
  // result (half the time of the full result went there).
  void Put(char c) {
    if (size_ == out_.size()) Grow(1);
    out_[size_++] = c;
  }
  void Put(const char* p, size_t n) {
    if (out_.size() - size_ < n) Grow(n);
    std::memcpy(&out_[size_], p, n);
    size_ += n;
  }
  void Put(std::string_view s) { Put(s.data(), s.size()); }
  void Grow(size_t n) { out_.resize(std::max(2 * out_.size(), size_ + n)); }
  std::string out_;  // the text is out_[0, size_); the rest is room
  size_t size_ = 0;
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
