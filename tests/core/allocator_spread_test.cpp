// The band's ends come from published readings (tests/fixtures/gpu/allocator_triples.json, written by
// make_allocator_triples.py): the constants of gpu/allocator_spread.h must be the fixture summary's.
#include <gtest/gtest.h>

#include <cmath>

#include "gpu/allocator_spread.h"
#include "test_support.h"

namespace vramplan {
namespace {

TEST(AllocatorSpread, ConstantsAreTheFixtureSummary) {
  const nlohmann::json doc = testing_support::LoadFixture("gpu/allocator_triples.json");
  const nlohmann::json& s = doc["summary"];
  // the lowest reserve: weights loaded and kept; the highest: training peak pairs and the A100
  // suite's nvidia-smi - allocated less the highest A100 training context
  EXPECT_DOUBLE_EQ(s["reserve_ratio"]["load"]["all"]["min"].get<double>(), kReserveRatioLow);
  EXPECT_DOUBLE_EQ(s["reserve_ratio"]["band"]["low"].get<double>(), kReserveRatioLow);
  EXPECT_DOUBLE_EQ(s["reserve_ratio"]["band"]["high"].get<double>(), kReserveRatioHigh);
  EXPECT_GE(s["reserve_ratio"]["training_device_pairs"]["overhead_ratio"]["n"].get<int>(), 18);
  EXPECT_GE(s["reserve_ratio"]["training"]["all"]["n"].get<int>(), 4);
  EXPECT_EQ(s["context_mib"]["training"]["min"].get<int64_t>(), kContextLazyLowMiB);
  EXPECT_EQ(s["context_mib"]["training"]["max"].get<int64_t>(), kContextLazyHighMiB);
  EXPECT_EQ(s["context_mib"]["init_eager"]["min"].get<int64_t>(), kContextEagerLowMiB);
  EXPECT_EQ(s["context_mib"]["init_eager"]["max"].get<int64_t>(), kContextEagerHighMiB);
}

TEST(AllocatorSpread, EveryReadingCarriesItsSourceAndHowItWasRead) {
  const nlohmann::json doc = testing_support::LoadFixture("gpu/allocator_triples.json");
  ASSERT_GE(doc["readings"].size(), 15u);
  for (const auto& r : doc["readings"]) {
    const std::string id = r["id"].get<std::string>();
    EXPECT_EQ(r["url"].get<std::string>().rfind("https://", 0), 0u) << id;
    EXPECT_FALSE(r["quote"].get<std::string>().empty()) << id;
    EXPECT_FALSE(r["how_read"].get<std::string>().empty()) << id;
    if (r.contains("reserve_ratio")) {
      const double ratio = r["reserved_bytes"].get<double>() / r["allocated_bytes"].get<double>() - 1;
      EXPECT_NEAR(r["reserve_ratio"].get<double>(), ratio, 1e-4) << id;
      EXPECT_GE(ratio, 0) << id;
    }
  }
}

}  // namespace
}  // namespace vramplan
