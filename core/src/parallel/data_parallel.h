// Data-parallel sharding of model states (DeepSpeed ZeRO 1/2/3, PyTorch FSDP FULL_SHARD) and CPU
// offload, per GPU:
//   ZeRO-1: optimizer states (incl. fp32 master weights) / dp      (Rajbhandari et al., ZeRO, 2020)
//   ZeRO-2: + gradients / dp (each unit's full gradient exists until its reduce-scatter)
//   ZeRO-3 / FSDP: + parameters / dp; while a unit runs, its full parameters are gathered, plus
//           the next one prefetched, and FSDP's root unit (embeddings, final norm, lm_head) stays
//           gathered from forward to backward (torch/distributed/fsdp, root module).
//   offload_optimizer: states and the optimizer step move to host RAM (DeepSpeedCPUAdam).
//   offload_params: sharded parameters live in host RAM; only gathered units are on the GPU.
// dp = gpus / (tp x pp x cp). Tensor/pipeline/context/expert parallelism are not modeled yet.
#pragma once

#include <cstdint>

#include "vramplan/scenario.h"

namespace vramplan {

struct DataParallel {
  int64_t dp = 1;
  bool shard_states = false;
  bool shard_grads = false;
  bool shard_params = false;
  bool offload_states = false;
  bool offload_params = false;
  bool fsdp = false;
  int64_t Shard(int64_t bytes) const { return dp <= 1 ? bytes : (bytes + dp - 1) / dp; }
  bool Any() const { return shard_states || shard_grads || shard_params || offload_states || offload_params; }
};

DataParallel DataParallelFor(const ParallelConfig& parallel);

}  // namespace vramplan
