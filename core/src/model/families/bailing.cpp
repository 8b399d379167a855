// inclusionAI Ling / Ring (model_type "bailing_moe", remote code in the Hub repos:
// modeling_bailing_moe.py for BailingMoeForCausalLM, Ling 1.x; modeling_bailing_moe_v2.py for
// BailingMoeV2ForCausalLM, Ling / Ring 2.0, a copy of which is in NVIDIA-NeMo/Megatron-Bridge
// src/megatron/bridge/models/bailing/modeling_bailing_moe_v2.py). Both Ling versions write
// model_type "bailing_moe"; architectures tells them apart.
//
// BailingMoeV2Attention: one fused query_key_value Linear(h, (heads + 2 kv) x head_dim,
// bias=use_qkv_bias), the output projection "dense" (bias=use_bias), RMSNorm(head_dim)
// query_layernorm / key_layernorm with use_qk_norm, rotary on partial_rotary_factor of each head.
// BailingMoeV2DecoderLayer: layers below first_k_dense_replace (or all, without num_experts) a
// SwiGLU MLP of intermediate_size; the others BailingMoeV2SparseMoeBlock: the router "gate"
// (weight [experts, h], used in float32, plus the persistent expert_bias buffer, which the
// checkpoints store), experts of moe_intermediate_size and one shared_experts MLP of
// moe_intermediate_size x num_shared_experts. Embedding word_embeddings, final norm "norm".
#include "model/families/builders.h"
#include "model/families/layer_kit.h"

#include <string>

namespace vramplan::families {
namespace {

bool NamesV2Architecture(const ConfigReader& c) {
  auto it = c.raw().find("architectures");
  if (it == c.raw().end() || !it->is_array()) return false;
  for (const auto& a : *it) {
    if (a.is_string() && a.get<std::string>() == "BailingMoeV2ForCausalLM") return true;
  }
  return false;
}

}  // namespace

Expected<ModelSpec> BuildBailingMoe(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  CheckDims(c, m, false);
  // BailingMoeV2Gate registers expert_bias whatever the config says; vLLM and SGLang
  // (bailing_moe.py BailingMoEGate) build it from moe_router_enable_expert_bias.
  const bool expert_bias = NamesV2Architecture(c) || c.Bool("moe_router_enable_expert_bias", false);
  const bool qkv_bias = c.Bool("use_qkv_bias", false);
  const bool o_bias = c.Bool("use_bias", false);
  const bool qk_norm = c.Bool("use_qk_norm", false);
  const int64_t experts = c.Int({"num_experts"}, 1, kMaxHeadsOrExperts).value_or(0);
  const int64_t top_k = experts > 0 ? c.Required({"num_experts_per_tok"}, 1, kMaxHeadsOrExperts) : 0;
  const int64_t moe_inter = experts > 0 ? c.Required({"moe_intermediate_size"}) : 0;
  const int64_t shared = c.Int({"num_shared_experts"}, 0, kMaxHeadsOrExperts).value_or(0);
  const int64_t first_dense = c.Int({"first_k_dense_replace"}, 0, 4096).value_or(0);
  const int64_t mtp = c.Int({"num_nextn_predict_layers"}, 0, 64).value_or(0);
  const bool norm_topk = c.Bool("norm_topk_prob", true);
  const ActivationFn act = ParseActivation(c.String("hidden_act", "silu"));
  spec.rope_fraction = c.Fraction("partial_rotary_factor", 1.0, false);
  spec.attention_dropout = c.Fraction("attention_dropout", 0.0, true);
  if (!c.errors()->empty()) return *c.errors();
  if (experts > 0) CheckTopK(c, "num_experts_per_tok", top_k, experts);
  // The remote code sizes the shared MLP as moe_intermediate_size x num_shared_experts; a
  // config whose moe_shared_expert_intermediate_size says otherwise is refused, not guessed.
  if (const auto named = c.Int({"moe_shared_expert_intermediate_size"}); named && *named != moe_inter * shared) {
    io::AddError(c.errors(), "unsupported_model", io::JoinPath(c.path(), "moe_shared_expert_intermediate_size"),
                 "BailingMoeV2SparseMoeBlock builds its shared experts of moe_intermediate_size x num_shared_experts (" +
                     std::to_string(moe_inter * shared) + "); this config names another width, which is not read");
  }
  // The V2 remote code builds its multi-token-prediction layers into model.layers (they load and
  // train with the model): not read yet rather than counted in the wrong bucket.
  if (mtp > 0) {
    io::AddError(c.errors(), "unsupported_model", io::JoinPath(c.path(), "num_nextn_predict_layers"),
                 "BailingMoeV2MTPLayer layers (num_nextn_predict_layers) are built into the model by the remote code; "
                 "they are not read yet");
  }
  const bool needs_dense = experts == 0 || first_dense > 0;
  if (needs_dense && m.inter <= 0) {
    io::AddError(c.errors(), "missing_key", io::JoinPath(c.path(), "intermediate_size"),
                 "the model config is missing the required key \"intermediate_size\" (dense layers)");
  }
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kRmsNorm, false);
  BuildLayers(&spec, m.layers, [&](int64_t i) {
    LayerKind k;
    AddLinear(&k, "query_key_value", LinearSlot::kQkv, m.h, (m.a + 2 * m.kv) * m.d, qkv_bias);
    AddLinear(&k, "dense", LinearSlot::kO, m.a * m.d, m.h, o_bias);
    AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, false);
    AddNorm(&k, "post_attention_layernorm", NormSlot::kPreMlp, m.h, false);
    if (qk_norm) {
      AddNorm(&k, "query_layernorm", NormSlot::kQPerHead, m.d, false);
      AddNorm(&k, "key_layernorm", NormSlot::kKPerHead, m.d, false);
    }
    SetAttention(&k, m, 0);
    if (experts == 0 || i < first_dense) {  // BailingMoeV2MLP: gate/up/down without bias
      AddGatedMlp(&k, m.h, m.inter, false, GatedMlpOwner::kDense);
      SetDenseMlp(&k, MlpKind::kGated, act, m.inter);
      return k;
    }
    AddLinear(&k, "gate", LinearSlot::kRouter, m.h, experts, false);
    if (expert_bias) k.extra_router_params = experts;  // the router's expert_bias (fp32 in the checkpoints)
    AddGatedMlp(&k, m.h, moe_inter, false, GatedMlpOwner::kExperts, experts);
    if (shared > 0) AddGatedMlp(&k, m.h, moe_inter * shared, false, GatedMlpOwner::kSharedExperts);
    SetDenseMlp(&k, MlpKind::kGated, act, m.inter);
    SetMoeMlp(&k, moe_inter, experts, top_k, moe_inter * shared);
    k.mlp.norm_topk_prob = norm_topk;
    return k;
  });
  if (!c.errors()->empty()) return *c.errors();
  return spec;
}

}  // namespace vramplan::families
