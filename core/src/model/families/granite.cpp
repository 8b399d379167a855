// IBM Granite 3.x: the dense decoder (transformers models/granite/modeling_granite.py,
// GraniteAttention / GraniteMLP / GraniteDecoderLayer: the Llama layout) and the MoE decoder
// (models/granitemoe/modeling_granitemoe.py, GraniteMoeMoE with GraniteMoeTopKGating and two
// GraniteMoeParallelExperts). embedding_multiplier, residual_multiplier, attention_multiplier and
// logits_scaling scale activations and add no weight.
#include "model/families/builders.h"
#include "model/families/llama_like.h"

namespace vramplan::families {
namespace {

// GraniteConfig (configuration_granite.py): attention_bias on q/k/v/o, mlp_bias on the MLP,
// tie_word_embeddings false unless set (the Granite 3.x configs set it true).
void GraniteVariant(ConfigReader& c, int64_t, LlamaLikeVariant* v) {
  v->layer.qkv_bias = c.Bool("attention_bias", false);
  v->layer.o_bias = v->layer.qkv_bias;
  v->layer.mlp_bias = c.Bool("mlp_bias", false);
}

}  // namespace

Expected<ModelSpec> BuildGranite(ConfigReader& c, ModelSpec spec) { return BuildLlamaLike(c, std::move(spec), GraniteVariant); }

// GraniteMoeConfig (configuration_granitemoe.py): num_local_experts (8) experts of
// intermediate_size, num_experts_per_tok (2), attention_bias, untied by default. In every layer
// block_sparse_moe holds router.layer (nn.Linear h -> experts, no bias), input_linear (experts x
// 2 intermediate x h: gate and up fused) and output_linear (experts x h x intermediate), the
// expert tensors being GraniteMoeParallelExperts parameters, not nn.Linear (no LoRA target).
Expected<ModelSpec> BuildGraniteMoe(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  CheckDims(c, m, true);
  const int64_t experts = c.Int({"num_local_experts"}, 1, kMaxHeadsOrExperts).value_or(8);
  const int64_t top_k = c.Int({"num_experts_per_tok"}, 1, kMaxHeadsOrExperts).value_or(2);
  CheckTopK(c, "num_experts_per_tok", top_k, experts);
  LlamaLikeOptions o;
  o.qkv_bias = c.Bool("attention_bias", false);
  o.o_bias = o.qkv_bias;
  const ActivationFn act = ParseActivation(c.String("hidden_act", "silu"));
  spec.attention_dropout = c.Fraction("attention_dropout", 0.0, true);
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kRmsNorm, false);
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k = LlamaLikeLayer(m, o, act, 0);
    k.linears.resize(4);  // q/k/v/o; the dense MLP makes way for the router and the experts
    AddLinear(&k, "layer", LinearSlot::kRouter, m.h, experts, false);
    AddLinear(&k, "input_linear", LinearSlot::kExpertGateUp, m.h, 2 * m.inter, false, experts, false);
    AddLinear(&k, "output_linear", LinearSlot::kExpertDown, m.inter, m.h, false, experts, false);
    SetMoeMlp(&k, m.inter, experts, top_k);
    return k;
  });
  return spec;
}

}  // namespace vramplan::families
