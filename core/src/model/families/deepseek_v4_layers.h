// DeepSeek-V4's per-layer schedule as DeepseekV4Config.__post_init__ derives it (transformers
// models/deepseek_v4/configuration_deepseek_v4.py): the attention type of each layer (layer_types,
// else the legacy per-layer compress_ratios 0 / 4 / 128, else two heavily compressed layers then
// heavily compressed and compressed sparse alternating) and its MoE kind (mlp_layer_types, else the
// first num_hash_layers (3) layers hash-routed).
#pragma once

#include <cstdint>
#include <vector>

#include "model/families/config_reader.h"

namespace vramplan::families {

enum class V4Attention : uint8_t { kSliding, kCsa, kHca };

struct V4LayerPlan {
  // num_hidden_layers + MTP entries: the checkpoint's MTP layers follow the decoder layers
  // (DeepSeek's config.json lists their compress ratio last; absent, sliding and top-k routed).
  std::vector<V4Attention> attention;
  std::vector<bool> hash;
  int64_t csa_rate = 4;    // compress_rates["compressed_sparse_attention"]
  int64_t hca_rate = 128;  // compress_rates["heavily_compressed_attention"]
};

// Reads the schedule for `layers` decoder layers and `mtp` MTP layers; errors go to c.errors().
V4LayerPlan ReadV4LayerPlan(ConfigReader& c, int64_t layers, int64_t mtp);

}  // namespace vramplan::families
