// The ALiBi decoders: BLOOM (transformers models/bloom/modeling_bloom.py) and MPT
// (models/mpt/modeling_mpt.py). Neither has position embeddings or a rotary cache: the attention
// bias is built from the head index in forward (build_alibi_tensor), so rope_fraction is 0.
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
  // GPT-NeoX's block without the parallel residual; BloomGelu in training runs GeLUFunction, which
  // saves only its input (tanh approximation).
  BuildLayers(&spec, m.layers, [&](int64_t) { return NeoxStyleLayer(m, true, false, ActivationFn::kGeluTanh); });
  return spec;
}

// MptForCausalLM: wte, MptBlock x n_layers (norm_1, attn.Wqkv h -> 3h, attn.out_proj, norm_2,
// ffn.up_proj h -> 4h, ffn.down_proj, exact GELU), norm_f; lm_head tied. Every
// Linear is bias=False and every LayerNorm has its bias set to None in the transformers port,
// whatever no_bias says (MptBlock.__init__, MptModel.__init__); it always applies ALiBi and builds
// no learned positions (learned_pos_emb is not read). MptMLP is 4 x d_model wide whatever
// expansion_ratio says, so a config with another ratio is refused rather than counted wrong.
// attn_config is a nested object (MptAttentionConfig): its attn_pdrop is the dropout on the
// attention probabilities and, in this port, on both residual branches (MptBlock.resid_attn_dropout,
// MptMLP.hidden_dropout); resid_pdrop and emb_pdrop are not used.
Expected<ModelSpec> BuildMpt(ConfigReader& c, ModelSpec spec) {
  Dims m;
  m.h = c.Int({"d_model", "hidden_size"}).value_or(2048);
  m.layers = c.Int({"n_layers", "num_hidden_layers"}, 1, 4096).value_or(24);
  m.a = c.Int({"n_heads", "num_attention_heads"}, 1, kMaxHeadsOrExperts).value_or(16);
  m.vocab = c.Int({"vocab_size"}).value_or(50368);
  m.kv = m.a;
  m.d = m.a > 0 ? m.h / m.a : 0;
  m.inter = 4 * m.h;
  if (c.errors()->empty() && c.Int({"expansion_ratio"}, 1, 64).value_or(4) != 4) {
    io::AddError(c.errors(), "invalid_value", io::JoinPath(c.path(), "expansion_ratio"),
                 "transformers' MptMLP is always 4 x d_model wide; expansion_ratio other than 4 is not read");
  }
  if (c.errors()->empty() && m.h % m.a != 0) {
    io::AddError(c.errors(), "invalid_value", io::JoinPath(c.path(), "n_heads"), "d_model must be divisible by n_heads");
  }
  double attn_pdrop = 0.0;
  if (auto it = c.raw().find("attn_config"); it != c.raw().end() && it->is_object()) {
    ConfigReader attn(*it, io::JoinPath(c.path(), "attn_config"), c.errors());
    attn_pdrop = attn.Fraction("attn_pdrop", 0.0, true);
  }
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", true), NormKind::kLayerNorm, false, "norm_f");
  spec.rope_fraction = 0.0;  // ALiBi
  spec.attention_dropout = attn_pdrop;
  spec.hidden_dropout = attn_pdrop;
  if (!c.errors()->empty()) return *c.errors();
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k;
    AddLinear(&k, "Wqkv", LinearSlot::kQkv, m.h, 3 * m.h, false);
    AddLinear(&k, "out_proj", LinearSlot::kO, m.h, m.h, false);
    AddPlainMlp(&k, m.h, m.inter, ActivationFn::kGelu, false);
    AddNorm(&k, "norm_1", NormSlot::kPreAttention, m.h, false);
    AddNorm(&k, "norm_2", NormSlot::kPreMlp, m.h, false);
    SetAttention(&k, m, 0);
    return k;
  });
  return spec;
}

}  // namespace vramplan::families
