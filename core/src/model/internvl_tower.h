#pragma once
// InternVL's vision tower and projector (transformers models/internvl/modeling_internvl.py, the
// "-hf" checkpoints: InternVLForConditionalGeneration), counted from the wrapper's vision_config.

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "model/vision_tower.h"
#include "vramplan/error.h"

namespace vramplan {

// InternVLVisionModel (vision) and InternVLMultiModalProjector (projector) of an internvl
// config.json; `text_hidden` is text_config.hidden_size.
VisionTowerParams CountInternVlTower(const nlohmann::json& config, const std::string& path, int64_t text_hidden, Issues* errors);

// A vision_config size that may be an integer or a [height, width] pair: InternVLVisionConfig's
// image_size / patch_size (its __post_init__ makes a pair of an integer; the Hub configs write
// [448, 448] and [14, 14]) and Glm4vMoeVisionConfig's. The height (first entry); `fallback` when
// absent or not a positive integer.
int64_t VisionConfigSide(const nlohmann::json& vision_config, const char* key, int64_t fallback);

// int(1 / downsample_ratio) (InternVLMultiModalProjector; InternVLConfig's default 0.5 gives 2):
// the pixel shuffle folds r x r patches into one token. 0 when the ratio is not a number in (0, 1]
// (CountInternVlTower refuses it).
int64_t InternVlShuffle(const nlohmann::json& config);

}  // namespace vramplan
