// DeepSeek-V2/V3 (and Kimi K2, a DeepSeek-V3 layout; remote code modeling_deepseek.py):
// multi-head latent attention (low-rank q and kv with their RMSNorms, per-head up-projections),
// the first first_k_dense_replace layers dense, then a router, routed experts and shared experts.
#include "model/families/builders.h"
#include "model/families/layer_kit.h"

#include <string>
#include <vector>

namespace vramplan::families {
namespace {

struct MlaVariant {
  // DeepSeek-V3 routes with a learned correction bias (topk_method "noaux_tc"); V2 does only when
  // its config says so.
  bool always_correction_bias = false;
  // DeepSeek sparse attention (DeepSeek-V3.2, GLM-5): each layer has a lightning indexer
  // (deepseek-ai/DeepSeek-V3.2-Exp inference/model.py class Indexer: wq_b, wk, k_norm =
  // LayerNorm(index_head_dim), weights_proj, no biases).
  bool indexer = false;
  bool mtp_stores_embeddings = true;  // DeepSeek-V3's MTP layer has its own embed / head; GLM-5's not
  // Glm4MoeLiteConfig (GLM-4.7-Flash) names each layer's MLP in mlp_layer_types ("dense" / "sparse")
  // and, without it, makes the first layer dense.
  bool mlp_layer_types = false;
  int64_t default_first_dense = 0;
};

Expected<ModelSpec> BuildDeepseekMla(ConfigReader& c, ModelSpec spec, const MlaVariant& variant) {
  Dims m;
  m.h = c.Required({"hidden_size"});
  m.layers = c.Required({"num_hidden_layers"}, 1, 4096);
  m.a = c.Required({"num_attention_heads"}, 1, kMaxHeadsOrExperts);
  m.vocab = c.Required({"vocab_size"});
  m.inter = c.Required({"intermediate_size"});
  int64_t q_lora = c.Int({"q_lora_rank"}, 0, kMaxHeadsOrExperts).value_or(0);
  int64_t kv_lora = c.Required({"kv_lora_rank"}, 1, kMaxHeadsOrExperts);
  int64_t rope = c.Required({"qk_rope_head_dim"}, 1, kMaxHeadsOrExperts);
  int64_t nope = c.Required({"qk_nope_head_dim"}, 1, kMaxHeadsOrExperts);
  int64_t v_dim = c.Required({"v_head_dim"}, 1, kMaxHeadsOrExperts);
  int64_t experts = c.Required({"n_routed_experts"}, 1, kMaxHeadsOrExperts);
  int64_t top_k = c.Required({"num_experts_per_tok"}, 1, kMaxHeadsOrExperts);
  CheckTopK(c, "num_experts_per_tok", top_k, experts);
  int64_t moe_inter = c.Required({"moe_intermediate_size"});
  int64_t n_shared = c.Int({"n_shared_experts"}, 0, kMaxHeadsOrExperts).value_or(0);
  int64_t first_dense = c.Int({"first_k_dense_replace"}).value_or(variant.default_first_dense);
  int64_t freq = c.Int({"moe_layer_freq"}, 1).value_or(1);
  bool bias = c.Bool("attention_bias", false);
  bool correction_bias = variant.always_correction_bias || c.String("topk_method", "") == "noaux_tc";
  const int64_t index_heads = variant.indexer ? c.Required({"index_n_heads"}, 1, kMaxHeadsOrExperts) : 0;
  const int64_t index_dim = variant.indexer ? c.Required({"index_head_dim"}, 1, kMaxHeadsOrExperts) : 0;
  const int64_t index_topk = variant.indexer ? c.Int({"index_topk"}, 1).value_or(2048) : 0;  // DeepseekV32Config default
  if (variant.indexer && c.errors()->empty() && q_lora <= 0) {
    io::AddError(c.errors(), "missing_key", io::JoinPath(c.path(), "q_lora_rank"),
                 "the sparse-attention indexer reads the low-rank q: the config needs q_lora_rank");
  }
  // GLM-5.2's IndexCache: `indexer_types` names each layer "full" (it owns an indexer) or "shared"
  // (it reuses the top-k of the last full layer before it). vLLM builds no indexer, and so no indexer
  // cache, on a shared layer, nor does llama.cpp (PR #26474); the MTP layer is always full.
  std::vector<bool> shared_indexer;  // empty: every layer owns its indexer
  if (variant.indexer) {
    if (auto types = c.StringList("indexer_types", m.layers)) {
      for (size_t i = 0; i < types->size(); ++i) {
        const std::string& t = (*types)[i];
        if (t != "full" && t != "shared") {
          io::AddError(c.errors(), "invalid_value", io::JoinPath(c.path(), "indexer_types"),
                       "indexer_types entries must be \"full\" or \"shared\", got " + io::Quote(t));
          break;
        }
        if (i == 0 && t == "shared") {
          io::AddError(c.errors(), "invalid_value", io::JoinPath(c.path(), "indexer_types"),
                       "indexer_types[0] must be \"full\": a shared layer reuses the top-k of an earlier full layer");
          break;
        }
        shared_indexer.push_back(t == "shared");
      }
    } else if (c.errors()->empty() && c.Int({"index_topk_freq"}, 1).value_or(1) > 1) {
      io::AddError(c.errors(), "missing_key", io::JoinPath(c.path(), "indexer_types"),
                   "index_topk_freq > 1 shares the indexer between layers: give indexer_types (\"full\" / \"shared\" per layer) "
                   "as GLM-5.2's config.json does");
    }
  }
  std::vector<bool> sparse_layers;  // empty: first_k_dense_replace / moe_layer_freq decide
  if (variant.mlp_layer_types) {
    if (auto types = c.StringList("mlp_layer_types", m.layers)) {
      for (const std::string& t : *types) {
        if (t != "dense" && t != "sparse") {
          io::AddError(c.errors(), "invalid_value", io::JoinPath(c.path(), "mlp_layer_types"),
                       "mlp_layer_types entries must be \"dense\" or \"sparse\", got " + io::Quote(t));
          break;
        }
        sparse_layers.push_back(t == "sparse");
      }
    }
  }
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kRmsNorm, false);
  BuildLayers(&spec, m.layers, [&](int64_t i) {
    LayerKind k;
    AddMlaAttention(&k, m.h, MlaDims{m.a, q_lora, kv_lora, rope, nope, v_dim, bias});
    AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, false);
    AddNorm(&k, "post_attention_layernorm", NormSlot::kPreMlp, m.h, false);
    if (variant.indexer) {
      const bool shared = !shared_indexer.empty() && shared_indexer[static_cast<size_t>(i)];
      if (!shared) {
        AddLinear(&k, "indexer.wq_b", LinearSlot::kIndexerQk, q_lora, index_heads * index_dim, false);
        AddLinear(&k, "indexer.wk", LinearSlot::kIndexerQk, m.h, index_dim, false);
        AddNorm(&k, "indexer.k_norm", NormSlot::kIndexerK, index_dim, true);
        AddLinear(&k, "indexer.weights_proj", LinearSlot::kIndexerWeights, m.h, index_heads, false);
      }
      k.attention.index_shared = shared;
      k.attention.index_head_dim = index_dim;
      k.attention.index_n_heads = index_heads;
      k.attention.index_topk = index_topk;
    }
    k.mlp.kind = MlpKind::kGated;
    k.mlp.activation = ActivationFn::kSilu;
    bool moe_layer = experts > 0 && (sparse_layers.empty() ? i >= first_dense && i % freq == 0 : sparse_layers[static_cast<size_t>(i)]);
    if (!moe_layer) {
      AddGatedMlp(&k, m.h, m.inter, false, GatedMlpOwner::kDense);
      k.mlp.intermediate = m.inter;
      return k;
    }
    AddLinear(&k, "gate", LinearSlot::kRouter, m.h, experts, false);
    if (correction_bias) k.extra_router_params = experts;
    AddGatedMlp(&k, m.h, moe_inter, false, GatedMlpOwner::kExperts, experts);
    if (n_shared > 0) AddGatedMlp(&k, m.h, moe_inter * n_shared, false, GatedMlpOwner::kSharedExperts);
    SetMoeMlp(&k, moe_inter, experts, top_k, moe_inter * n_shared);
    return k;
  });
  AddMtpLayers(c, &spec, variant.mtp_stores_embeddings);
  if (variant.indexer) {
    // Serving: the indexer's key cache per engine (inference/kv_cache.h). Training follows
    // transformers' DeepseekV32Attention / GlmMoeDsaAttention (models/deepseek_v32/modeling_deepseek_v32.py,
    // models/glm_moe_dsa/modeling_glm_moe_dsa.py): the indexer runs under @torch.no_grad (no saved
    // tensor, no gradient to it) with two fp32 [batch, seq, index heads, seq] score tensors as its
    // scratch, then the top-k indices become a dense [batch, 1, seq, seq] mask per layer that SDPA
    // keeps for backward (train/activations.cpp).
    spec.notes.push_back("DeepSeek sparse attention: the indexer's weights and its key cache are counted (vLLM: 132 B of fp8 keys and "
                         "scales per token and layer beside the latent, in 64-token blocks; llama.cpp: a second K cache of index_head_dim; "
                         "transformers: the indexer's own key tensor in the model dtype)");
    if (!shared_indexer.empty()) {
      int64_t n_shared = 0;
      for (bool sh : shared_indexer) n_shared += sh ? 1 : 0;
      if (n_shared > 0) {
        spec.notes.push_back("IndexCache (indexer_types): " + std::to_string(n_shared) + " of " + std::to_string(m.layers) +
                             " layers reuse an earlier layer's top-k and hold no indexer weights, key cache or scoring, as vLLM and "
                             "llama.cpp build them; transformers' GlmMoeDsaAttention still builds an indexer in every layer (left "
                             "randomly initialized where the checkpoint has none), which params.total does not count");
      }
    }
  }
  return spec;
}

}  // namespace

Expected<ModelSpec> BuildDeepseekV2(ConfigReader& c, ModelSpec spec) { return BuildDeepseekMla(c, std::move(spec), MlaVariant{}); }
Expected<ModelSpec> BuildDeepseekV3(ConfigReader& c, ModelSpec spec) {
  MlaVariant v;
  v.always_correction_bias = true;
  return BuildDeepseekMla(c, std::move(spec), v);
}
Expected<ModelSpec> BuildDeepseekV32(ConfigReader& c, ModelSpec spec) {
  MlaVariant v;
  v.always_correction_bias = true;
  v.indexer = true;
  return BuildDeepseekMla(c, std::move(spec), v);
}
// GLM-4.7-Flash (glm4_moe_lite, transformers modular_glm4_moe_lite.py): DeepseekV3Attention (MLA)
// with GLM-4.5's router (e_score_correction_bias), experts and shared expert; dense or MoE per layer
// from mlp_layer_types. Its MTP layer (model.layers.47, skipped by transformers'
// _keys_to_ignore_on_load_unexpected) is counted with its own embedding and head, as DeepSeek-V3's.
Expected<ModelSpec> BuildGlm4MoeLite(ConfigReader& c, ModelSpec spec) {
  MlaVariant v;
  v.always_correction_bias = true;
  v.mlp_layer_types = true;
  v.default_first_dense = 1;
  return BuildDeepseekMla(c, std::move(spec), v);
}
// GLM-5 (glm_moe_dsa, transformers modeling_glm_moe_dsa.py): the DeepSeek-V3.2 layout; its MTP
// layer shares the main embedding and head (the checkpoint stores neither again).
Expected<ModelSpec> BuildGlmMoeDsa(ConfigReader& c, ModelSpec spec) {
  MlaVariant v;
  v.always_correction_bias = true;
  v.indexer = true;
  v.mtp_stores_embeddings = false;
  return BuildDeepseekMla(c, std::move(spec), v);
}

}  // namespace vramplan::families
