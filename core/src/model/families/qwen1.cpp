#include "model/families/builders.h"
#include "model/families/layer_kit.h"

namespace vramplan::families {

// Qwen1 (model_type "qwen", remote code modeling_qwen.py): fused c_attn (h -> 3·heads·kv_channels,
// with bias), attention c_proj, MLP w1/w2 (h -> intermediate_size / 2 each; a1 * silu(a2)) and
// c_proj, RMSNorms ln_1/ln_2/ln_f, untied lm_head. Its loss runs on the logits without .float()
// (QWenLMHeadModel.forward).
Expected<ModelSpec> BuildQwen1(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  m.d = c.Int({"kv_channels"}, 1, kMaxHeadsOrExperts).value_or(m.a > 0 ? m.h / m.a : 0);
  m.kv = m.a;
  CheckDims(c, m, true);
  if (c.errors()->empty() && m.inter < 2) {
    io::AddError(c.errors(), "out_of_range", io::JoinPath(c.path(), "intermediate_size"),
                 io::JoinPath(c.path(), "intermediate_size") + " must be at least 2 for Qwen (each of w1 and w2 gets intermediate_size / 2), got " +
                     std::to_string(m.inter));
  }
  m.inter /= 2;  // QWenMLP: config.intermediate_size // 2 per projection
  const bool bias = !c.Bool("no_bias", true);
  spec.rope_fraction = c.Fraction("rotary_pct", 1.0, false);
  spec.attention_dropout = c.Fraction("attn_dropout_prob", 0.0, true);
  spec.embedding_dropout = c.Fraction("emb_dropout_prob", 0.0, true);
  spec.softmax_fp32 = c.Bool("softmax_in_fp32", false);
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kRmsNorm, false, "ln_f");
  spec.loss_upcasts_logits = false;
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k;
    AddLinear(&k, "c_attn", LinearSlot::kQkv, m.h, 3 * m.a * m.d, true);
    AddLinear(&k, "c_proj", LinearSlot::kO, m.a * m.d, m.h, bias);
    // a1 = w1(x), a2 = w2(x), a1 * silu(a2): w2 is the gate.
    AddLinear(&k, "w1", LinearSlot::kUp, m.h, m.inter, bias);
    AddLinear(&k, "w2", LinearSlot::kGate, m.h, m.inter, bias);
    AddLinear(&k, "c_proj", LinearSlot::kDown, m.inter, m.h, bias);
    AddNorm(&k, "ln_1", NormSlot::kPreAttention, m.h, false);
    AddNorm(&k, "ln_2", NormSlot::kPreMlp, m.h, false);
    SetAttention(&k, m, 0);
    SetDenseMlp(&k, MlpKind::kGated, ActivationFn::kSilu, m.inter);
    return k;
  });
  return spec;
}

}  // namespace vramplan::families
