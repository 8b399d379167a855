// Llama 3.2 Vision's cross-attention K / V (model/cross_attention_kv.cpp) in transformers (training
// and generation) and in vLLM's V0 encoder-decoder cache, hand-worked on the 11B preset: 8
// cross-attention layers (cross_attention_layers [3, 8, ..., 38] of 40), 32 query heads, 8 KV heads
// of 128; one image = 4 tiles x 1601 = 6,404 vision positions.
#include <gtest/gtest.h>

#include "model/cross_attention_kv.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace cross_attention_kv_test {

constexpr const char* kModel = "meta-llama/Llama-3.2-11B-Vision-Instruct";

Scenario Parse(const std::string& json) {
  auto sc = ParseScenario(json);
  EXPECT_TRUE(sc.ok()) << (sc.ok() ? "" : sc.errors()[0].message);
  return sc.value();
}

TEST(CrossAttentionKv, TheLayersAndTheStates) {
  const Scenario s = Parse(std::string("{\"model\": \"") + kModel + "\"}");
  const CrossAttentionLayers x = CrossAttentionOf(s.model);
  EXPECT_EQ(x.layers, 8);
  EXPECT_EQ(x.heads, 32);
  EXPECT_EQ(x.kv_heads, 8);
  EXPECT_EQ(x.head_dim, 128);
  EXPECT_EQ(CrossAttentionStates(s.model, 1), 6404);
  EXPECT_EQ(CrossAttentionStates(s.model, 0), 0);
  // K and V after repeat_kv: 6,404 x 32 x 128 each, bf16, 8 layers.
  EXPECT_EQ(TransformersCrossKvBytes(x, 6404, 2, false), 8LL * 2 * 6404 * 32 * 128 * 2);
  // With k_norm's fp32 input, rsqrt and product when K needs a gradient.
  EXPECT_EQ(TransformersCrossKvBytes(x, 6404, 2, true), 8LL * (2 * 6404 * 32 * 128 * 2 + 6404LL * 32 * 128 * 6 + 4LL * 6404 * 32));
  // Text-only models have none.
  const Scenario llama = Parse("{\"model\": \"meta-llama/Llama-3.1-8B\"}");
  EXPECT_EQ(CrossAttentionOf(llama.model).layers, 0);
}

TEST(CrossAttentionKv, TrainingSavesThemPerImage) {
  const Result lora = Estimate(Parse(std::string("{\"model\": \"") + kModel +
                                     "\", \"train\": {\"method\": \"lora\", \"seq_len\": 1024, \"images_per_sample\": 1}}"));
  EXPECT_EQ(lora.vision.cross_attention_kv_bytes, 8LL * 2 * 6404 * 32 * 128 * 2);  // 0.78 GiB
  const Result full = Estimate(Parse(std::string("{\"model\": \"") + kModel +
                                     "\", \"train\": {\"method\": \"full\", \"seq_len\": 1024, \"images_per_sample\": 1}}"));
  EXPECT_EQ(full.vision.cross_attention_kv_bytes, 8LL * (2 * 6404 * 32 * 128 * 2 + 6404LL * 32 * 128 * 6 + 4LL * 6404 * 32));
}

TEST(CrossAttentionKv, TransformersGenerationCachesThem) {
  const Result r = Estimate(Parse(std::string("{\"model\": \"") + kModel +
                                  "\", \"mode\": \"inference\", \"inference\": {\"batch_size\": 2, \"images_per_request\": 1}}"));
  EXPECT_EQ(r.vision.cross_attention_kv_bytes, 2LL * 8 * 2 * 6404 * 32 * 128 * 2);
}

TEST(CrossAttentionKv, VllmV0BlocksSpanEveryLayerAndImagesTakeCrossBlocks) {
  // Block bytes over all 40 attention layers: 16 tokens x (K + V) x 8 heads x 128 x 2 B x 40 =
  // 2,621,440 B; one image's 6,404 encoder tokens take ceil(6404 / 16) = 401 cross blocks.
  const Result r = Estimate(Parse(std::string("{\"model\": \"") + kModel +
                                  "\", \"mode\": \"inference\", \"inference\": {\"engine\": \"vllm\", \"vllm_version\": \"0.6-0.10_v0\", "
                                  "\"max_model_len\": 8192, \"images_per_request\": 1}}"));
  EXPECT_EQ(r.vision.cross_attention_kv_bytes, 401LL * 2621440);
  int64_t kv = 0;
  for (const auto& t : r.gpu.breakdown) if (t.key == "kv_cache") kv = t.bytes;
  EXPECT_EQ(kv % 2621440, 0);
  EXPECT_EQ(r.inference.kv_token_capacity, kv / 2621440 * 16);
}

}  // namespace
}  // namespace vramplan
