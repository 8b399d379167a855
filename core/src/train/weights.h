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
  std::string explain;
};

WeightMemory ComputeWeightMemory(const ModelSpec& model, const TrainConfig& train, const TrainPlan& plan,
                                 const PrecisionModel& prec, bool legacy = false);

}  // namespace vramplan
