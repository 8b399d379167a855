#pragma once
// Llama 3.2 Vision (mllama): its cross-attention decoder layers (cross_attention_layers) attend from
// the text to the vision states, max_num_tiles x (patches + 1) positions per image (4 x 1601 for
// the 11B / 90B: ImageTokens::cross_attention_states). Their K and V are computed once per image
// from those states, not per text token: the text KV cache leaves them out, and these functions
// count them where each framework keeps them (docs/models.md "Cross-attention K/V").

#include <cstdint>

#include "vramplan/model_spec.h"

namespace vramplan {

struct CrossAttentionLayers {
  int64_t layers = 0;    // decoder layers with attention.cross_attention
  int64_t heads = 0;     // num_attention_heads
  int64_t kv_heads = 0;  // num_key_value_heads
  int64_t head_dim = 0;
};

CrossAttentionLayers CrossAttentionOf(const ModelSpec& m);

// Vision positions the cross-attention layers read for `images` images (0 without cross-attention).
int64_t CrossAttentionStates(const ModelSpec& m, int64_t images);

// transformers (models/mllama/modeling_mllama.py 0036813, MllamaTextCrossAttention.forward): K and V
// are projected from the states, expanded to num_attention_heads by repeat_kv, K through k_norm,
// then kept: in the cross-attention cache at inference (past_key_value.update of the expanded
// tensors) and, in training, saved by the attention matmuls (the expanded K and V). Bytes over all
// cross-attention layers for `states` positions in `elem_bytes`; `k_norm_saves`: K needs a gradient
// (a trained tower / projector or k_proj), so k_norm saves its fp32 input, the rsqrt and the product.
int64_t TransformersCrossKvBytes(const CrossAttentionLayers& x, int64_t states, int64_t elem_bytes, bool k_norm_saves);

}  // namespace vramplan
