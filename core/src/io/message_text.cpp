#include "io/message_text.h"

#include <cstdint>
#include <cstdio>

namespace vramplan::io {
namespace {

// Length of the UTF-8 sequence starting at s[i] and its code point, or 0 if the bytes there are
// not well-formed UTF-8 (RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF).
size_t DecodeUtf8(std::string_view s, size_t i, uint32_t* cp) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  size_t len = 0;
  uint32_t min = 0;
  if (b0 < 0x80) {
    *cp = b0;
    return 1;
  } else if ((b0 & 0xE0) == 0xC0) {
    len = 2, min = 0x80, *cp = b0 & 0x1Fu;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, min = 0x800, *cp = b0 & 0x0Fu;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, min = 0x10000, *cp = b0 & 0x07u;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    *cp = (*cp << 6) | (byte(i + k) & 0x3Fu);
  }
  if (*cp < min || *cp > 0x10FFFF || (*cp >= 0xD800 && *cp <= 0xDFFF)) return 0;
  return len;
}

// Code points that change how a terminal or a text view lays out what follows.
bool IsLayoutControl(uint32_t cp) {
  return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) ||  // C0, DEL, C1
         cp == 0x2028 || cp == 0x2029 ||                            // line / paragraph separator
         (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) ||  // bidi embeddings, isolates
         cp == 0x200E || cp == 0x200F || cp == 0x061C || cp == 0xFEFF;       // direction marks, BOM
}

void AppendEscaped(uint32_t cp, std::string* out) {
  switch (cp) {
    case '\n': *out += "\\n"; return;
    case '\r': *out += "\\r"; return;
    case '\t': *out += "\\t"; return;
    default: break;
  }
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\u%04X", static_cast<unsigned>(cp));
  *out += buf;
}

}  // namespace

std::string Printable(std::string_view s, size_t max_chars, bool escape_quotes) {
  std::string out;
  out.reserve(s.size() < max_chars ? s.size() + 8 : max_chars + 8);
  size_t chars = 0;
  size_t i = 0;
  while (i < s.size()) {
    if (chars == max_chars) {
      out += "...";
      return out;
    }
    uint32_t cp = 0;
    const size_t len = DecodeUtf8(s, i, &cp);
    if (len == 0) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned>(static_cast<unsigned char>(s[i])));
      out += buf;
      i += 1;
    } else {
      if (IsLayoutControl(cp)) AppendEscaped(cp, &out);
      else if (escape_quotes && (cp == '"' || cp == '\\')) (out += '\\') += static_cast<char>(cp);
      else out.append(s.data() + i, len);
      i += len;
    }
    ++chars;
  }
  return out;
}

std::string Quote(std::string_view s, size_t max_chars) { return "\"" + Printable(s, max_chars, true) + "\""; }

}  // namespace vramplan::io
