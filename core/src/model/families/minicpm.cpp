// MiniCPM 1 / 2 / 4 (model_type "minicpm"; remote code modeling_minicpm.py in the openbmb Hub
// repos, MiniCPMForCausalLM; vLLM model_executor/models/minicpm.py): the Llama layer (q/k/v/o with
// attention_bias, SwiGLU gate_proj / up_proj / down_proj, input_layernorm /
// post_attention_layernorm RMSNorms, head_dim = hidden / heads) with muP scalings -- scale_emb on
// the embeddings, scale_depth / sqrt(layers) on each residual branch, hidden / dim_model_base
// before lm_head -- that multiply activations and add no weight. MiniCPMConfig ties the
// embeddings by default (MiniCPM-1B / 2B ship tied; MiniCPM4 and MiniCPM-2B-128k set it false).
// MiniCPM-MoE-8x2B keeps the type: with num_experts > 0 every MLP is MiniCPMMoE (router "gate"
// h -> experts, experts w1 / w3 / w2 of intermediate_size, num_experts_per_tok of them per token).
#include "model/families/builders.h"
#include "model/families/llama_like.h"

namespace vramplan::families {

Expected<ModelSpec> BuildMiniCpm(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  CheckDims(c, m, true);
  LlamaLikeOptions o;
  o.qkv_bias = c.Bool("attention_bias", false);
  o.o_bias = o.qkv_bias;
  const int64_t experts = c.Int({"num_experts"}, 0, kMaxHeadsOrExperts).value_or(0);
  const int64_t top_k = experts > 0 ? c.Int({"num_experts_per_tok"}, 1, kMaxHeadsOrExperts).value_or(2) : 0;
  if (experts > 0) CheckTopK(c, "num_experts_per_tok", top_k, experts);
  // MiniCPM-SALA and other hybrids reuse the type with per-layer mixers (mixer_types: lightning
  // attention with its own projections and output gates): their weights are not this layout.
  if (c.Has("mixer_types")) {
    io::AddError(c.errors(), "unsupported_model", io::JoinPath(c.path(), "mixer_types"),
                 "mixer_types (hybrid lightning / sparse attention layers) changes the weights and is not modelled by the minicpm reader");
  }
  const ActivationFn act = ParseActivation(c.String("hidden_act", "silu"));
  spec.attention_dropout = c.Fraction("attention_dropout", 0.0, true);
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", true), NormKind::kRmsNorm, false);
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k = LlamaLikeLayer(m, o, act, 0);
    if (experts == 0) return k;
    k.linears.resize(4);  // q/k/v/o; the dense MLP makes way for the router and the experts
    AddLinear(&k, "gate", LinearSlot::kRouter, m.h, experts, false);
    AddGatedMlp(&k, m.h, m.inter, false, GatedMlpOwner::kExperts, experts, GatedNames{"w1", "w3", "w2"});
    SetMoeMlp(&k, m.inter, experts, top_k);
    return k;
  });
  return spec;
}

// MiniCPM3 (transformers models/minicpm3/modular_minicpm3.py, MiniCPM3Attention = DeepseekV2Attention
// and MiniCPM3Config; remote code modeling_minicpm.py of openbmb/MiniCPM3-4B; vLLM minicpm3.py):
// multi-head latent attention -- q_a_proj (h -> q_lora_rank) + q_a_layernorm + q_b_proj
// (-> heads x (nope + rope)), or q_proj when q_lora_rank is null; kv_a_proj_with_mqa
// (h -> kv_lora_rank + rope), kv_a_layernorm, kv_b_proj (-> heads x (nope + v_head_dim)); o_proj
// (heads x v_head_dim -> h); attention_bias on q_a / kv_a / o -- then MiniCPM's Llama MLP and
// norms. MiniCPM3Config's defaults are MiniCPM3-4B's: q_lora_rank 768, kv_lora_rank 256, nope 64,
// rope 32, v_head_dim = hidden / heads, tie_word_embeddings true.
Expected<ModelSpec> BuildMiniCpm3(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  CheckDims(c, m, true);
  MlaDims mla;
  mla.heads = m.a;
  // q_lora_rank null (present, not absent) means a plain q_proj; absent means the class default 768.
  const bool q_lora_null = c.raw().contains("q_lora_rank") && c.raw().at("q_lora_rank").is_null();
  mla.q_lora = c.Int({"q_lora_rank"}, 0, kMaxHeadsOrExperts).value_or(q_lora_null ? 0 : 768);
  mla.kv_lora = c.Int({"kv_lora_rank"}, 1, kMaxHeadsOrExperts).value_or(256);
  mla.nope = c.Int({"qk_nope_head_dim"}, 1, kMaxHeadsOrExperts).value_or(64);
  mla.rope = c.Int({"qk_rope_head_dim"}, 1, kMaxHeadsOrExperts).value_or(32);
  mla.v_dim = c.Int({"v_head_dim"}, 1, kMaxHeadsOrExperts).value_or(m.a > 0 ? m.h / m.a : 0);
  mla.bias = c.Bool("attention_bias", false);
  const ActivationFn act = ParseActivation(c.String("hidden_act", "silu"));
  spec.attention_dropout = c.Fraction("attention_dropout", 0.0, true);
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", true), NormKind::kRmsNorm, false);
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k;
    AddMlaAttention(&k, m.h, mla);
    AddGatedMlp(&k, m.h, m.inter, false, GatedMlpOwner::kDense);
    AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, false);
    AddNorm(&k, "post_attention_layernorm", NormSlot::kPreMlp, m.h, false);
    SetDenseMlp(&k, MlpKind::kGated, act, m.inter);
    return k;
  });
  return spec;
}

}  // namespace vramplan::families
