// Liquid AI's LFM2 (transformers models/lfm2/modeling_lfm2.py and configuration_lfm2.py, v4.57) and
// LFM2-MoE (models/lfm2_moe/modular_lfm2_moe.py: the same mixers, MoE feed-forward after num_dense_layers):
// gated short-convolution blocks (Lfm2ShortConv) interleaved with GQA attention blocks
// (Lfm2Attention: q/k/v/out_proj without bias, RMSNorm(head_dim) q_layernorm / k_layernorm), each
// behind operator_norm and followed by ffn_norm and a SwiGLU MLP w1 / w3 / w2 whose width
// Lfm2MLP adjusts; the final norm is `embedding_norm`, the embeddings tied by default.
#include <cmath>
#include <string>

#include "model/families/builders.h"
#include "model/families/mixer_kit.h"

namespace vramplan::families {
namespace {

// Lfm2MLP.__init__: with block_auto_adjust_ff_dim, int(2 x ff / 3); then, when
// block_ffn_dim_multiplier is not None, int(multiplier x that) rounded up to block_multiple_of.
// (vLLM's Lfm2MLP rounds up even when the multiplier is None; the released configs all set 1.0.)
int64_t AdjustedFfnWidth(ConfigReader& c, int64_t ff) {
  if (!c.Bool("block_auto_adjust_ff_dim", true)) return ff;
  int64_t width = static_cast<int64_t>(2.0 * static_cast<double>(ff) / 3.0);
  const Json& raw = c.raw();
  auto it = raw.find("block_ffn_dim_multiplier");
  double multiplier = 1.0;  // Lfm2Config's default
  if (it != raw.end()) {
    if (it->is_null()) return width;
    if (!it->is_number() || !(it->get<double>() > 0.0) || !std::isfinite(it->get<double>())) {
      const std::string p = io::JoinPath(c.path(), "block_ffn_dim_multiplier");
      io::AddError(c.errors(), "invalid_value", p, p + " must be a positive number or null");
      return 0;
    }
    multiplier = it->get<double>();
  }
  const int64_t multiple_of = c.Int({"block_multiple_of"}, 1, 1 << 20).value_or(256);
  // A multiplier large enough to push the width past the dimension limit is an error, not an
  // overflowing cast (found by the scenario fuzzer: 1e20 x 8192).
  const double scaled = multiplier * static_cast<double>(width);
  if (!(scaled <= static_cast<double>(kMaxDim))) {
    const std::string p = io::JoinPath(c.path(), "block_ffn_dim_multiplier");
    io::AddError(c.errors(), "out_of_range", p,
                 p + " makes the feed-forward width " + std::to_string(scaled) + ", above the limit of " + std::to_string(kMaxDim));
    return 0;
  }
  width = static_cast<int64_t>(scaled);
  return multiple_of * ((width + multiple_of - 1) / multiple_of);
}

enum class Lfm2Variant { kDense, kMoe };

// Lfm2ForCausalLM / Lfm2MoeForCausalLM. Which layers attend: layer_types ("full_attention"; anything
// else is a conv block, Lfm2DecoderLayer.is_attention_layer), else full_attn_idxs, else every layer
// (Lfm2Config.__init__). The original config keys win over the transformers names, as Lfm2Config
// reads them: block_ff_dim over intermediate_size, tie_embedding over tie_word_embeddings.
Expected<ModelSpec> BuildLfm2Family(ConfigReader& c, ModelSpec spec, Lfm2Variant variant) {
  Dims m = ReadDims(c);
  CheckDims(c, m, false);
  const bool moe = variant == Lfm2Variant::kMoe;
  const int64_t ff = moe ? c.Int({"intermediate_size"}, 1).value_or(7168) : c.Int({"block_ff_dim", "intermediate_size"}, 1).value_or(12288);
  const int64_t conv_kernel = c.Int({"conv_L_cache"}, 1, 1024).value_or(3);
  const bool conv_bias = c.Bool("conv_bias", false);
  const bool tied = c.Has("tie_embedding") ? c.Bool("tie_embedding", true) : c.Bool("tie_word_embeddings", true);
  std::optional<std::vector<std::string>> types = m.layers > 0 ? c.StringList("layer_types", m.layers) : std::nullopt;
  std::vector<int64_t> attn_idxs;
  const bool has_idxs = !types && c.Has("full_attn_idxs");
  if (has_idxs && m.layers > 0) attn_idxs = c.LayerList("full_attn_idxs", m.layers);
  // Lfm2MoeConfig (configuration_lfm2_moe.py): the first num_dense_layers layers keep a SwiGLU MLP
  // of intermediate_size (Lfm2MoeMLP, no width adjustment); the others a Lfm2MoeSparseMoeBlock.
  int64_t dense_layers = 0, experts = 0, top_k = 0, moe_inter = 0;
  bool expert_bias = false;
  if (moe) {
    dense_layers = c.Int({"num_dense_layers"}, 0, 4096).value_or(2);
    experts = c.Int({"num_experts"}, 1, kMaxHeadsOrExperts).value_or(32);
    top_k = c.Int({"num_experts_per_tok"}, 1, kMaxHeadsOrExperts).value_or(4);
    moe_inter = c.Int({"moe_intermediate_size"}, 1).value_or(1792);
    expert_bias = c.Bool("use_expert_bias", true);
    CheckTopK(c, "num_experts_per_tok", top_k, experts);
    // Lfm2MoeConfig keeps layer_types None when absent (no full_attn_idxs fallback), and
    // Lfm2DecoderLayer indexes it: the model cannot be built without it.
    if (c.errors()->empty() && !types) {
      io::AddError(c.errors(), "missing_key", io::JoinPath(c.path(), "layer_types"),
                   "the model config is missing the required key \"layer_types\"");
    }
  }
  // vLLM sizes the conv state by conv_dim (Lfm2ForCausalLM.get_mamba_state_shape_from_config) and
  // transformers builds the conv over hidden_size: the released configs set them equal.
  if (c.errors()->empty() && c.Has("conv_dim") && c.Int({"conv_dim"}).value_or(m.h) != m.h) {
    io::AddError(c.errors(), "invalid_value", io::JoinPath(c.path(), "conv_dim"),
                 "conv_dim must equal hidden_size (transformers' Lfm2ShortConv convolves hidden_size channels)");
  }
  const int64_t inter = !c.errors()->empty() ? 0 : moe ? ff : AdjustedFfnWidth(c, ff);
  if (!c.errors()->empty()) return *c.errors();
  const auto is_attention = [&](int64_t i) {
    if (types) return (*types)[static_cast<size_t>(i)] == "full_attention";
    if (has_idxs) {
      for (int64_t a : attn_idxs) {
        if (a == i) return true;
      }
      return false;
    }
    return true;
  };
  FinishCommon(&spec, m, tied, NormKind::kRmsNorm, false, "embedding_norm");
  BuildLayers(&spec, m.layers, [&](int64_t i) {
    LayerKind k;
    if (is_attention(i)) {
      AddLinear(&k, "q_proj", LinearSlot::kQ, m.h, m.a * m.d, false);
      AddLinear(&k, "k_proj", LinearSlot::kK, m.h, m.kv * m.d, false);
      AddLinear(&k, "v_proj", LinearSlot::kV, m.h, m.kv * m.d, false);
      AddLinear(&k, "out_proj", LinearSlot::kO, m.a * m.d, m.h, false);
      AddNorm(&k, "q_layernorm", NormSlot::kQPerHead, m.d, false);
      AddNorm(&k, "k_layernorm", NormSlot::kKPerHead, m.d, false);
      SetAttention(&k, m, 0);
    } else {
      AddShortConv(&k, m.h, conv_kernel, conv_bias);
    }
    AddNorm(&k, "operator_norm", NormSlot::kPreAttention, m.h, false);
    AddNorm(&k, "ffn_norm", NormSlot::kPreMlp, m.h, false);
    const GatedNames names{"w1", "w3", "w2"};
    if (!moe || i < dense_layers) {
      AddGatedMlp(&k, m.h, inter, false, GatedMlpOwner::kDense, 1, names);
      SetDenseMlp(&k, MlpKind::kGated, ActivationFn::kSilu, inter);
      return k;
    }
    // Lfm2MoeSparseMoeBlock: router "gate" h -> experts (sigmoid scores), experts w1 / w3 / w2 of
    // moe_intermediate_size, and with use_expert_bias an fp32 expert_bias buffer of one value per
    // expert: a buffer, not a parameter, but stored in the checkpoint (the Hub counts it as F32).
    AddLinear(&k, "gate", LinearSlot::kRouter, m.h, experts, false);
    if (expert_bias) k.extra_router_params = experts;
    AddGatedMlp(&k, m.h, moe_inter, false, GatedMlpOwner::kExperts, experts, names);
    SetDenseMlp(&k, MlpKind::kGated, ActivationFn::kSilu, moe_inter);
    SetMoeMlp(&k, moe_inter, experts, top_k);
    return k;
  });
  return spec;
}

}  // namespace

Expected<ModelSpec> BuildLfm2(ConfigReader& c, ModelSpec spec) { return BuildLfm2Family(c, std::move(spec), Lfm2Variant::kDense); }
Expected<ModelSpec> BuildLfm2Moe(ConfigReader& c, ModelSpec spec) { return BuildLfm2Family(c, std::move(spec), Lfm2Variant::kMoe); }

}  // namespace vramplan::families
