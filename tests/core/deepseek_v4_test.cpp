// DeepSeek-V4: the layer schedule as DeepseekV4Config.__post_init__ derives it (transformers
// models/deepseek_v4/configuration_deepseek_v4.py), and the approximate warnings its memory terms carry.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/hf_config.h"
#include "vramplan/estimate.h"
#include "vramplan/model_spec.h"

namespace vramplan {
namespace deepseek_v4_test {

using nlohmann::json;

json TinyV4() {
  return {{"model_type", "deepseek_v4"}, {"hidden_size", 64}, {"num_hidden_layers", 6}, {"num_attention_heads", 4},
          {"head_dim", 32}, {"vocab_size", 100}, {"q_lora_rank", 32}, {"o_groups", 2}, {"o_lora_rank", 16},
          {"index_n_heads", 2}, {"index_head_dim", 8}, {"hc_mult", 2}, {"n_routed_experts", 8}, {"num_experts_per_tok", 2},
          {"moe_intermediate_size", 16}, {"num_nextn_predict_layers", 1}};
}

bool HasLinear(const LayerKind& k, const std::string& name) {
  for (const auto& l : k.linears) {
    if (l.name == name) return true;
  }
  return false;
}

// 'C' compressed sparse (indexer present), 'H' heavily compressed, 'S' sliding only, per layer.
std::string Schedule(const ModelSpec& m) {
  std::string out;
  for (uint8_t idx : m.layer_kind) {
    const LayerKind& k = m.kinds[idx];
    out += HasLinear(k, "compressor.indexer.q_b_proj") ? 'C' : HasLinear(k, "compressor.kv_proj") ? 'H' : 'S';
  }
  return out;
}

std::string HashLayers(const ModelSpec& m) {
  std::string out;
  for (uint8_t idx : m.layer_kind) out += m.kinds[idx].extra_router_params == m.vocab_size * 2 ? 'h' : 'm';
  return out;
}

TEST(DeepseekV4, LayerScheduleFromLayerTypesLegacyRatiosAndDefaults) {
  Issues warnings;
  // No layer_types: two HCA layers, then HCA / CSA alternating from layer 2 (interleave index 0 is HCA);
  // the first three layers hash-routed.
  auto by_default = ModelSpecFromHfConfig(TinyV4(), "model", &warnings);
  ASSERT_TRUE(by_default.ok());
  EXPECT_EQ(Schedule(by_default.value()), "HHHCHC");
  EXPECT_EQ(HashLayers(by_default.value()), "hhhmmm");
  EXPECT_EQ(by_default.value().num_layers, 6);

  // Legacy compress_ratios (0 / 4 / 128), with the MTP layer's entry last as DeepSeek ships it.
  json legacy = TinyV4();
  legacy["compress_ratios"] = {0, 4, 128, 4, 0, 128, 4};
  legacy["num_hash_layers"] = 1;
  auto by_ratios = ModelSpecFromHfConfig(legacy, "model", &warnings);
  ASSERT_TRUE(by_ratios.ok());
  EXPECT_EQ(Schedule(by_ratios.value()), "SCHCSH");
  EXPECT_EQ(HashLayers(by_ratios.value()), "hmmmmm");
  // The MTP layer takes the 7th entry (CSA) and is top-k routed.
  const LayerKind& mtp = by_ratios.value().kinds[by_ratios.value().checkpoint.mtp_kind];
  EXPECT_TRUE(HasLinear(mtp, "compressor.indexer.q_b_proj"));
  EXPECT_EQ(mtp.extra_router_params, 8);

  // layer_types and mlp_layer_types win over the legacy keys.
  json listed = legacy;
  listed["layer_types"] = {"heavily_compressed_attention", "sliding_attention", "sliding_attention",
                           "compressed_sparse_attention", "sliding_attention", "sliding_attention"};
  listed["mlp_layer_types"] = {"moe", "hash_moe", "moe", "moe", "moe", "moe"};
  auto by_types = ModelSpecFromHfConfig(listed, "model", &warnings);
  ASSERT_TRUE(by_types.ok());
  EXPECT_EQ(Schedule(by_types.value()), "HSSCSS");
  EXPECT_EQ(HashLayers(by_types.value()), "mhmmmm");

  // Unknown entries and short lists are refused.
  json bad = TinyV4();
  bad["compress_ratios"] = {0, 4, 64, 4, 0, 128};
  EXPECT_FALSE(ModelSpecFromHfConfig(bad, "model", &warnings).ok());
  bad = TinyV4();
  bad["layer_types"] = {"sliding_attention"};
  EXPECT_FALSE(ModelSpecFromHfConfig(bad, "model", &warnings).ok());
}

bool WarnsApproximate(const Result& r, const std::string& words) {
  for (const auto& w : r.warnings) {
    if (w.code == "approximate" && w.message.find(words) != std::string::npos) return true;
  }
  return false;
}

TEST(DeepseekV4, MemoryTermsCarryApproximateWarnings) {
  json infer = {{"model", TinyV4()}, {"mode", "inference"}, {"inference", {{"prompt_len", 256}, {"new_tokens", 16}}}};
  auto s = ParseScenario(infer.dump());
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(WarnsApproximate(Estimate(s.value()), "compressed KV entries"));
  json train = {{"model", TinyV4()}, {"train", {{"method", "full"}, {"seq_len", 128}}}};
  auto t = ParseScenario(train.dump());
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(WarnsApproximate(Estimate(t.value()), "hyper-connection"));
}

}  // namespace
}  // namespace vramplan
