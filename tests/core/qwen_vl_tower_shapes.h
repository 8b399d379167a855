// The Qwen2.5-VL / Qwen3-VL vision towers as their config.json files give them (Qwen2.5-VL-7B:
// vision_config hidden_size 1280, depth 32, intermediate_size 3420, num_heads 16, patch_size 14,
// temporal_patch_size 2, spatial_merge_size 2, window_size 112, four fullatt_block_indexes;
// Qwen3-VL: patch_size 16, depth 27, no windows), shared by the image- and video-token tests.
#pragma once

#include "vramplan/model_spec.h"

namespace vramplan::testing_support {

inline VisionShape Qwen25VlTower() {
  VisionShape s;
  s.kind = VisionKind::kQwen25Vl;
  s.hidden = 1280; s.layers = 32; s.intermediate = 3420; s.heads = 16;
  s.gated_mlp = true; s.rms_norm = true;
  s.patch = 14; s.temporal_patch = 2; s.merge = 2; s.window_size = 112; s.full_attention_layers = 4;
  return s;
}

inline VisionShape Qwen3VlTower() {
  VisionShape s = Qwen25VlTower();
  s.kind = VisionKind::kQwen3Vl;
  s.patch = 16; s.window_size = 0; s.full_attention_layers = 27; s.layers = 27;
  return s;
}

}  // namespace vramplan::testing_support
