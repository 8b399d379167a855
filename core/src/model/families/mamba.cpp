// The pure state-space decoders: Mamba (transformers models/mamba/modeling_mamba.py), Mamba-2
// (models/mamba2/modeling_mamba2.py) and FalconMamba (models/falcon_mamba/modeling_falcon_mamba.py).
// Every layer is one RMSNorm ("norm") and one mixer, with no attention and no MLP; the mixers are
// the hybrids' (mixer_kit.h), so the inference recurrent state and the training terms follow.
#include "model/families/builders.h"
#include "model/families/mixer_kit.h"

namespace vramplan::families {
namespace {

// The dimensions the three configs share (MambaConfig, Mamba2Config, FalconMambaConfig): the width
// and depth under their transformers names, and the vocabulary.
Dims ReadSsmDims(ConfigReader& c) {
  Dims m;
  m.h = c.Required({"hidden_size", "d_model"});
  m.layers = c.Required({"num_hidden_layers", "n_layer"}, 1, 4096);
  m.vocab = c.Required({"vocab_size"});
  return m;
}

// One pure-SSM layer: the RMSNorm in front of the mixer, no attention (num_heads 0: no KV cache)
// and no MLP (intermediate 0).
LayerKind SsmLayer(int64_t h) {
  LayerKind k;
  AddNorm(&k, "norm", NormSlot::kPreAttention, h, false);
  k.mlp.kind = MlpKind::kPlain;
  return k;
}

// MambaMixer / FalconMambaMixer: in_proj h -> 2 x intermediate (use_bias), a depthwise conv1d of
// conv_kernel (use_conv_bias), x_proj, dt_proj, A_log, D, out_proj (use_bias). MambaConfig sets
// intermediate_size = expand x hidden_size; FalconMambaConfig keeps a saved intermediate_size
// instead ("needed since mamba overrides the intermediate_size attribute"): falcon-mamba-7b says
// expand 16 but intermediate_size 8192. time_step_rank "auto" (the default) is ceil(hidden_size / 16).
Expected<ModelSpec> BuildMamba1Family(ConfigReader& c, ModelSpec spec, bool saved_intermediate_wins) {
  Dims m = ReadSsmDims(c);
  Mamba1Dims mm;
  const int64_t expand = c.Int({"expand"}, 1, 64).value_or(2);
  mm.inner = saved_intermediate_wins ? c.Int({"intermediate_size"}).value_or(expand * m.h) : expand * m.h;
  mm.state = c.Int({"state_size"}, 1, kMaxHeadsOrExperts).value_or(16);
  mm.conv_kernel = c.Int({"conv_kernel"}, 1, 1024).value_or(4);
  mm.dt_rank = c.IsString("time_step_rank") ? (m.h + 15) / 16 : c.Int({"time_step_rank"}, 1, kMaxDim).value_or((m.h + 15) / 16);
  mm.proj_bias = c.Bool("use_bias", false);
  mm.conv_bias = c.Bool("use_conv_bias", true);
  mm.dt_bc_norms = false;
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", true), NormKind::kRmsNorm, false, "norm_f");
  spec.rope_fraction = 0.0;
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k = SsmLayer(m.h);
    AddMamba1(&k, m.h, mm);
    return k;
  });
  return spec;
}

}  // namespace

// MambaForCausalLM: embeddings, MambaBlock x num_hidden_layers, norm_f; lm_head tied by default.
Expected<ModelSpec> BuildMamba(ConfigReader& c, ModelSpec spec) { return BuildMamba1Family(c, std::move(spec), false); }

// FalconMambaForCausalLM: the Mamba layout; its mixer normalizes B, C and dt with an RMSNorm that
// has no weight (rms_forward), so the parameters are Mamba's. FalconMambaConfig ties by default
// (falcon-mamba-7b's config.json turns it off) and keeps a saved intermediate_size.
Expected<ModelSpec> BuildFalconMamba(ConfigReader& c, ModelSpec spec) { return BuildMamba1Family(c, std::move(spec), true); }

// Mamba2ForCausalLM: embeddings, Mamba2Block x num_hidden_layers (norm, Mamba2Mixer: in_proj
// h -> intermediate + conv_dim + num_heads with use_bias, conv1d over conv_dim = intermediate +
// 2 x n_groups x state_size with use_conv_bias, dt_bias / A_log / D per head, the gated RMSNorm
// over intermediate, out_proj with use_bias), norm_f; lm_head untied by default. intermediate_size
// = expand x hidden_size (Mamba2Config) must equal num_heads x head_dim: the mixer reshapes it into
// heads.
Expected<ModelSpec> BuildMamba2(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadSsmDims(c);
  Mamba2Dims mm;
  mm.heads = c.Int({"num_heads"}, 1, kMaxHeadsOrExperts).value_or(128);
  mm.head_dim = c.Int({"head_dim"}, 1, kMaxHeadsOrExperts).value_or(64);
  mm.groups = c.Int({"n_groups"}, 1, kMaxHeadsOrExperts).value_or(8);
  mm.state = c.Int({"state_size"}, 1, kMaxHeadsOrExperts).value_or(128);
  mm.conv_kernel = c.Int({"conv_kernel"}, 1, 1024).value_or(4);
  mm.proj_bias = mm.out_bias = c.Bool("use_bias", false);
  mm.conv_bias = c.Bool("use_conv_bias", true);
  mm.gated_norm = true;  // Mamba2Mixer always builds MambaRMSNormGated
  const int64_t expand = c.Int({"expand"}, 1, 64).value_or(2);
  const int64_t inner = expand * m.h;
  if (c.errors()->empty() && mm.heads * mm.head_dim != inner) {
    io::AddError(c.errors(), "invalid_value", io::JoinPath(c.path(), "num_heads"),
                 "num_heads x head_dim must equal expand x hidden_size (" + std::to_string(inner) + ")");
  }
  if (c.errors()->empty() && mm.heads % mm.groups != 0) {
    io::AddError(c.errors(), "invalid_value", io::JoinPath(c.path(), "n_groups"), "num_heads must be a multiple of n_groups");
  }
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kRmsNorm, false, "norm_f");
  spec.rope_fraction = 0.0;
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k = SsmLayer(m.h);
    AddMamba2(&k, m.h, mm);
    return k;
  });
  return spec;
}

}  // namespace vramplan::families
