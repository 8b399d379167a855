#include "parallel/data_parallel.h"

#include <algorithm>

namespace vramplan {

DataParallel DataParallelFor(const ParallelConfig& p) {
  DataParallel d;
  d.dp = std::max<int64_t>(1, p.gpus / std::max<int64_t>(1, p.tp * p.pp * p.cp));
  const int stage = p.fsdp ? 3 : p.zero;
  d.fsdp = p.fsdp;
  d.shard_states = stage >= 1;
  d.shard_grads = stage >= 2;
  d.shard_params = stage >= 3;
  d.offload_states = p.offload_optimizer != Offload::kNone;
  d.offload_params = p.offload_params != Offload::kNone && stage >= 3;
  // stage_1_and_2.py: contiguous_gradients = contiguous_gradients or cpu_offload.
  const bool contiguous = p.contiguous_gradients.value_or(true) || (p.zero <= 2 && p.offload_optimizer != Offload::kNone);
  if (!p.fsdp && p.zero >= 1 && contiguous) {
    const bool overlap = p.overlap_comm.value_or(p.zero == 3);
    const int64_t elements = p.reduce_bucket_size.value_or(500'000'000);  // deepspeed/runtime/zero/config.py
    if (p.zero == 3) d.persistent_bucket_elements = elements;
    else d.backward_bucket_elements = (overlap ? 2 : 1) * elements;
  }
  return d;
}

}  // namespace vramplan
