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
  return d;
}

}  // namespace vramplan
