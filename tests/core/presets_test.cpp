// Every preset parses, resolves to a model and counts exactly its recorded parameter total.
#include <gtest/gtest.h>

#include "model/catalog.h"
#include "model/hf_config.h"

namespace vramplan {
namespace presets_test {

TEST(Presets, AtLeastFortyAllResolve) {
  const auto& doc = PresetsDocument();
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(Presets().size(), doc["models"].size()) << "a preset failed to resolve";
  EXPECT_GE(Presets().size(), 40u);
}

TEST(Presets, ExactParameterCounts) {
  for (const auto& p : Presets()) {
    EXPECT_GT(p.params, 0) << p.id;
    EXPECT_EQ(CountParams(p.spec).total, p.params) << p.id;
    EXPECT_FALSE(p.family.empty()) << p.id;
  }
}

// checkpoint_total, where a preset records it, is the Hub's safetensors total (MTP layers,
// quantization scales, a stored copy of tied embeddings: CheckpointLayout).
TEST(Presets, ExactCheckpointTotals) {
  int with_total = 0;
  for (const auto& m : PresetsDocument()["models"]) {
    if (!m.contains("checkpoint_total")) continue;
    ++with_total;
    const PresetEntry* p = FindPreset(m["id"].get<std::string>());
    ASSERT_NE(p, nullptr) << m["id"];
    EXPECT_EQ(CountParams(p->spec).checkpoint_total, m["checkpoint_total"].get<int64_t>()) << m["id"];
    EXPECT_TRUE(m.contains("checkpoint_total_source")) << m["id"];
  }
  EXPECT_GE(with_total, 10);
}

TEST(Presets, NoWarningsWhenResolving) {
  for (const auto& m : PresetsDocument()["models"]) {
    Issues warnings;
    auto spec = ModelSpecFromHfConfig(m["config"], "model", &warnings);
    ASSERT_TRUE(spec.ok()) << m["id"];
    EXPECT_TRUE(warnings.empty()) << m["id"] << ": " << (warnings.empty() ? "" : warnings[0].message);
  }
}

TEST(Gpus, CatalogueHasThirtyWithMemory) {
  EXPECT_GE(Gpus().size(), 30u);
  for (const auto& g : Gpus()) {
    EXPECT_GT(g.memory_bytes, 0) << g.id;
    EXPECT_FALSE(g.source.empty()) << g.id;
    if (g.usable_memory_bytes > 0) EXPECT_LE(g.usable_memory_bytes, g.memory_bytes) << g.id;
  }
  ASSERT_NE(FindGpu("h100-sxm-80gb"), nullptr);
}

}  // namespace
}  // namespace vramplan
