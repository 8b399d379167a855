#include "io/python_json_literals.h"

#include <array>

namespace vramplan::io {
namespace {

bool IsIdentifierChar(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

// The Python literal that starts at `i` (outside a string), as a whole token; empty if none.
std::string_view LiteralAt(std::string_view text, size_t i) {
  static constexpr std::array<std::string_view, 3> kLiterals = {"-Infinity", "Infinity", "NaN"};
  if (i > 0 && IsIdentifierChar(text[i - 1])) return {};
  for (std::string_view lit : kLiterals) {
    if (text.substr(i, lit.size()) != lit) continue;
    const size_t end = i + lit.size();
    if (end < text.size() && IsIdentifierChar(text[end])) continue;
    return lit;
  }
  return {};
}

}  // namespace

std::optional<std::string> PythonJsonLiteralsAsStrings(std::string_view text) {
  std::string out;
  bool changed = false, in_string = false, escaped = false;
  size_t copied = 0;  // text[copied, i) not yet appended to `out`
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
      continue;
    }
    if (c != '-' && c != 'I' && c != 'N') continue;
    const std::string_view lit = LiteralAt(text, i);
    if (lit.empty()) continue;
    if (!changed) out.reserve(text.size() + 16);
    changed = true;
    out.append(text.substr(copied, i - copied));
    out.push_back('"');
    out.append(lit);
    out.push_back('"');
    i += lit.size() - 1;
    copied = i + 1;
  }
  if (!changed) return std::nullopt;
  out.append(text.substr(copied));
  return out;
}

}  // namespace vramplan::io
