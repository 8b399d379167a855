// Optimizer states and the temporaries of one optimizer.step() (docs/training.md, "Optimizers").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "train/precision.h"
#include "train/train_plan.h"
#include "vramplan/scenario.h"

namespace vramplan {

struct OptimizerMemory {
  int64_t state_bytes = 0;           // device-resident states (incl. fp32 master weights in mixed_*)
  int64_t paged_bytes = 0;           // paged (unified-memory) states, not in torch's allocated bytes
  int64_t step_temporary_bytes = 0;  // peak extra bytes inside step()
  OptimizerImpl impl = OptimizerImpl::kForeach;
  std::string explain_states;
  std::string explain_temporary;
};

// `tensors`: trainable tensors' element counts in registration order. `master_bytes` > 0 for
// mixed precision (fp32 master copy held by the optimizer). `legacy_torch` keeps PyTorch 1.13's
// step counters with the parameters; `foreach_denom_copy` selects PyTorch <= 2.0's foreach AdamW
// (two whole-group intermediates) instead of >= 2.1's (one, pytorch#104898).
OptimizerMemory ComputeOptimizerMemory(const TrainConfig& train, const PrecisionModel& prec,
                                       const std::vector<TensorShape>& tensors, bool legacy_torch,
                                       bool foreach_denom_copy, Device device, bool explain = true);

// PyTorch's default implementation for the device: foreach on CUDA (torch/optim/optimizer.py,
// _default_to_fused_or_foreach), single-tensor for-loop on CPU.
OptimizerImpl DefaultOptimizerImpl(Device device);

}  // namespace vramplan
