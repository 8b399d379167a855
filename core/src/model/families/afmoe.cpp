// Arcee AFMoE (Trinity Nano / Mini; transformers models/afmoe/modular_afmoe.py). Attention
// (AfmoeAttention, LlamaAttention without bias) adds RMSNorm(head_dim) q_norm / k_norm and an
// output gate gate_proj (h -> heads x head_dim, no bias; the attention output times its sigmoid
// before o_proj). Four RMSNorms per layer (AfmoeDecoderLayer: input_layernorm and
// post_attention_layernorm around attention, pre_mlp_layernorm and post_mlp_layernorm around the
// MLP). The first num_dense_layers layers have a SwiGLU MLP of intermediate_size (AfmoeMLP = the
// Qwen2-MoE MLP); the others an AfmoeMoE: a sigmoid router (router.gate, h -> num_experts),
// shared_experts (one SwiGLU MLP of moe_intermediate_size x num_shared_experts), num_experts
// experts of moe_intermediate_size, and expert_bias (an fp32 nn.Parameter of num_experts, frozen,
// stored in the checkpoint). Sliding-window layers per layer_types, else all but every
// global_attn_every_n_layers-th; the global layers skip rotary (no weight). mup_enabled scales the
// embeddings and adds no weight; untied by default.
#include "model/families/builders.h"
#include "model/families/layer_kit.h"

namespace vramplan::families {

// AfmoeConfig (configuration_afmoe.py) names and defaults.
Expected<ModelSpec> BuildAfmoe(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  m.d = c.Int({"head_dim"}, 1, kMaxHeadsOrExperts).value_or(128);
  CheckDims(c, m, false);
  if (!c.Has("intermediate_size")) m.inter = 6144;
  const int64_t moe_inter = c.Int({"moe_intermediate_size"}, 1, kMaxDim).value_or(1408);
  const int64_t dense_layers = c.Int({"num_dense_layers"}, 0, 4096).value_or(1);
  const int64_t experts = c.Int({"num_experts"}, 1, kMaxHeadsOrExperts).value_or(64);
  const int64_t top_k = c.Int({"num_experts_per_tok"}, 1, kMaxHeadsOrExperts).value_or(6);
  const int64_t shared = c.Int({"num_shared_experts"}, 0, kMaxHeadsOrExperts).value_or(2);
  CheckTopK(c, "num_experts_per_tok", top_k, experts);
  const int64_t window = c.Int({"sliding_window"}, 1).value_or(1024);
  const int64_t global_every = c.Int({"global_attn_every_n_layers"}, 1, 4096).value_or(4);
  const std::vector<bool> sliding =
      SlidingFlags(c, m.layers, [&](int64_t i) { return (i + 1) % global_every != 0; });
  const ActivationFn act = ParseActivation(c.String("hidden_act", "silu"));
  spec.attention_dropout = c.Fraction("attention_dropout", 0.0, true);
  if (c.errors()->empty() && m.inter <= 0 && dense_layers > 0) {
    io::AddError(c.errors(), "missing_key", io::JoinPath(c.path(), "intermediate_size"),
                 "the dense layers (num_dense_layers) need intermediate_size");
  }
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kRmsNorm, false);
  const int64_t shared_inter = moe_inter * shared;
  BuildLayers(&spec, m.layers, [&](int64_t i) {
    LayerKind k;
    AddQkvo(&k, m, false, false);
    // The output gate reads the block input beside q/k/v, column-parallel over the heads: the
    // mixer-input slot (not a second q projection; Qwen3-Next fuses the same gate into q_proj).
    AddLinear(&k, "gate_proj", LinearSlot::kMixerIn, m.h, m.a * m.d, false);
    AddNorm(&k, "q_norm", NormSlot::kQPerHead, m.d, false);
    AddNorm(&k, "k_norm", NormSlot::kKPerHead, m.d, false);
    SetAttention(&k, m, sliding[static_cast<size_t>(i)] ? window : 0);
    AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, false);
    AddNorm(&k, "post_attention_layernorm", NormSlot::kPostAttention, m.h, false);
    AddNorm(&k, "pre_mlp_layernorm", NormSlot::kPreMlp, m.h, false);
    AddNorm(&k, "post_mlp_layernorm", NormSlot::kPostMlp, m.h, false);
    SetDenseMlp(&k, MlpKind::kGated, act, m.inter);
    if (i < dense_layers) {
      AddGatedMlp(&k, m.h, m.inter, false, GatedMlpOwner::kDense);
      return k;
    }
    AddLinear(&k, "gate", LinearSlot::kRouter, m.h, experts, false);
    k.extra_router_params = experts;  // AfmoeMoE.expert_bias
    AddGatedMlp(&k, m.h, moe_inter, false, GatedMlpOwner::kExperts, experts);
    if (shared_inter > 0) AddGatedMlp(&k, m.h, shared_inter, false, GatedMlpOwner::kSharedExperts);
    SetMoeMlp(&k, moe_inter, experts, top_k, shared_inter);
    return k;
  });
  return spec;
}

}  // namespace vramplan::families
