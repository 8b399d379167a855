// gpt-oss's eager attention with sinks in training (transformers modeling_gpt_oss.py
// eager_attention_forward): the core's saved bytes and its forward / backward peaks against a
// line-by-line torch port measured on CPU (tests/fixtures/training/gpt_oss_eager_saved.py), and the
// SDPA request that transformers cannot honour (GptOssPreTrainedModel._supports_sdpa = False).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/hf_config.h"
#include "test_support.h"
#include "train/activations.h"
#include "train/precision.h"
#include "vramplan/estimate.h"
#include "vramplan/model_spec.h"

namespace vramplan {
namespace gpt_oss_attention_test {

using nlohmann::json;

ModelSpec Tiny(int64_t heads, int64_t kv_heads, int64_t head_dim) {
  const json c = {{"model_type", "gpt_oss"},          {"vocab_size", 64},      {"hidden_size", 16},
                  {"num_hidden_layers", 2},           {"num_attention_heads", heads},
                  {"num_key_value_heads", kv_heads}, {"head_dim", head_dim}, {"intermediate_size", 8},
                  {"num_local_experts", 4},           {"num_experts_per_tok", 2}, {"sliding_window", 128}};
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(c, "model", &warnings);
  EXPECT_TRUE(spec.ok()) << (spec.ok() ? "" : spec.errors()[0].message);
  return spec.ok() ? spec.value() : ModelSpec{};
}

// One measured case of gpt_oss_eager_saved.py: (b, heads, kv heads, s, head_dim, precision, sinks
// trainable) and what it printed: saved bytes (distinct storages; q, k, v themselves and 0-dim
// scalars left out), the forward peak above the inputs, the backward peak above what was live.
struct Case {
  int64_t b, a, kv, s, d;
  Precision p;
  bool sinks_trainable;
  int64_t saved, forward_peak, backward_peak;
};

const Case kCases[] = {
    {1, 4, 2, 16, 8, Precision::kFp32, true, 8960, 17672, 15104},
    {2, 4, 1, 12, 8, Precision::kBf16, false, 6336, 11912, 6976},
    {1, 8, 2, 33, 16, Precision::kBf16, true, 36960, 72872, 62304},
    {2, 6, 6, 10, 4, Precision::kFp32, false, 6240, 16808, 17760},
    {1, 4, 2, 16, 8, Precision::kAmpBf16, true, 8960, 15624, 14080},
    {2, 8, 2, 24, 16, Precision::kAmpBf16, false, 84480, 147464, 127488},
};

ActivationContext Context(const Case& c) {
  ActivationContext ctx;
  ctx.batch = c.b;
  ctx.seq = c.s;
  ctx.prec = PrecisionFor(c.p);
  ctx.attention = AttentionImpl::kEager;
  return ctx;
}

// The walk's core counts q' (matmul's saved q, the script's input), the float64 scale (8 B) and,
// for MHA, k' and v' themselves (repeat_kv returns its input: the script's inputs, the layer's
// RoPE and v_proj outputs) beside what the script measured; the rest is the measured set.
TEST(GptOssEagerAttention, SavedBytesMatchTheTorchPort) {
  for (const Case& c : kCases) {
    const ModelSpec m = Tiny(c.a, c.kv, c.d);
    const LayerKind& kind = m.kinds[m.layer_kind[1]];
    ASSERT_TRUE(kind.attention.sinks);
    const LayerPlan plan{true, c.sinks_trainable, false};
    const ActivationContext ctx = Context(c);
    const LayerSaved saved = ComputeLayerSaved(kind, plan, ctx);
    const int64_t head_bytes = ctx.prec.matmul * c.b * c.s * c.a * c.d;  // q', k' or v' (head_dim = v_head_dim here)
    const int64_t inputs = head_bytes + (c.kv == c.a ? 2 * head_bytes : 0);
    EXPECT_EQ(saved.attention_core_bytes, c.saved + inputs + 8) << c.b << " " << c.a << " " << c.kv << " " << c.s;
  }
}

// Beside k' and v' (repeat_kv's copies, none for MHA) and the scale, SinkScoresForwardBytes is the
// measured forward peak for every case but MQA at b > 1, where the repeated k and v are views and
// matmul copies v only at the end (+2,112 B here). Case 6 (amp, s = 24 < 2 x 16) peaks at the
// core's end, the others at the softmax.
TEST(GptOssEagerAttention, ForwardPeakAtTheSoftmax) {
  for (const Case& c : kCases) {
    if (c.kv == 1 && c.b > 1) continue;
    const PrecisionModel p = PrecisionFor(c.p);
    const int64_t copies = c.kv == c.a ? 0 : 2 * p.matmul * c.b * c.s * c.a * c.d;
    EXPECT_EQ(SinkScoresForwardBytes(p, c.b, c.a, c.s, c.d) + copies + 8, c.forward_peak) << c.b << " " << c.a << " " << c.s;
  }
}

// The backward above what the forward left: exact for every case but MQA at b > 1 (there an upper
// bound, 2,048 B over: v's gradient is taken at the KV heads' width sooner).
TEST(GptOssEagerAttention, BackwardPeak) {
  for (const Case& c : kCases) {
    const int64_t modeled = SinkScoresBackwardBytes(PrecisionFor(c.p), c.b, c.a, c.s, c.d);
    if (c.kv == 1 && c.b > 1) {
      EXPECT_GE(modeled, c.backward_peak);
      EXPECT_LE(modeled - c.backward_peak, 2048);
    } else {
      EXPECT_EQ(modeled, c.backward_peak) << c.b << " " << c.a << " " << c.s;
    }
  }
}

// Frozen q / k / v with the sinks frozen too: the core saves nothing (no gradient reaches it).
TEST(GptOssEagerAttention, NothingSavedWithoutAGradient) {
  const ModelSpec m = Tiny(4, 2, 8);
  ActivationContext ctx = Context(kCases[0]);
  const LayerSaved saved = ComputeLayerSaved(m.kinds[m.layer_kind[1]], LayerPlan{false, false, false}, ctx);
  EXPECT_EQ(saved.attention_core_bytes, 0);
}

// transformers has no SDPA path for gpt-oss: the default step runs eager, and an SDPA estimate is
// the eager one with an unsupported_combination warning on train.attention. FlashAttention (the
// hub kernel with sinks) is walked as asked.
TEST(GptOssEagerAttention, SdpaFallsBackToEager) {
  auto run = [](const char* attention) {
    return testing_support::EstimateText(json({{"mode", "train"},
                                               {"gpu", "h100-sxm-80gb"},
                                               {"model", "openai/gpt-oss-20b"},
                                               {"train",
                                                {{"method", "lora"},
                                                 {"precision", "bf16"},
                                                 {"micro_batch_size", 1},
                                                 {"seq_len", 2048},
                                                 {"gradient_checkpointing", true},
                                                 {"attention", attention}}}})
                                             .dump());
  };
  const Result sdpa = run("sdpa"), eager = run("eager"), flash = run("flash");
  EXPECT_TRUE(testing_support::HasWarning(sdpa, "unsupported_combination", "train.attention"));
  EXPECT_FALSE(testing_support::HasWarning(eager, "unsupported_combination", "train.attention"));
  EXPECT_FALSE(testing_support::HasWarning(flash, "unsupported_combination", "train.attention"));
  EXPECT_EQ(sdpa.gpu.peak_allocated_bytes, eager.gpu.peak_allocated_bytes);
  EXPECT_GT(eager.gpu.peak_allocated_bytes, flash.gpu.peak_allocated_bytes);
}

}  // namespace gpt_oss_attention_test
}  // namespace vramplan
