// The ALiBi decoders: BLOOM (transformers models/bloom/modeling_bloom.py). It has no position
// embeddings or rotary cache: the attention bias is built from the head index in forward
// (build_alibi_tensor), so rope_fraction is 0.
#include "model/families/builders.h"
#include "model/families/layer_kit.h"

namespace vramplan::families {

// BloomForCausalLM: word_embeddings, word_embeddings_layernorm (LayerNorm with bias, right after
// the embedding), BloomBlock x n_layer (input_layernorm, self_attention.query_key_value h -> 3h
// and dense h -> h with biases, post_attention_layernorm, mlp.dense_h_to_4h / dense_4h_to_h with
// biases and BloomGelu), ln_f; lm_head tied to word_embeddings. BloomConfig reads the width as
// hidden_size or n_embed and the heads as n_head or num_attention_heads (bigscience/bloom's own
// config.json uses n_embed / num_attention_heads); the MLP is always 4 x hidden_size.
Expected<ModelSpec> BuildBloom(ConfigReader& c, ModelSpec spec) {
  Dims m;
  m.h = c.Required({"hidden_size", "n_embed"});
  m.layers = c.Required({"n_layer", "num_hidden_layers"}, 1, 4096);
  m.a = c.Required({"n_head", "num_attention_heads"}, 1, kMaxHeadsOrExperts);
  m.vocab = c.Int({"vocab_size"}).value_or(250880);
  m.kv = m.a;
  m.d = m.a > 0 ? m.h / m.a : 0;
  m.inter = 4 * m.h;
  if (c.errors()->empty() && m.h % m.a != 0) {
    io::AddError(c.errors(), "invalid_value", io::JoinPath(c.path(), "n_head"), "hidden_size must be divisible by n_head");
  }
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", true), NormKind::kLayerNorm, true, "ln_f");
  spec.extra_embedding_params = 2 * m.h;  // word_embeddings_layernorm weight and bias
  spec.rope_fraction = 0.0;                // ALiBi
  spec.attention_dropout = c.Fraction("attention_dropout", 0.0, true);
  spec.hidden_dropout = c.Fraction("hidden_dropout", 0.0, true);
  if (!c.errors()->empty()) return *c.errors();
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k;
    AddLinear(&k, "query_key_value", LinearSlot::kQkv, m.h, 3 * m.h, true);
    AddLinear(&k, "dense", LinearSlot::kO, m.h, m.h, true);
    AddLinear(&k, "dense_h_to_4h", LinearSlot::kUp, m.h, m.inter, true);
    AddLinear(&k, "dense_4h_to_h", LinearSlot::kDown, m.inter, m.h, true);
    AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, true);
    AddNorm(&k, "post_attention_layernorm", NormSlot::kPreMlp, m.h, true);
    SetAttention(&k, m, 0);
    // BloomGelu in training runs GeLUFunction, which saves only its input (tanh approximation).
    SetDenseMlp(&k, MlpKind::kPlain, ActivationFn::kGeluTanh, m.inter);
    return k;
  });
  return spec;
}

}  // namespace vramplan::families
