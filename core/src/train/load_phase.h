// The model load, before the first step: the peak allocated while the weights reach the GPU, and
// what the caching allocator has reserved once they are there. Reserved segments are never
// returned during training, so when the load reserves more than the step needs, the load sets
// torch.cuda.max_memory_reserved() for the whole run.
//
//   direct          every weight is materialized once (from_pretrained, meta-device init + load):
//                   peak = weights + the largest per-tensor transient of the quantizer (the 16-bit
//                   copy bitsandbytes quantizes from; torchao's chunked to_nf4); reserved = peak +
//                   the calibrated static reserve.
//   torchtune_0_1   torchtune 0.1.x single-device recipes (recipes/lora_finetune_single_device.py,
//                   _setup_model; torchtune/modules/transformer.py _get_clones): one decoder layer is
//                   built on the GPU, deep-copied num_layers times (an NF4 weight is cloned by
//                   dequantizing and re-quantizing it, torchtune/utils/_register_nf4_dispatch_ops.py),
//                   then load_state_dict re-quantizes every NF4 weight from the checkpoint. torchao
//                   0.1's to_nf4 quantizes a whole tensor at once (a 16-wide bf16 difference tensor
//                   per element: 64 B/element at its peak). The exact allocation sequence is replayed
//                   through gpu/caching_allocator.h.
#pragma once

#include <cstdint>
#include <string>

#include "train/precision.h"
#include "train/train_plan.h"
#include "vramplan/scenario.h"

namespace vramplan {

struct LoadPhase {
  int64_t peak_allocated_bytes = 0;
  int64_t reserved_bytes = 0;
  // reserved_bytes comes from the caching-allocator replay. torchtune_0_1 is replayed for the
  // single-device recipes only (one CUDA GPU, no ZeRO/FSDP) and the dense decoders torchtune 0.1
  // built (no routed experts); otherwise the load is estimated as direct.
  bool replayed = false;
  std::string explain;
};

// `explain` false skips the direct load's explain string (inverse searches, the page's matrix);
// a replay's is built once and kept with it.
// `replay_cache` keeps the last torchtune 0.1 replay and its key (planner/prepared.h holds one per
// prepared model); null replays every time.
struct LoadReplayCache {
  std::string key;
  LoadPhase phase;
};
LoadPhase ComputeLoadPhase(const Scenario& sc, const TrainPlan& plan, const PrecisionModel& prec, int64_t weights_bytes,
                           bool explain = true, LoadReplayCache* replay_cache = nullptr);

}  // namespace vramplan
