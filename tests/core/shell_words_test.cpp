// The shell tokenizer: quotes, escapes, continuations, comments and command separators as a POSIX
// shell splits a simple command; unclosed quotes are errors with the line.
#include "launch/shell_words.h"

#include <gtest/gtest.h>

#include "io/input_limits.h"

namespace vramplan::launch {
namespace shell_words_test {

std::vector<ShellCommand> Split(const std::string& text) {
  std::vector<ShellCommand> commands;
  Issues errors;
  EXPECT_TRUE(SplitShellCommands(text, &commands, &errors)) << (errors.empty() ? "" : errors[0].message);
  return commands;
}

TEST(ShellWords, QuotesEscapesAndContinuations) {
  const auto c = Split("vllm serve 'my model' \\\n  --a \"x \\\"y\\\" $HOME\" --b=c\\ d # comment\n");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].words, (std::vector<std::string>{"vllm", "serve", "my model", "--a", "x \"y\" $HOME", "--b=c d"}));
}

TEST(ShellWords, SeparatorsSplitCommands) {
  const auto c = Split("export X=1; CUDA_VISIBLE_DEVICES=0 llama-server -m a.gguf && echo done | tee log\n\n# only a comment\nnext");
  ASSERT_EQ(c.size(), 5u);
  EXPECT_EQ(c[1].words[0], "CUDA_VISIBLE_DEVICES=0");
  EXPECT_EQ(c[4].words[0], "next");
  EXPECT_EQ(c[4].line, 4u);
}

TEST(ShellWords, EmptyQuotedWordIsAWord) {
  const auto c = Split("a '' \"\" b");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].words.size(), 4u);
}

TEST(ShellWords, UnclosedQuotesAndLimitsAreErrors) {
  std::vector<ShellCommand> commands;
  Issues errors;
  EXPECT_FALSE(SplitShellCommands("a\nb 'open", &commands, &errors));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].message.find("line 2"), std::string::npos) << errors[0].message;
  errors.clear();
  EXPECT_FALSE(SplitShellCommands("x \"open", &commands, &errors));
  errors.clear();
  EXPECT_FALSE(SplitShellCommands(std::string(io::kMaxDocumentBytes + 1, 'a'), &commands, &errors));
  EXPECT_EQ(errors[0].code, "too_large");
  errors.clear();
  EXPECT_FALSE(SplitShellCommands(std::string(io::kMaxStringBytes + 2, 'a'), &commands, &errors));
  EXPECT_EQ(errors[0].code, "too_long");
}

}  // namespace
}  // namespace vramplan::launch
