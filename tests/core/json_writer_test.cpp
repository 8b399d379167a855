// io/json_writer.cpp: the streaming writer of every result. Expected text follows RFC 8259: '"'
// and '\' escaped, control characters as \n, \r, \t or \u00XX, UTF-8 copied as is (malformed
// bytes become U+FFFD so the output stays valid JSON), commas only between elements.
#include "io/json_writer.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace vramplan::io {
namespace json_writer_test {

std::string Str(std::string_view s) { return JsonWriter().String(s).Take(); }

TEST(JsonWriter, NestedContainersAndSeparators) {
  JsonWriter w;
  w.BeginObject().Field("a", int64_t{1}).Key("b").BeginArray().Int(2).Bool(true).BeginObject().EndObject().EndArray();
  w.Field("c", std::string("x")).Key("d").BeginArray().EndArray().EndObject();
  EXPECT_EQ(w.Take(), R"({"a":1,"b":[2,true,{}],"c":"x","d":[]})");
}

TEST(JsonWriter, IntegersAreExact) {
  EXPECT_EQ(JsonWriter().Int(std::numeric_limits<int64_t>::max()).Take(), "9223372036854775807");
  EXPECT_EQ(JsonWriter().Int(std::numeric_limits<int64_t>::min()).Take(), "-9223372036854775808");
  EXPECT_EQ(JsonWriter().Int(16060522496).Take(), "16060522496");
}

TEST(JsonWriter, NumbersRoundTripAndNonFiniteIsNull) {
  EXPECT_EQ(JsonWriter().Number(2.0).Take(), "2.0");
  EXPECT_EQ(JsonWriter().Number(0.9).Take(), "0.9");
  EXPECT_EQ(JsonWriter().Number(0.1 + 0.2).Take(), "0.30000000000000004");  // needs 17 digits
  EXPECT_EQ(JsonWriter().Number(std::nan("")).Take(), "null");
  EXPECT_EQ(JsonWriter().Number(std::numeric_limits<double>::infinity()).Take(), "null");
}

TEST(JsonWriter, StringsAreEscaped) {
  EXPECT_EQ(Str("plain"), R"("plain")");
  EXPECT_EQ(Str("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(Str("l1\nl2\r\t"), R"("l1\nl2\r\t")");
  EXPECT_EQ(Str(std::string("\x01\x1f", 2)), R"("\u0001\u001f")");
  EXPECT_EQ(Str("\xC3\xA9 \xE2\x80\x94 \xF0\x9F\x98\x80"), "\"\xC3\xA9 \xE2\x80\x94 \xF0\x9F\x98\x80\"");  // é, em dash, emoji kept
  EXPECT_EQ(Str("\xFF"), "\"\xEF\xBF\xBD\"");                  // not UTF-8 -> U+FFFD
  EXPECT_EQ(Str("\xE2\x80"), "\"\xEF\xBF\xBD\xEF\xBF\xBD\"");  // truncated sequence: each byte replaced
}

// Plain runs are scanned 8 bytes at a time: each byte that needs escaping is found at every
// position of a long string, and nlohmann's dump (an independent writer) agrees on the text.
TEST(JsonWriter, EscapesAreFoundAtEveryPosition) {
  for (const std::string& special : std::vector<std::string>{"\"", "\\", "\n", "\x1f", "\x7f", "\xC3\xA9", std::string(1, '\0')}) {
    for (size_t at = 0; at < 24; ++at) {
      std::string s(24, 'a');
      s.insert(at, special);
      EXPECT_EQ(Str(s), nlohmann::json(s).dump()) << "at " << at;
    }
  }
}

// A result longer than the first buffer grows it and keeps every byte.
TEST(JsonWriter, LongOutputIsKeptWhole) {
  const std::string piece(1000, 'x');
  JsonWriter w;
  w.BeginArray();
  for (int i = 0; i < 40; ++i) w.String(piece);
  w.EndArray();
  const std::string out = w.Take();
  EXPECT_EQ(out.size(), 2 + 40 * 1002 + 39u);
  EXPECT_EQ(out.substr(0, 3), "[\"x");
  EXPECT_EQ(out.substr(out.size() - 3), "x\"]");
}

// Whatever bytes go in, a strict parser reads back a valid document with the same valid text.
TEST(JsonWriter, OutputParsesWithAStrictReader) {
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  JsonWriter w;
  w.BeginObject().Field("all", all).Field("list", std::vector<std::string>{"x", "y\n"}).EndObject();
  const nlohmann::json j = nlohmann::json::parse(w.Take(), nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["all"].get<std::string>().substr(0, 128), all.substr(0, 128));  // ASCII survives exactly
  EXPECT_EQ(j["list"][1], "y\n");
}

}  // namespace
}  // namespace vramplan::io
