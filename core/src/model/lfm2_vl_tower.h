#pragma once
// LFM2-VL's vision tower and projector (transformers models/lfm2_vl/modeling_lfm2_vl.py
// Lfm2VlModel, and the Hub checkpoints' remote modeling_lfm2_vl.py), counted from the wrapper's
// vision_config: a SigLIP2 NaFlex tower (models/siglip2/modeling_siglip2.py) and
// Lfm2VlMultiModalProjector over the pixel-unshuffled features.

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "model/vision_tower.h"
#include "vramplan/error.h"

namespace vramplan {

// The encoder layers LFM2-VL keeps: vision_config.num_hidden_layers, cut to vision_feature_layer + 1
// when that is not -1 (the Hub's Lfm2VlModel.__init__ slices encoder.layers[: vision_feature_layer
// + 1]; LFM2-VL-1.6B's config says 27 layers and -2, and its checkpoint stores 26).
int64_t Lfm2VlTowerLayers(const nlohmann::json& config);

// Siglip2VisionModel (vision) and Lfm2VlMultiModalProjector (projector) of an lfm2-vl config.json;
// `text_hidden` is text_config.hidden_size.
VisionTowerParams CountLfm2VlTower(const nlohmann::json& config, const std::string& path, int64_t text_hidden, Issues* errors);

}  // namespace vramplan
