#pragma once
// Kimi-VL's vision tower and projector (the Hub checkpoints' remote modeling_kimi_vl.py,
// moonshotai/Kimi-VL-A3B-Instruct; vLLM model_executor/models/moonvit.py and kimi_vl.py build the
// same tensors), counted from the wrapper's vision_config: MoonViT (MoonVitPretrainedModel) and
// KimiVLMultiModalProjector over the 2 x 2 merged patches.

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "model/vision_tower.h"
#include "vramplan/error.h"

namespace vramplan {

// vision_config.merge_kernel_size (MoonViTConfig default [2, 2]): the patches a side that
// patch_merger folds into one decoder token. Entry `i` (0: height, 1: width); a value outside
// [1, 64] or a malformed pair reads as the default here, CountKimiVlTower refuses it by name.
int64_t KimiVlMergeKernel(const nlohmann::json& vision_config, size_t i);

// MoonVitPretrainedModel (vision) and KimiVLMultiModalProjector (projector) of a kimi_vl
// config.json; `text_hidden` is text_config.hidden_size.
VisionTowerParams CountKimiVlTower(const nlohmann::json& config, const std::string& path, int64_t text_hidden, Issues* errors);

}  // namespace vramplan
