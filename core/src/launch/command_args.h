// The options of one command line (vllm serve, llama-server, tune run): the program found among
// the commands of a text, then its "--key value", "--key=value", "-k value" and bare flags, in
// order, and its positional words. Which options take no value is the caller's list (each
// program's own argument definitions).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "launch/import_context.h"

namespace vramplan::launch {

struct CommandOption {
  std::string key;  // as written, without the leading dashes ("tensor-parallel-size", "ngl")
  std::optional<std::string> value;
};

struct CommandArgs {
  std::string program;               // the word that matched
  std::vector<std::string> before;   // words before it (environment assignments, python -m, ...)
  std::vector<CommandOption> options;
  std::vector<std::string> positionals;
};

// Finds the first command of `text` with a word for which `is_program` holds, and splits the words
// after it. `flags` lists the options that never take a value. False (with ctx->errors) when the
// text does not split or has no such command.
bool ReadCommand(std::string_view text, const std::function<bool(const std::string&)>& is_program, const std::vector<std::string_view>& flags,
                 std::string_view what, CommandArgs* out, ImportContext* ctx);

// "--" + key, shell-quoted where needed, for exports.
std::string ShellQuote(const std::string& word);

}  // namespace vramplan::launch
