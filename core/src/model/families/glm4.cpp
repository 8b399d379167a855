// GLM-4-0414 (transformers modeling_glm4.py, Glm4DecoderLayer / Glm4Attention / Glm4MLP) and GLM-4
// (glm-4-9b-*-hf, transformers modular_glm.py, GlmDecoderLayer / GlmAttention / GlmMLP): q/k/v
// with attention_bias and o_proj without, a fused gate_up_proj halved by chunk(2) (as Phi-3's),
// and RMSNorms: GLM-4 has Llama's two (input_layernorm, post_attention_layernorm before the MLP);
// GLM-4-0414 adds post_self_attn_layernorm on the attention output and post_mlp_layernorm on the
// MLP output (Gemma 2's sandwich under other names). Rotary embedding on partial_rotary_factor of
// head_dim (0.5 by default in GlmConfig and Glm4Config; neither config sets other defaults that
// change a weight: attention_bias true, untied).
#include "model/families/builders.h"
#include "model/families/layer_kit.h"

namespace vramplan::families {

namespace {

Expected<ModelSpec> BuildGlmLayout(ConfigReader& c, ModelSpec spec, bool sandwich_norms) {
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
    if (sandwich_norms) AddNorm(&k, "post_self_attn_layernorm", NormSlot::kPostAttention, m.h, false);
    AddNorm(&k, "post_attention_layernorm", NormSlot::kPreMlp, m.h, false);
    if (sandwich_norms) AddNorm(&k, "post_mlp_layernorm", NormSlot::kPostMlp, m.h, false);
    SetAttention(&k, m, 0);
    SetDenseMlp(&k, MlpKind::kGated, ParseActivation(c.String("hidden_act", "silu")), m.inter);
    return k;
  });
  if (!c.errors()->empty()) return *c.errors();
  return spec;
}

}  // namespace

Expected<ModelSpec> BuildGlm(ConfigReader& c, ModelSpec spec) { return BuildGlmLayout(c, std::move(spec), false); }
Expected<ModelSpec> BuildGlm4(ConfigReader& c, ModelSpec spec) { return BuildGlmLayout(c, std::move(spec), true); }

}  // namespace vramplan::families
