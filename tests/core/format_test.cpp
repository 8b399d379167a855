// format.cpp: the numbers of explain strings. Expected strings are written out by hand:
// thousands separators every three digits, GiB = 2^30 B rounded half up to hundredths.
#include "format.h"

#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

namespace vramplan {
namespace format_test {

TEST(Format, WithCommasGroupsThreeDigits) {
  EXPECT_EQ(WithCommas(0), "0");
  EXPECT_EQ(WithCommas(999), "999");
  EXPECT_EQ(WithCommas(1000), "1,000");
  EXPECT_EQ(WithCommas(16060522496), "16,060,522,496");
  EXPECT_EQ(WithCommas(-1234567), "-1,234,567");
  // The most negative int64 has no positive counterpart: it must not overflow.
  EXPECT_EQ(WithCommas(std::numeric_limits<int64_t>::min()), "-9,223,372,036,854,775,808");
}

TEST(Format, GibRoundsToHundredths) {
  const int64_t gib = int64_t{1} << 30;
  EXPECT_EQ(Gib(0), "0.00 GiB");
  EXPECT_EQ(Gib(gib), "1.00 GiB");
  EXPECT_EQ(Gib(gib / 2), "0.50 GiB");
  // 16,060,522,496 B / 2^30 = 14.9574... -> 14.96
  EXPECT_EQ(Gib(16060522496), "14.96 GiB");
  // 80 GiB exactly; 0.005 GiB is 5,368,709.12 B: clearly above it rounds up, clearly below down.
  // (Gib drops the bytes below a whole KiB before rounding, so within 1 KiB above the half-way
  // point it still rounds down: 5,368,710 B shows 0.00. Harmless in an explain string.)
  EXPECT_EQ(Gib(80 * gib), "80.00 GiB");
  EXPECT_EQ(Gib(5369000), "0.01 GiB");
  EXPECT_EQ(Gib(5368000), "0.00 GiB");
  EXPECT_EQ(Gib(-gib), "-1.00 GiB");
}

TEST(Format, HundredthsAndBytesExplained) {
  EXPECT_EQ(Hundredths(1496), "14.96");
  EXPECT_EQ(Hundredths(5), "0.05");
  EXPECT_EQ(Hundredths(100), "1.00");
  EXPECT_EQ(BytesExplained(16060522496), "16,060,522,496 B (14.96 GiB)");
}

}  // namespace
}  // namespace vramplan
