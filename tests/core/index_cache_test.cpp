// GLM-5.2's IndexCache: config.json's `indexer_types` names each layer "full" (it owns a lightning
// indexer) or "shared" (it reuses the top-k of the last full layer before it). GLM-5.2 is GLM-5's
// geometry (78 layers, hidden 6,144, q_lora_rank 2,048, 32 indexer heads of 128) with full indexers
// on layers 0, 1, 2 and then every fourth (6, 10, ..., 74): 21 full, 57 shared; the MTP layer always
// owns one. vLLM builds no indexer (and so no indexer key cache) on a shared layer, nor does
// llama.cpp; transformers' scoring runs only on full layers. Expected values are worked by hand from
// the GLM-5 preset's published totals (core/data/presets.json: total 743,911,218,432, Hub
// checkpoint total 753,864,139,008) and the indexer's shapes.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_support.h"

#include "inference/kv_cache.h"
#include "model/catalog.h"
#include "model/hf_config.h"
#include "train/activations.h"
#include "train/precision.h"

namespace vramplan {
namespace index_cache_test {

using nlohmann::json;

json Glm52Config() {
  const PresetEntry* glm5 = FindPreset("zai-org/GLM-5");
  EXPECT_NE(glm5, nullptr);
  json c = glm5 != nullptr && glm5->config != nullptr ? *glm5->config : json::object();
  json types = json::array();
  for (int i = 0; i < 78; ++i) types.push_back(i < 3 || (i - 2) % 4 == 0 ? "full" : "shared");
  c["indexer_types"] = types;
  c["index_topk_freq"] = 4;
  c["index_skip_topk_offset"] = 3;
  return c;
}

ModelSpec Glm52Spec() {
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(Glm52Config(), "model", &warnings);
  EXPECT_TRUE(spec.ok());
  return spec.ok() ? spec.value() : ModelSpec{};
}

// One indexer: wq_b 2,048 -> 32 x 128, wk 6,144 -> 128, weights_proj 6,144 -> 32, k_norm (LayerNorm
// weight + bias of 128).
constexpr int64_t kIndexerParams = 2048LL * 32 * 128 + 6144LL * 128 + 6144LL * 32 + 2 * 128;

TEST(IndexCache, SharedLayersHoldNoIndexer) {
  EXPECT_EQ(kIndexerParams, 9371904);
  const ModelSpec m = Glm52Spec();
  int64_t full = 0, shared = 0;
  for (uint8_t k : m.layer_kind) (m.kinds[k].attention.index_shared ? shared : full) += 1;
  EXPECT_EQ(full, 21);
  EXPECT_EQ(shared, 57);
  EXPECT_FALSE(m.kinds[m.layer_kind[0]].attention.index_shared);
  EXPECT_TRUE(m.kinds[m.layer_kind[3]].attention.index_shared);
  EXPECT_FALSE(m.kinds[m.layer_kind[6]].attention.index_shared);
  EXPECT_TRUE(m.kinds[m.layer_kind[77]].attention.index_shared);
  // The MTP layer owns its indexer: its kind is a full layer's.
  EXPECT_FALSE(m.kinds[m.checkpoint.mtp_kind].attention.index_shared);
  const json sc = {{"model", Glm52Config()}, {"mode", "inference"}, {"gpu", "h200-sxm-141gb"}};
  const Result r = testing_support::EstimateText(sc.dump());
  EXPECT_EQ(r.params.total, 743911218432LL - 57 * kIndexerParams);                 // 743,377,019,904
  EXPECT_EQ(r.params.checkpoint_total, 753864139008LL - 57 * kIndexerParams);      // 753,329,940,480
}

// Per token over all 78 layers, one GPU: every layer's latent, the indexer keys on the 21 full ones.
TEST(IndexCache, IndexerKeysOnFullLayersOnly) {
  const ModelSpec m = Glm52Spec();
  struct Row {
    Engine engine;
    KvDtype dtype;
    int64_t per_token;
  };
  const Row rows[] = {
      // vLLM: latent (512 + 64) x 2 B, or fp8_ds_mla 656 B; indexer 128 + 4 B (uint8 + fp32 scale)
      {Engine::kVllm, KvDtype::kAuto, 78 * 1152 + 21 * 132},  // 92,628
      {Engine::kVllm, KvDtype::kFp8, 78 * 656 + 21 * 132},    // 53,940
      // llama.cpp: K of 576 f16 per layer, the indexer's K of 128 f16 on full layers
      {Engine::kLlamaCpp, KvDtype::kAuto, 78 * 1152 + 21 * 256},  // 95,232
  };
  for (const Row& row : rows) {
    const KvElementSize e = ResolveKvDtype(row.dtype, WeightFormat::kBf16, row.engine);
    EXPECT_EQ(KvBytesPerToken(KvGroups(m, row.engine, 1, 2), e), row.per_token) << static_cast<int>(row.engine);
  }
}

// Training: a shared layer keeps its SDPA top-k mask but runs no indexer scoring.
TEST(IndexCache, OnlyFullLayersScore) {
  const ModelSpec m = Glm52Spec();
  const LayerPlan lora{false, false, true};
  ActivationContext ctx;
  ctx.batch = 1;
  ctx.seq = 1024;
  ctx.prec = PrecisionFor(Precision::kAmpBf16);
  ctx.attention = AttentionImpl::kSdpa;
  LoraConfig adapters;
  adapters.targets = {"q_a_proj"};
  ctx.lora = &adapters;
  const LayerSaved full = ComputeLayerSaved(m.kinds[m.layer_kind[6]], lora, ctx);
  const LayerSaved shared = ComputeLayerSaved(m.kinds[m.layer_kind[7]], lora, ctx);
  EXPECT_EQ(full.indexer_transient_bytes, 2LL * 4 * 1024 * 32 * 1024);  // 256 MiB
  EXPECT_EQ(shared.indexer_transient_bytes, 0);
  EXPECT_EQ(full.total_bytes, shared.total_bytes);  // the mask in both; the indexer saves nothing
}

TEST(IndexCache, MalformedIndexerTypesAreRefused) {
  json bad = Glm52Config();
  bad["indexer_types"][5] = "partial";
  Issues warnings;
  auto r = ModelSpecFromHfConfig(bad, "model", &warnings);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors()[0].field_path, "model.indexer_types");
  json first_shared = Glm52Config();
  first_shared["indexer_types"][0] = "shared";
  EXPECT_FALSE(ModelSpecFromHfConfig(first_shared, "model", &warnings).ok());
  json no_types = Glm52Config();
  no_types.erase("indexer_types");
  auto missing = ModelSpecFromHfConfig(no_types, "model", &warnings);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.errors()[0].field_path, "model.indexer_types");
}

}  // namespace
}  // namespace vramplan
