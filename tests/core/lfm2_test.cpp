// LFM2 (model_type "lfm2"): the reader against transformers' Lfm2Config / Lfm2MLP arithmetic, the
// conv state each inference engine allocates per sequence (worked by hand from the engines' code),
// and the short-conv block's saved activations against a line-by-line torch port of
// Lfm2ShortConv.slow_forward (tests/fixtures/training/lfm2_shortconv_saved.py).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/hf_config.h"
#include "test_support.h"
#include "train/activations.h"
#include "train/precision.h"
#include "vramplan/estimate.h"
#include "vramplan/model_spec.h"

namespace vramplan {
namespace lfm2_test {

using nlohmann::json;

json Tiny(const json& extra = json::object()) {
  json c = {{"model_type", "lfm2"}, {"vocab_size", 64},         {"hidden_size", 16},     {"num_hidden_layers", 4},
            {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"block_ff_dim", 64}, {"block_multiple_of", 8},
            {"conv_L_cache", 3},       {"layer_types", {"conv", "full_attention", "conv", "conv"}}};
  for (auto it = extra.begin(); it != extra.end(); ++it) c[it.key()] = it.value();
  return c;
}

ModelSpec Read(const json& c) {
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(c, "model", &warnings);
  EXPECT_TRUE(spec.ok()) << (spec.ok() ? "" : spec.errors()[0].message);
  EXPECT_TRUE(warnings.empty()) << (warnings.empty() ? "" : warnings[0].message);
  return spec.ok() ? spec.value() : ModelSpec{};
}

int64_t Count(const MixerKind kind, const ModelSpec& m) {
  int64_t n = 0;
  for (uint8_t k : m.layer_kind) n += m.kinds[k].recurrent.kind == kind;
  return n;
}

// Lfm2MLP: int(2 x 64 / 3) = 42, x 1.0, rounded up to 8 = 48. Per conv layer: in_proj 16 x 48,
// conv 16 x 3, out_proj 16 x 16; attention: q 16 x 16, k, v 16 x 8, out_proj 16 x 16, q/k norms 4
// each; every layer: MLP 3 x 16 x 48 and two norms of 16; embedding 64 x 16 (tied) and embedding_norm.
TEST(Lfm2, CountsByHand) {
  const ModelSpec m = Read(Tiny());
  const int64_t conv = 16 * 48 + 16 * 3 + 16 * 16, attn = 16 * 16 + 2 * 16 * 8 + 16 * 16 + 2 * 4;
  const int64_t every = 3 * 16 * 48 + 2 * 16;
  EXPECT_EQ(CountParams(m).total, 64 * 16 + 16 + 3 * conv + attn + 4 * every);
  EXPECT_EQ(Count(MixerKind::kShortConv, m), 3);
  EXPECT_EQ(m.kinds[m.layer_kind[0]].mlp.intermediate, 48);
  // conv_bias: in_proj (48), out_proj (16) and the conv (16) get biases.
  EXPECT_EQ(CountParams(Read(Tiny({{"conv_bias", true}}))).total - CountParams(m).total, 3 * (48 + 16 + 16));
  // tie_embedding (the original key) wins over tie_word_embeddings, as Lfm2Config reads it.
  EXPECT_EQ(CountParams(Read(Tiny({{"tie_embedding", false}, {"tie_word_embeddings", true}}))).total - CountParams(m).total, 64 * 16);
}

TEST(Lfm2, FfnWidthAndLayerSelection) {
  // block_ff_dim wins over intermediate_size; without auto-adjust it is the width.
  EXPECT_EQ(Read(Tiny({{"intermediate_size", 999}})).kinds[0].mlp.intermediate, 48);
  EXPECT_EQ(Read(Tiny({{"block_auto_adjust_ff_dim", false}})).kinds[0].mlp.intermediate, 64);
  // A null multiplier skips the multiplier and the rounding: int(128 / 3) = 42.
  EXPECT_EQ(Read(Tiny({{"block_ffn_dim_multiplier", nullptr}})).kinds[0].mlp.intermediate, 42);
  // LFM2-350M's 6656: int(13312 / 3) = 4437, rounded up to 256 = 4608 (its w1 is 4608 x 1024).
  EXPECT_EQ(Read(Tiny({{"block_ff_dim", 6656}, {"block_multiple_of", 256}})).kinds[0].mlp.intermediate, 4608);
  // full_attn_idxs when layer_types is absent; every layer attends when neither is given.
  json idx = Tiny({{"full_attn_idxs", {0, 3}}});
  idx.erase("layer_types");
  EXPECT_EQ(Count(MixerKind::kShortConv, Read(idx)), 2);
  idx.erase("full_attn_idxs");
  EXPECT_EQ(Count(MixerKind::kShortConv, Read(idx)), 0);
  // A multiplier that pushes the width past the dimension limit is an out_of_range error naming the
  // key, not an overflowing cast (a scenario-fuzzer find: 1.5e23 after the multiplier).
  Issues overflow_warnings;
  auto huge = ModelSpecFromHfConfig(Tiny({{"block_ffn_dim_multiplier", 1e20}}), "model", &overflow_warnings);
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.errors()[0].code, "out_of_range");
  EXPECT_EQ(huge.errors()[0].field_path, "model.block_ffn_dim_multiplier");
  // vLLM sizes the state by conv_dim; a different one is refused.
  Issues warnings;
  EXPECT_FALSE(ModelSpecFromHfConfig(Tiny({{"conv_dim", 32}}), "model", &warnings).ok());
}

Result RunInference(const json& inf, const json& extra = json::object()) {
  json sc = {{"model", "LiquidAI/LFM2-1.2B"}, {"mode", "inference"}, {"inference", inf}};
  for (auto it = extra.begin(); it != extra.end(); ++it) sc[it.key()] = it.value();
  return testing_support::EstimateText(sc.dump());
}

// LFM2-1.2B: 10 conv layers of hidden 2048, conv_L_cache 3; 6 attention layers of 8 kv heads x 64.
TEST(Lfm2, ConvStatePerSequenceInEachEngine) {
  // vLLM: MambaStateShapeCalculator.short_conv_state_shape(tp, conv_dim, conv_L_cache) =
  // (3 - 1, 2048 / tp) in the model dtype (short_conv_state_dtype, mamba_cache_dtype auto).
  Result v = RunInference({{"engine", "vllm"}, {"max_model_len", 4096}}, {{"gpu", "a100-sxm-80gb"}});
  EXPECT_EQ(v.inference.recurrent_layers, 10);
  EXPECT_EQ(v.inference.state_bytes_per_sequence, 10 * 2 * 2048 * 2);
  EXPECT_EQ(v.inference.kv_bytes_per_token, 6 * 2 * 8 * 64 * 2);
  Result v2 = RunInference({{"engine", "vllm"}, {"max_model_len", 4096}}, {{"gpu", "a100-sxm-80gb"}, {"parallel", {{"gpus", 2}, {"tp", 2}}}});
  EXPECT_EQ(v2.inference.state_bytes_per_sequence, 10 * 2 * 1024 * 2);
  // llama.cpp: llama_hparams::n_embd_r() = n_embd x (n_shortconv_l_cache - 1) F32 per recurrent
  // layer and sequence; n_embd_s() = ssm_d_state x ssm_d_inner = 0.
  Result l = RunInference({{"engine", "llama_cpp"}, {"weights", "gguf_q4_k_m"}, {"prompt_len", 1000}, {"new_tokens", 24}, {"batch_size", 2}});
  EXPECT_EQ(l.inference.state_bytes_per_sequence, 10 * 2048 * 2 * 4);
  // transformers: Lfm2HybridConvCache.__init__ allocates a conv_state (batch, hidden, conv_L_cache)
  // in the model dtype for every one of the 16 layers, attention layers included.
  Result t = RunInference({{"prompt_len", 1000}, {"new_tokens", 24}});
  EXPECT_EQ(t.inference.state_bytes_per_sequence, 16 * 2048 * 3 * 2);
  EXPECT_EQ(t.inference.recurrent_layers, 10);
}

// The conv block's own saves beyond its linears' inputs, against the torch port's count of distinct
// saved storages (lfm2_shortconv_saved.py; its totals include in_proj's and out_proj's inputs,
// 2 x b x s x h elements): (b, s, h, L) = (1, 8, 16, 3) fp32 3,712 B, (2, 5, 32, 3) bf16 4,736 B,
// (1, 7, 8, 4) fp32 1,664 B.
TEST(Lfm2, ShortConvSavesMatchTheTorchPort) {
  struct Case {
    int64_t b, s, h, L;
    Precision p;
    int64_t dt, measured;
  };
  for (const Case& c : {Case{1, 8, 16, 3, Precision::kFp32, 4, 3712}, Case{2, 5, 32, 3, Precision::kBf16, 2, 4736},
                        Case{1, 7, 8, 4, Precision::kFp32, 4, 1664}}) {
    const ModelSpec m = Read(Tiny({{"hidden_size", c.h}, {"conv_L_cache", c.L}, {"layer_types", {"conv", "conv", "conv", "conv"}}}));
    const LayerKind& conv = m.kinds[m.layer_kind[0]];
    LayerKind plain = conv;
    plain.recurrent.kind = MixerKind::kNone;
    ActivationContext ctx;
    ctx.batch = c.b;
    ctx.seq = c.s;
    ctx.prec = PrecisionFor(c.p);
    const LayerPlan full{true, true, false};
    const int64_t mixer = ComputeLayerSaved(conv, full, ctx).total_bytes - ComputeLayerSaved(plain, full, ctx).total_bytes;
    EXPECT_EQ(mixer, c.measured - 2 * c.b * c.s * c.h * c.dt) << c.b << " " << c.s << " " << c.h << " " << c.L;
  }
}

TEST(Lfm2, TrainingCarriesTheTorchPathWarning) {
  Result r = testing_support::EstimateText(
      json({{"model", "LiquidAI/LFM2-350M"}, {"mode", "train"}, {"train", {{"seq_len", 512}, {"micro_batch_size", 1}}}}).dump());
  bool found = false;
  for (const auto& w : r.warnings) found = found || w.message.find("slow_forward") != std::string::npos;
  EXPECT_TRUE(found);
}

// lfm2_moe (LFM2-8B-A1B's shape, smaller): the first num_dense_layers keep intermediate_size
// unadjusted; the rest a router of num_experts, the experts and the expert_bias buffer.
TEST(Lfm2, MoeLayersByHand) {
  json c = Tiny({{"model_type", "lfm2_moe"}, {"intermediate_size", 40}, {"moe_intermediate_size", 8}, {"num_dense_layers", 1},
                 {"num_experts", 4}, {"num_experts_per_tok", 2}});
  c.erase("block_ff_dim");
  const ModelSpec m = Read(c);
  const int64_t conv = 16 * 48 + 16 * 3 + 16 * 16, attn = 16 * 16 + 2 * 16 * 8 + 16 * 16 + 2 * 4;
  const int64_t moe = 16 * 4 + 4 * 3 * 16 * 8 + 4;
  EXPECT_EQ(CountParams(m).total, 64 * 16 + 16 + 3 * conv + attn + 3 * 16 * 40 + 3 * moe + 4 * 2 * 16);
  EXPECT_EQ(m.kinds[m.layer_kind[0]].mlp.num_experts, 0);
  EXPECT_EQ(m.kinds[m.layer_kind[3]].mlp.num_experts, 4);
  // Lfm2MoeConfig has no full_attn_idxs fallback: layer_types is required.
  c.erase("layer_types");
  Issues warnings;
  EXPECT_FALSE(ModelSpecFromHfConfig(c, "model", &warnings).ok());
}

}  // namespace
}  // namespace vramplan
