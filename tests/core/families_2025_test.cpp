// The layer rules of the Hunyuan, EXAONE 3, dots.llm1, Ling (bailing_moe) and Apertus readers
// that the published totals of tests/fixtures/param_counts.json do not exercise: per-layer
// expert lists, the keys each reader refuses rather than guesses, and which router biases are
// stored. Expected counts are worked by hand from the modeling files cited in each reader.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/hf_config.h"
#include "vramplan/model_spec.h"

namespace vramplan {
namespace families_2025_test {

using nlohmann::json;

json Small(const char* type) {
  return {{"model_type", type},          {"hidden_size", 64}, {"intermediate_size", 128}, {"num_hidden_layers", 3},
          {"num_attention_heads", 4},    {"num_key_value_heads", 2}, {"vocab_size", 100}};
}

const LayerKind& Kind(const ModelSpec& m, size_t layer) { return m.kinds[m.layer_kind[layer]]; }

// HunYuanMoEV1Gate / HunYuanMoEV1Moe: num_experts and moe_topk may be lists, one entry per layer;
// every layer has a router gate.wg, its experts and one shared_mlp of intermediate_size.
TEST(Families2025, HunyuanMoePerLayerExperts) {
  json cfg = Small("hunyuan_v1_moe");
  cfg["num_experts"] = {4, 8, 8};
  cfg["moe_topk"] = {1, 2, 2};
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(spec.ok()) << spec.errors()[0].message;
  const ModelSpec& m = spec.value();
  EXPECT_EQ(Kind(m, 0).mlp.num_experts, 4);
  EXPECT_EQ(Kind(m, 1).mlp.num_experts, 8);
  EXPECT_EQ(Kind(m, 1).mlp.experts_per_token, 2);
  // Layer 0: q 64x64, k/v 64x32 each, o 64x64, two norms 64, query/key_layernorm 16 each,
  // router 64x4, 4 experts + 1 shared of 3 x 64 x 128.
  const int64_t layer0 = 4096 + 2 * 2048 + 4096 + 2 * 64 + 2 * 16 + 64 * 4 + 5 * 3 * 64 * 128;
  const int64_t layer12 = 4096 + 2 * 2048 + 4096 + 2 * 64 + 2 * 16 + 64 * 8 + 9 * 3 * 64 * 128;
  EXPECT_EQ(CountParams(m).total, layer0 + 2 * layer12 + 2 * 100 * 64 + 64);
  EXPECT_TRUE(warnings.empty());
}

TEST(Families2025, HunyuanRefusesWhatTransformersAndTheRemoteCodeCountDifferently) {
  Issues warnings;
  json cla = Small("hunyuan_v1_dense");
  cla["use_cla"] = true;
  EXPECT_FALSE(ModelSpecFromHfConfig(cla, "model", &warnings).ok());
  json wide = Small("hunyuan_v1_moe");
  wide["num_experts"] = 4;
  wide["moe_intermediate_size"] = 64;  // the remote code's experts would be 64 wide, transformers' 128
  EXPECT_FALSE(ModelSpecFromHfConfig(wide, "model", &warnings).ok());
  wide["moe_intermediate_size"] = {128, 128, 128};
  EXPECT_TRUE(ModelSpecFromHfConfig(wide, "model", &warnings).ok());
}

// ExaoneConfig: num_layers, intermediate_size 4 x hidden when absent, tied embeddings by default;
// ExaoneSelfAttention: head_dim = hidden / heads.
TEST(Families2025, ExaoneDefaults) {
  json cfg = Small("exaone");
  cfg.erase("num_hidden_layers");
  cfg.erase("intermediate_size");
  cfg["num_layers"] = 2;
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(spec.ok()) << spec.errors()[0].message;
  const ModelSpec& m = spec.value();
  EXPECT_TRUE(m.tied_embeddings);
  const int64_t layer = 4096 + 2 * 2048 + 4096 + 3 * 64 * 256 + 2 * 64;
  EXPECT_EQ(CountParams(m).total, 2 * layer + 100 * 64 + 64);
}

// Dots1DecoderLayer (DeepseekV3DecoderLayer) reads only first_k_dense_replace; moe_layer_freq,
// which the released configs carry, changes nothing. The router keeps its correction bias.
TEST(Families2025, Dots1DenseLayersFromFirstKDenseReplaceOnly) {
  json cfg = Small("dots1");
  cfg["n_routed_experts"] = 8;
  cfg["num_experts_per_tok"] = 2;
  cfg["moe_intermediate_size"] = 16;
  cfg["n_shared_experts"] = 2;
  cfg["first_k_dense_replace"] = 1;
  cfg["moe_layer_freq"] = 2;
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(spec.ok()) << spec.errors()[0].message;
  const ModelSpec& m = spec.value();
  EXPECT_EQ(Kind(m, 0).mlp.num_experts, 0);
  EXPECT_EQ(Kind(m, 1).mlp.num_experts, 8);
  EXPECT_EQ(Kind(m, 2).mlp.num_experts, 8);
  EXPECT_EQ(Kind(m, 1).extra_router_params, 8);
  EXPECT_EQ(Kind(m, 1).mlp.shared_intermediate, 32);
  cfg["sliding_window"] = 32;
  cfg["max_window_layers"] = 2;
  auto sliding = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(sliding.ok());
  EXPECT_EQ(Kind(sliding.value(), 1).attention.sliding_window, 0);
  EXPECT_EQ(Kind(sliding.value(), 2).attention.sliding_window, 32);
}

// Ling 2.0 (BailingMoeV2ForCausalLM) stores the router's expert_bias; Ling 1.x without
// moe_router_enable_expert_bias does not. The 2.0 MTP layers are refused for now.
TEST(Families2025, BailingExpertBiasAndMtp) {
  json cfg = Small("bailing_moe");
  cfg["num_experts"] = 8;
  cfg["num_experts_per_tok"] = 2;
  cfg["moe_intermediate_size"] = 16;
  cfg["num_shared_experts"] = 1;
  cfg["first_k_dense_replace"] = 1;
  cfg["architectures"] = {"BailingMoeForCausalLM"};
  Issues warnings;
  auto v1 = ModelSpecFromHfConfig(cfg, "model", &warnings);
  cfg["architectures"] = {"BailingMoeV2ForCausalLM"};
  auto v2 = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(v1.ok() && v2.ok());
  EXPECT_EQ(Kind(v1.value(), 1).extra_router_params, 0);
  EXPECT_EQ(Kind(v2.value(), 1).extra_router_params, 8);
  EXPECT_EQ(Kind(v2.value(), 0).mlp.num_experts, 0);
  // query_key_value (4 + 2 x 2) x 16 = 128 wide, dense 64 x 64.
  EXPECT_EQ(Kind(v2.value(), 0).linears[0].out_features, 128);
  cfg["num_nextn_predict_layers"] = 1;
  EXPECT_FALSE(ModelSpecFromHfConfig(cfg, "model", &warnings).ok());
}

// ApertusMLP: up_proj / down_proj without bias whatever mlp_bias says; xIELU's four scalars.
TEST(Families2025, ApertusMlpAndXielu) {
  json cfg = Small("apertus");
  cfg["mlp_bias"] = true;
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(spec.ok()) << spec.errors()[0].message;
  const int64_t layer = 4096 + 2 * 2048 + 4096 + 2 * 64 * 128 + 2 * 64 + 2 * 16 + 4;
  EXPECT_EQ(CountParams(spec.value()).total, 3 * layer + 2 * 100 * 64 + 64);
  cfg["hidden_act"] = "silu";
  auto silu = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(silu.ok());
  EXPECT_EQ(CountParams(silu.value()).total, 3 * (layer - 4) + 2 * 100 * 64 + 64);
}

}  // namespace
}  // namespace vramplan
