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
  int64_t audio = 0;      // an audio tower (Gemma 4 E2B / E4B, Gemma 3n); its projector counts in `projector`
};

// `wrapper_type`: the top-level model_type (VisionTowerCounted's list); `config`: the whole
// config.json; `text_hidden`: the text decoder's hidden_size. nullopt when this wrapper's tower
// is not counted (other wrappers, or no vision_config); errors name the bad vision_config key.
std::optional<VisionTowerParams> CountVisionTower(const std::string& wrapper_type, const nlohmann::json& config,
                                                  const std::string& path, int64_t text_hidden, Issues* errors);

// Whether CountVisionTower counts this wrapper's tower: Qwen2.5-VL, Gemma 3, Mistral 3, Llama 4,
// Qwen3-VL and Qwen3.5 (dense and MoE), Gemma 4 and Gemma 3n (with their audio towers), Llama 3.2 Vision, Qwen2-VL,
// Idefics3 / SmolVLM, PaliGemma, InternVL (-hf), GLM-4.1V / GLM-4.5V, LLaVA-OneVision (SigLIP tower),
// LFM2-VL (model_type "lfm2-vl" on the Hub, "lfm2_vl" too), Kimi-VL (MoonViT) and Aya Vision (SigLIP);
// LLaVA / LLaVA-NeXT when their vision_config
// is a CLIP vision model (the default), LLaVA also with a SigLIP one (other towers keep the
// text_model_only reading).
bool VisionTowerCounted(const std::string& wrapper_type, const nlohmann::json& config);

// Whether a LLaVA-OneVision config's vision_config is a SigLIP vision model (model_type
// "siglip_vision_model" or none: LlavaOnevisionConfig's default), the tower CountVisionTower counts.
bool LlavaOnevisionSiglipTower(const nlohmann::json& config);

// Whether config.json's vision_config names `model_type`, or no model_type (the wrapper config's
// default tower: KimiVLConfig's MoonViT, AyaVisionConfig's SigLIP).
bool VisionConfigTypeIs(const nlohmann::json& config, const char* model_type);

// Whether a LLaVA config's vision_config is a SigLIP vision model (vision_config.model_type
// "siglip_vision_model"), not the default CLIP tower.
bool LlavaSiglipTower(const nlohmann::json& config);

}  // namespace vramplan
