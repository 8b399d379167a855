#pragma once
// Gemma 3n's vision tower (timm's MobileNetV5-300M encoder), audio tower (the USM conformer,
// Gemma3nAudioEncoder) and their two embedders (transformers models/gemma3n/modeling_gemma3n.py),
// counted from the gemma3n wrapper's vision_config and audio_config.

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "model/vision_tower.h"
#include "vramplan/error.h"

namespace vramplan {

// Whether vision_config names the one MobileNetV5 this count knows: timm's
// "mobilenetv5_300m_enc" (Gemma3nVisionConfig's default architecture, the only released one),
// created without extra model_args. Another architecture keeps the text_model_only reading.
bool Gemma3nVisionTowerKnown(const nlohmann::json& config);

// vision: MobileNetV5Encoder; audio: Gemma3nAudioEncoder; projector: embed_vision + embed_audio
// (Gemma3nMultimodalEmbedder); `text_hidden` is text_config.hidden_size.
VisionTowerParams CountGemma3nTowers(const nlohmann::json& config, const std::string& path, int64_t text_hidden, Issues* errors);

}  // namespace vramplan
