// gpt-oss (transformers modeling_gpt_oss.py): q/k/v/o attention with biases and per-head sinks,
// alternating sliding-window layers, a router with bias, and experts stored as fused parameters
// (gate_up_proj [E, h, 2I], down_proj [E, I, h], with biases) that are not nn.Linear.
#include "model/families/builders.h"
#include "model/families/layer_kit.h"

namespace vramplan::families {

Expected<ModelSpec> BuildGptOss(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  CheckDims(c, m, true);
  int64_t experts = c.Required({"num_local_experts", "num_experts"}, 1, kMaxHeadsOrExperts);
  // GptOssConfig: experts_per_token = 4 when absent; 0 routes nothing and is refused.
  int64_t top_k = c.Int({"num_experts_per_tok", "experts_per_token"}, 1, kMaxHeadsOrExperts).value_or(4);
  CheckTopK(c, c.Has("num_experts_per_tok") || !c.Has("experts_per_token") ? "num_experts_per_tok" : "experts_per_token", top_k, experts);
  int64_t window = c.Int({"sliding_window"}, 0).value_or(128);
  bool bias = c.Bool("attention_bias", true);
  if (!c.errors()->empty()) return *c.errors();
  std::vector<bool> sliding = SlidingFlags(c, m.layers, [](int64_t i) { return i % 2 == 0; });
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kRmsNorm, false);
  BuildLayers(&spec, m.layers, [&](int64_t i) {
    LayerKind k;
    AddQkvo(&k, m, bias, bias);
    k.extra_attention_params = m.a;  // attention sinks, one logit per head
    AddLinear(&k, "router", LinearSlot::kRouter, m.h, experts, true);
    // GptOssExperts stores fused parameters (not nn.Linear): gate_up_proj [E, h, 2I] + bias, down_proj [E, I, h] + bias.
    AddLinear(&k, "gate_up_proj", LinearSlot::kExpertGateUp, m.h, 2 * m.inter, true, experts, false);
    AddLinear(&k, "down_proj", LinearSlot::kExpertDown, m.inter, m.h, true, experts, false);
    AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, false);
    AddNorm(&k, "post_attention_layernorm", NormSlot::kPreMlp, m.h, false);
    SetAttention(&k, m, sliding[static_cast<size_t>(i)] ? window : 0);
    k.attention.sinks = true;
    SetDenseMlp(&k, MlpKind::kGated, ActivationFn::kSilu, m.inter);
    SetMoeMlp(&k, m.inter, experts, top_k);
    return k;
  });
  return spec;
}

}  // namespace vramplan::families
