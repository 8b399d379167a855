// BigCode's code models: StarCoder2 (transformers models/starcoder2/modeling_starcoder2.py,
// Starcoder2Attention / Starcoder2MLP / Starcoder2DecoderLayer) and StarCoder 1 / SantaCoder
// (models/gpt_bigcode/modeling_gpt_bigcode.py, GPTBigCodeAttention / GPTBigCodeMLP /
// GPTBigCodeBlock). Both use LayerNorms with bias and a plain (non-gated) GELU MLP c_fc / c_proj;
// StarCoder2 has grouped-query q/k/v/o with RoPE, GPTBigCode a fused multi-query c_attn and
// learned position embeddings.
#include "model/families/builders.h"
#include "model/families/layer_kit.h"

namespace vramplan::families {

// Starcoder2Config (configuration_starcoder2.py): use_bias (default true) puts a bias on every
// linear, q/k/v/o as in Llama; the norms are nn.LayerNorm (always with bias, norm_epsilon); tied
// embeddings by default. sliding_window, when set, applies to every layer (the model passes
// config.sliding_window to every attention call). residual_dropout masks o_proj's and c_proj's
// outputs, embedding_dropout the embeddings (Starcoder2Model.forward); all dropouts default to 0
// in the config class, the released configs set 0.1.
Expected<ModelSpec> BuildStarcoder2(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  CheckDims(c, m, true);
  const bool bias = c.Bool("use_bias", true);
  const int64_t window = c.Int({"sliding_window"}, 0).value_or(0);
  const ActivationFn act = ParseActivation(c.String("hidden_act", "gelu_pytorch_tanh"));
  spec.attention_dropout = c.Fraction("attention_dropout", 0.0, true);
  spec.hidden_dropout = c.Fraction("residual_dropout", 0.0, true);
  spec.embedding_dropout = c.Fraction("embedding_dropout", 0.0, true);
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", true), NormKind::kLayerNorm, true);
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k;
    AddQkvo(&k, m, bias, bias);
    AddPlainMlp(&k, m.h, m.inter, act, bias, {"c_fc", "c_proj"});
    AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, true);
    AddNorm(&k, "post_attention_layernorm", NormSlot::kPreMlp, m.h, true);
    SetAttention(&k, m, window);
    return k;
  });
  return spec;
}

// GPTBigCodeConfig (configuration_gpt_bigcode.py): n_embd / n_layer / n_head / n_positions,
// n_inner null -> 4 x n_embd, multi_query true by default (one k/v head). c_attn projects to
// n_embd + 2 x kv_heads x head_dim (multi-query: q plus one k and one v head; otherwise 3 x
// n_embd), every linear has a bias, ln_1 / ln_2 / ln_f are nn.LayerNorm, wpe holds n_positions
// learned positions, lm_head is tied to wte. The dropouts default to 0.1 as in GPT-2. The
// causal-mask buffer GPTBigCodeModel registers is non-persistent and not a parameter.
Expected<ModelSpec> BuildGptBigCode(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  if (m.inter == 0) m.inter = 4 * m.h;
  m.kv = c.Bool("multi_query", true) ? 1 : m.a;
  m.d = m.a > 0 ? m.h / m.a : 0;  // GPTBigCodeAttention: head_dim = embed_dim // num_heads, no head_dim key
  CheckDims(c, m, true);
  const int64_t positions = c.Int({"n_positions", "max_position_embeddings"}, 1, int64_t{1} << 20).value_or(1024);
  const ActivationFn act = ParseActivation(c.String("activation_function", "gelu_pytorch_tanh"));
  spec.attention_dropout = c.Fraction("attn_pdrop", 0.1, true);
  spec.hidden_dropout = c.Fraction("resid_pdrop", 0.1, true);
  spec.embedding_dropout = c.Fraction("embd_pdrop", 0.1, true);
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", true), NormKind::kLayerNorm, true, "ln_f");
  spec.position_embedding_rows = positions;
  spec.rope_fraction = 0.0;
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k;
    AddLinear(&k, "c_attn", LinearSlot::kQkv, m.h, m.h + 2 * m.kv * m.d, true);
    AddLinear(&k, "c_proj", LinearSlot::kO, m.h, m.h, true);
    AddPlainMlp(&k, m.h, m.inter, act, true, {"c_fc", "c_proj"});
    AddNorm(&k, "ln_1", NormSlot::kPreAttention, m.h, true);
    AddNorm(&k, "ln_2", NormSlot::kPreMlp, m.h, true);
    SetAttention(&k, m, 0);
    return k;
  });
  return spec;
}

}  // namespace vramplan::families
