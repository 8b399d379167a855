// Llama-like decoders from remote code whose attention projections are fused under their own
// module names: InternLM2 / InternLM2.5 (wqkv) and Baichuan 1 / 2 (W_pack). Each keeps its checkpoint's
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

// Baichuan 1 / 2 (model_type "baichuan", remote code modeling_baichuan.py of baichuan-inc/
// Baichuan2-7B-Base / Baichuan2-13B-Chat, BaichuanForCausalLM; Baichuan-7B v1 writes
// BaiChuanForCausalLM): embed_tokens, per layer input_layernorm, self_attn.W_pack (h -> 3h, q / k /
// v of every head, no bias: BaichuanAttention always has as many kv heads as heads and head_dim
// hidden / heads; it reads neither num_key_value_heads nor head_dim), o_proj without bias,
// post_attention_layernorm, mlp gate_proj / up_proj / down_proj without bias; norm (RMSNorm) and
// lm_head: Baichuan 2's NormHead is one (vocab x hidden) nn.Parameter that forward() normalizes per
// row, the same elements as a plain untied lm_head. The configs name every dimension; the remote
// BaichuanConfig defaults differ per checkpoint (7B's file: 4,096 wide, vocab 125,696; 13B's:
// 5,120, vocab 64,000), so the dimensions are required here.
// Position encoding: the 7B models rotate q and k (RotaryEmbedding); the 13B models add ALiBi
// biases built in forward (_gen_alibi_mask): neither has a position parameter. The config does not
// say which; vLLM (vllm/model_executor/models/baichuan.py, BaichuanForCausalLM.__init__) takes RoPE
// for hidden_size 4096 and for BaiChuanForCausalLM, ALiBi otherwise, and so does this reader.
Expected<ModelSpec> BuildBaichuan(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  m.kv = m.a;
  if (m.a > 0) m.d = m.h / m.a;
  m.inter = c.Required({"intermediate_size"});
  if (c.errors()->empty() && m.a > 0 && m.h % m.a != 0) {
    io::AddError(c.errors(), "invalid_value", io::JoinPath(c.path(), "num_attention_heads"),
                 "BaichuanAttention needs hidden_size divisible by num_attention_heads");
  }
  const ActivationFn act = ParseActivation(c.String("hidden_act", "silu"));
  if (!c.errors()->empty()) return *c.errors();
  const bool rope = m.h == 4096 || spec.architecture == "BaiChuanForCausalLM";
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kRmsNorm, false, "norm");
  if (!rope) spec.rope_fraction = 0.0;  // ALiBi
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k;
    AddLinear(&k, "W_pack", LinearSlot::kQkv, m.h, 3 * m.h, false);
    AddLinear(&k, "o_proj", LinearSlot::kO, m.h, m.h, false);
    AddGatedMlp(&k, m.h, m.inter, false, GatedMlpOwner::kDense);
    AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, false);
    AddNorm(&k, "post_attention_layernorm", NormSlot::kPreMlp, m.h, false);
    SetAttention(&k, m, 0);
    SetDenseMlp(&k, MlpKind::kGated, act, m.inter);
    return k;
  });
  return spec;
}

}  // namespace vramplan::families
