#include "io/json_writer.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace vramplan::io {

void JsonWriter::Separator() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) Put(',');
    first_.back() = false;
  }
}

JsonWriter& JsonWriter::BeginObject() {
  Separator();
  Put('{');
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::EndObject() {
  Put('}');
  first_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::BeginArray() {
  Separator();
  Put('[');
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::EndArray() {
  Put(']');
  first_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::Key(std::string_view key) {
  Separator();
  Escaped(key);
  Put(':');
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::String(std::string_view s) {
  Separator();
  Escaped(s);
  return *this;
}

namespace {

// Whether byte `c` is copied as is; whether none of the 8 bytes at `p` needs escaping: no byte below 0x20 or from 0x80 on, no '"'
// and no '\\'. Word-at-a-time tests, exact as yes/no answers ("Bit Twiddling Hacks", S. E.
// Anderson: haszero and hasless).
bool PlainByte(unsigned char c) { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\'; }

bool Plain8(const char* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  constexpr uint64_t k01 = 0x0101010101010101ull, k80 = 0x8080808080808080ull;
  auto has_zero = [](uint64_t v) { return (v - k01) & ~v & k80; };
  const uint64_t below_20 = (w - k01 * 0x20) & ~w & k80;  // hasless(w, 0x20)
  return ((w & k80) | below_20 | has_zero(w ^ (k01 * '"')) | has_zero(w ^ (k01 * '\\'))) == 0;
}

}  // namespace

// Runs of bytes that need no escaping (printable ASCII other than '"' and '\\': nearly all of a
// result, keys and explain strings alike) are found 8 bytes at a time and appended in one piece;
// appending byte by byte was a quarter of the full result's time.
void JsonWriter::Escaped(std::string_view s) {
  // Keys, labels and most explain strings need no escaping at all: one capacity check and one copy.
  size_t plain = 0;
  while (plain + 8 <= s.size() && Plain8(s.data() + plain)) plain += 8;
  while (plain < s.size() && PlainByte(static_cast<unsigned char>(s[plain]))) ++plain;
  if (plain == s.size()) {
    if (out_.size() - size_ < s.size() + 2) Grow(s.size() + 2);
    out_[size_] = '"';
    std::memcpy(&out_[size_ + 1], s.data(), s.size());
    out_[size_ + 1 + s.size()] = '"';
    size_ += s.size() + 2;
    return;
  }
  Put('"');
  size_t run = 0;  // start of the pending run of plain bytes
  for (size_t i = plain; i < s.size(); ++i) {
    if (i + 8 <= s.size() && Plain8(s.data() + i)) {
      i += 7;
      continue;
    }
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (PlainByte(c)) continue;
    Put(s.data() + run, i - run);
    switch (c) {
      case '"': Put("\\\""); break;
      case '\\': Put("\\\\"); break;
      case '\n': Put("\\n"); break;
      case '\r': Put("\\r"); break;
      case '\t': Put("\\t"); break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          Put(buf);
        } else {
          // Copy a well-formed UTF-8 sequence; replace anything else (user text may be arbitrary bytes).
          size_t len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
          bool ok = len > 0 && i + len <= s.size();
          for (size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
          if (ok) {
            Put(s.data() + i, len);
            i += len - 1;
          } else {
            Put("\xEF\xBF\xBD");  // U+FFFD
          }
        }
    }
    run = i + 1;
  }
  Put(s.data() + run, s.size() - run);
  Put('"');
}

JsonWriter& JsonWriter::Int(int64_t v) {
  Separator();
  char buf[24];  // -9223372036854775808: 20 characters
  const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
  Put(buf, static_cast<size_t>(end - buf));
  return *this;
}

JsonWriter& JsonWriter::Number(double v) {
  Separator();
  if (!std::isfinite(v)) {
    Put("null");
  } else if (v == std::floor(v) && std::fabs(v) < 1e15) {
    Put(std::to_string(static_cast<int64_t>(v)));
    Put(".0");
  } else {
    // Shortest of %.15g / %.17g that round-trips.
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.15g", v);
    if (std::strtod(buf, nullptr) != v) std::snprintf(buf, sizeof buf, "%.17g", v);
    Put(buf);
  }
  return *this;
}

JsonWriter& JsonWriter::Bool(bool v) {
  Separator();
  Put(v ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::Raw(std::string_view json) {
  Separator();
  Put(json);
  return *this;
}

JsonWriter& JsonWriter::StringList(const std::vector<std::string>& values) {
  BeginArray();
  for (const auto& v : values) String(v);
  return EndArray();
}

}  // namespace vramplan::io
