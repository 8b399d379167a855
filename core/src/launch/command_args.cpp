#include "launch/command_args.h"

#include <algorithm>
#include <cctype>

#include "launch/shell_words.h"

namespace vramplan::launch {

bool ReadCommand(std::string_view text, const std::function<bool(const std::string&)>& is_program, const std::vector<std::string_view>& flags,
                 std::string_view what, CommandArgs* out, ImportContext* ctx) {
  std::vector<ShellCommand> commands;
  if (!SplitShellCommands(text, &commands, &ctx->errors)) return false;
  for (const ShellCommand& c : commands) {
    size_t at = c.words.size();
    for (size_t i = 0; i < c.words.size(); ++i) {
      if (is_program(c.words[i])) {
        at = i;
        break;
      }
    }
    if (at == c.words.size()) continue;
    out->program = c.words[at];
    out->before.assign(c.words.begin(), c.words.begin() + static_cast<long>(at));
    for (size_t i = at + 1; i < c.words.size(); ++i) {
      const std::string& w = c.words[i];
      const bool negative_number = w.size() > 1 && w[0] == '-' && (std::isdigit(static_cast<unsigned char>(w[1])) || w[1] == '.');
      if (w.size() < 2 || w[0] != '-' || negative_number || w == "--") {
        if (w != "--") out->positionals.push_back(w);
        continue;
      }
      std::string key = w.substr(w[1] == '-' ? 2 : 1);
      CommandOption opt;
      const size_t eq = key.find('=');
      if (eq != std::string::npos) {
        opt.key = key.substr(0, eq);
        opt.value = key.substr(eq + 1);
      } else {
        opt.key = key;
        const bool is_flag = std::find(flags.begin(), flags.end(), std::string_view(key)) != flags.end();
        if (!is_flag && i + 1 < c.words.size()) {
          const std::string& next = c.words[i + 1];
          const bool next_is_option = next.size() > 1 && next[0] == '-' && !std::isdigit(static_cast<unsigned char>(next[1])) && next[1] != '.';
          if (!next_is_option) {
            opt.value = next;
            ++i;
          }
        }
      }
      out->options.push_back(std::move(opt));
    }
    return true;
  }
  ctx->Error("", "no " + std::string(what) + " command found in the text", "invalid_config");
  return false;
}

std::string ShellQuote(const std::string& word) {
  bool plain = !word.empty();
  for (char c : word) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '/' || c == ':' || c == '=' || c == ',' || c == '@')) plain = false;
  }
  if (plain) return word;
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

}  // namespace vramplan::launch
