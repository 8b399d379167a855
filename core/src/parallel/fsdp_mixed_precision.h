// FSDP mixed precision of the Hugging Face stack (Trainer / accelerate): what the layers compute in
// when the stored parameters are fp32 (`train.precision` amp_bf16 / amp_fp16) and FSDP shards them.
//
// accelerate turns its mixed_precision setting into FSDP's MixedPrecision policy for every FSDP
// job: AcceleratorState sets `fsdp_plugin.set_mixed_precision(mixed_precision)` when
// mixed_precision != "no" (src/accelerate/state.py), and FullyShardedDataParallelPlugin.
// set_mixed_precision builds MixedPrecision(param_dtype=dtype, reduce_dtype=dtype,
// buffer_dtype=dtype) (src/accelerate/utils/dataclasses.py; accelerate 02a8a9a3, 2024-03, and on).
// FSDP then all-gathers 16-bit copies of each unit's flat parameter and runs the unit on them
// (torch/distributed/fsdp/_flat_param.py, FlatParamHandle._use_low_precision_shard /
// _full_param_padded in param_dtype; the fp32 shard stays the optimizer's). So:
//   - activations follow a 16-bit model under autocast (the residual stream, matmul outputs and
//     RoPE tables are 16-bit: the embedding's output is already bf16), not fp32 weights under autocast;
//   - the gathered units are 16-bit;
//   - the stored shard, its gradients and the optimizer states keep the stored precision.
// The Trainer's own autocast stays on (accelerate's native_amp), so losses on autocast's fp32 list
// are still upcast (autocast16).
#pragma once

#include "train/precision.h"
#include "vramplan/scenario.h"

namespace vramplan {

// True when the HF stack runs FSDP on fp32-stored parameters with a 16-bit mixed precision.
inline bool FsdpComputesIn16Bit(const Scenario& s) {
  return s.mode == Mode::kTrain && s.parallel.fsdp && s.framework.trainer == Trainer::kHf &&
         (s.train.precision == Precision::kAmpBf16 || s.train.precision == Precision::kAmpFp16);
}

// The precision the layers compute in: `stored` (the parameters' precision) with the activation
// dtypes of a 16-bit model under autocast when FsdpComputesIn16Bit; `stored` unchanged otherwise.
// Storage fields (weight, grad, master, state) stay those of `stored`.
inline PrecisionModel FsdpComputePrecision(const Scenario& s, const PrecisionModel& stored) {
  if (!FsdpComputesIn16Bit(s)) return stored;
  PrecisionModel p = stored;
  p.residual = 2;
  p.matmul = 2;
  p.rope = 2;
  p.q_after_rope = 2;
  p.autocast = false;   // no per-matmul casts of fp32 weights: the gathered copies are 16-bit
  p.autocast16 = true;  // the Trainer's autocast still upcasts what its fp32 list names (the loss)
  p.half = true;
  return p;
}

}  // namespace vramplan
