// Persistent buffers that older transformers versions saved with classic checkpoints: causal-mask
// `bias` tensors (GPT-2, GPT-Neo, GPT-NeoX, GPT-J, CodeGen's `causal_mask`) and rotary `inv_freq`
// vectors (GPT-NeoX, Llama). Current transformers registers them with persistent=False and
// recomputes them, so they are not parameters and no engine loads them; the Hub's safetensors
// total counts them all the same. Whether a checkpoint stores them follows the transformers
// version that saved it, which config.json records as `transformers_version` (absent in the oldest
// configs, e.g. gpt2's). The counts go to params.checkpoint_total and by_module.unloaded.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "vramplan/model_spec.h"

namespace vramplan {

// (major, minor) of a transformers_version string ("4.31.0.dev0" -> 4, 31); nullopt when it does
// not start with two integers. A ".devN" pre-release counts as its release: main after a release
// carries the next version's dev tag, so "4.30.0.dev0" is code between 4.29 and 4.30.
std::optional<std::pair<int, int>> TransformersMinorVersion(const std::string& version);

// Adds the buffers the checkpoint stores to spec->checkpoint.unloaded_params, with a note, when
// `config` (the whole config.json; a multimodal wrapper is left alone) is of a family listed in
// legacy_buffers.cpp and its transformers_version is absent or below that family's boundary.
void AddLegacyStoredBuffers(const nlohmann::json& config, ModelSpec* spec);

}  // namespace vramplan
