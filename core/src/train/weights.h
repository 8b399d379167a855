// Bytes of the model's weights on the device by method: 16/32-bit parameters, LoRA adapters,
// modules_to_save copies, QLoRA's quantized base (bitsandbytes layouts) and buffers.
#pragma once

#include <cstdint>
#include <string>

#include "train/precision.h"
#include "train/train_plan.h"
#include "vramplan/model_spec.h"
#include "vramplan/scenario.h"

namespace vramplan {

struct WeightMemory {
  int64_t bytes = 0;
  int64_t quantized_linear_params = 0;
  // bitsandbytes 4-bit: the QuantState of every Params4bit (absmax, nested absmax, codes), which
  // is not part of the parameter's data (parallel/fsdp_bnb_quant_state.h).
  int64_t quant_state_bytes = 0;
  std::string explain;
};

// Whether QLoRA holds this linear quantized: every nn.Linear for bitsandbytes / GPTQ / current
// torchtune (FrozenNF4Linear), only the LoRA-wrapped ones under torchtune 0.1 (ModelLoad).
bool IsQuantizedBase(const LinearSpec& l, const TrainConfig& train, ModelLoad load);

// `params`: CountParams(model) when the caller holds it (a prepared model), else counted here;
// `explain` false leaves `explain` empty.
WeightMemory ComputeWeightMemory(const ModelSpec& model, const TrainConfig& train, const TrainPlan& plan,
                                 const PrecisionModel& prec, bool legacy = false, ModelLoad load = ModelLoad::kDirect,
                                 const ParamCounts* params = nullptr, bool explain = true);

}  // namespace vramplan
