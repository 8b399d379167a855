// GLM-4-0414 (transformers modeling_glm4.py, Glm4DecoderLayer / Glm4Attention / Glm4MLP): q/k/v
// with attention_bias and o_proj without, a fused gate_up_proj halved by chunk(2) (as Phi-3's),
// and four RMSNorms per layer: input_layernorm before attention, post_self_attn_layernorm on its
// output, post_attention_layernorm before the MLP and post_mlp_layernorm on its output (Gemma 2's
// sandwich under other names). Rotary embedding on partial_rotary_factor of head_dim (0.5 by
// default in Glm4Config).
#include "model/families/builders.h"
#include "model/families/layer_kit.h"

namespace vramplan::families {

Expected<ModelSpec> BuildGlm4(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  CheckDims(c, m, true);
  const bool qkv_bias = c.Bool("attention_bias", true);
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kRmsNorm, false);
  spec.rope_fraction = c.Fraction("partial_rotary_factor", 0.5, false);
  spec.attention_dropout = c.Fraction("attention_dropout", 0.0, true);
  if (!c.errors()->empty()) return *c.errors();
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k;
    AddQkvo(&k, m, qkv_bias, false);
    AddLinear(&k, "gate_up_proj", LinearSlot::kGateUp, m.h, 2 * m.inter, false);
    AddLinear(&k, "down_proj", LinearSlot::kDown, m.inter, m.h, false);
    AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, false);
    AddNorm(&k, "post_self_attn_layernorm", NormSlot::kPostAttention, m.h, false);
    AddNorm(&k, "post_attention_layernorm", NormSlot::kPreMlp, m.h, false);
    AddNorm(&k, "post_mlp_layernorm", NormSlot::kPostMlp, m.h, false);
    SetAttention(&k, m, 0);
    SetDenseMlp(&k, MlpKind::kGated, ParseActivation(c.String("hidden_act", "silu")), m.inter);
    return k;
  });
  if (!c.errors()->empty()) return *c.errors();
  return spec;
}

}  // namespace vramplan::families
