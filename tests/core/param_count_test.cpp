// Exact parameter counts of real models from their config.json, against published totals.
// The table lives in tests/fixtures/param_counts.json: each row has the config, the published
// count and its source (safetensors metadata, model card or paper).
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/hf_config.h"
#include "test_support.h"
#include "vramplan/model_spec.h"

namespace vramplan {
namespace {

using testing_support::LoadFixture;

TEST(ParamCount, PublishedTotalsAreExact) {
  nlohmann::json table = LoadFixture("param_counts.json");
  ASSERT_TRUE(table.is_object()) << "tests/fixtures/param_counts.json missing or invalid";
  const auto& rows = table["models"];
  ASSERT_GE(rows.size(), 20u);
  for (const auto& row : rows) {
    std::string id = row["id"].get<std::string>();
    Issues warnings;
    auto spec = ModelSpecFromHfConfig(row["config"], "model", &warnings);
    ASSERT_TRUE(spec.ok()) << id << ": " << (spec.ok() ? "" : spec.errors()[0].message);
    EXPECT_EQ(CountParams(spec.value()).total, row["params"].get<int64_t>()) << id << " (source: " << row["params_source"].get<std::string>() << ")";
    EXPECT_TRUE(warnings.empty()) << id << ": " << (warnings.empty() ? "" : warnings[0].message);
  }
}

}  // namespace
}  // namespace vramplan
