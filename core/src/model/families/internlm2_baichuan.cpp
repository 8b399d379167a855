// Llama-like decoders from remote code whose attention projections are fused under their own
// module names: InternLM2 / InternLM2.5 (wqkv) and Baichuan 2 (W_pack). Each keeps its checkpoint's
// names so that LoRA targets read as users write them.
#include "model/families/builders.h"
#include "model/families/layer_kit.h"

namespace vramplan::families {

// InternLM2 / InternLM2.5 (model_type "internlm2", remote code modeling_internlm2.py of
// internlm/internlm2_5-7b-chat, InternLM2ForCausalLM): tok_embeddings, per layer attention_norm,
// attention.wqkv (h -> (heads + 2 x kv_heads) x head_dim, the q heads of each kv group followed by
// that group's k and v: a layout, not a parameter) and attention.wo, both with bias = config.bias
// (InternLM2Config's default True; every released config says false), ffn_norm,
// feed_forward.w1 (gate) / w3 (up) / w2 (down) without bias; norm (RMSNorm) and an untied output
// head by default. head_dim is hidden_size / num_attention_heads (InternLM2Attention reads no
// head_dim key).
Expected<ModelSpec> BuildInternLm2(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  if (m.a > 0) m.d = m.h / m.a;
  CheckDims(c, m, true);
  if (c.errors()->empty() && m.a > 0 && m.h % m.a != 0) {
    io::AddError(c.errors(), "invalid_value", io::JoinPath(c.path(), "num_attention_heads"),
                 "InternLM2Attention needs hidden_size divisible by num_attention_heads");
  }
  const bool bias = c.Bool("bias", true);
  const ActivationFn act = ParseActivation(c.String("hidden_act", "silu"));
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kRmsNorm, false, "norm");
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k;
    AddLinear(&k, "wqkv", LinearSlot::kQkv, m.h, (m.a + 2 * m.kv) * m.d, bias);
    AddLinear(&k, "wo", LinearSlot::kO, m.a * m.d, m.h, bias);
    AddGatedMlp(&k, m.h, m.inter, false, GatedMlpOwner::kDense, 1, GatedNames{"w1", "w3", "w2"});
    AddNorm(&k, "attention_norm", NormSlot::kPreAttention, m.h, false);
    AddNorm(&k, "ffn_norm", NormSlot::kPreMlp, m.h, false);
    SetAttention(&k, m, 0);
    SetDenseMlp(&k, MlpKind::kGated, act, m.inter);
    return k;
  });
  return spec;
}

}  // namespace vramplan::families
