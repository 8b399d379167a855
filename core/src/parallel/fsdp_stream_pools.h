// FSDP's all-gathers allocate on a stream of their own, and PyTorch's CUDA caching allocator keeps
// a freed block for the stream it was allocated on: a cached free block is reused only by an
// allocation on the same stream (c10/cuda/CUDACachingAllocator.cpp, get_free_block: the block
// pool is searched by (stream, size), `(*it)->stream != p.stream()` ends the search). So the
// segments that held the gathered units stay reserved, idle, while the optimizer step allocates
// its temporaries on the default stream next to them.
//   FSDP1: _unshard runs FlatParamHandle.unshard() under `state._device_handle.stream(unshard_stream)`,
//   and _alloc_padded_unsharded_flat_param resizes the padded unsharded storage there
//   (torch/distributed/fsdp/_runtime_utils.py _unshard, _flat_param.py; PyTorch 2.1-2.5).
//   FSDP2: foreach_all_gather allocates the flat all-gather output under the all-gather copy-in
//   stream (torch/distributed/_composable/fsdp/_fsdp_collectives.py foreach_all_gather, PyTorch 2.4-2.5).
//   DeepSpeed ZeRO-3 does the same on its own stream: PartitionedParameterCoordinator.fetch_sub_module
//   and __all_gather_params_ run Init.all_gather_coalesced (the single parameter's `param_buffer`,
//   _all_gather_dtype's `flat_tensor`) and the handles' wait() (AllGatherCoalescedHandle.wait's
//   torch.cat into param.data) under `get_accelerator().stream(self.__allgather_stream)`; free_param
//   only records the compute stream and drops param.data (deepspeed/runtime/zero/
//   partitioned_param_coordinator.py, partition_parameters.py, DeepSpeed v0.16.5; the same since the
//   coordinator took its all-gather stream, v0.10). Nothing in the step empties the cache. So the
//   blocks of the most parameters gathered at once, the turn from the forward to the backward
//   (parallel/zero3_gather.h: the kept tail and the prefetch; the persistent ones are never
//   released, so they are allocated, not idle), stay reserved through the optimizer step.
// When the step's allocated peak is the optimizer step (nothing gathered), reserved is that peak
// plus the gathered units' pool. Whenever the peak is in the forward or the backward the pool is in
// use and already counted (the rank view's gathered_bytes). Not counted: the moment a coalesced
// fetch of two or more parameters holds its flat buffer beside their torch.cat copies.
#pragma once

#include <cstdint>

#include "parallel/data_parallel.h"
#include "train/moment.h"

namespace vramplan {

// The bytes the all-gather stream keeps reserved beside an allocated peak of phase `peak`.
inline int64_t IdleGatherPoolBytes(const RankView& view, Phase peak) {
  if (!view.dp.shard_params) return 0;  // (CPU offload too: the gathered parameters are on the GPU)
  if (peak != Phase::kOptimizerStep && peak != Phase::kZeroGrad) return 0;
  return view.dp.fsdp ? view.gathered_bytes : view.zero3_gather_pool_bytes;
}

}  // namespace vramplan
