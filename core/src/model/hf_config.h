// Hugging Face config.json -> ModelSpec: finds the decoder config (the top level, or text_config of
// a multimodal wrapper) and hands it to its model_type's builder in the family registry
// (model/families/registry.h), which reads the real key names of each family (transformers'
// configuration_*.py defaults where a key is absent). Unknown keys are ignored (configs carry
// many: rope_scaling, torch_dtype, bos_token_id...), missing required keys are errors naming the
// key. An unknown model_type with standard decoder keys is read as a Llama-style decoder (standard
// MoE keys: with routed and shared experts) with a warning; one with structural keys neither reads
// (model/structural_keys.h) is refused unless the reading is approximate.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "vramplan/error.h"
#include "vramplan/model_spec.h"

namespace vramplan {

// `path` is where the config sits in the scenario ("model" or "model.config"), for messages.
// `reading`: how a model_type without a dedicated reader is read (ModelReading).
Expected<ModelSpec> ModelSpecFromHfConfig(const nlohmann::json& config, const std::string& path, Issues* warnings,
                                          ModelReading reading = ModelReading::kExact);

// What a preset or table row says about its checkpoint that config.json does not
// (CheckpointLayout): {"tied_lm_head_stored": true} (Qwen3-0.6B / 1.7B), {"mtp_stores_embeddings":
// false} (GLM-4.6), {"rope_inv_freq_per_layer": 56} (Kimi K2: a stored rotary buffer per decoder
// layer, counted in by_module.unloaded), {"packed_linears_store_bias": true} (a GPTQ export that
// stores a zero bias for every packed linear). Unknown keys are ignored.
void ApplyCheckpointFacts(const nlohmann::json& facts, ModelSpec* spec);

// The model_type values with a dedicated builder (the registry's, without other spellings).
const std::vector<std::string>& SupportedModelTypes();

}  // namespace vramplan
