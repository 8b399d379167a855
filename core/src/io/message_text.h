// Renders user-supplied text (ids, keys, values) for error messages and field paths. A message is
// one line on a terminal (the CLI prints "error: <path>: <message>"), so user text must never add
// a line, move the cursor or recolour the terminal, and must never make a message long: every
// user string passes through here, escaped and cut to a short preview.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace vramplan::io {

// How many characters of a user string a message shows before "...".
inline constexpr size_t kMessagePreviewChars = 60;

// `s` with everything that is not safe on one terminal line escaped: C0 controls and DEL as \n,
// \r, \t or \u00XX; C1 controls (U+0080..U+009F, which some terminals read as escape sequences),
// the Unicode line/paragraph separators and the bidirectional overrides as \uXXXX; bytes that are
// not UTF-8 as \xNN. With `escape_quotes`, `"` and `\` are escaped too (for text shown between
// quotes). Cut after `max_chars` characters of `s`, ending in "...".
std::string Printable(std::string_view s, size_t max_chars = kMessagePreviewChars, bool escape_quotes = false);

// Printable(s, max_chars, true) between double quotes: the way a message shows a user string.
std::string Quote(std::string_view s, size_t max_chars = kMessagePreviewChars);

}  // namespace vramplan::io
