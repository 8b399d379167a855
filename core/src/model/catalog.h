// The embedded data catalogues: model presets (core/data/presets.json) and GPUs
// (core/data/gpus.json), parsed once on first use. Each entry carries its source.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "vramplan/model_spec.h"

namespace vramplan {

struct PresetEntry {
  std::string id;            // Hugging Face repo id
  std::string display_name;
  std::string family;        // groups a size ladder ("Qwen2.5")
  std::string size_label;    // "7B"
  std::string ladder;        // size ladder for the methods x sizes matrix ("Llama 3.x", "Qwen2.5")
  int64_t params = 0;        // published exact total
  const nlohmann::json* config = nullptr;  // the config.json fields
  ModelSpec spec;            // resolved once
};

struct GpuEntry {
  std::string id;
  std::string name;
  std::string vendor;
  std::string segment;
  std::string arch;
  int64_t memory_bytes = 0;         // marketed capacity
  int64_t usable_memory_bytes = 0;  // what the driver reports (nvidia-smi / torch total_memory), 0 if unknown
  double bandwidth_gb_s = 0;
  double bf16_tflops = 0;
  double fp16_tflops = 0;           // dense fp16 tensor throughput (the planner's step-time model)
  std::string source;
};

const std::vector<PresetEntry>& Presets();
const PresetEntry* FindPreset(std::string_view id);
std::vector<std::string> PresetIds();

const std::vector<GpuEntry>& Gpus();
const GpuEntry* FindGpu(std::string_view id);
std::vector<std::string> GpuIds();

// The raw embedded documents (for listing helpers).
const nlohmann::json& PresetsDocument();
const nlohmann::json& GpusDocument();

}  // namespace vramplan
