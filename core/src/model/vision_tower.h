#pragma once
// The vision tower and multimodal projector of a vision-language wrapper config (vision_config
// beside the text decoder), counted exactly from transformers' modeling code. They go to
// CheckpointLayout::vision_params / projector_params, i.e. ParamCounts::vision / projector and
// checkpoint_total; the memory terms keep modelling the text decoder only.

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "vramplan/error.h"

namespace vramplan {

struct VisionTowerParams {
  int64_t vision = 0;     // patch embedding, encoder blocks, final norm
  int64_t projector = 0;  // the module that maps vision features to the text hidden size
};

// `wrapper_type`: the top-level model_type ("qwen2_5_vl", "gemma3", "mistral3"); `config`: the whole
// config.json; `text_hidden`: the text decoder's hidden_size. nullopt when this wrapper's tower
// is not counted (other wrappers, or no vision_config); errors name the bad vision_config key.
std::optional<VisionTowerParams> CountVisionTower(const std::string& wrapper_type, const nlohmann::json& config,
                                                  const std::string& path, int64_t text_hidden, Issues* errors);

}  // namespace vramplan
