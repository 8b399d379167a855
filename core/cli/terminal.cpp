// Terminal input and output shared by the CLI's commands (main.cpp, launch_commands.cpp).
#include "terminal.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

namespace vramplan::cli {

using nlohmann::json;

bool ReadInput(const std::string& path, std::string* out) {
  if (path == "-") {
    out->assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    return true;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

// One terminal line from text that came from the input: the core already escapes user strings
// in messages, and this second guard keeps any control character (C0, DEL, C1: escape sequences,
// extra lines) from reaching the terminal raw and any line from growing past `max_bytes`.
std::string OneLine(const std::string& s, size_t max_bytes) {
  std::string out;
  for (size_t i = 0; i < s.size() && out.size() < max_bytes; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const bool c1 = c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
                    static_cast<unsigned char>(s[i + 1]) <= 0x9F;
    if (c < 0x20 || c == 0x7F || c1) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04X", c1 ? static_cast<unsigned>(static_cast<unsigned char>(s[++i])) : c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (out.size() >= max_bytes && out.size() < s.size()) out += "...";
  return out;
}

// A string field of the result, made safe for one terminal line (names come from the input).
std::string Str(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? OneLine(it->get<std::string>()) : std::string();
}

int ReportErrors(const json& r) {
  for (const auto& e : r["errors"]) {
    std::string path = Str(e, "field_path");
    std::fprintf(stderr, "error: %s%s%s\n", path.c_str(), path.empty() ? "" : ": ", Str(e, "message").c_str());
  }
  return 2;
}

}  // namespace vramplan::cli
