// Splits a shell command line into words the way a POSIX shell does for a simple command: single
// quotes keep everything, double quotes keep everything but \" \\ \$ \` and backslash-newline,
// a backslash outside quotes escapes the next character, backslash-newline continues the line, and
// '#' at the start of a word starts a comment. Unquoted newlines, ';', '&&', '||' and '|' separate
// commands. Variables, globs and substitutions are not expanded (the words keep their text).
// Bounded like JSON input (io/input_limits.h): document size, word length and word count.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "vramplan/error.h"

namespace vramplan::launch {

// One command: its words, and the line it starts on (1-based).
struct ShellCommand {
  std::vector<std::string> words;
  size_t line = 1;
};

// The commands of `text`, in order (empty ones dropped). False with one Issue (code "invalid_command",
// or a limit's code) on an unclosed quote or a limit.
bool SplitShellCommands(std::string_view text, std::vector<ShellCommand>* commands, Issues* errors);

}  // namespace vramplan::launch
