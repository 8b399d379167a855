// JetMoE (jetmoe/jetmoe-8b; transformers models/jetmoe/modeling_jetmoe.py): every block routes
// both halves. The attention is a mixture of attention heads (JetMoeAttention with JetMoeMoA):
// per expert a query projection (experts.input_linear, h -> kv_heads x kv_channels) and an output
// projection (experts.output_linear, back to h), a top-k router (experts.router.layer) and one
// bias vector (experts.bias, h) on the merged output; the keys and values come from one shared
// kv_proj (h -> 2 x kv_heads x kv_channels, no bias), so a token's num_experts_per_tok experts
// give kv_heads x top_k query heads over kv_heads K/V heads (JetMoeConfig sets
// num_attention_heads = num_key_value_heads x num_experts_per_tok). The MLP is JetMoeMoE: a router
// (router.layer), fused gated experts input_linear (experts x 2 intermediate x h) and
// output_linear (experts x h x intermediate) and a bias vector (h). The expert tensors are
// JetMoeParallelExperts parameters, not nn.Linear (no LoRA target); two RMSNorms per block, the
// final norm, and tied embeddings by default.
#include "model/families/builders.h"
#include "model/families/layer_kit.h"

namespace vramplan::families {

// JetMoeConfig (configuration_jetmoe.py) names and defaults; the checkpoint's own config (written
// for the remote code, myshell-ai/JetMoE jetmoe/configuration_jetmoe.py JetMoEConfig) spells the
// MoE keys ffn_hidden_size, moe_num_experts and moe_top_k, read when transformers' are absent.
Expected<ModelSpec> BuildJetMoe(ConfigReader& c, ModelSpec spec) {
  Dims m;
  m.h = c.Required({"hidden_size"});
  m.layers = c.Required({"num_hidden_layers"}, 1, 4096);
  m.vocab = c.Required({"vocab_size"});
  m.kv = c.Int({"num_key_value_heads"}, 1, kMaxHeadsOrExperts).value_or(16);
  m.d = c.Int({"kv_channels", "head_dim"}, 1, kMaxHeadsOrExperts).value_or(128);
  m.inter = c.Int({"intermediate_size", "ffn_hidden_size"}).value_or(5632);
  const int64_t experts = c.Int({"num_local_experts", "moe_num_experts"}, 1, kMaxHeadsOrExperts).value_or(8);
  const int64_t top_k = c.Int({"num_experts_per_tok", "moe_top_k"}, 1, kMaxHeadsOrExperts).value_or(2);
  CheckTopK(c, "num_experts_per_tok", top_k, experts);
  m.a = m.kv * top_k;
  const ActivationFn act = ParseActivation(c.String("activation_function", "silu"));
  spec.attention_dropout = c.Fraction("attention_dropout", 0.0, true);
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", true), NormKind::kRmsNorm, false);
  const int64_t kv_width = m.kv * m.d;
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k;
    // The attention experts (JetMoeParallelExperts, not nn.Linear) are held as one q projection
    // h -> experts x kv_heads x kv_channels and one o projection back to h: the stored elements
    // exactly, but every expert counts as active (a token runs num_experts_per_tok of them).
    AddLinear(&k, "input_linear", LinearSlot::kQ, m.h, experts * kv_width, false, 1, false);
    // One fused projection for K and V (chunked in two): the k slot, column-parallel like k_proj.
    AddLinear(&k, "kv_proj", LinearSlot::kK, m.h, 2 * kv_width, false);
    AddLinear(&k, "output_linear", LinearSlot::kO, experts * kv_width, m.h, false, 1, false);
    SetAttention(&k, m, 0);
    // JetMoeMoA's router experts.router.layer (h -> experts, an nn.Linear) is held with the
    // attention's other weights: a layer has one router slot, the MLP's.
    k.extra_attention_params = m.h * experts;
    k.extra_attention_params += m.h;  // JetMoeMoA.bias
    AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, false);
    AddNorm(&k, "post_attention_layernorm", NormSlot::kPreMlp, m.h, false);
    AddLinear(&k, "layer", LinearSlot::kRouter, m.h, experts, false);  // the MoE router
    AddLinear(&k, "input_linear", LinearSlot::kExpertGateUp, m.h, 2 * m.inter, false, experts, false);
    AddLinear(&k, "output_linear", LinearSlot::kExpertDown, m.inter, m.h, false, experts, false);
    k.extra_router_params = m.h;  // JetMoeMoE.bias, added to the merged expert output
    SetDenseMlp(&k, MlpKind::kGated, act, m.inter);
    SetMoeMlp(&k, m.inter, experts, top_k);
    return k;
  });
  // The mixture of attention heads is held as all its experts (above): the per-token active count
  // and the attention's saved tensors in training count every attention expert, not the
  // num_experts_per_tok a token runs (JetMoeMoA.map / reduce in modeling_jetmoe.py).
  spec.approximations.training =
      "JetMoE's mixture of attention heads: every attention expert's query and output projection counts as active "
      "per token (a token runs num_experts_per_tok of them), so the attention's training activations are an upper bound";
  return spec;
}

}  // namespace vramplan::families
