// The model a launch config names (a Hub id, a local path, a GGUF file name), matched to a preset
// (core/data/presets.json). A config never carries the architecture itself, so a model without a
// preset leaves the scenario without "model" and a note asking to choose one (or paste its
// config.json).
#pragma once

#include <string>
#include <string_view>

#include "launch/import_context.h"

namespace vramplan::launch {

// The preset id for `name`, or "". Matches, case-insensitively: the id itself; the last path
// component (a local copy "/models/Llama-3.1-8B"); the same with a GGUF quantization tag and
// ".gguf" removed ("Qwen3-32B-Q4_K_M.gguf"); the same without a chat-tuning suffix (-Instruct,
// -Chat, -it, -hf), whose architecture is the base model's.
std::string MatchPreset(std::string_view name);

// Sets "model" from `name` read at `key`, or notes that the model must be chosen.
void ReadModel(ImportContext* ctx, std::string_view key, const std::string& name);

// Notes that the config names no model at all (DeepSpeed JSON, accelerate config).
void NoModel(ImportContext* ctx, std::string_view format);

}  // namespace vramplan::launch
