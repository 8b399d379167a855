// MiniMax-Text-01 / MiniMax-M1 (model_types minimax, minimax_text_01, minimax_m1): what a Lightning
// attention layer saves in training, against a port of transformers' MiniMaxLightningAttention.forward
// that lists every saved storage (tests/fixtures/training/minimax_lightning_saved.py), the
// approximate warning a training estimate carries, and the per-sequence Lightning state each
// inference engine keeps (worked by hand from vLLM's and transformers' code; llama.cpp has no such
// architecture).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/hf_config.h"
#include "test_support.h"
#include "train/activations.h"
#include "train/precision.h"
#include "vramplan/estimate.h"
#include "vramplan/model_spec.h"

namespace vramplan {
namespace minimax_test {

using nlohmann::json;
using testing_support::GpuTerm;

ModelSpec Read(const json& c) {
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(c, "model", &warnings);
  EXPECT_TRUE(spec.ok()) << (spec.ok() ? "" : spec.errors()[0].message);
  return spec.ok() ? spec.value() : ModelSpec{};
}

// The port's shape: 4 heads x head_dim 8, block_size 16, hidden 24, Lightning layers only.
json Tiny() {
  return {{"model_type", "minimax"},
          {"vocab_size", 64},
          {"hidden_size", 24},
          {"num_hidden_layers", 4},
          {"num_attention_heads", 4},
          {"num_key_value_heads", 2},
          {"head_dim", 8},
          {"intermediate_size", 32},
          {"num_local_experts", 4},
          {"num_experts_per_tok", 2},
          {"block_size", 16},
          {"layer_types", {"linear_attention", "linear_attention", "linear_attention", "linear_attention"}}};
}

// MiniMax-M1-80k's config row (param_counts_hybrid.json): 70 Lightning layers of 64 heads x 128,
// 10 softmax layers (every 8th), hidden 6,144.
json M1Config() {
  const json table = testing_support::LoadFixture("param_counts_hybrid.json");
  for (const auto& row : table["models"]) {
    if (row["id"] == "MiniMaxAI/MiniMax-M1-80k") return row["config"];
  }
  return json::object();
}

const LayerKind* LightningKind(const ModelSpec& m) {
  for (const LayerKind& k : m.kinds) {
    if (k.recurrent.kind == MixerKind::kLightning) return &k;
  }
  return nullptr;
}

// The port's totals (PyTorch 1.13.1, CPU; mean() saves x^2 there: norm_saves_squared) include the
// input x that qkv_proj and output_gate share (b x s x 24) and out_proj's input (b x s x 32), which
// the layer's linears count; the rest is the Lightning layer's own saves.
TEST(MiniMax, LightningSavesMatchTheTorchPort) {
  struct Case {
    int64_t b, s;
    bool mask;
    Precision p;
    int64_t dt, measured;
  };
  const ModelSpec m = Read(Tiny());
  const LayerKind* lightning = LightningKind(m);
  ASSERT_NE(lightning, nullptr);
  EXPECT_EQ(lightning->recurrent.block_size, 16);
  LayerKind plain = *lightning;
  plain.recurrent.kind = MixerKind::kNone;
  for (const Case& c : {Case{1, 40, false, Precision::kFp32, 4, 85952}, Case{2, 40, false, Precision::kFp32, 4, 182112},
                        Case{1, 40, true, Precision::kFp32, 4, 91112}, Case{2, 40, true, Precision::kFp32, 4, 171952},
                        Case{1, 64, false, Precision::kFp32, 4, 139568}, Case{3, 64, true, Precision::kFp32, 4, 418800},
                        Case{2, 7, false, Precision::kFp32, 4, 30104}, Case{2, 40, true, Precision::kBf16, 2, 96416},
                        Case{1, 20, true, Precision::kBf16, 2, 25004}}) {
    ActivationContext ctx;
    ctx.batch = c.b;
    ctx.seq = c.s;
    ctx.prec = PrecisionFor(c.p);
    ctx.norm_saves_squared = true;
    ctx.attention_mask = c.mask;
    const LayerPlan full{true, true, false};
    const int64_t mixer = ComputeLayerSaved(*lightning, full, ctx).total_bytes - ComputeLayerSaved(plain, full, ctx).total_bytes;
    EXPECT_EQ(mixer, c.measured - c.b * c.s * (24 + 32) * c.dt) << c.b << " " << c.s << " " << c.mask << " " << c.dt;
  }
}

// One M1 Lightning layer, b = 1, s = 4,096, bf16, full fine-tuning, attention mask passed, PyTorch
// >= 2.2 (mean() saves no x^2). w = 64 x 128 = 8,192; 16 blocks of 256.
TEST(MiniMax, M1LightningLayerSavesWorkedByHand) {
  const ModelSpec m = Read(M1Config());
  const LayerKind* lightning = LightningKind(m);
  ASSERT_NE(lightning, nullptr);
  ActivationContext ctx;
  ctx.batch = 1;
  ctx.seq = 4096;
  ctx.prec = PrecisionFor(Precision::kBf16);
  const int64_t w = 8192, T = 4096;
  // silu input 3w; b = 1 with the mask: the silu output (3w) the q / k / v views keep, the masked v
  // (w), q * query_decay and k * key_decay (2w); sigmoid output and normed output (2w); the bool mask.
  const int64_t per_token = 2 * (3 * w + 6 * w + 2 * w) + 1;
  // 16 blocks' scores 64 x 256 x 256, 16 states 64 x 128 x 128, less block 0's q * query_decay.
  const int64_t per_sequence = 2 * (16 * 64 * 256 * 256 + 16 * 64 * 128 * 128 - 64 * 128 * 256);
  const int64_t block_decays = 2 * 64 * 15;
  // MiniMaxRMSNorm(8,192) in bf16: the fp32 copy, the fp32 rsqrt per row, the bf16 normed y.
  const int64_t norm = T * (4 * w + 4 + 2 * w);
  EXPECT_EQ(LightningSavedBytes(lightning->recurrent, 2, true, ctx), T * per_token + per_sequence + block_decays + norm);
  EXPECT_EQ(T * per_token + per_sequence + block_decays + norm, 1103124352);
}

TEST(MiniMax, TrainingCarriesTheLightningWarningAndCountsIt) {
  const json cfg = M1Config();
  ASSERT_EQ(cfg["model_type"], "minimax_m1");
  Result r = testing_support::EstimateText(
      json({{"model", cfg}, {"mode", "train"}, {"train", {{"seq_len", 2048}, {"micro_batch_size", 1}, {"method", "lora"}}}}).dump());
  bool lightning = false, generic = false;
  for (const auto& w : r.warnings) {
    lightning = lightning || (w.code == "approximate" && w.message.find("MiniMax Lightning attention layers") != std::string::npos);
    generic = generic || w.message.find("linear-attention / Mamba layers") != std::string::npos;
  }
  EXPECT_TRUE(lightning);
  EXPECT_FALSE(generic) << "the fla / mamba_ssm warning does not describe Lightning layers";
  EXPECT_GT(GpuTerm(r, "activations"), 0);
  // The Lightning layers' own saves are in the layer total: more than the same layer without them.
  const ModelSpec m = Read(cfg);
  const LayerKind* k = LightningKind(m);
  ASSERT_NE(k, nullptr);
  LayerKind plain = *k;
  plain.recurrent.kind = MixerKind::kNone;
  ActivationContext ctx;
  ctx.seq = 2048;
  ctx.prec = PrecisionFor(Precision::kBf16);
  const LayerPlan lora{true, false, true};
  EXPECT_GT(ComputeLayerSaved(*k, lora, ctx).total_bytes, ComputeLayerSaved(plain, lora, ctx).total_bytes);
}

Result Infer(const json& inf, const json& extra = json::object()) {
  json sc = {{"model", M1Config()}, {"mode", "inference"}, {"inference", inf}};
  for (auto it = extra.begin(); it != extra.end(); ++it) sc[it.key()] = it.value();
  return testing_support::EstimateText(sc.dump());
}

TEST(MiniMax, LightningStatePerSequenceInEachEngine) {
  // vLLM MambaStateShapeCalculator.linear_attention_state_shape (num_heads // tp, head_dim,
  // head_dim) in the model dtype (linear_attention_state_dtype), no conv state: 70 layers x 64 x
  // 128 x 128 x 2 B = 146,800,640 B = 140 MiB per sequence at tp = 1.
  Result v = Infer({{"engine", "vllm"}, {"max_model_len", 32768}}, {{"gpu", "h200-sxm-141gb"}});
  EXPECT_EQ(v.inference.recurrent_layers, 70);
  EXPECT_EQ(v.inference.state_bytes_per_sequence, 70 * 64 * 128 * 128 * 2);
  EXPECT_EQ(70LL * 64 * 128 * 128 * 2, 140LL << 20);
  // The 10 softmax layers: 8 kv heads x 128, K and V, bf16.
  EXPECT_EQ(v.inference.kv_bytes_per_token, 10 * 2 * 8 * 128 * 2);
  // tp = 8: 64 // 8 = 8 heads per rank, 17.5 MiB.
  Result v8 = Infer({{"engine", "vllm"}, {"max_model_len", 32768}}, {{"gpu", "h200-sxm-141gb"}, {"parallel", {{"gpus", 8}, {"tp", 8}}}});
  EXPECT_EQ(v8.inference.state_bytes_per_sequence, 70 * 8 * 128 * 128 * 2);
  // transformers MiniMaxCache: the linear cache is attn_weights_inter, (batch, 64, 128, 128) in the
  // model dtype (zeros(...).to(value_states)).
  Result t = Infer({{"prompt_len", 1000}, {"new_tokens", 24}});
  EXPECT_EQ(t.inference.state_bytes_per_sequence, 140LL << 20);
  // llama.cpp: no MiniMax-Text-01 architecture; the engine says it would not start.
  Result l = Infer({{"engine", "llama_cpp"}, {"weights", "gguf_q4_k_m"}, {"prompt_len", 1000}, {"new_tokens", 24}});
  bool refused = false;
  for (const auto& w : l.warnings) refused = refused || (w.code == "would_not_start" && w.field_path == "inference.engine");
  EXPECT_TRUE(refused);
}

}  // namespace
}  // namespace vramplan
