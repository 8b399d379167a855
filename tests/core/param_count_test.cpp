// Exact parameter counts of real models from their config.json, against published totals.
// The table lives in tests/fixtures/param_counts.json: each row has the config, the published
// count and its source (safetensors metadata, model card or paper). `params` is params.total (what
// transformers instantiates); `checkpoint_total`, where a row has it, is every stored element as
// the Hub's safetensors metadata counts it (MTP layers, quantization scales, a stored copy of tied
// embeddings), with `checkpoint` giving what config.json does not say about the checkpoint.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/hf_config.h"
#include "test_support.h"
#include "vramplan/model_spec.h"

namespace vramplan {
namespace param_count_test {

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
    if (row.contains("checkpoint")) ApplyCheckpointFacts(row["checkpoint"], &spec.value());
    const ParamCounts counts = CountParams(spec.value());
    EXPECT_EQ(counts.total, row["params"].get<int64_t>()) << id << " (source: " << row["params_source"].get<std::string>() << ")";
    if (row.contains("checkpoint_total")) {
      EXPECT_EQ(counts.checkpoint_total, row["checkpoint_total"].get<int64_t>())
          << id << " (source: " << row["checkpoint_total_source"].get<std::string>() << ")";
    } else {
      // Without a published checkpoint total the stored extras must still account for the difference
      // (stored legacy buffers of rows whose Hub total is not known, e.g. pythia-12b, are `unloaded`).
      EXPECT_EQ(counts.checkpoint_total - counts.mtp - counts.quantization_scales - counts.unloaded, counts.total) << id;
    }
    EXPECT_TRUE(warnings.empty()) << id << ": " << (warnings.empty() ? "" : warnings[0].message);
  }
}

}  // namespace
}  // namespace vramplan
