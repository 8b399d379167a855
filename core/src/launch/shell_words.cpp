#include "launch/shell_words.h"

#include <utility>

#include "io/input_limits.h"

namespace vramplan::launch {

bool SplitShellCommands(std::string_view text, std::vector<ShellCommand>* commands, Issues* errors) {
  commands->clear();
  if (text.size() > io::kMaxDocumentBytes) {
    errors->push_back(Issue{"too_large", "", "the command is " + std::to_string(text.size()) + " bytes; at most " + std::to_string(io::kMaxDocumentBytes) + " are read"});
    return false;
  }
  size_t line = 1, total_words = 0;
  ShellCommand current;
  std::string word;
  bool in_word = false;  // a word is open (an empty quoted word "" counts)
  auto fail = [&](const char* code, const std::string& message) {
    errors->push_back(Issue{code, "", "line " + std::to_string(line) + ": " + message});
    return false;
  };
  auto end_word = [&]() -> bool {
    if (!in_word) return true;
    if (++total_words > io::kMaxArrayItems) return fail("too_many", "more than " + std::to_string(io::kMaxArrayItems) + " words");
    current.words.push_back(std::move(word));
    word.clear();
    in_word = false;
    return true;
  };
  auto end_command = [&]() {
    if (!current.words.empty()) commands->push_back(std::move(current));
    current = ShellCommand{};
    current.line = line;
  };
  size_t i = 0;
  while (i < text.size()) {
    if (word.size() > io::kMaxStringBytes) return fail("too_long", "a word longer than " + std::to_string(io::kMaxStringBytes) + " bytes");
    const char c = text[i];
    if (c == '\\') {
      if (i + 1 < text.size() && text[i + 1] == '\n') {
        i += 2;
        ++line;
        continue;
      }
      if (i + 2 < text.size() && text[i + 1] == '\r' && text[i + 2] == '\n') {
        i += 3;
        ++line;
        continue;
      }
      if (i + 1 < text.size()) word += text[i + 1];
      in_word = true;
      i += 2;
      continue;
    }
    if (c == '\'') {
      const size_t close = text.find('\'', i + 1);
      if (close == std::string_view::npos) return fail("invalid_command", "an unclosed single quote");
      for (size_t k = i + 1; k < close; ++k) line += text[k] == '\n';
      word.append(text.substr(i + 1, close - i - 1));
      in_word = true;
      i = close + 1;
      continue;
    }
    if (c == '"') {
      size_t k = i + 1;
      bool closed = false;
      while (k < text.size()) {
        const char d = text[k];
        if (d == '"') {
          closed = true;
          break;
        }
        if (d == '\\' && k + 1 < text.size()) {
          const char e = text[k + 1];
          if (e == '\n') {
            ++line;
            k += 2;
            continue;
          }
          if (e == '"' || e == '\\' || e == '$' || e == '`') {
            word += e;
            k += 2;
            continue;
          }
        }
        if (d == '\n') ++line;
        word += d;
        ++k;
        if (word.size() > io::kMaxStringBytes) return fail("too_long", "a word longer than " + std::to_string(io::kMaxStringBytes) + " bytes");
      }
      if (!closed) return fail("invalid_command", "an unclosed double quote");
      in_word = true;
      i = k + 1;
      continue;
    }
    if (c == '#' && !in_word) {
      while (i < text.size() && text[i] != '\n') ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      if (!end_word()) return false;
      ++i;
      continue;
    }
    if (c == '\n' || c == ';' || c == '|' || c == '&') {
      if (!end_word()) return false;
      if (c == '\n') ++line;
      end_command();
      ++i;
      if ((c == '|' || c == '&') && i < text.size() && text[i] == c) ++i;
      continue;
    }
    word += c;
    in_word = true;
    ++i;
  }
  if (!end_word()) return false;
  end_command();
  return true;
}

}  // namespace vramplan::launch
