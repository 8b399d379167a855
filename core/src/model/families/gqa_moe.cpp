// Grouped-query attention with DeepSeek-style MoE layers (gqa_moe.h): transformers
// modeling_glm4_moe.py (Glm4MoeAttention, Glm4MoeTopkRouter, Glm4MoeMoE, Glm4MoeMLP), and the
// standard MoE keys of modeling_qwen2_moe.py / modeling_deepseek_v3.py for unknown model types.
#include "model/families/gqa_moe.h"

#include <algorithm>

#include "model/families/builders.h"

namespace vramplan::families {

Expected<ModelSpec> BuildGqaMoe(ConfigReader& c, ModelSpec spec, const GqaMoeVariant& v) {
  Dims m = ReadDims(c);
  CheckDims(c, m, false);
  const int64_t experts = c.Required({"n_routed_experts", "num_experts", "num_local_experts"}, 1, kMaxHeadsOrExperts);
  const int64_t top_k = c.Required({"num_experts_per_tok"}, 1, kMaxHeadsOrExperts);
  CheckTopK(c, "num_experts_per_tok", top_k, experts);
  const int64_t moe_inter = c.Int({"moe_intermediate_size"}).value_or(m.inter);
  // DeepSeek / GLM: n_shared_experts experts of moe_intermediate_size (Glm4MoeMLP(intermediate_size=
  // moe_intermediate_size * n_shared_experts)); Qwen2-MoE style: one of shared_expert_intermediate_size.
  const int64_t n_shared = c.Int({"n_shared_experts"}, 0, kMaxHeadsOrExperts).value_or(0);
  const int64_t shared_inter = c.Int({"shared_expert_intermediate_size"}).value_or(n_shared * moe_inter);
  const int64_t first_dense = c.Int({"first_k_dense_replace"}, 0, 4096).value_or(0);
  const int64_t sparse_step = v.first_k_dense_only ? 1 : c.Int({"decoder_sparse_step"}, 1).value_or(1);
  const int64_t freq = v.first_k_dense_only ? 1 : c.Int({"moe_layer_freq"}, 1).value_or(1);
  const std::vector<int64_t> mlp_only =
      m.layers > 0 && !v.first_k_dense_only ? c.LayerList("mlp_only_layers", m.layers) : std::vector<int64_t>{};
  int64_t window = 0;
  std::vector<bool> sliding(static_cast<size_t>(std::max<int64_t>(m.layers, 0)), false);
  if (v.max_window_layers_sliding) {
    window = c.Int({"sliding_window"}, 0).value_or(0);
    const int64_t max_window_layers = c.Int({"max_window_layers"}, 0).value_or(m.layers);
    sliding = SlidingFlags(c, m.layers, [&](int64_t i) { return window > 0 && i >= max_window_layers; });
  }
  const bool correction_bias = v.correction_bias || c.String("topk_method", "") == "noaux_tc";
  const ActivationFn act = ParseActivation(c.String("hidden_act", "silu"));
  spec.rope_fraction = c.Fraction("partial_rotary_factor", 1.0, false);
  if (!c.errors()->empty()) return *c.errors();
  if (moe_inter <= 0) {
    io::AddError(c.errors(), "missing_key", io::JoinPath(c.path(), "moe_intermediate_size"),
                 "the model config is missing the required key \"moe_intermediate_size\"");
    return *c.errors();
  }
  const auto is_moe_layer = [&](int64_t i) {
    return i >= first_dense && (i + 1) % sparse_step == 0 && i % freq == 0 &&
           std::find(mlp_only.begin(), mlp_only.end(), i) == mlp_only.end();
  };
  for (int64_t i = 0; i < m.layers && m.inter <= 0; ++i) {
    if (is_moe_layer(i)) continue;
    io::AddError(c.errors(), "missing_key", io::JoinPath(c.path(), "intermediate_size"),
                 "layer " + std::to_string(i) + " is a dense layer (first_k_dense_replace / mlp_only_layers / decoder_sparse_step): the config needs intermediate_size");
    return *c.errors();
  }
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kRmsNorm, false);
  BuildLayers(&spec, m.layers, [&](int64_t i) {
    LayerKind k = LlamaLikeLayer(m, v.attention, act, sliding[static_cast<size_t>(i)] ? window : 0);
    if (!is_moe_layer(i)) return k;
    k.linears.resize(4);  // q/k/v/o; the dense MLP makes way for router + experts
    AddLinear(&k, "gate", LinearSlot::kRouter, m.h, experts, false);
    if (correction_bias) k.extra_router_params = experts;
    AddGatedMlp(&k, m.h, moe_inter, false, GatedMlpOwner::kExperts, experts, v.expert_names);
    if (shared_inter > 0) AddGatedMlp(&k, m.h, shared_inter, false, GatedMlpOwner::kSharedExperts);
    SetMoeMlp(&k, moe_inter, experts, top_k, shared_inter);
    return k;
  });
  AddMtpLayers(c, &spec, v.mtp_stores_embeddings);
  if (!c.errors()->empty()) return *c.errors();
  return spec;
}

// An unknown model_type with the standard MoE keys: Llama attention (attention_bias on q/k/v/o).
Expected<ModelSpec> BuildGenericMoe(ConfigReader& c, ModelSpec spec) {
  GqaMoeVariant v;
  v.attention.qkv_bias = c.Bool("attention_bias", false);
  v.attention.o_bias = v.attention.qkv_bias;
  return BuildGqaMoe(c, std::move(spec), v);
}

// GLM-4.5 / 4.6 (Glm4MoeConfig): q/k/v bias with attention_bias, o_proj without; RMSNorm(head_dim)
// on q and k with use_qk_norm; the router always has its correction bias. The MTP layer of GLM-4.5
// stores its own embed_tokens and shared_head.head (GLM-4.6's does not: ApplyCheckpointFacts).
Expected<ModelSpec> BuildGlm4Moe(ConfigReader& c, ModelSpec spec) {
  GqaMoeVariant v;
  v.attention.qkv_bias = c.Bool("attention_bias", false);
  v.attention.head_qk_norm = c.Bool("use_qk_norm", false);
  v.correction_bias = true;
  v.mtp_stores_embeddings = true;
  return BuildGqaMoe(c, std::move(spec), v);
}

// MiniMax-M2 (transformers modeling_minimax_m2.py, MiniMaxM2Config): q/k/v/o without biases,
// RMSNorm over all q heads and over all k heads (qk_norm_type "per_layer"; RMSNorm(head_dim) per
// head otherwise), a router "gate" with its correction bias (use_routing_bias), experts w1 / w3 / w2
// of intermediate_size in every layer, no shared expert. The MTP modules (use_mtp,
// num_mtp_modules) are not in the released checkpoints: counted nowhere.
Expected<ModelSpec> BuildMiniMaxM2(ConfigReader& c, ModelSpec spec) {
  GqaMoeVariant v;
  const bool qk_norm = c.Bool("use_qk_norm", true);
  const bool per_layer = c.String("qk_norm_type", "per_layer") == "per_layer";
  v.attention.full_qk_norm = qk_norm && per_layer;
  v.attention.head_qk_norm = qk_norm && !per_layer;
  v.correction_bias = c.Bool("use_routing_bias", true);
  v.expert_names = GatedNames{"w1", "w3", "w2"};
  return BuildGqaMoe(c, std::move(spec), v);
}

// dots.llm1 (transformers models/dots1/modular_dots1.py: Dots1Attention = Qwen3Attention,
// Dots1MoE / Dots1TopkRouter = DeepseekV3MoE / DeepseekV3TopkRouter, Dots1DecoderLayer =
// DeepseekV3DecoderLayer): q/k/v/o biases from attention_bias, RMSNorm(head_dim) on q and k, the
// first first_k_dense_replace layers dense (intermediate_size), then a router with its
// e_score_correction_bias, n_routed_experts experts and n_shared_experts shared experts of
// moe_intermediate_size. The released configs' moe_layer_freq, scoring_func, topk_method and
// use_sliding_window are not read by transformers.
Expected<ModelSpec> BuildDots1(ConfigReader& c, ModelSpec spec) {
  GqaMoeVariant v;
  v.attention.qkv_bias = c.Bool("attention_bias", false);
  v.attention.o_bias = v.attention.qkv_bias;
  v.attention.head_qk_norm = true;
  v.correction_bias = true;
  v.first_k_dense_only = true;
  v.max_window_layers_sliding = true;
  return BuildGqaMoe(c, std::move(spec), v);
}

}  // namespace vramplan::families
