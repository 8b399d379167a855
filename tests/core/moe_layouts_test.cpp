// The rules of the JetMoE, GraniteMoeShared and AFMoE readers that the published totals of
// tests/fixtures/param_counts.json do not pin: JetMoE's routed attention in the active count and the
// remote-code key names, GraniteMoeShared's shared MLP, AFMoE's dense layers and sliding pattern.
// Expected counts are worked by hand from the transformers modeling files cited in each reader.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/hf_config.h"
#include "vramplan/model_spec.h"

namespace vramplan {
namespace moe_layouts_test {

using nlohmann::json;

ModelSpec Read(const json& cfg) {
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  EXPECT_TRUE(spec.ok()) << (spec.ok() ? "" : spec.errors()[0].message);
  EXPECT_TRUE(warnings.empty()) << (warnings.empty() ? "" : warnings[0].message);
  return spec.ok() ? spec.value() : ModelSpec{};
}

// jetmoe-8b (the param_counts.json row) from the remote-code key names. The attention experts
// are held as one q and one o projection over all experts, so the active count takes all of them:
// per layer norms 4,096 + q / o 2 x 8 x 2,048 x 2,048 + MoA router 16,384 + bias 2,048 + kv_proj
// 8,388,608 + MoE 2 of 8 experts 2 x (11,264 + 5,632) x 2,048 + router 16,384 + bias 2,048 =
// 144,744,448 (a token runs 2 of the 8 attention experts: 50,331,648 fewer); 24 layers + the tied
// embedding 65,536,000 + norm 2,048.
TEST(MoeLayouts, JetMoeRemoteCodeKeysAndAttentionExperts) {
  const json cfg = {{"model_type", "jetmoe"},  {"hidden_size", 2048},       {"ffn_hidden_size", 5632},
                    {"kv_channels", 128},      {"moe_num_experts", 8},      {"moe_top_k", 2},
                    {"num_hidden_layers", 24}, {"num_key_value_heads", 16}, {"vocab_size", 32000}};
  const ModelSpec m = Read(cfg);
  const ParamCounts c = CountParams(m);
  EXPECT_EQ(c.total, 8522237952);
  EXPECT_EQ(c.active_per_token, 24LL * 144744448 + 65536000 + 2048);
  const LayerKind& k = m.kinds[m.layer_kind[0]];
  EXPECT_EQ(k.attention.num_heads, 32);  // kv heads x top-k
  EXPECT_EQ(k.attention.num_kv_heads, 16);
  EXPECT_EQ(k.attention.head_dim, 128);
  EXPECT_EQ(k.mlp.num_experts, 8);
  EXPECT_TRUE(m.tied_embeddings);
  // kv_proj and the MLP router are LoRA targets; the expert tensors are not nn.Linear.
  int64_t targetable = 0;
  for (const LinearSpec& l : k.linears) targetable += l.lora_targetable ? 1 : 0;
  EXPECT_EQ(targetable, 2);
}

// GraniteMoeSharedDecoderLayer: the granitemoe layer plus shared_mlp (input_linear h -> 2 x S,
// output_linear S -> h); shared_intermediate_size 0 builds none.
TEST(MoeLayouts, GraniteMoeSharedAddsTheSharedMlp) {
  json cfg = {{"model_type", "granitemoe"}, {"hidden_size", 64},          {"intermediate_size", 32},
              {"num_hidden_layers", 3},     {"num_attention_heads", 4},   {"num_key_value_heads", 2},
              {"vocab_size", 100},          {"num_local_experts", 4},     {"num_experts_per_tok", 2}};
  const int64_t base = CountParams(Read(cfg)).total;
  cfg["model_type"] = "granitemoeshared";
  EXPECT_EQ(CountParams(Read(cfg)).total, base);  // shared_intermediate_size defaults to 0
  cfg["shared_intermediate_size"] = 48;
  const ModelSpec m = Read(cfg);
  const ParamCounts c = CountParams(m);
  EXPECT_EQ(c.total, base + 3 * (64 * 96 + 48 * 64));
  EXPECT_EQ(c.shared_experts, 3 * (64 * 96 + 48 * 64));
  EXPECT_EQ(m.kinds[m.layer_kind[0]].mlp.shared_intermediate, 48);
}

// AFMoE: the first num_dense_layers layers are dense; the MoE layers store an fp32 expert_bias;
// without layer_types every global_attn_every_n_layers-th layer is global, the rest slide.
TEST(MoeLayouts, AfmoeDenseLayersAndSlidingPattern) {
  const json cfg = {{"model_type", "afmoe"},       {"hidden_size", 64},        {"intermediate_size", 96},
                    {"moe_intermediate_size", 16}, {"num_hidden_layers", 8},   {"num_dense_layers", 2},
                    {"num_attention_heads", 4},    {"num_key_value_heads", 2}, {"head_dim", 16},
                    {"num_experts", 8},            {"num_experts_per_tok", 2}, {"num_shared_experts", 1},
                    {"sliding_window", 32},        {"vocab_size", 100}};
  const ModelSpec m = Read(cfg);
  const LayerKind& dense = m.kinds[m.layer_kind[0]];
  const LayerKind& moe = m.kinds[m.layer_kind[4]];
  EXPECT_EQ(dense.mlp.num_experts, 0);
  EXPECT_EQ(moe.mlp.num_experts, 8);
  EXPECT_EQ(moe.extra_router_params, 8);
  EXPECT_EQ(m.kinds[m.layer_kind[2]].attention.sliding_window, 32);
  EXPECT_EQ(m.kinds[m.layer_kind[3]].attention.sliding_window, 0);  // (3 + 1) % 4 == 0: global
  // Attention: q / gate / o 3 x 64 x 64, k / v 2 x 64 x 32, q_norm / k_norm 2 x 16, four norms 4 x 64.
  const int64_t attn = 3 * 64 * 64 + 2 * 64 * 32 + 32 + 256;
  const int64_t moe_mlp = 64 * 8 + 8 * 3 * 64 * 16 + 3 * 64 * 16 + 8;
  EXPECT_EQ(CountParams(m).total, 2 * 100 * 64 + 64 + 8 * attn + 2 * 3 * 64 * 96 + 6 * moe_mlp);
}

}  // namespace
}  // namespace vramplan
