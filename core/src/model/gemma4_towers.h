#pragma once
// Gemma 4's vision and audio towers and their embedders (transformers models/gemma4/modeling_gemma4.py),
// counted from the wrapper's vision_config and audio_config.

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "model/vision_tower.h"
#include "vramplan/error.h"

namespace vramplan {

// Gemma4VisionModel (vision), Gemma4AudioModel (audio) and both Gemma4MultimodalEmbedder
// (projector) of a gemma4 config.json; `text_hidden` is text_config.hidden_size.
VisionTowerParams CountGemma4Towers(const nlohmann::json& config, const std::string& path, int64_t text_hidden,
                                    Issues* errors);

// Gemma 4 12B (gemma4_unified): no towers. Gemma4UnifiedVisionEmbedder (vision) and the two
// Gemma4MultimodalEmbedder projections of the image and audio embeddings (projector).
VisionTowerParams CountGemma4UnifiedEmbedders(const nlohmann::json& config, const std::string& path, int64_t text_hidden,
                                              Issues* errors);

}  // namespace vramplan
