// Nemotron-4 / Minitron (NVIDIA; transformers models/nemotron/modeling_nemotron.py,
// NemotronForCausalLM). The Llama decoder with three differences that change the weights:
// - every norm is NemotronLayerNorm1P, an nn.LayerNorm with a bias (weight + 1 at run time):
//   input_layernorm, post_attention_layernorm and the final norm hold 2 * hidden_size each;
// - NemotronMLP is not gated: up_proj -> relu2 (squared ReLU) -> down_proj, bias with mlp_bias;
// - NemotronAttention's q/k/v/o take their width from head_dim (NemotronConfig: head_dim, else
//   hidden_size // num_attention_heads; Minitron-8B has 48 heads of 128 on a 4096 hidden size),
//   with bias on all four when attention_bias. partial_rotary_factor only narrows RoPE.
// NemotronConfig defaults: hidden_act "relu2", tie_word_embeddings false, num_key_value_heads =
// num_attention_heads. NeMo's export scripts also write kv_channels (Megatron's name for the
// head width); transformers ignores it, so head_dim decides.
// relu2 has no saved-tensor model of its own: the activation walk takes it as GELU (one T x I
// input saved for backward), as for Nemotron-H's ReLU^2 MLP layers.
#include <utility>

#include "model/families/builders.h"
#include "model/families/layer_kit.h"

namespace vramplan::families {

namespace {

// A decoder of q/k/v/o (attention_bias) and a non-gated MLP up_proj -> hidden_act -> down_proj
// (mlp_bias, NemotronMLP), two norms per layer and a final one of `norm` (with a bias or not).
Expected<ModelSpec> BuildPlainMlpDecoder(ConfigReader& c, ModelSpec spec, NormKind norm, bool norm_bias) {
  Dims m = ReadDims(c);
  CheckDims(c, m, true);
  const bool attention_bias = c.Bool("attention_bias", false);
  const bool mlp_bias = c.Bool("mlp_bias", false);
  const ActivationFn act = ParseActivation(c.String("hidden_act", "relu2"));
  spec.attention_dropout = c.Fraction("attention_dropout", 0.0, true);
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), norm, norm_bias);
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k;
    AddQkvo(&k, m, attention_bias, attention_bias);
    AddPlainMlp(&k, m.h, m.inter, act, mlp_bias);
    AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, norm_bias);
    AddNorm(&k, "post_attention_layernorm", NormSlot::kPreMlp, m.h, norm_bias);
    SetAttention(&k, m, 0);
    return k;
  });
  return spec;
}

}  // namespace

Expected<ModelSpec> BuildNemotron(ConfigReader& c, ModelSpec spec) {
  return BuildPlainMlpDecoder(c, std::move(spec), NormKind::kLayerNorm, true);
}

// Arcee AFM (transformers models/arcee/modular_arcee.py, ArceeForCausalLM = LlamaForCausalLM): the
// Llama decoder (LlamaAttention with attention_bias on q/k/v/o, RMSNorm input_layernorm /
// post_attention_layernorm / norm) whose MLP is NemotronMLP: up_proj -> hidden_act (ArceeConfig:
// "relu2") -> down_proj, no gate, bias with mlp_bias. Untied unless tie_word_embeddings
// (ArceeConfig: false); head_dim, else hidden_size / num_attention_heads.
Expected<ModelSpec> BuildArcee(ConfigReader& c, ModelSpec spec) {
  return BuildPlainMlpDecoder(c, std::move(spec), NormKind::kRmsNorm, false);
}

}  // namespace vramplan::families
