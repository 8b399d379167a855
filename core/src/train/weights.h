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

// bitsandbytes Params4bit NF4 bytes of one weight with n elements (blocksize 64): packed 4-bit
// + absmax (uint8 with double quantization: fp32 absmax per 256 blocks + offset + 256-entry code;
// fp32 per block without), + the 16-entry NF4 code (bitsandbytes/functional.py quantize_4bit).
int64_t Nf4Bytes(int64_t n, bool double_quant);

WeightMemory ComputeWeightMemory(const ModelSpec& model, const TrainConfig& train, const TrainPlan& plan,
                                 const PrecisionModel& prec, bool legacy = false);

}  // namespace vramplan
