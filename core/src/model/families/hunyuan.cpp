// Tencent Hunyuan (transformers models/hunyuan_v1_dense/modular_hunyuan_v1_dense.py and
// models/hunyuan_v1_moe/modular_hunyuan_v1_moe.py, v4.56-v4.57). Both are the Llama layer with
// an RMSNorm(head_dim) on the rotated q and k heads named query_layernorm / key_layernorm
// (HunYuanDenseV1Attention, HunYuanMoEV1Attention), q/k/v/o biases from attention_bias, and MLPs
// without bias whatever mlp_bias says (HunYuan*MLP builds its three nn.Linear with bias=False).
// The MoE model (Hunyuan-A13B) replaces every layer's MLP by HunYuanMoEV1Moe: a float32 router
// gate.wg Linear(h, num_experts), num_experts experts and one shared_mlp, all three of
// intermediate_size; num_experts and moe_topk are an integer or one entry per layer.
#include "model/families/builders.h"
#include "model/families/llama_like.h"

namespace vramplan::families {
namespace {

// Hunyuan's remote code (modeling_hunyuan.py in the Hub repos) reads use_cla / cla_share_factor
// to drop k_proj / v_proj on the layers that reuse an earlier layer's K/V; transformers' classes
// do not. No released hunyuan_v1_* checkpoint sets it; one that did would count differently in
// the two, so it is refused rather than guessed.
bool RefuseCrossLayerAttention(ConfigReader& c) {
  if (!c.Bool("use_cla", false)) return false;
  io::AddError(c.errors(), "unsupported_model", io::JoinPath(c.path(), "use_cla"),
               "cross-layer attention (use_cla) drops k_proj / v_proj on shared layers in Hunyuan's remote code but not in "
               "transformers' HunYuan classes; it is not read");
  return true;
}

// The Llama layer with Hunyuan's names for the per-head q/k RMSNorms. transformers builds them
// whatever use_qk_norm says; the remote code and vLLM (hunyuan_v1.py) only with it, and every
// released config sets it true.
LayerKind HunyuanLayer(const Dims& m, const LlamaLikeOptions& o, ActivationFn act) {
  LayerKind k = LlamaLikeLayer(m, o, act, 0);
  for (NormSpec& n : k.norms) {
    if (n.slot == NormSlot::kQPerHead) n.name = "query_layernorm";
    if (n.slot == NormSlot::kKPerHead) n.name = "key_layernorm";
  }
  return k;
}

LlamaLikeOptions HunyuanAttention(ConfigReader& c) {
  LlamaLikeOptions o;
  o.qkv_bias = c.Bool("attention_bias", false);  // LlamaAttention: q/k/v and o
  o.o_bias = o.qkv_bias;
  o.head_qk_norm = c.Bool("use_qk_norm", true);
  return o;
}

}  // namespace

Expected<ModelSpec> BuildHunyuanV1Dense(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  CheckDims(c, m, true);
  const LlamaLikeOptions o = HunyuanAttention(c);
  const ActivationFn act = ParseActivation(c.String("hidden_act", "silu"));
  spec.attention_dropout = c.Fraction("attention_dropout", 0.0, true);
  if (RefuseCrossLayerAttention(c) || !c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kRmsNorm, false);  // HunYuanDenseV1Config default
  BuildLayers(&spec, m.layers, [&](int64_t) { return HunyuanLayer(m, o, act); });
  return spec;
}

Expected<ModelSpec> BuildHunyuanV1Moe(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  CheckDims(c, m, true);
  const LlamaLikeOptions o = HunyuanAttention(c);
  const ActivationFn act = ParseActivation(c.String("hidden_act", "silu"));
  spec.attention_dropout = c.Fraction("attention_dropout", 0.0, true);
  // HunYuanMoEV1Config defaults: num_experts 1, moe_topk 1.
  const int64_t layers = m.layers > 0 ? m.layers : 1;
  const std::vector<int64_t> experts =
      c.IntPerLayer("num_experts", layers, 1, kMaxHeadsOrExperts).value_or(std::vector<int64_t>(static_cast<size_t>(layers), 1));
  const std::vector<int64_t> top_k =
      c.IntPerLayer("moe_topk", layers, 1, kMaxHeadsOrExperts).value_or(std::vector<int64_t>(static_cast<size_t>(layers), 1));
  // The remote code sizes the experts by moe_intermediate_size and the shared MLP by
  // intermediate_size x num_shared_expert; transformers by intermediate_size alone. They agree on
  // every released config (Hunyuan-A13B: 3072 and 1 on every layer); a config where they do not
  // is refused rather than counted one way.
  const std::vector<int64_t> expert_inter =
      c.IntPerLayer("moe_intermediate_size", layers, 1, kMaxDim).value_or(std::vector<int64_t>(static_cast<size_t>(layers), m.inter));
  const std::vector<int64_t> shared =
      c.IntPerLayer("num_shared_expert", layers, 0, kMaxHeadsOrExperts).value_or(std::vector<int64_t>(static_cast<size_t>(layers), 1));
  if (RefuseCrossLayerAttention(c) || !c.errors()->empty()) return *c.errors();
  for (int64_t i = 0; i < m.layers; ++i) {
    const size_t u = static_cast<size_t>(i);
    CheckTopK(c, "moe_topk", top_k[u], experts[u]);
    if (expert_inter[u] != m.inter || shared[u] != 1) {
      io::AddError(c.errors(), "unsupported_model", io::JoinPath(c.path(), expert_inter[u] != m.inter ? "moe_intermediate_size" : "num_shared_expert"),
                   "layer " + std::to_string(i) +
                       ": transformers' HunYuanMoEV1Moe builds its experts and one shared MLP of intermediate_size, Hunyuan's remote code "
                       "experts of moe_intermediate_size and a shared MLP of intermediate_size x num_shared_expert; they differ for this "
                       "config, which is not read");
    }
    if (!c.errors()->empty()) return *c.errors();
  }
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kRmsNorm, false);  // HunYuanMoEV1Config default
  BuildLayers(&spec, m.layers, [&](int64_t i) {
    const size_t u = static_cast<size_t>(i);
    LayerKind k = HunyuanLayer(m, o, act);
    k.linears.resize(4);  // q/k/v/o; the dense MLP makes way for HunYuanMoEV1Moe
    AddLinear(&k, "gate.wg", LinearSlot::kRouter, m.h, experts[u], false);
    AddGatedMlp(&k, m.h, m.inter, false, GatedMlpOwner::kExperts, experts[u]);
    AddGatedMlp(&k, m.h, m.inter, false, GatedMlpOwner::kSharedExperts);
    SetMoeMlp(&k, m.inter, experts[u], top_k[u], m.inter);
    k.mlp.norm_topk_prob = true;  // HunYuanMoEV1Moe.forward: routing_weights /= routing_weights.sum(...)
    return k;
  });
  return spec;
}

}  // namespace vramplan::families
