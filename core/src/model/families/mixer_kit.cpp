#include "model/families/mixer_kit.h"

namespace vramplan::families {
namespace {

// The linear-attention mixers' state (Gated DeltaNet, Kimi Delta Attention, Lightning): a
// (k_head_dim x v_head_dim) matrix per value head and, for the delta-rule mixers, a causal conv over
// q, k and v (conv_kernel 0: none); the inference engines size it from these.
void SetMatrixStateGeometry(LayerKind* k, MixerKind kind, int64_t v_heads, int64_t k_heads, int64_t v_head_dim,
                          int64_t k_head_dim, int64_t conv_kernel) {
  RecurrentGeometry& r = k->recurrent;
  r.kind = kind;
  r.num_heads = v_heads;
  r.num_k_heads = k_heads;
  r.head_dim = v_head_dim;
  r.k_head_dim = k_head_dim;
  r.inner = v_heads * v_head_dim;
  r.conv_kernel = conv_kernel;
}

}  // namespace

GatedDeltaNetDims ReadGatedDeltaNet(ConfigReader& c) {
  GatedDeltaNetDims g;
  g.k_heads = c.Int({"linear_num_key_heads"}, 1, kMaxHeadsOrExperts).value_or(16);
  g.v_heads = c.Int({"linear_num_value_heads"}, 1, kMaxHeadsOrExperts).value_or(32);
  g.k_head_dim = c.Int({"linear_key_head_dim"}, 1, kMaxHeadsOrExperts).value_or(128);
  g.v_head_dim = c.Int({"linear_value_head_dim"}, 1, kMaxHeadsOrExperts).value_or(128);
  g.conv_kernel = c.Int({"linear_conv_kernel_dim"}, 1, 1024).value_or(4);
  if (c.errors()->empty() && g.v_heads % g.k_heads != 0) {
    io::AddError(c.errors(), "invalid_value", io::JoinPath(c.path(), "linear_num_value_heads"),
                 "linear_num_value_heads (" + std::to_string(g.v_heads) + ") must be a multiple of linear_num_key_heads (" +
                     std::to_string(g.k_heads) + ")");
  }
  return g;
}

void AddGatedDeltaNet(LayerKind* k, int64_t h, const GatedDeltaNetDims& g, bool split_projections) {
  const int64_t key_dim = g.k_heads * g.k_head_dim, value_dim = g.v_heads * g.v_head_dim;
  if (split_projections) {
    AddLinear(k, "in_proj_qkv", LinearSlot::kMixerIn, h, 2 * key_dim + value_dim, false);
    AddLinear(k, "in_proj_z", LinearSlot::kMixerIn, h, value_dim, false);
    AddLinear(k, "in_proj_b", LinearSlot::kMixerIn, h, g.v_heads, false);
    AddLinear(k, "in_proj_a", LinearSlot::kMixerIn, h, g.v_heads, false);
  } else {
    AddLinear(k, "in_proj_qkvz", LinearSlot::kMixerIn, h, 2 * key_dim + 2 * value_dim, false);
    AddLinear(k, "in_proj_ba", LinearSlot::kMixerIn, h, 2 * g.v_heads, false);
  }
  AddLinear(k, "out_proj", LinearSlot::kMixerOut, value_dim, h, false);
  SetMatrixStateGeometry(k, MixerKind::kGatedDeltaNet, g.v_heads, g.k_heads, g.v_head_dim, g.k_head_dim, g.conv_kernel);
  // conv1d weight (conv_dim, 1, kernel), no bias; dt_bias, A_log; norm weight (v_head_dim).
  k->extra_attention_params += k->recurrent.ConvChannels() * g.conv_kernel + 2 * g.v_heads + g.v_head_dim;
}

void AddKimiDelta(LayerKind* k, int64_t h, const KimiDeltaDims& d) {
  const int64_t width = d.heads * d.head_dim;
  // vLLM kda.py: q/k/v, f_b, g_b and b_proj are ColumnParallelLinear (heads split over tp), the
  // low-rank f_a_proj / g_a_proj ReplicatedLinear, o_proj RowParallelLinear.
  AddLinear(k, "q_proj", LinearSlot::kMixerIn, h, width, false);
  AddLinear(k, "k_proj", LinearSlot::kMixerIn, h, width, false);
  AddLinear(k, "v_proj", LinearSlot::kMixerIn, h, width, false);
  AddLinear(k, "b_proj", LinearSlot::kMixerIn, h, d.heads, false);
  AddLinear(k, "f_a_proj", LinearSlot::kMixerIn, h, d.head_dim, false);
  k->linears.back().parallel = ParallelStyle::kReplicated;
  AddLinear(k, "g_a_proj", LinearSlot::kMixerIn, h, d.head_dim, false);
  k->linears.back().parallel = ParallelStyle::kReplicated;
  AddLinear(k, "f_b_proj", LinearSlot::kMixerIn, d.head_dim, width, false);
  AddLinear(k, "g_b_proj", LinearSlot::kMixerIn, d.head_dim, width, false);
  AddLinear(k, "o_proj", LinearSlot::kMixerOut, width, h, false);
  SetMatrixStateGeometry(k, MixerKind::kKimiDelta, d.heads, d.heads, d.head_dim, d.head_dim, d.conv_kernel);
  // Three conv weights (width, 1, kernel), dt_bias (width), A_log (1, 1, heads, 1), o_norm (head_dim).
  k->extra_attention_params += k->recurrent.ConvChannels() * d.conv_kernel + width + d.heads + d.head_dim;
}

void AddMamba2(LayerKind* k, int64_t h, const Mamba2Dims& m) {
  RecurrentGeometry& r = k->recurrent;
  r.kind = MixerKind::kMamba2;
  r.num_heads = m.heads;
  r.head_dim = m.head_dim;
  r.inner = m.heads * m.head_dim;
  r.groups = m.groups;
  r.state_size = m.state;
  r.conv_kernel = m.conv_kernel;
  const int64_t conv_dim = r.ConvChannels();
  AddLinear(k, "in_proj", LinearSlot::kMixerIn, h, r.inner + conv_dim + m.heads, m.proj_bias);
  AddLinear(k, "out_proj", LinearSlot::kMixerOut, r.inner, h, m.out_bias);
  k->extra_attention_params += conv_dim * m.conv_kernel + (m.conv_bias ? conv_dim : 0) + 3 * m.heads +
                               (m.gated_norm ? r.inner : 0);
}

void AddMamba1(LayerKind* k, int64_t h, const Mamba1Dims& m) {
  RecurrentGeometry& r = k->recurrent;
  r.kind = MixerKind::kMamba1;
  r.inner = m.inner;
  r.state_size = m.state;
  r.conv_kernel = m.conv_kernel;
  r.dt_rank = m.dt_rank;
  AddLinear(k, "in_proj", LinearSlot::kMixerIn, h, 2 * m.inner, m.proj_bias);
  AddLinear(k, "x_proj", LinearSlot::kMixerIn, m.inner, m.dt_rank + 2 * m.state, false);
  AddLinear(k, "dt_proj", LinearSlot::kMixerIn, m.dt_rank, m.inner, true);
  AddLinear(k, "out_proj", LinearSlot::kMixerOut, m.inner, h, m.proj_bias);
  k->extra_attention_params += m.inner * m.conv_kernel + (m.conv_bias ? m.inner : 0) + m.inner * m.state + m.inner +
                               (m.dt_bc_norms ? m.dt_rank + 2 * m.state : 0);
}

void AddShortConv(LayerKind* k, int64_t h, int64_t conv_kernel, bool bias) {
  RecurrentGeometry& r = k->recurrent;
  r.kind = MixerKind::kShortConv;
  r.inner = h;
  r.conv_kernel = conv_kernel;
  AddLinear(k, "in_proj", LinearSlot::kMixerIn, h, 3 * h, bias);
  AddLinear(k, "out_proj", LinearSlot::kMixerOut, h, h, bias);
  // conv.weight (h, 1, conv_L_cache) and conv.bias (h) when conv_bias.
  k->extra_attention_params += h * conv_kernel + (bias ? h : 0);
}

void AddLightning(LayerKind* k, int64_t h, int64_t heads, int64_t head_dim, int64_t block_size) {
  const int64_t inner = heads * head_dim;
  AddLinear(k, "qkv_proj", LinearSlot::kMixerIn, h, 3 * inner, false);
  AddLinear(k, "output_gate", LinearSlot::kMixerIn, h, inner, false);
  AddLinear(k, "out_proj", LinearSlot::kMixerOut, inner, h, false);
  SetMatrixStateGeometry(k, MixerKind::kLightning, heads, heads, head_dim, head_dim, /*conv_kernel=*/0);
  k->recurrent.block_size = block_size;
  k->extra_attention_params += inner;  // norm.weight
}

}  // namespace vramplan::families
