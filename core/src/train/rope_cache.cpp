#include "train/rope_cache.h"

#include "util/checked_math.h"

namespace vramplan {

int64_t PerLayerRopeCacheBytes(const ModelSpec& model, const TrainConfig& train, const PrecisionModel& prec) {
  if (model.position_embedding_rows > 0 || model.kinds.empty() || model.max_position_embeddings <= 0) return 0;
  int64_t bytes = 0;
  for (uint8_t k : model.layer_kind) {
    const auto& a = model.kinds[k].attention;
    if (a.num_heads <= 0) continue;  // no softmax attention in this layer (Mamba / MLP-only blocks)
    const int64_t rotary_dim = static_cast<int64_t>(a.head_dim * model.rope_fraction);
    // Load dtype: 16-bit for the 16-bit modes and for QLoRA (loaded in 16-bit, then kbit-prepared);
    // fp32 for fp32 and for amp_* on an fp32-loaded model.
    const int64_t elem = (prec.half && !prec.autocast) || (prec.half && train.method == TrainMethod::kQlora) ? 2 : 4;
    bytes = checked::Add(bytes, checked::Mul(2 * elem, model.max_position_embeddings, rotary_dim));
  }
  return bytes;
}

}  // namespace vramplan
