#pragma once
// GLM-4.1V / GLM-4.5V's vision tower and patch merger (transformers models/glm4v/modeling_glm4v.py
// Glm4vVisionModel; models/glm4v_moe/modeling_glm4v_moe.py Glm4vMoeVisionModel is the same module
// set), counted from the wrapper's vision_config.

#include <string>

#include <nlohmann/json.hpp>

#include "model/vision_tower.h"
#include "vramplan/error.h"

namespace vramplan {

// The tower (patch embedding, position table, blocks, the two RMSNorms) as `vision`; the
// downsample Conv2d and Glm4vVisionPatchMerger, which merge 2 x 2 patches into a decoder token, as
// `projector` (the way Qwen2.5-VL's merger is counted).
VisionTowerParams CountGlm4vTower(const nlohmann::json& config, const std::string& path, Issues* errors);

}  // namespace vramplan
