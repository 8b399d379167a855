// The Mamba hybrids: NVIDIA Nemotron-H (transformers models/nemotron_h/modeling_nemotron_h.py),
// IBM Granite 4.0 (models/granitemoehybrid/modeling_granitemoehybrid.py), TII Falcon-H1
// (models/falcon_h1/modeling_falcon_h1.py) and AI21 Jamba (models/jamba/modeling_jamba.py).
#include <algorithm>
#include <string>
#include <vector>

#include "model/families/builders.h"
#include "model/families/mixer_kit.h"

namespace vramplan::families {
namespace {

// q/k/v/o attention with `m`'s heads (no q/k norms in these families).
void AddPlainAttention(LayerKind* k, const Dims& m, bool bias) {
  AddQkvo(k, m, bias, bias);
  SetAttention(k, m, 0);
}

}  // namespace

// NemotronHForCausalLM: one mixer per block, chosen by hybrid_override_pattern (NemotronHBlock:
// 'M' Mamba-2, '*' attention, '-' a ReLU^2 MLP up_proj/down_proj, 'E' NemotronHMoE: a top-k router
// with e_score_correction_bias, non-gated experts and a shared expert), each behind one RMSNorm
// ("norm"); final norm_f.
Expected<ModelSpec> BuildNemotronH(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  m.d = c.Int({"head_dim", "attention_head_dim"}, 1, kMaxHeadsOrExperts).value_or(m.a > 0 ? m.h / m.a : 0);
  CheckDims(c, m, false);
  const std::string pattern = c.String("hybrid_override_pattern", "");
  Mamba2Dims mm;
  mm.heads = c.Required({"mamba_num_heads"}, 1, kMaxHeadsOrExperts);
  mm.head_dim = c.Required({"mamba_head_dim"}, 1, kMaxHeadsOrExperts);
  mm.groups = c.Int({"n_groups"}, 1, kMaxHeadsOrExperts).value_or(8);
  mm.state = c.Int({"ssm_state_size"}, 1, kMaxHeadsOrExperts).value_or(128);
  mm.conv_kernel = c.Int({"conv_kernel"}, 1, 1024).value_or(4);
  mm.proj_bias = mm.out_bias = c.Bool("use_bias", false);
  mm.conv_bias = c.Bool("use_conv_bias", true);
  const bool attn_bias = c.Bool("attention_bias", false), mlp_bias = c.Bool("mlp_bias", false);
  const int64_t experts = c.Int({"n_routed_experts"}, 0, kMaxHeadsOrExperts).value_or(0);
  const int64_t top_k = c.Int({"num_experts_per_tok"}, 0, kMaxHeadsOrExperts).value_or(0);
  const int64_t moe_inter = c.Int({"moe_intermediate_size"}).value_or(0);
  const int64_t shared_inter = c.Int({"moe_shared_expert_intermediate_size"}).value_or(0);
  const ActivationFn act = ParseActivation(c.String("mlp_hidden_act", "relu2"));
  if (c.errors()->empty() && static_cast<int64_t>(pattern.size()) != m.layers) {
    io::AddError(c.errors(), "invalid_value", io::JoinPath(c.path(), "hybrid_override_pattern"),
                 "hybrid_override_pattern must have one character per layer (" + std::to_string(m.layers) + ")");
  }
  if (c.errors()->empty() && pattern.find_first_not_of("M*-E") != std::string::npos) {
    io::AddError(c.errors(), "invalid_value", io::JoinPath(c.path(), "hybrid_override_pattern"),
                 "hybrid_override_pattern may only hold M (Mamba-2), * (attention), - (MLP) and E (MoE)");
  }
  if (c.errors()->empty() && pattern.find('E') != std::string::npos && (experts <= 0 || top_k <= 0 || moe_inter <= 0)) {
    io::AddError(c.errors(), "missing_key", io::JoinPath(c.path(), "n_routed_experts"),
                 "MoE blocks (E) need n_routed_experts, num_experts_per_tok and moe_intermediate_size");
  }
  if (c.errors()->empty() && pattern.find('-') != std::string::npos && m.inter <= 0) {
    io::AddError(c.errors(), "missing_key", io::JoinPath(c.path(), "intermediate_size"),
                 "MLP blocks (-) need intermediate_size");
  }
  if (c.Has("moe_latent_size")) {
    io::AddError(c.errors(), "invalid_value", io::JoinPath(c.path(), "moe_latent_size"),
                 "latent MoE projections (moe_latent_size) are not read yet");
  }
  CheckTopK(c, "num_experts_per_tok", top_k, experts);
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kRmsNorm, false, "norm_f");
  BuildLayers(&spec, m.layers, [&](int64_t i) {
    LayerKind k;
    const char block = pattern[static_cast<size_t>(i)];
    const bool mixer = block == 'M' || block == '*';
    AddNorm(&k, "norm", mixer ? NormSlot::kPreAttention : NormSlot::kPreMlp, m.h, false);
    k.mlp.kind = MlpKind::kPlain;
    k.mlp.activation = act;
    if (block == 'M') {
      AddMamba2(&k, m.h, mm);
    } else if (block == '*') {
      AddPlainAttention(&k, m, attn_bias);
    } else if (block == '-') {
      AddLinear(&k, "up_proj", LinearSlot::kUp, m.h, m.inter, mlp_bias);
      AddLinear(&k, "down_proj", LinearSlot::kDown, m.inter, m.h, mlp_bias);
      k.mlp.intermediate = m.inter;
    } else {
      AddLinear(&k, "gate", LinearSlot::kRouter, m.h, experts, false);
      k.extra_router_params = experts;  // NemotronHTopkRouter.e_score_correction_bias
      AddLinear(&k, "up_proj", LinearSlot::kExpertUp, m.h, moe_inter, mlp_bias, experts);
      AddLinear(&k, "down_proj", LinearSlot::kExpertDown, moe_inter, m.h, mlp_bias, experts);
      if (shared_inter > 0) {
        AddLinear(&k, "up_proj", LinearSlot::kSharedExpertUp, m.h, shared_inter, mlp_bias);
        AddLinear(&k, "down_proj", LinearSlot::kSharedExpertDown, shared_inter, m.h, mlp_bias);
      }
      SetMoeMlp(&k, moe_inter, experts, top_k, shared_inter);
    }
    return k;
  });
  return spec;
}

// GraniteMoeHybridForCausalLM: layer_types (or layers_block_type) "mamba" / "attention"; every
// layer has a MoE (router "router.layer", fused ParallelExperts input_linear h -> 2 x
// intermediate_size and output_linear; not nn.Linear) when num_local_experts > 0 and always the
// shared SwiGLU MLP shared_mlp.input_linear h -> 2 x shared_intermediate_size / output_linear.
Expected<ModelSpec> BuildGraniteMoeHybrid(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  CheckDims(c, m, false);
  Mamba2Dims mm;
  mm.heads = c.Int({"mamba_n_heads"}, 1, kMaxHeadsOrExperts).value_or(128);
  const int64_t expand = c.Int({"mamba_expand"}, 1, 64).value_or(2);
  mm.head_dim = c.Int({"mamba_d_head"}, 1, kMaxHeadsOrExperts).value_or(mm.heads > 0 ? expand * m.h / mm.heads : 0);
  mm.groups = c.Int({"mamba_n_groups"}, 1, kMaxHeadsOrExperts).value_or(1);
  mm.state = c.Int({"mamba_d_state"}, 1, kMaxHeadsOrExperts).value_or(256);
  mm.conv_kernel = c.Int({"mamba_d_conv"}, 1, 1024).value_or(4);
  mm.proj_bias = mm.out_bias = c.Bool("mamba_proj_bias", false);
  mm.conv_bias = c.Bool("mamba_conv_bias", true);
  const bool attn_bias = c.Bool("attention_bias", false);
  const int64_t experts = c.Int({"num_local_experts"}, 0, kMaxHeadsOrExperts).value_or(0);
  const int64_t top_k = c.Int({"num_experts_per_tok"}, 0, kMaxHeadsOrExperts).value_or(0);
  const int64_t shared_inter = c.Int({"shared_intermediate_size"}).value_or(0);
  std::optional<std::vector<std::string>> types =
      m.layers > 0 ? (c.Has("layer_types") ? c.StringList("layer_types", m.layers) : c.StringList("layers_block_type", m.layers))
                   : std::nullopt;
  const ActivationFn act = ParseActivation(c.String("hidden_act", "silu"));
  if (c.errors()->empty() && experts > 0 && m.inter <= 0) {
    io::AddError(c.errors(), "missing_key", io::JoinPath(c.path(), "intermediate_size"), "the experts need intermediate_size");
  }
  if (c.errors()->empty() && mm.heads * mm.head_dim != expand * m.h) {
    io::AddError(c.errors(), "invalid_value", io::JoinPath(c.path(), "mamba_d_head"),
                 "mamba_n_heads x mamba_d_head must equal mamba_expand x hidden_size");
  }
  if (c.errors()->empty() && shared_inter <= 0) {
    io::AddError(c.errors(), "missing_key", io::JoinPath(c.path(), "shared_intermediate_size"),
                 "the model config is missing the required key \"shared_intermediate_size\"");
  }
  CheckTopK(c, "num_experts_per_tok", top_k, experts);
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kRmsNorm, false);
  BuildLayers(&spec, m.layers, [&](int64_t i) {
    LayerKind k;
    if (types && (*types)[static_cast<size_t>(i)] == "mamba") AddMamba2(&k, m.h, mm);
    else AddPlainAttention(&k, m, attn_bias);
    AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, false);
    AddNorm(&k, "post_attention_layernorm", NormSlot::kPreMlp, m.h, false);
    SetDenseMlp(&k, MlpKind::kGated, act, shared_inter);
    if (experts > 0) {
      AddLinear(&k, "layer", LinearSlot::kRouter, m.h, experts, false);
      AddLinear(&k, "input_linear", LinearSlot::kExpertGateUp, m.h, 2 * m.inter, false, experts, false);
      AddLinear(&k, "output_linear", LinearSlot::kExpertDown, m.inter, m.h, false, experts, false);
      AddLinear(&k, "input_linear", LinearSlot::kSharedExpertUp, m.h, 2 * shared_inter, false);
      AddLinear(&k, "output_linear", LinearSlot::kSharedExpertDown, shared_inter, m.h, false);
      SetMoeMlp(&k, m.inter, experts, top_k, shared_inter);
    } else {
      AddLinear(&k, "input_linear", LinearSlot::kGateUp, m.h, 2 * shared_inter, false);
      AddLinear(&k, "output_linear", LinearSlot::kDown, shared_inter, m.h, false);
    }
    return k;
  });
  return spec;
}

// FalconH1ForCausalLM: every layer runs attention and a Mamba-2 mixer side by side on the same
// normed input (FalconH1DecoderLayer: input_layernorm -> self_attn + mamba), then a SwiGLU MLP
// behind pre_ff_layernorm; final_layernorm.
Expected<ModelSpec> BuildFalconH1(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  CheckDims(c, m, true);
  Mamba2Dims mm;
  const int64_t expand = c.Int({"mamba_expand"}, 1, 64).value_or(2);
  const int64_t inner = c.Int({"mamba_d_ssm"}).value_or(expand * m.h);
  mm.heads = c.Int({"mamba_n_heads"}, 1, kMaxHeadsOrExperts).value_or(128);
  mm.head_dim = c.Int({"mamba_d_head"}, 1, kMaxHeadsOrExperts).value_or(mm.heads > 0 ? inner / mm.heads : 0);
  mm.groups = c.Int({"mamba_n_groups"}, 1, kMaxHeadsOrExperts).value_or(1);
  mm.state = c.Int({"mamba_d_state"}, 1, kMaxHeadsOrExperts).value_or(256);
  mm.conv_kernel = c.Int({"mamba_d_conv"}, 1, 1024).value_or(4);
  mm.proj_bias = c.Bool("mamba_proj_bias", false);
  mm.out_bias = c.Bool("projectors_bias", false);
  mm.conv_bias = c.Bool("mamba_conv_bias", true);
  mm.gated_norm = c.Bool("mamba_rms_norm", false);
  const bool attn_bias = c.Bool("attention_bias", false), mlp_bias = c.Bool("mlp_bias", false);
  const ActivationFn act = ParseActivation(c.String("hidden_act", "silu"));
  if (c.errors()->empty() && mm.heads * mm.head_dim != inner) {
    io::AddError(c.errors(), "invalid_value", io::JoinPath(c.path(), "mamba_d_head"),
                 "mamba_n_heads x mamba_d_head must equal mamba_d_ssm (" + std::to_string(inner) + ")");
  }
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kRmsNorm, false, "final_layernorm");
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k;
    AddPlainAttention(&k, m, attn_bias);
    AddMamba2(&k, m.h, mm);
    AddGatedMlp(&k, m.h, m.inter, mlp_bias, GatedMlpOwner::kDense);
    AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, false);
    AddNorm(&k, "pre_ff_layernorm", NormSlot::kPreMlp, m.h, false);
    SetDenseMlp(&k, MlpKind::kGated, act, m.inter);
    return k;
  });
  return spec;
}

// BambaForCausalLM (models/bamba/modeling_bamba.py; BambaConfig in configuration_bamba.py):
// attention on the layers of attn_layer_indices (newer configs: "full_attention" in layer_types),
// BambaMixer elsewhere (the Mamba-2 mixer with its gated RMSNorm; mamba_d_head "auto" = mamba_expand
// x hidden / mamba_n_heads); every layer a SwiGLU feed_forward (gate_proj / up_proj / down_proj,
// no bias), input_layernorm and pre_ff_layernorm; final_layernorm; untied by default. Attention and
// MLP carry no bias (BambaConfig fixes attention_bias and mlp_bias to False).
Expected<ModelSpec> BuildBamba(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  CheckDims(c, m, true);
  Mamba2Dims mm;
  const int64_t expand = c.Int({"mamba_expand"}, 1, 64).value_or(2);
  mm.heads = c.Int({"mamba_n_heads"}, 1, kMaxHeadsOrExperts).value_or(128);
  mm.head_dim = c.IsString("mamba_d_head") ? 0 : c.Int({"mamba_d_head"}, 1, kMaxHeadsOrExperts).value_or(0);
  if (mm.head_dim == 0 && mm.heads > 0) mm.head_dim = expand * m.h / mm.heads;
  mm.groups = c.Int({"mamba_n_groups"}, 1, kMaxHeadsOrExperts).value_or(1);
  mm.state = c.Int({"mamba_d_state"}, 1, kMaxHeadsOrExperts).value_or(256);
  mm.conv_kernel = c.Int({"mamba_d_conv"}, 1, 1024).value_or(4);
  mm.proj_bias = mm.out_bias = c.Bool("mamba_proj_bias", false);
  mm.conv_bias = c.Bool("mamba_conv_bias", true);
  std::vector<bool> attention(static_cast<size_t>(std::max<int64_t>(m.layers, 0)), false);
  if (c.Has("attn_layer_indices") && m.layers > 0) {
    for (int64_t i : c.LayerList("attn_layer_indices", m.layers)) attention[static_cast<size_t>(i)] = true;
  } else if (c.Has("layer_types") && m.layers > 0) {
    if (auto types = c.StringList("layer_types", m.layers)) {
      for (size_t i = 0; i < types->size(); ++i) attention[i] = (*types)[i] == "full_attention" || (*types)[i] == "attention";
    }
  }
  const ActivationFn act = ParseActivation(c.String("hidden_act", "silu"));
  if (c.errors()->empty() && mm.heads * mm.head_dim != expand * m.h) {
    io::AddError(c.errors(), "invalid_value", io::JoinPath(c.path(), "mamba_d_head"),
                 "mamba_n_heads x mamba_d_head must equal mamba_expand x hidden_size (" + std::to_string(expand * m.h) + ")");
  }
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kRmsNorm, false, "final_layernorm");
  BuildLayers(&spec, m.layers, [&](int64_t i) {
    LayerKind k;
    if (attention[static_cast<size_t>(i)]) AddPlainAttention(&k, m, false);
    else AddMamba2(&k, m.h, mm);
    AddGatedMlp(&k, m.h, m.inter, false, GatedMlpOwner::kDense);
    AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, false);
    AddNorm(&k, "pre_ff_layernorm", NormSlot::kPreMlp, m.h, false);
    SetDenseMlp(&k, MlpKind::kGated, act, m.inter);
    return k;
  });
  return spec;
}

// JambaForCausalLM: attention on layers i % attn_layer_period == attn_layer_offset, Mamba-1
// elsewhere; a MoE (router, gated experts) on layers i % expert_layer_period == expert_layer_offset
// when num_experts > 1, a gated MLP elsewhere; input_layernorm, pre_ff_layernorm, final_layernorm.
Expected<ModelSpec> BuildJamba(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  CheckDims(c, m, true);
  Mamba1Dims mm;
  mm.inner = c.Int({"mamba_expand"}, 1, 64).value_or(2) * m.h;
  mm.state = c.Int({"mamba_d_state"}, 1, kMaxHeadsOrExperts).value_or(16);
  mm.conv_kernel = c.Int({"mamba_d_conv"}, 1, 1024).value_or(4);
  // mamba_dt_rank "auto" (the default): ceil(hidden_size / 16) (JambaConfig.__init__).
  mm.dt_rank = c.IsString("mamba_dt_rank") ? (m.h + 15) / 16 : c.Int({"mamba_dt_rank"}, 1, kMaxDim).value_or((m.h + 15) / 16);
  mm.proj_bias = c.Bool("mamba_proj_bias", false);
  mm.conv_bias = c.Bool("mamba_conv_bias", true);
  const int64_t attn_period = c.Int({"attn_layer_period"}, 1, 4096).value_or(8);
  const int64_t attn_offset = c.Int({"attn_layer_offset"}, 0, 4096).value_or(4);
  const int64_t expert_period = c.Int({"expert_layer_period"}, 1, 4096).value_or(2);
  const int64_t expert_offset = c.Int({"expert_layer_offset"}, 0, 4096).value_or(1);
  const int64_t experts = c.Int({"num_experts"}, 1, kMaxHeadsOrExperts).value_or(16);
  const int64_t top_k = c.Int({"num_experts_per_tok"}, 1, kMaxHeadsOrExperts).value_or(2);
  CheckTopK(c, "num_experts_per_tok", top_k, experts);
  const ActivationFn act = ParseActivation(c.String("hidden_act", "silu"));
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kRmsNorm, false, "final_layernorm");
  BuildLayers(&spec, m.layers, [&](int64_t i) {
    LayerKind k;
    if (i % attn_period == attn_offset) AddPlainAttention(&k, m, false);
    else AddMamba1(&k, m.h, mm);
    AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, false);
    AddNorm(&k, "pre_ff_layernorm", NormSlot::kPreMlp, m.h, false);
    SetDenseMlp(&k, MlpKind::kGated, act, m.inter);
    if (experts > 1 && i % expert_period == expert_offset) {
      AddLinear(&k, "router", LinearSlot::kRouter, m.h, experts, false);
      AddGatedMlp(&k, m.h, m.inter, false, GatedMlpOwner::kExperts, experts);
      SetMoeMlp(&k, m.inter, experts, top_k);
    } else {
      AddGatedMlp(&k, m.h, m.inter, false, GatedMlpOwner::kDense);
    }
    return k;
  });
  return spec;
}

}  // namespace vramplan::families
