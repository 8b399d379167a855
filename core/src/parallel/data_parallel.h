// Data-parallel sharding of model states (DeepSpeed ZeRO 1/2/3, PyTorch FSDP FULL_SHARD) and CPU
// offload, per GPU:
//   ZeRO-1: optimizer states (incl. fp32 master weights) / dp      (Rajbhandari et al., ZeRO, 2020)
//   ZeRO-2: + gradients / dp (each unit's full gradient exists until its reduce-scatter)
//   ZeRO-3 / FSDP: + parameters / dp; while a unit runs, its full parameters are gathered, plus
//           the next one prefetched, and FSDP's root unit (embeddings, final norm, lm_head) stays
//           gathered from forward to backward (torch/distributed/fsdp, root module).
//   offload_optimizer: states and the optimizer step move to host RAM (DeepSpeedCPUAdam).
//   offload_params: sharded parameters live in host RAM; only gathered units are on the GPU.
//   DeepSpeed gradient buckets (contiguous_gradients): ZeRO-1/2 allocate reduce_bucket_size
//           elements (x2 with overlap_comm) in the gradients' dtype at each backward and free them
//           in the backward epilogue (deepspeed/runtime/zero/stage_1_and_2.py, backward() and
//           _release_ipg_buffers()); ZeRO-3 allocates one such buffer at init and keeps it
//           (stage3.py, __ipg_bucket_flat_buffer). The size does not depend on the model.
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
  int64_t backward_bucket_elements = 0;    // ZeRO-1/2 ipg buffers, alive during backward
  int64_t persistent_bucket_elements = 0;  // ZeRO-3 ipg buffer, alive all along
  int64_t Shard(int64_t bytes) const { return dp <= 1 ? bytes : (bytes + dp - 1) / dp; }
  bool Any() const { return shard_states || shard_grads || shard_params || offload_states || offload_params || backward_bucket_elements > 0 || persistent_bucket_elements > 0; }
};

DataParallel DataParallelFor(const ParallelConfig& parallel);

}  // namespace vramplan
