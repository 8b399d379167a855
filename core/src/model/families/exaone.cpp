// EXAONE 3.0 / 3.5 (LG AI Research; model_type "exaone", remote code: the Hub repos'
// modeling_exaone.py / configuration_exaone.py, ExaoneForCausalLM; vLLM models/exaone.py and
// transformers_utils/configs/exaone.py follow them). The Llama layer under GPT-2-style names:
// transformer.wte, h.N.ln_1 / ln_2 (RMSNorm), attn.attention.q_proj / k_proj / v_proj / out_proj,
// mlp.c_fc_0 (gate) / c_fc_1 (up) / c_proj (down), transformer.ln_f; no bias anywhere (the module
// printout of EXAONE-3.0-7.8B-Instruct lists every Linear with bias=False). ExaoneConfig names the
// depth num_layers, the activation activation_function, takes intermediate_size 4 x hidden_size
// when absent and ties the embeddings by default. EXAONE 4.0 is exaone4 (olmo.cpp).
#include "model/families/builders.h"
#include "model/families/layer_kit.h"

namespace vramplan::families {

Expected<ModelSpec> BuildExaone(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  if (m.inter <= 0) m.inter = 4 * m.h;  // ExaoneConfig: intermediate_size or hidden_size * 4
  if (m.a > 0) m.d = m.h / m.a;          // ExaoneSelfAttention: head_dim = hidden_size // num_heads, no head_dim key
  CheckDims(c, m, true);
  if (c.errors()->empty() && m.a > 0 && m.h % m.a != 0) {
    io::AddError(c.errors(), "invalid_value", io::JoinPath(c.path(), "num_attention_heads"),
                 "ExaoneSelfAttention needs hidden_size divisible by num_attention_heads");
  }
  const ActivationFn act = ParseActivation(c.String("activation_function", "silu"));
  spec.attention_dropout = c.Fraction("attention_dropout", 0.0, true);
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", true), NormKind::kRmsNorm, false, "ln_f");
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k;
    AddLinear(&k, "q_proj", LinearSlot::kQ, m.h, m.a * m.d, false);
    AddLinear(&k, "k_proj", LinearSlot::kK, m.h, m.kv * m.d, false);
    AddLinear(&k, "v_proj", LinearSlot::kV, m.h, m.kv * m.d, false);
    AddLinear(&k, "out_proj", LinearSlot::kO, m.a * m.d, m.h, false);
    AddGatedMlp(&k, m.h, m.inter, false, GatedMlpOwner::kDense, 1, GatedNames{"c_fc_0", "c_fc_1", "c_proj"});
    AddNorm(&k, "ln_1", NormSlot::kPreAttention, m.h, false);
    AddNorm(&k, "ln_2", NormSlot::kPreMlp, m.h, false);
    SetAttention(&k, m, 0);
    SetDenseMlp(&k, MlpKind::kGated, act, m.inter);
    return k;
  });
  return spec;
}

}  // namespace vramplan::families
