// Apertus (swiss-ai; transformers models/apertus/modular_apertus.py): LlamaAttention (q/k/v/o,
// bias with attention_bias) with RMSNorm(head_dim) q_norm / k_norm applied before RoPE; the
// decoder layer's two norms are named attention_layernorm and feedforward_layernorm; ApertusMLP
// builds up_proj and down_proj without bias whatever mlp_bias says, and with hidden_act "xielu"
// an XIELUActivation per layer (transformers activations.py) holding two one-element parameters
// (alpha_p, alpha_n) and two persistent scalar buffers (beta, eps) that the checkpoints store:
// 4 elements per layer, carried in the layer's extra parameters (the by_module attention bucket;
// under tensor parallelism they are split like attention sinks, a few elements off per rank).
// The MLP is not gated (NemotronMLP: up_proj -> activation -> down_proj). xIELU has no
// saved-tensor model of its own: the activation walk takes it as GELU (as Nemotron-H's relu2).
#include "model/families/builders.h"
#include "model/families/layer_kit.h"

#include <string>

namespace vramplan::families {
Expected<ModelSpec> BuildApertus(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  CheckDims(c, m, true);
  const bool attention_bias = c.Bool("attention_bias", false);  // LlamaAttention: q/k/v and o
  const std::string act_name = c.String("hidden_act", "xielu");  // ApertusConfig default
  const int64_t activation_params = act_name == "xielu" ? 4 : 0;  // alpha_p, alpha_n, beta, eps
  const ActivationFn act = ParseActivation(act_name);
  spec.attention_dropout = c.Fraction("attention_dropout", 0.0, true);
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kRmsNorm, false);  // ApertusConfig default
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k;
    AddQkvo(&k, m, attention_bias, attention_bias);
    AddPlainMlp(&k, m.h, m.inter, act, false);
    AddNorm(&k, "attention_layernorm", NormSlot::kPreAttention, m.h, false);
    AddNorm(&k, "feedforward_layernorm", NormSlot::kPreMlp, m.h, false);
    AddNorm(&k, "q_norm", NormSlot::kQPerHead, m.d, false);
    AddNorm(&k, "k_norm", NormSlot::kKPerHead, m.d, false);
    k.extra_attention_params = activation_params;
    SetAttention(&k, m, 0);
    return k;
  });
  return spec;
}

}  // namespace vramplan::families
