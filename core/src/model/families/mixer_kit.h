// The recurrent token mixers of the hybrid families, as transformers builds them: Gated DeltaNet
// (linear attention), Mamba-1 / Mamba-2 (selective state spaces) and LFM2's gated short
// convolution. Each adds its linears (slots kMixerIn / kMixerOut), its other weights
// (extra_attention_params) and its RecurrentGeometry to a layer; the families (qwen3_next.cpp,
// mamba_hybrids.cpp, lfm2.cpp) decide which layers get which.
#pragma once

#include <cstdint>

#include "model/families/layer_kit.h"

namespace vramplan::families {

struct GatedDeltaNetDims {
  int64_t k_heads = 0, v_heads = 0, k_head_dim = 0, v_head_dim = 0, conv_kernel = 0;
};

// Reads linear_num_key_heads, linear_num_value_heads, linear_key_head_dim, linear_value_head_dim and
// linear_conv_kernel_dim with Qwen3NextConfig's defaults (16, 32, 128, 128, 4).
GatedDeltaNetDims ReadGatedDeltaNet(ConfigReader& c);

// transformers models/qwen3_next/modeling_qwen3_next.py Qwen3NextGatedDeltaNet: in_proj_qkvz
// (h -> 2 key_dim + 2 value_dim) and in_proj_ba (h -> 2 v_heads), or Qwen3.5's split
// in_proj_qkv / in_proj_z / in_proj_b / in_proj_a (models/qwen3_5/modeling_qwen3_5.py
// Qwen3_5GatedDeltaNet, the same widths); a depthwise conv1d over q, k, v without bias
// (conv_dim x kernel), dt_bias and A_log (v_heads each), the gated RMSNorm(v_head_dim) and out_proj.
void AddGatedDeltaNet(LayerKind* k, int64_t hidden, const GatedDeltaNetDims& g, bool split_projections);

struct Mamba2Dims {
  int64_t heads = 0, head_dim = 0, groups = 1, state = 0, conv_kernel = 4;
  bool proj_bias = false;     // in_proj bias
  bool conv_bias = true;      // conv1d bias
  bool out_bias = false;      // out_proj bias
  bool gated_norm = true;     // MambaRMSNormGated(inner) inside the mixer (Falcon-H1: mamba_rms_norm)
};

// modeling_nemotron_h.py NemotronHMamba2Mixer (also Granite 4.0's GraniteMoeHybridMambaLayer and
// Falcon-H1's FalconH1Mixer): in_proj h -> inner + conv_dim + heads (z, xBC, dt), depthwise conv1d
// over conv_dim = inner + 2 groups state, dt_bias / A_log / D (heads each), the gated RMSNorm(inner)
// and out_proj inner -> h; inner = heads x head_dim.
void AddMamba2(LayerKind* k, int64_t hidden, const Mamba2Dims& m);

struct Mamba1Dims {
  int64_t inner = 0, state = 0, conv_kernel = 4, dt_rank = 0;
  bool proj_bias = false, conv_bias = true;
  bool dt_bc_norms = true;  // Jamba's dt_layernorm / b_layernorm / c_layernorm (Mamba, FalconMamba: none)
};

// modeling_jamba.py JambaMambaMixer: in_proj h -> 2 inner, conv1d(inner, kernel), x_proj
// inner -> dt_rank + 2 state (no bias), dt_proj dt_rank -> inner (with bias), A_log (inner x state),
// D (inner), out_proj inner -> h, and Jamba's RMSNorms on dt (dt_rank), B and C (state each).
// The same mixer without those norms is modeling_mamba.py MambaMixer (and FalconMamba's
// FalconMambaMixer, whose B / C / dt norms carry no weight).
void AddMamba1(LayerKind* k, int64_t hidden, const Mamba1Dims& m);

struct KimiDeltaDims {
  int64_t heads = 32, head_dim = 128, conv_kernel = 4;
};

// Kimi Delta Attention as the checkpoint stores it (moonshotai/Kimi-Linear-48B-A3B-Instruct
// modeling_kimi.py KimiDeltaAttention; vLLM model_executor/layers/kda.py KimiDeltaAttention loads
// the same names): q_proj, k_proj, v_proj (h -> heads x head_dim each), three depthwise short
// convs q_conv1d / k_conv1d / v_conv1d (heads x head_dim x kernel, no bias), the low-rank forget
// gate f_a_proj (h -> head_dim) and f_b_proj (head_dim -> heads x head_dim) with dt_bias (heads x
// head_dim) and A_log (heads), beta's b_proj (h -> heads), the low-rank output gate g_a_proj /
// g_b_proj, the gated RMSNorm o_norm (head_dim) and o_proj; no biases.
void AddKimiDelta(LayerKind* k, int64_t hidden, const KimiDeltaDims& d);

// transformers models/lfm2/modeling_lfm2.py Lfm2ShortConv: in_proj h -> 3h (B, C, x), a depthwise
// nn.Conv1d(h, h, kernel_size=conv_L_cache, groups=h) and out_proj h -> h, all with bias only when
// conv_bias; y = out_proj(C * conv(B * x)).
void AddShortConv(LayerKind* k, int64_t hidden, int64_t conv_kernel, bool bias);

// transformers models/minimax/modeling_minimax.py MiniMaxLightningAttention: qkv_proj
// h -> 3 heads x head_dim (silu, split per head into q, k, v), output_gate h -> heads x head_dim
// (sigmoid), the RMSNorm(heads x head_dim) on the attention output and out_proj back to h, no
// biases. Its slope_rate / decay tensors are buffers, not in the checkpoint.
void AddLightning(LayerKind* k, int64_t hidden, int64_t heads, int64_t head_dim, int64_t block_size);

}  // namespace vramplan::families
