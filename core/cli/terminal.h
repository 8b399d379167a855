// Terminal input and output shared by the CLI's commands: reading a file or stdin, printing text
// that came from the input on one safe line, and the one-line-per-problem error report.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace vramplan::cli {

// The file's bytes ("-": stdin); false when it cannot be read.
bool ReadInput(const std::string& path, std::string* out);

// One terminal line from text that came from the input: the core already escapes user strings
// in messages, and this second guard keeps any control character (C0, DEL, C1: escape sequences,
// extra lines) from reaching the terminal raw and any line from growing past `max_bytes`.
std::string OneLine(const std::string& s, size_t max_bytes = 2000);

// A string field of a reply, made safe for one terminal line; "" when absent.
std::string Str(const nlohmann::json& j, const char* key);

// "error: <field path>: <message>" on stderr for each of the reply's errors; returns 2.
int ReportErrors(const nlohmann::json& r);

}  // namespace vramplan::cli
