// Kimi Linear (moonshotai/Kimi-Linear-48B-A3B-Base / -Instruct; remote code modeling_kimi.py and
// configuration_kimi.py, vLLM model_executor/models/kimi_linear.py, transformers
// models/kimi_linear): Kimi Delta Attention layers (linear attention with per-channel forget gates,
// mixer_kit.h AddKimiDelta) interleaved with multi-head latent attention layers (no q LoRA,
// mla_use_nope), and a DeepSeek-V3-style MoE: the first first_k_dense_replace layers a SwiGLU MLP
// of intermediate_size, then a sigmoid router "gate" with e_score_correction_bias, routed experts
// w1 / w3 / w2 of moe_intermediate_size and num_shared_experts shared experts
// (block_sparse_moe.*). Which layers are KDA comes from linear_attn_config's 1-based kda_layers /
// full_attn_layers (or transformers' layer_types).
#include <string>
#include <vector>

#include "model/families/builders.h"
#include "model/families/mixer_kit.h"

namespace vramplan::families {
namespace {

// linear_attn_config's 1-based layer lists (KimiLinearConfig.is_kda_layer: (layer_idx + 1) in
// kda_layers); empty when absent.
std::vector<int64_t> OneBasedLayers(ConfigReader& lin, const char* key, int64_t layers) {
  std::vector<int64_t> out;
  const auto it = lin.raw().find(key);
  if (it == lin.raw().end() || it->is_null()) return out;
  const std::string p = io::JoinPath(lin.path(), key);
  const std::string what = p + " must be a list of 1-based layer numbers from 1 to " + std::to_string(layers);
  if (!it->is_array()) {
    io::AddError(lin.errors(), "wrong_type", p, what + ", got " + io::Describe(*it));
    return {};
  }
  for (size_t i = 0; i < it->size(); ++i) {
    const Json& v = (*it)[i];
    const bool ok = v.is_number_integer() && v.get<int64_t>() >= 1 && v.get<int64_t>() <= layers;
    if (!ok) {
      io::AddError(lin.errors(), v.is_number_integer() ? "out_of_range" : "wrong_type", p + "[" + std::to_string(i) + "]",
                   what + ", got " + io::Preview(v));
      return {};
    }
    out.push_back(v.get<int64_t>() - 1);
  }
  return out;
}

enum class KimiLayer : uint8_t { kUnset, kKda, kMla };

// Kimi K3's extensions reuse model_type kimi_linear (transformers configuration_kimi_linear.py:
// mla_use_output_gate, attn_res_block_size, routed_expert_hidden_size, SiTU, full-rank gates);
// their weights are not these, so such a config is refused rather than miscounted.
void RefuseK3Extensions(ConfigReader& c, ConfigReader& lin) {
  const auto refuse = [&](const std::string& key, const std::string& what) {
    io::AddError(c.errors(), "unsupported_model", io::JoinPath(c.path(), key),
                 key + " (" + what + ", Kimi K3) changes the weights and is not modelled by the kimi_linear reader");
  };
  if (c.Bool("mla_use_output_gate", false)) refuse("mla_use_output_gate", "a gated MLA output");
  if (c.Int({"attn_res_block_size"}).value_or(0) > 0) refuse("attn_res_block_size", "block attention residuals");
  if (c.Has("routed_expert_hidden_size")) refuse("routed_expert_hidden_size", "latent routed experts");
  if (lin.Bool("use_full_rank_gate", false)) refuse("linear_attn_config.use_full_rank_gate", "full-rank KDA gates");
  const std::string act = c.String("hidden_act", "silu");
  if (act != "silu") {
    io::AddError(c.errors(), "unsupported_model", io::JoinPath(c.path(), "hidden_act"),
                 "hidden_act " + io::Quote(act) + ": Kimi Linear's MLPs are SwiGLU (vLLM kimi_linear.py accepts silu only)");
  }
}

}  // namespace

Expected<ModelSpec> BuildKimiLinear(ConfigReader& c, ModelSpec spec) {
  Dims m;
  m.h = c.Required({"hidden_size"});
  m.layers = c.Required({"num_hidden_layers"}, 1, 4096);
  m.a = c.Required({"num_attention_heads"}, 1, kMaxHeadsOrExperts);
  m.vocab = c.Required({"vocab_size"});
  m.inter = c.Int({"intermediate_size"}).value_or(0);
  MlaDims mla;
  mla.heads = m.a;
  mla.q_lora = c.Int({"q_lora_rank"}, 0, kMaxHeadsOrExperts).value_or(0);
  mla.kv_lora = c.Required({"kv_lora_rank"}, 1, kMaxHeadsOrExperts);
  mla.rope = c.Int({"qk_rope_head_dim"}, 0, kMaxHeadsOrExperts).value_or(64);
  mla.nope = c.Required({"qk_nope_head_dim"}, 1, kMaxHeadsOrExperts);
  mla.v_dim = c.Required({"v_head_dim"}, 1, kMaxHeadsOrExperts);
  // KimiLinearConfig: the MoE exists when num_experts is set (is_moe).
  const int64_t experts = c.Int({"num_experts", "n_routed_experts"}, 1, kMaxHeadsOrExperts).value_or(0);
  int64_t top_k = 0, moe_inter = 0, n_shared = 0, first_dense = 1, freq = 1;
  if (experts > 0) {
    top_k = c.Required({"num_experts_per_token", "num_experts_per_tok"}, 1, kMaxHeadsOrExperts);
    CheckTopK(c, "num_experts_per_token", top_k, experts);
    moe_inter = c.Required({"moe_intermediate_size"});
    n_shared = c.Int({"num_shared_experts", "n_shared_experts"}, 0, kMaxHeadsOrExperts).value_or(0);
    first_dense = c.Int({"first_k_dense_replace"}).value_or(1);
    freq = c.Int({"moe_layer_freq"}, 1).value_or(1);
  }
  if (c.Int({"num_nextn_predict_layers"}).value_or(0) > 0) {
    io::AddError(c.errors(), "unsupported_model", io::JoinPath(c.path(), "num_nextn_predict_layers"),
                 "Kimi Linear's released checkpoints have no multi-token-prediction layers; their layout is not modelled");
  }
  // The KDA geometry: linear_attn_config {num_heads, head_dim, short_conv_kernel_size} as the
  // checkpoint stores it, or transformers' flattened linear_num_heads / linear_head_dim /
  // linear_conv_kernel_dim (defaults 32, 128, 4).
  static const Json kEmpty = Json::object();
  const auto lin_it = c.raw().find("linear_attn_config");
  const bool has_lin = lin_it != c.raw().end() && !lin_it->is_null();
  if (has_lin && !lin_it->is_object()) {
    io::AddError(c.errors(), "wrong_type", io::JoinPath(c.path(), "linear_attn_config"),
                 "linear_attn_config must be an object, got " + io::Describe(*lin_it));
  }
  ConfigReader lin(has_lin && lin_it->is_object() ? *lin_it : kEmpty, io::JoinPath(c.path(), "linear_attn_config"), c.errors());
  KimiDeltaDims kda;
  kda.heads = lin.Int({"num_heads"}, 1, kMaxHeadsOrExperts).value_or(c.Int({"linear_num_heads"}, 1, kMaxHeadsOrExperts).value_or(32));
  kda.head_dim = lin.Int({"head_dim"}, 1, kMaxHeadsOrExperts).value_or(c.Int({"linear_head_dim"}, 1, kMaxHeadsOrExperts).value_or(128));
  kda.conv_kernel = lin.Int({"short_conv_kernel_size"}, 1, 1024).value_or(c.Int({"linear_conv_kernel_dim"}, 1, 1024).value_or(4));
  RefuseK3Extensions(c, lin);
  if (!c.errors()->empty()) return *c.errors();

  // Layer kinds: kda_layers / full_attn_layers (1-based), else layer_types. Engines disagree on a
  // config with neither (vLLM: every layer MLA; transformers: every fourth), so it is refused.
  std::vector<KimiLayer> kinds(static_cast<size_t>(m.layers), KimiLayer::kUnset);
  const std::vector<int64_t> kda_layers = OneBasedLayers(lin, "kda_layers", m.layers);
  const std::vector<int64_t> full_layers = OneBasedLayers(lin, "full_attn_layers", m.layers);
  if (!c.errors()->empty()) return *c.errors();
  if (!kda_layers.empty() || !full_layers.empty()) {
    for (int64_t i : full_layers) kinds[static_cast<size_t>(i)] = KimiLayer::kMla;
    for (int64_t i : kda_layers) kinds[static_cast<size_t>(i)] = KimiLayer::kKda;
  } else if (auto types = c.StringList("layer_types", m.layers)) {
    for (size_t i = 0; i < types->size(); ++i) {
      const std::string& t = (*types)[i];
      if (t == "full_attention") kinds[i] = KimiLayer::kMla;
      else if (t == "linear_attention" || t == "kda_attention") kinds[i] = KimiLayer::kKda;
    }
  } else {
    io::AddError(c.errors(), "missing_key", io::JoinPath(lin.path(), "kda_layers"),
                 "the config must name its KDA and MLA layers (linear_attn_config.kda_layers and full_attn_layers, or layer_types)");
    return *c.errors();
  }
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (kinds[i] != KimiLayer::kUnset) continue;
    io::AddError(c.errors(), "invalid_value", io::JoinPath(lin.path(), "kda_layers"),
                 "layer " + std::to_string(i + 1) + " (1-based) is in neither kda_layers nor full_attn_layers");
    return *c.errors();
  }
  const auto is_moe_layer = [&](int64_t i) { return experts > 0 && i >= first_dense && i % freq == 0; };
  if (!CheckDenseIntermediate(c, m, is_moe_layer)) return *c.errors();

  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kRmsNorm, false);
  BuildLayers(&spec, m.layers, [&](int64_t i) {
    LayerKind k;
    if (kinds[static_cast<size_t>(i)] == KimiLayer::kMla) AddMlaAttention(&k, m.h, mla);
    else AddKimiDelta(&k, m.h, kda);
    AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, false);
    AddNorm(&k, "post_attention_layernorm", NormSlot::kPreMlp, m.h, false);
    if (!is_moe_layer(i)) {
      AddGatedMlp(&k, m.h, m.inter, false, GatedMlpOwner::kDense);
      SetDenseMlp(&k, MlpKind::kGated, ActivationFn::kSilu, m.inter);
      return k;
    }
    AddLinear(&k, "gate", LinearSlot::kRouter, m.h, experts, false);
    k.extra_router_params = experts;  // gate.e_score_correction_bias (vLLM KimiMoE: always)
    AddGatedMlp(&k, m.h, moe_inter, false, GatedMlpOwner::kExperts, experts, GatedNames{"w1", "w3", "w2"});
    if (n_shared > 0) AddGatedMlp(&k, m.h, moe_inter * n_shared, false, GatedMlpOwner::kSharedExperts);
    SetDenseMlp(&k, MlpKind::kGated, ActivationFn::kSilu, moe_inter);
    SetMoeMlp(&k, moe_inter, experts, top_k, moe_inter * n_shared);
    return k;
  });
  return spec;
}

}  // namespace vramplan::families
