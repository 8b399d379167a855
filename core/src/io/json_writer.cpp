#include "io/json_writer.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace vramplan::io {

void JsonWriter::Separator() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_ += ',';
    first_.back() = false;
  }
}

JsonWriter& JsonWriter::BeginObject() {
  Separator();
  out_ += '{';
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::EndObject() {
  out_ += '}';
  first_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::BeginArray() {
  Separator();
  out_ += '[';
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::EndArray() {
  out_ += ']';
  first_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::Key(std::string_view key) {
  Separator();
  Escaped(key);
  out_ += ':';
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::String(std::string_view s) {
  Separator();
  Escaped(s);
  return *this;
}

// Runs of bytes that need no escaping (printable ASCII other than '"' and '\\': nearly all of a
// result, keys and explain strings alike) are appended in one piece; appending byte by byte was a
// quarter of the full result's time.
void JsonWriter::Escaped(std::string_view s) {
  out_ += '"';
  size_t run = 0;  // start of the pending run of plain bytes
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') continue;
    out_.append(s.data() + run, i - run);
    switch (c) {
      case '"': out_ += "\\\""; break;
      case '\\': out_ += "\\\\"; break;
      case '\n': out_ += "\\n"; break;
      case '\r': out_ += "\\r"; break;
      case '\t': out_ += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out_ += buf;
        } else {
          // Copy a well-formed UTF-8 sequence; replace anything else (user text may be arbitrary bytes).
          size_t len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
          bool ok = len > 0 && i + len <= s.size();
          for (size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
          if (ok) {
            out_.append(s.data() + i, len);
            i += len - 1;
          } else {
            out_ += "\xEF\xBF\xBD";  // U+FFFD
          }
        }
    }
    run = i + 1;
  }
  out_.append(s.data() + run, s.size() - run);
  out_ += '"';
}

JsonWriter& JsonWriter::Int(int64_t v) {
  Separator();
  char buf[24];  // -9223372036854775808: 20 characters
  const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
  out_.append(buf, static_cast<size_t>(end - buf));
  return *this;
}

JsonWriter& JsonWriter::Number(double v) {
  Separator();
  if (!std::isfinite(v)) {
    out_ += "null";
  } else if (v == std::floor(v) && std::fabs(v) < 1e15) {
    out_ += std::to_string(static_cast<int64_t>(v));
    out_ += ".0";
  } else {
    // Shortest of %.15g / %.17g that round-trips.
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.15g", v);
    if (std::strtod(buf, nullptr) != v) std::snprintf(buf, sizeof buf, "%.17g", v);
    out_ += buf;
  }
  return *this;
}

JsonWriter& JsonWriter::Bool(bool v) {
  Separator();
  out_ += v ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::Raw(std::string_view json) {
  Separator();
  out_ += json;
  return *this;
}

JsonWriter& JsonWriter::StringList(const std::vector<std::string>& values) {
  BeginArray();
  for (const auto& v : values) String(v);
  return EndArray();
}

}  // namespace vramplan::io
