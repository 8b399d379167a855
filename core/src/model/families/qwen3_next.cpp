// Qwen3-Next and the Qwen3.5 text decoders (transformers models/qwen3_next/modeling_qwen3_next.py,
// models/qwen3_5/modeling_qwen3_5.py, models/qwen3_5_moe/modeling_qwen3_5_moe.py): Gated DeltaNet
// layers interleaved with gated full attention (layer_types, else every full_attention_interval-th
// layer), and a MoE with a gated shared expert (Qwen3-Next, Qwen3.5-MoE) or a dense SwiGLU MLP
// (Qwen3.5). The multi-token-prediction layer (mtp.*) is in the checkpoint but transformers does
// not load it (Qwen3NextForCausalLM _keys_to_ignore_on_load_unexpected = [r"^mtp.*"]).
#include <algorithm>

#include "model/families/builders.h"
#include "model/families/mixer_kit.h"

namespace vramplan::families {
namespace {

enum class QwenHybrid { kNext, kQwen35Dense, kQwen35Moe };

Expected<ModelSpec> BuildQwenHybrid(ConfigReader& c, ModelSpec spec, QwenHybrid variant) {
  Dims m = ReadDims(c);
  const bool moe = variant != QwenHybrid::kQwen35Dense;
  CheckDims(c, m, !moe);
  const GatedDeltaNetDims gdn = ReadGatedDeltaNet(c);
  const int64_t interval = c.Int({"full_attention_interval"}, 1, 4096).value_or(4);
  const bool attn_bias = c.Bool("attention_bias", false);
  int64_t experts = 0, top_k = 0, moe_inter = 0, shared_inter = 0, sparse_step = 1;
  std::vector<int64_t> mlp_only;
  if (moe) {
    experts = c.Required({"num_experts"}, 1, kMaxHeadsOrExperts);
    top_k = c.Required({"num_experts_per_tok"}, 1, kMaxHeadsOrExperts);
    CheckTopK(c, "num_experts_per_tok", top_k, experts);
    moe_inter = c.Required({"moe_intermediate_size"});
    shared_inter = c.Int({"shared_expert_intermediate_size"}).value_or(0);
    sparse_step = c.Int({"decoder_sparse_step"}, 1, 4096).value_or(1);
    if (m.layers > 0) mlp_only = c.LayerList("mlp_only_layers", m.layers);
  }
  std::optional<std::vector<std::string>> types = m.layers > 0 ? c.StringList("layer_types", m.layers) : std::nullopt;
  ActivationFn act = ParseActivation(c.String("hidden_act", "silu"));
  spec.rope_fraction = c.Fraction("partial_rotary_factor", 0.25, false);
  spec.attention_dropout = c.Fraction("attention_dropout", 0.0, true);
  if (!c.errors()->empty()) return *c.errors();
  const auto is_full_attention = [&](int64_t i) {
    if (types) return (*types)[static_cast<size_t>(i)] == "full_attention";
    return (i + 1) % interval == 0;  // Qwen3NextConfig's default layer_types
  };
  const auto is_moe_layer = [&](int64_t i) {
    return moe && (i + 1) % sparse_step == 0 && std::find(mlp_only.begin(), mlp_only.end(), i) == mlp_only.end();
  };
  if (!CheckDenseIntermediate(c, m, is_moe_layer)) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kRmsNorm, false);
  BuildLayers(&spec, m.layers, [&](int64_t i) {
    LayerKind k;
    if (is_full_attention(i)) {
      // Qwen3NextAttention: q_proj also yields the per-head output gate (2 x heads x head_dim).
      AddLinear(&k, "q_proj", LinearSlot::kQ, m.h, 2 * m.a * m.d, attn_bias);
      AddLinear(&k, "k_proj", LinearSlot::kK, m.h, m.kv * m.d, attn_bias);
      AddLinear(&k, "v_proj", LinearSlot::kV, m.h, m.kv * m.d, attn_bias);
      AddLinear(&k, "o_proj", LinearSlot::kO, m.a * m.d, m.h, attn_bias);
      AddNorm(&k, "q_norm", NormSlot::kQPerHead, m.d, false);
      AddNorm(&k, "k_norm", NormSlot::kKPerHead, m.d, false);
      SetAttention(&k, m, 0);
    } else {
      AddGatedDeltaNet(&k, m.h, gdn, variant != QwenHybrid::kNext);
    }
    AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, false);
    AddNorm(&k, "post_attention_layernorm", NormSlot::kPreMlp, m.h, false);
    if (!is_moe_layer(i)) {
      AddGatedMlp(&k, m.h, m.inter, false, GatedMlpOwner::kDense);
      SetDenseMlp(&k, MlpKind::kGated, act, m.inter);
      return k;
    }
    AddLinear(&k, "gate", LinearSlot::kRouter, m.h, experts, false);
    AddGatedMlp(&k, m.h, moe_inter, false, GatedMlpOwner::kExperts, experts);
    if (shared_inter > 0) {
      AddGatedMlp(&k, m.h, shared_inter, false, GatedMlpOwner::kSharedExperts);
      AddLinear(&k, "shared_expert_gate", LinearSlot::kSharedExpertScale, m.h, 1, false);
    }
    SetDenseMlp(&k, MlpKind::kGated, act, moe_inter);
    SetMoeMlp(&k, moe_inter, experts, top_k, shared_inter);
    return k;
  });
  // The checkpoint's MTP layer (vLLM model_executor/models/qwen3_next_mtp.py
  // Qwen3NextMultiTokenPredictor: fc 2h -> h, two pre-fc norms, one full-attention decoder layer,
  // a final norm) has no embeddings of its own.
  AddMtpLayers(c, &spec, false, variant == QwenHybrid::kNext ? 1 : 0);
  spec.checkpoint.mtp_fc_column_parallel = true;  // fc = ColumnParallelLinear(2h, h, quant_config) in vLLM
  return spec;
}

}  // namespace

Expected<ModelSpec> BuildQwen3Next(ConfigReader& c, ModelSpec spec) { return BuildQwenHybrid(c, std::move(spec), QwenHybrid::kNext); }
Expected<ModelSpec> BuildQwen35Text(ConfigReader& c, ModelSpec spec) {
  return BuildQwenHybrid(c, std::move(spec), QwenHybrid::kQwen35Dense);
}
Expected<ModelSpec> BuildQwen35MoeText(ConfigReader& c, ModelSpec spec) {
  return BuildQwenHybrid(c, std::move(spec), QwenHybrid::kQwen35Moe);
}

}  // namespace vramplan::families
