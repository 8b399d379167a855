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

namespace {

// The Granite 3.x MoE decoder; `shared_inter` > 0 adds GraniteMoeShared's shared SwiGLU MLP.
Expected<ModelSpec> BuildGraniteMoeLayers(ConfigReader& c, ModelSpec spec, bool read_shared);

}  // namespace

// GraniteMoeConfig (configuration_granitemoe.py): num_local_experts (8) experts of
// intermediate_size, num_experts_per_tok (2), attention_bias, untied by default. In every layer
// block_sparse_moe holds router.layer (nn.Linear h -> experts, no bias), input_linear (experts x
// 2 intermediate x h: gate and up fused) and output_linear (experts x h x intermediate), the
// expert tensors being GraniteMoeParallelExperts parameters, not nn.Linear (no LoRA target).
Expected<ModelSpec> BuildGraniteMoe(ConfigReader& c, ModelSpec spec) { return BuildGraniteMoeLayers(c, std::move(spec), false); }

// GraniteMoeSharedConfig (models/granitemoeshared/configuration_granitemoeshared.py): the
// GraniteMoe keys and defaults plus shared_intermediate_size (0: no shared expert). Each layer of
// GraniteMoeSharedDecoderLayer (modular_granitemoeshared.py) adds to the routed experts
// shared_mlp = GraniteMoeSharedMLP: input_linear (nn.Linear h -> 2 x shared_intermediate_size,
// gate and up fused, no bias) and output_linear (shared_intermediate_size -> h), whose output is
// summed with the experts'.
Expected<ModelSpec> BuildGraniteMoeShared(ConfigReader& c, ModelSpec spec) { return BuildGraniteMoeLayers(c, std::move(spec), true); }

namespace {

Expected<ModelSpec> BuildGraniteMoeLayers(ConfigReader& c, ModelSpec spec, bool read_shared) {
  Dims m = ReadDims(c);
  CheckDims(c, m, true);
  const int64_t experts = c.Int({"num_local_experts"}, 1, kMaxHeadsOrExperts).value_or(8);
  const int64_t top_k = c.Int({"num_experts_per_tok"}, 1, kMaxHeadsOrExperts).value_or(2);
  CheckTopK(c, "num_experts_per_tok", top_k, experts);
  LlamaLikeOptions o;
  o.qkv_bias = c.Bool("attention_bias", false);
  o.o_bias = o.qkv_bias;
  const int64_t shared_inter = read_shared ? c.Int({"shared_intermediate_size"}, 0, kMaxDim).value_or(0) : 0;
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
    if (shared_inter > 0) {
      AddLinear(&k, "input_linear", LinearSlot::kSharedExpertUp, m.h, 2 * shared_inter, false);
      AddLinear(&k, "output_linear", LinearSlot::kSharedExpertDown, shared_inter, m.h, false);
    }
    SetMoeMlp(&k, m.inter, experts, top_k, shared_inter);
    return k;
  });
  return spec;
}

}  // namespace

}  // namespace vramplan::families
