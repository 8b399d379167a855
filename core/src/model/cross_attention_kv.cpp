#include "model/cross_attention_kv.h"

#include "model/image_tokens.h"
#include "util/checked_math.h"

namespace vramplan {

using checked::Add;
using checked::Mul;

CrossAttentionLayers CrossAttentionOf(const ModelSpec& m) {
  CrossAttentionLayers x;
  for (uint8_t k : m.layer_kind) {
    const AttentionGeometry& a = m.kinds[k].attention;
    if (!a.cross_attention) continue;
    ++x.layers;
    x.heads = a.num_heads;
    x.kv_heads = a.num_kv_heads > 0 ? a.num_kv_heads : a.num_heads;
    x.head_dim = a.head_dim;
  }
  return x;
}

int64_t CrossAttentionStates(const ModelSpec& m, int64_t images) {
  if (images <= 0 || m.vision.kind != VisionKind::kMllama || CrossAttentionOf(m).layers == 0) return 0;
  // The processor pads every image to max_num_tiles tiles (image_processing_mllama.py pack_images),
  // and the decoder reads all of them (the padded tiles masked, not dropped).
  return Mul(images, LargestImage(m.vision).cross_attention_states);
}

int64_t TransformersCrossKvBytes(const CrossAttentionLayers& x, int64_t states, int64_t e, bool k_norm_saves) {
  if (x.layers == 0 || states <= 0) return 0;
  const int64_t expanded = Mul(states, x.heads, x.head_dim);  // one of K or V after repeat_kv
  int64_t per_layer = Mul(2, expanded, e);
  // MllamaRMSNorm: hidden_states.to(float32) (saved by pow / mul), the rsqrt per row, and
  // weight * hidden.to(dtype) (the product the weight's gradient needs).
  if (k_norm_saves) per_layer = Add(per_layer, Mul(expanded, 4 + e), Mul(4, states, x.heads));
  return Mul(x.layers, per_layer);
}

}  // namespace vramplan
