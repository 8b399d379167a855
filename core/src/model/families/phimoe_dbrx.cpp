// A mixture-of-experts decoder outside the Mixtral / Qwen mould: Phi-3.5-MoE (transformers
// models/phimoe/modeling_phimoe.py) with LayerNorms and biases.
#include "model/families/builders.h"
#include "model/families/layer_kit.h"

namespace vramplan::families {

// PhimoeForCausalLM: embed_tokens, PhimoeDecoderLayer x num_hidden_layers (self_attn q/k/v/o_proj
// with bias attention_bias, input_layernorm and post_attention_layernorm as nn.LayerNorm with bias,
// block_sparse_moe: router "gate" h -> num_local_experts without bias and experts w1 / w3 / w2 of
// intermediate_size, SiLU-gated, as transformers 4.x's PhimoeBlockSparseTop2MLP and the Hub
// checkpoint name them), norm (LayerNorm), lm_head with bias lm_head_bias. PhimoeConfig defaults:
// attention_bias and lm_head_bias false, top-2 of 16 experts, no sliding window.
Expected<ModelSpec> BuildPhimoe(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  CheckDims(c, m, true);
  const int64_t experts = c.Int({"num_local_experts"}, 1, kMaxHeadsOrExperts).value_or(16);
  const int64_t top_k = c.Int({"num_experts_per_tok"}, 1, kMaxHeadsOrExperts).value_or(2);
  CheckTopK(c, "num_experts_per_tok", top_k, experts);
  const bool attn_bias = c.Bool("attention_bias", false);
  const int64_t window = c.Int({"sliding_window"}, 0).value_or(0);
  const ActivationFn act = ParseActivation(c.String("hidden_act", "silu"));
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kLayerNorm, true);
  spec.lm_head_bias = c.Bool("lm_head_bias", false);
  spec.attention_dropout = c.Fraction("attention_dropout", 0.0, true);
  if (!c.errors()->empty()) return *c.errors();
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k;
    AddQkvo(&k, m, attn_bias, attn_bias);
    AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, true);
    AddNorm(&k, "post_attention_layernorm", NormSlot::kPreMlp, m.h, true);
    AddLinear(&k, "gate", LinearSlot::kRouter, m.h, experts, false);
    AddGatedMlp(&k, m.h, m.inter, false, GatedMlpOwner::kExperts, experts, GatedNames{"w1", "w3", "w2"});
    SetAttention(&k, m, window);
    SetDenseMlp(&k, MlpKind::kGated, act, m.inter);
    SetMoeMlp(&k, m.inter, experts, top_k);
    return k;
  });
  return spec;
}

}  // namespace vramplan::families
