// The LongCat-Flash reader (core/src/model/families/longcat.cpp) on a small config: the two MLA
// sublayers per decoder layer, the shortcut MoE with zero-expert router slots and no zero-expert
// weights, and the MTP layer with its own embedding and no head. Counts worked by hand from
// transformers 4.57 modular_longcat_flash.py (LongcatFlashDecoderLayer, LongcatFlashMoE,
// LongcatFlashTopkRouter, LongcatFlashMLA) and vLLM longcat_flash_mtp.py (LongCatFlashMTP).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "inference/kv_cache.h"
#include "model/hf_config.h"
#include "vramplan/model_spec.h"

namespace vramplan {
namespace longcat_test {

using nlohmann::json;

// h 64, 2 decoder layers, 4 heads, q_lora 16, kv_lora 8, nope 8, rope 4, v 8, ffn 128, 4 experts of
// 32, 2 zero experts, top 3, vocabulary 100.
json Small() {
  return {{"model_type", "longcat_flash"}, {"hidden_size", 64},     {"num_layers", 2},
          {"num_attention_heads", 4},      {"vocab_size", 100},     {"ffn_hidden_size", 128},
          {"expert_ffn_hidden_size", 32},  {"q_lora_rank", 16},     {"kv_lora_rank", 8},
          {"qk_nope_head_dim", 8},         {"qk_rope_head_dim", 4}, {"v_head_dim", 8},
          {"n_routed_experts", 4},         {"zero_expert_num", 2},  {"moe_topk", 3}};
}

// One MLA: q_a_proj 64 x 16 + q_a_layernorm 16 + q_b_proj 16 x 4 x 12 + kv_a_proj_with_mqa
// 64 x (8 + 4) + kv_a_layernorm 8 + kv_b_proj 8 x 4 x (8 + 8) + o_proj 4 x 8 x 64.
constexpr int64_t kMla = 1024 + 16 + 768 + 768 + 8 + 512 + 2048;
constexpr int64_t kDense = 3 * 64 * 128;
constexpr int64_t kNorms = 2 * 64;  // input_layernorm.i, post_attention_layernorm.i

TEST(Longcat, SublayersMoeAndMtp) {
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(Small(), "model", &warnings);
  ASSERT_TRUE(spec.ok()) << spec.errors()[0].message;
  const ModelSpec& m = spec.value();
  ASSERT_EQ(m.num_layers, 4);  // two sublayers per decoder layer
  const LayerKind& first = m.kinds[m.layer_kind[0]];
  const LayerKind& second = m.kinds[m.layer_kind[1]];
  EXPECT_EQ(m.layer_kind[2], m.layer_kind[0]);
  EXPECT_EQ(first.mlp.num_experts, 0);
  EXPECT_TRUE(first.attention.mla && second.attention.mla);
  EXPECT_EQ(second.mlp.num_experts, 4);          // zero experts hold no weights
  EXPECT_EQ(second.mlp.zero_experts, 2);           // router slots without weights
  EXPECT_EQ(second.mlp.experts_per_token, 3);    // every router slot counted as a routed row
  EXPECT_EQ(second.mlp.shared_intermediate, 128);  // mlps.1 beside the MoE
  EXPECT_EQ(second.extra_router_params, 6);      // e_score_correction_bias over 4 + 2 slots
  const int64_t sub0 = kMla + kDense + kNorms;
  // + router.classifier 64 x 6 and its correction bias 6 + 4 experts x 3 x 64 x 32.
  const int64_t sub1 = sub0 + 64 * 6 + 6 + 4 * 3 * 64 * 32;
  const ParamCounts c = CountParams(m);
  EXPECT_EQ(c.total, 2 * (sub0 + sub1) + 2 * 100 * 64 + 64);
  // MTP: one MLA sublayer with a dense MLP and its two norms, enorm / hnorm / norm, eh_proj 128 x 64,
  // its own embed_tokens 100 x 64, no head.
  EXPECT_EQ(c.mtp, sub0 + 3 * 64 + 2 * 64 * 64 + 100 * 64);
  EXPECT_EQ(c.checkpoint_total, c.total + c.mtp);
  // The KV cache holds one MLA latent (kv_lora + rope) per sublayer.
  int64_t layers = 0;
  for (const KvGroup& g : KvGroups(m, Engine::kVllm, 1)) layers += g.layers;
  EXPECT_EQ(layers, 4);
}

// `config.zero_expert_num or 0`: null means no zero experts (absent: the config's default 256);
// num_nextn_predict_layers 0: a checkpoint without the MTP layer.
TEST(Longcat, NullZeroExpertsAndNoMtp) {
  json cfg = Small();
  cfg["zero_expert_num"] = nullptr;
  cfg["num_nextn_predict_layers"] = 0;
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(spec.ok()) << spec.errors()[0].message;
  const ModelSpec& m = spec.value();
  EXPECT_EQ(m.kinds[m.layer_kind[1]].extra_router_params, 4);
  const ParamCounts c = CountParams(m);
  EXPECT_EQ(c.checkpoint_total, c.total);
  // The router's top-k runs over the slots: moe_topk above experts + zero experts is refused.
  cfg["moe_topk"] = 5;
  EXPECT_FALSE(ModelSpecFromHfConfig(cfg, "model", &warnings).ok());
}

}  // namespace
}  // namespace vramplan
