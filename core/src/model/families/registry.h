// The model families: one entry per config.json model_type, naming its builder, PEFT's default
// LoRA targets and a one-line note. Adding a family is one builder file (families/*.cpp) and one
// entry here (docs/models.md says how); nothing else lists model types.
#pragma once

#include <string_view>
#include <vector>

#include "model/families/builders.h"
#include "model/vision_tower.h"

namespace vramplan::families {

// PEFT's default LoRA targets (peft/utils/constants.py,
// TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING); types it does not list train all linears.
struct LoraDefaults {
  std::vector<std::string_view> targets;  // HF module names
  bool all_linear = false;
};

struct ModelFamily {
  std::string_view model_type;  // as config.json spells it
  std::string_view alias_of;    // non-empty: another spelling of that model_type (not listed as supported)
  Builder build = nullptr;      // nullptr only in the page's WASM module for a family read on demand (registry.cpp)
  LoraDefaults lora;
  std::string_view notes;       // what is read, in one line (docs/models.md); empty in the WASM modules
};

// Every model_type with a dedicated builder, aliases included, in documentation order.
const std::vector<ModelFamily>& ModelFamilies();
// nullptr for a model_type without a dedicated builder.
const ModelFamily* FindModelFamily(std::string_view model_type);
// What an unknown model_type is read as: a Llama-style decoder (with a warning).
const ModelFamily& GenericFamily();

// Gemma 3n's tower count (model/gemma3n_towers.h), on demand like its text reader: nullptr in the
// page's WASM module, which never needs it (reading a gemma3n config answers reader_on_demand
// first), so that module does not link it.
using TowerCount = VisionTowerParams (*)(const nlohmann::json& config, const std::string& path, int64_t text_hidden, Issues* errors);
TowerCount Gemma3nTowerCount();

}  // namespace vramplan::families
