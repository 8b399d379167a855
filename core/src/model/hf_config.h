// Hugging Face config.json -> ModelSpec: finds the decoder config (the top level, or text_config of
// a multimodal wrapper) and hands it to its model_type's builder in the family registry
// (model/families/registry.h), which reads the real key names of each family (transformers'
// configuration_*.py defaults where a key is absent). Unknown keys are ignored (configs carry
// many: rope_scaling, torch_dtype, bos_token_id...), missing required keys are errors naming the
// key, and an unknown model_type with standard decoder keys is read as a Llama-style decoder with
// a warning.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "vramplan/error.h"
#include "vramplan/model_spec.h"

namespace vramplan {

// `path` is where the config sits in the scenario ("model" or "model.config"), for messages.
Expected<ModelSpec> ModelSpecFromHfConfig(const nlohmann::json& config, const std::string& path, Issues* warnings);

// The model_type values with a dedicated builder (the registry's, without other spellings).
const std::vector<std::string>& SupportedModelTypes();

}  // namespace vramplan
