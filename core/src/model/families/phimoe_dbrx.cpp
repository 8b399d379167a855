// Two mixture-of-experts decoders outside the Mixtral / Qwen mould: Phi-3.5-MoE (transformers
// models/phimoe/modeling_phimoe.py) with LayerNorms and biases, and DBRX (models/dbrx/
// modeling_dbrx.py) with a fused Wqkv, bias-free LayerNorms, fused expert tensors and its
// attention / MoE settings nested in attn_config and ffn_config.
#include "model/families/builders.h"
#include "model/families/layer_kit.h"

namespace vramplan::families {

// PhimoeForCausalLM: embed_tokens, PhimoeDecoderLayer x num_hidden_layers (self_attn q/k/v/o_proj
// with bias attention_bias, input_layernorm and post_attention_layernorm as nn.LayerNorm with bias,
// block_sparse_moe: router "gate" h -> num_local_experts without bias and experts w1 / w3 / w2 of
// intermediate_size, SiLU-gated, as transformers 4.x's PhimoeBlockSparseTop2MLP and the Hub
// checkpoint name them), norm (LayerNorm), lm_head with bias lm_head_bias. PhimoeConfig defaults:
// attention_bias and lm_head_bias false, top-2 of 16 experts, no sliding window.
Expected<ModelSpec> BuildPhimoe(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  CheckDims(c, m, true);
  const int64_t experts = c.Int({"num_local_experts"}, 1, kMaxHeadsOrExperts).value_or(16);
  const int64_t top_k = c.Int({"num_experts_per_tok"}, 1, kMaxHeadsOrExperts).value_or(2);
  CheckTopK(c, "num_experts_per_tok", top_k, experts);
  const bool attn_bias = c.Bool("attention_bias", false);
  const int64_t window = c.Int({"sliding_window"}, 0).value_or(0);
  const ActivationFn act = ParseActivation(c.String("hidden_act", "silu"));
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kLayerNorm, true);
  spec.lm_head_bias = c.Bool("lm_head_bias", false);
  spec.attention_dropout = c.Fraction("attention_dropout", 0.0, true);
  if (!c.errors()->empty()) return *c.errors();
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k;
    AddQkvo(&k, m, attn_bias, attn_bias);
    AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, true);
    AddNorm(&k, "post_attention_layernorm", NormSlot::kPreMlp, m.h, true);
    AddLinear(&k, "gate", LinearSlot::kRouter, m.h, experts, false);
    AddGatedMlp(&k, m.h, m.inter, false, GatedMlpOwner::kExperts, experts, GatedNames{"w1", "w3", "w2"});
    SetAttention(&k, m, window);
    SetDenseMlp(&k, MlpKind::kGated, act, m.inter);
    SetMoeMlp(&k, m.inter, experts, top_k);
    return k;
  });
  return spec;
}

// DbrxForCausalLM: transformer.wte, DbrxBlock x n_layers (norm_attn_norm.norm_1, attn.Wqkv
// d_model -> d_model + 2 x kv_n_heads x head_dim and attn.out_proj without bias, norm_2; ffn.router.layer
// d_model -> moe_num_experts without bias; ffn.experts.mlp w1 / v1 / w2, each one
// (moe_num_experts x ffn_hidden_size, d_model) nn.Parameter, not nn.Linear: SiLU(x w1) * (x v1) -> w2),
// norm_f; every LayerNorm bias=False; untied lm_head without bias. attn_config (kv_n_heads, default
// 1) and ffn_config (ffn_hidden_size 3584, moe_num_experts 4, moe_top_k 1 by default) are nested
// objects (DbrxAttentionConfig, DbrxFFNConfig).
Expected<ModelSpec> BuildDbrx(ConfigReader& c, ModelSpec spec) {
  Dims m;
  m.h = c.Int({"d_model", "hidden_size"}).value_or(2048);
  m.a = c.Int({"n_heads", "num_attention_heads"}, 1, kMaxHeadsOrExperts).value_or(16);
  m.layers = c.Int({"n_layers", "num_hidden_layers"}, 1, 4096).value_or(24);
  m.vocab = c.Int({"vocab_size"}).value_or(32000);
  m.d = m.a > 0 ? m.h / m.a : 0;
  m.kv = 1;
  int64_t experts = 4, top_k = 1;
  m.inter = 3584;
  const Json empty = Json::object();
  const auto nested = [&](const char* key) -> const Json& {
    auto it = c.raw().find(key);
    return it != c.raw().end() && it->is_object() ? *it : empty;
  };
  ConfigReader attn(nested("attn_config"), io::JoinPath(c.path(), "attn_config"), c.errors());
  m.kv = attn.Int({"kv_n_heads"}, 1, kMaxHeadsOrExperts).value_or(1);
  const double attn_pdrop = attn.Fraction("attn_pdrop", 0.0, true);
  ConfigReader ffn(nested("ffn_config"), io::JoinPath(c.path(), "ffn_config"), c.errors());
  m.inter = ffn.Int({"ffn_hidden_size"}).value_or(3584);
  experts = ffn.Int({"moe_num_experts"}, 1, kMaxHeadsOrExperts).value_or(4);
  top_k = ffn.Int({"moe_top_k"}, 1, kMaxHeadsOrExperts).value_or(1);
  CheckTopK(ffn, "moe_top_k", top_k, experts);
  if (c.errors()->empty() && (m.h % m.a != 0 || m.a % m.kv != 0)) {
    io::AddError(c.errors(), "invalid_value", io::JoinPath(c.path(), "n_heads"),
                 "d_model must be divisible by n_heads, and n_heads by attn_config.kv_n_heads");
  }
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kLayerNorm, false, "norm_f");
  spec.attention_dropout = attn_pdrop;
  spec.hidden_dropout = c.Fraction("resid_pdrop", 0.0, true);
  spec.embedding_dropout = c.Fraction("emb_pdrop", 0.0, true);
  if (!c.errors()->empty()) return *c.errors();
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k;
    AddLinear(&k, "Wqkv", LinearSlot::kQkv, m.h, (m.a + 2 * m.kv) * m.d, false);
    AddLinear(&k, "out_proj", LinearSlot::kO, m.a * m.d, m.h, false);
    AddNorm(&k, "norm_1", NormSlot::kPreAttention, m.h, false);
    AddNorm(&k, "norm_2", NormSlot::kPreMlp, m.h, false);
    AddLinear(&k, "layer", LinearSlot::kRouter, m.h, experts, false);
    AddLinear(&k, "w1", LinearSlot::kExpertGate, m.h, m.inter, false, experts, false);
    AddLinear(&k, "v1", LinearSlot::kExpertUp, m.h, m.inter, false, experts, false);
    AddLinear(&k, "w2", LinearSlot::kExpertDown, m.inter, m.h, false, experts, false);
    SetAttention(&k, m, 0);
    SetDenseMlp(&k, MlpKind::kGated, ActivationFn::kSilu, m.inter);
    SetMoeMlp(&k, m.inter, experts, top_k);
    return k;
  });
  return spec;
}

}  // namespace vramplan::families
