// Mixture-of-experts families with Llama-style attention (transformers modeling_mixtral.py,
// modeling_qwen2_moe.py, modeling_qwen3_moe.py, modeling_olmoe.py): a router and routed experts in
// place of the dense MLP, Qwen2-MoE's shared expert with its sigmoid gate, and dense layers inside
// a MoE model (mlp_only_layers, decoder_sparse_step).
#include <algorithm>

#include "model/families/builders.h"
#include "model/families/llama_like.h"

namespace vramplan::families {
namespace {

struct MoeVariant {
  bool mixtral_layout = false;  // expert width intermediate_size, names w1/w3/w2, window from sliding_window alone
  bool shared_expert = false;   // Qwen2-MoE: shared_expert_intermediate_size + shared_expert_gate
  bool qkv_bias_always = false; // Qwen2-MoE
  bool qwen3_attention = false; // o_proj bias with attention_bias, RMSNorm(head_dim) on q and k
  bool olmoe = false;           // experts of intermediate_size, o_proj bias, RMSNorm over all q / k heads
  bool post_norms_only = false; // FlexOlmo: OLMo 2's norms on the attention and MLP outputs, no input_layernorm
};

Expected<ModelSpec> BuildMoe(ConfigReader& c, ModelSpec spec, const MoeVariant& v) {
  Dims m = ReadDims(c);
  // Qwen-MoE configs may omit intermediate_size when every layer is MoE (checked per layer below).
  const bool experts_of_intermediate = v.mixtral_layout || v.olmoe;
  CheckDims(c, m, experts_of_intermediate);
  int64_t window = c.Int({"sliding_window"}, 0).value_or(0);
  bool use_sw = v.mixtral_layout ? window > 0 : c.Bool("use_sliding_window", false);
  int64_t experts = c.Required({"num_local_experts", "num_experts"}, 1, kMaxHeadsOrExperts);
  int64_t top_k = c.Required({"num_experts_per_tok"}, 1, kMaxHeadsOrExperts);
  CheckTopK(c, "num_experts_per_tok", top_k, experts);
  int64_t moe_inter = experts_of_intermediate ? m.inter : c.Required({"moe_intermediate_size"});
  int64_t shared_inter = v.shared_expert ? c.Int({"shared_expert_intermediate_size"}).value_or(0) : 0;
  int64_t sparse_step = c.Int({"decoder_sparse_step"}, 1).value_or(1);
  // Qwen2MoeSparseMoeBlock / Qwen3MoeSparseMoeBlock.forward renormalise the top-k weights only
  // `if self.norm_topk_prob` (Qwen2MoeConfig / Qwen3MoeConfig default False, transformers v4.44-v4.51);
  // MixtralSparseMoeBlock always does.
  const bool norm_topk = v.mixtral_layout || c.Bool("norm_topk_prob", false);
  // mlp_only_layers: dense layers inside a MoE model (qwen2_moe / qwen3_moe).
  std::vector<int64_t> mlp_only = m.layers > 0 ? c.LayerList("mlp_only_layers", m.layers) : std::vector<int64_t>{};
  LlamaLikeOptions o;
  o.qkv_bias = v.qkv_bias_always ? true : c.Bool("attention_bias", false);
  o.o_bias = (v.qwen3_attention || v.olmoe) && o.qkv_bias;
  o.head_qk_norm = v.qwen3_attention;
  o.full_qk_norm = v.olmoe;
  o.post_norms_only = v.post_norms_only;
  ActivationFn act = ParseActivation(c.String("hidden_act", "silu"));
  if (!c.errors()->empty()) return *c.errors();
  const auto is_moe_layer = [&](int64_t i) {
    return experts > 0 && (i + 1) % sparse_step == 0 && std::find(mlp_only.begin(), mlp_only.end(), i) == mlp_only.end();
  };
  for (int64_t i = 0; i < m.layers && m.inter <= 0; ++i) {
    if (is_moe_layer(i)) continue;
    // A dense layer (mlp_only_layers, decoder_sparse_step) is a gated MLP of intermediate_size.
    io::AddError(c.errors(), "missing_key", io::JoinPath(c.path(), "intermediate_size"),
                 "layer " + std::to_string(i) + " is a dense layer (mlp_only_layers / decoder_sparse_step): the config needs intermediate_size");
    return *c.errors();
  }
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kRmsNorm, false);
  BuildLayers(&spec, m.layers, [&](int64_t i) {
    bool moe_layer = is_moe_layer(i);
    LayerKind k = LlamaLikeLayer(m, o, act, use_sw ? window : 0);
    if (!moe_layer) return k;
    // Replace the dense MLP by router + experts (+ shared expert).
    k.linears.resize(4);
    AddLinear(&k, "gate", LinearSlot::kRouter, m.h, experts, false);
    if (v.mixtral_layout) {
      AddGatedMlp(&k, m.h, moe_inter, false, GatedMlpOwner::kExperts, experts, GatedNames{"w1", "w3", "w2"});
    } else {
      AddGatedMlp(&k, m.h, moe_inter, false, GatedMlpOwner::kExperts, experts);
      if (shared_inter > 0) {
        AddGatedMlp(&k, m.h, shared_inter, false, GatedMlpOwner::kSharedExperts);
        AddLinear(&k, "shared_expert_gate", LinearSlot::kSharedExpertScale, m.h, 1, false);
      }
    }
    SetMoeMlp(&k, moe_inter, experts, top_k, shared_inter);
    k.mlp.norm_topk_prob = norm_topk;
    // Mixtral, Qwen2-MoE and Qwen3-MoE are the measured per-expert loops; OLMoE's
    // OlmoeSparseMoeBlock runs the same loop unmeasured.
    k.mlp.measured_expert_loop = !v.olmoe;
    return k;
  });
  return spec;
}

}  // namespace

Expected<ModelSpec> BuildMixtral(ConfigReader& c, ModelSpec spec) {
  MoeVariant v;
  v.mixtral_layout = true;
  return BuildMoe(c, std::move(spec), v);
}

Expected<ModelSpec> BuildQwen2Moe(ConfigReader& c, ModelSpec spec) {
  MoeVariant v;
  v.shared_expert = true;
  v.qkv_bias_always = true;
  return BuildMoe(c, std::move(spec), v);
}

// OLMoE (transformers models/olmoe/modular_olmoe.py, OlmoeAttention / OlmoeSparseMoeBlock,
// OlmoeConfig): LlamaAttention with attention_bias on q/k/v/o plus RMSNorm(hidden_size) on q and
// RMSNorm(kv heads x head_dim) on k, the Llama pre-norms, a router "gate" and num_experts
// (64) experts gate_proj / up_proj / down_proj of intermediate_size, top num_experts_per_tok (8),
// renormalized only with norm_topk_prob (default false); untied by default.
Expected<ModelSpec> BuildOlmoe(ConfigReader& c, ModelSpec spec) {
  MoeVariant v;
  v.olmoe = true;
  return BuildMoe(c, std::move(spec), v);
}

// FlexOlmo (transformers models/flex_olmo/modular_flex_olmo.py, FlexOlmoDecoderLayer /
// FlexOlmoConfig): the OLMoE layer (Olmo2Attention's q/k/v/o with attention_bias and RMSNorm over
// all q / k heads, a router "gate" and num_experts experts of intermediate_size, top
// num_experts_per_tok, norm_topk_prob default false) with OLMo 2's norm placement:
// post_attention_layernorm and post_feedforward_layernorm on the block outputs, no
// input_layernorm. FlexOlmoConfig defaults (the 7x7B shape): 7 experts, top 5, untied.
Expected<ModelSpec> BuildFlexOlmo(ConfigReader& c, ModelSpec spec) {
  MoeVariant v;
  v.olmoe = true;
  v.post_norms_only = true;
  return BuildMoe(c, std::move(spec), v);
}

Expected<ModelSpec> BuildQwen3Moe(ConfigReader& c, ModelSpec spec) {
  MoeVariant v;
  v.qwen3_attention = true;
  return BuildMoe(c, std::move(spec), v);
}

}  // namespace vramplan::families
