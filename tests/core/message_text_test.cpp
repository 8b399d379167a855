// io/message_text.cpp: user text inside one-line messages. Expectations from the rules in the
// header and the Unicode code charts: C0 controls and DEL (U+0000..U+001F, U+007F), C1 controls
// (U+0080..U+009F), LINE/PARAGRAPH SEPARATOR (U+2028/2029) and the bidirectional overrides
// (U+202A..U+202E, U+2066..U+2069) are escaped; other UTF-8 passes; invalid bytes become \xNN.
#include "io/message_text.h"

#include <string>

#include <gtest/gtest.h>

namespace vramplan::io {
namespace message_text_test {

TEST(MessageText, ControlsAndLineBreaksAreEscaped) {
  EXPECT_EQ(Printable("ok"), "ok");
  EXPECT_EQ(Printable("a\nb\rc\td"), "a\\nb\\rc\\td");
  EXPECT_EQ(Printable(std::string("\x1b[31m", 5)), "\\u001B[31m");  // an ANSI colour cannot recolour
  EXPECT_EQ(Printable("\x7f"), "\\u007F");
  EXPECT_EQ(Printable("\xC2\x85"), "\\u0085");          // NEL, a C1 control
  EXPECT_EQ(Printable("\xE2\x80\xA8"), "\\u2028");      // LINE SEPARATOR
  EXPECT_EQ(Printable("\xE2\x80\xAE"), "\\u202E");      // RIGHT-TO-LEFT OVERRIDE
  EXPECT_EQ(Printable("caf\xC3\xA9"), "caf\xC3\xA9");   // ordinary UTF-8 passes
  EXPECT_EQ(Printable("\xFF"), "\\xFF");                // not UTF-8
  EXPECT_EQ(Printable("\xC0\xAF"), "\\xC0\\xAF");         // overlong "/" (RFC 3629 forbids it): byte by byte
}

TEST(MessageText, QuotesOnlyWhenAsked) {
  EXPECT_EQ(Printable("a\"b\\c"), "a\"b\\c");
  EXPECT_EQ(Printable("a\"b\\c", kMessagePreviewChars, true), "a\\\"b\\\\c");
  EXPECT_EQ(Quote("x\"y"), "\"x\\\"y\"");
}

TEST(MessageText, LongTextIsCutToAPreview) {
  const std::string long_text(200, 'a');
  EXPECT_EQ(Printable(long_text), std::string(kMessagePreviewChars, 'a') + "...");
  EXPECT_EQ(Printable(std::string(kMessagePreviewChars, 'b')), std::string(kMessagePreviewChars, 'b'));  // exactly the limit: no cut
  EXPECT_EQ(Quote(long_text, 3), "\"aaa...\"");
}

}  // namespace
}  // namespace vramplan::io
