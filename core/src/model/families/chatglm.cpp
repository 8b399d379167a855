#include "model/families/builders.h"
#include "model/families/layer_kit.h"

namespace vramplan::families {

// ChatGLM2 / ChatGLM3 / GLM-4-9B-chat in their remote-code format (model_type "chatglm",
// modeling_chatglm.py of THUDM/chatglm3-6b and THUDM/glm-4-9b-chat, ChatGLMForConditionalGeneration;
// vLLM vllm/model_executor/models/chatglm.py GLMTransformer): embedding.word_embeddings of
// padded_vocab_size rows (not vocab_size), per layer input_layernorm, self_attention.query_key_value
// (h -> heads x kv_channels + 2 x multi_query_group_num x kv_channels when multi_query_attention, else
// 3 x heads x kv_channels; bias = add_bias_linear or add_qkv_bias), self_attention.dense (bias
// add_bias_linear), post_attention_layernorm, mlp.dense_h_to_4h (h -> 2 x ffn_hidden_size, chunked
// into silu(a) * b) and mlp.dense_4h_to_h (both bias add_bias_linear); encoder.final_layernorm when
// post_layer_norm; output_layer (no bias) always its own weight. Norms are RMSNorm when rmsnorm, else
// LayerNorm with bias. Defaults are ChatGLMConfig's (configuration_chatglm.py). The rotary buffer
// (rotary_pos_emb.inv_freq, kv_channels / 4 floats) is saved in the checkpoint but is no parameter.
// RotaryEmbedding(kv_channels // 2) rotates half of each head. apply_residual_connection_post_layernorm
// changes no weight.
Expected<ModelSpec> BuildChatGlm(ConfigReader& c, ModelSpec spec) {
  Dims m;
  m.h = c.Required({"hidden_size"});
  m.layers = c.Required({"num_layers", "num_hidden_layers"}, 1, 4096);
  m.a = c.Required({"num_attention_heads"}, 1, kMaxHeadsOrExperts);
  m.vocab = c.Required({"padded_vocab_size"});
  m.inter = c.Required({"ffn_hidden_size"});
  m.d = c.Int({"kv_channels"}, 1, kMaxHeadsOrExperts).value_or(128);
  const bool mqa = c.Bool("multi_query_attention", false);
  m.kv = mqa ? c.Int({"multi_query_group_num"}, 1, kMaxHeadsOrExperts).value_or(1) : m.a;
  if (c.errors()->empty() && m.a % m.kv != 0) {
    io::AddError(c.errors(), "invalid_value", io::JoinPath(c.path(), "multi_query_group_num"),
                 "num_attention_heads (" + std::to_string(m.a) + ") must be a multiple of multi_query_group_num (" +
                     std::to_string(m.kv) + ")");
  }
  const bool linear_bias = c.Bool("add_bias_linear", false);
  const bool qkv_bias = linear_bias || c.Bool("add_qkv_bias", false);
  const bool rms = c.Bool("rmsnorm", true);
  const bool post_norm = c.Bool("post_layer_norm", true);
  spec.rope_fraction = 0.5;
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, false, rms ? NormKind::kRmsNorm : NormKind::kLayerNorm, !rms, "final_layernorm");
  spec.final_norm.has_weight = post_norm;
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k;
    AddLinear(&k, "query_key_value", LinearSlot::kQkv, m.h, (m.a + 2 * m.kv) * m.d, qkv_bias);
    AddLinear(&k, "dense", LinearSlot::kO, m.a * m.d, m.h, linear_bias);
    AddLinear(&k, "dense_h_to_4h", LinearSlot::kGateUp, m.h, 2 * m.inter, linear_bias);
    AddLinear(&k, "dense_4h_to_h", LinearSlot::kDown, m.inter, m.h, linear_bias);
    AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, !rms);
    AddNorm(&k, "post_attention_layernorm", NormSlot::kPreMlp, m.h, !rms);
    SetAttention(&k, m, 0);
    SetDenseMlp(&k, MlpKind::kGated, ActivationFn::kSilu, m.inter);
    return k;
  });
  return spec;
}

}  // namespace vramplan::families
