// DeepSpeed ZeRO-2 under gradient accumulation holds TWO 16-bit gradient partitions in the backward
// of every micro-batch after the first (deepspeed/runtime/zero/stage_1_and_2.py,
// DeepSpeedZeroOptimizer; the same code in v0.9.0, v0.10.0, v0.12.6, v0.13.5, v0.14.4, v0.15.4 and
// v0.16.4):
// - independent_gradient_partition_epilogue ends every micro-batch's backward under ZeRO-2 (engine.py
//   allreduce_gradients: `if self.zero_optimization_partition_gradients()`, every micro-step;
//   ZeRO-1 reduces only at the accumulation boundary, through reduce_gradients).
// - After the first micro-batch, `self.averaged_gradients[i] = self.get_flat_partition(...,
//   return_tensor_list=True)`: a list of the partition's gradients themselves (get_flat_partition
//   appends `tensor`, or a narrow view of it, without copying), which with contiguous_gradients are
//   views of the `grads_in_partition` buffer copy_grads_in_partition allocated (`torch.empty(total_size)`,
//   the rank's parameters' elements, in the 16-bit dtype).
// - _release_ipg_buffers then sets `self.grads_in_partition = None` and zero_grad(set_to_none) drops
//   the parameters' .grad: the buffer stays alive through averaged_gradients.
// - In the next micro-batch's backward, the first reduce_ipg_grads that holds a parameter of this
//   rank's partition finds grads_in_partition None and allocates a new whole buffer; its epilogue
//   add_()s it into averaged_gradients and releases it. Without contiguous_gradients the new
//   micro-batch's gradients of the partition are fresh autograd tensors kept in .grad until the
//   epilogue: the second partition grows as they are produced.
// - step() flattens averaged_gradients and sets it to None: the optimizer step holds one.
// Not with cpu_offload (copy_grads_in_partition accumulates on the host and returns; averaged_gradients
// unused), not in ZeRO-1 (no epilogue off the boundary), not in ZeRO-3 (stage3.py, other code).
// A bucket is reduced during the backward only when the next gradient would overflow it
// (reduce_independent_p_g_buckets_and_remove_grads: elements_in_ipg_bucket + numel > reduce_bucket_size);
// with no more trainable elements than reduce_bucket_size the only reduction is the epilogue's,
// after the backward. The rank modeled is the last data-parallel rank: its partition (the end of the
// flat parameter list, in registration order) gets its gradients first in the backward, so its
// buffer is allocated at the first reduction.
#pragma once

#include <algorithm>
#include <cstdint>

#include "parallel/data_parallel.h"

namespace vramplan {

struct Zero2AccumulationPartition {
  int64_t partition_elements = 0;  // the rank's partition; 0: no second partition
  int64_t partition_bytes = 0;     // of it, in the engine's 16-bit dtype
  int64_t dtype_bytes = 0;
  int64_t trainable_elements = 0;  // every trainable element (one device)
  int64_t reduce_bucket_elements = 0;
  bool contiguous = true;
  // The second partition at a backward moment when the micro-batch's backward has produced
  // `produced_bytes` of `total_bytes` gradient bytes (as one device holds them): the whole buffer
  // once a bucket has been reduced (contiguous_gradients), else the last rank's gradients produced
  // so far (its partition gets the first ones).
  int64_t BytesAfter(int64_t produced_bytes, int64_t total_bytes) const {
    if (partition_bytes <= 0 || total_bytes <= 0 || produced_bytes <= 0) return 0;
    const double fraction = std::min(1.0, static_cast<double>(produced_bytes) / static_cast<double>(total_bytes));
    const double produced_elements = fraction * static_cast<double>(trainable_elements);
    if (contiguous) return produced_elements > static_cast<double>(reduce_bucket_elements) ? partition_bytes : 0;
    return std::min(partition_bytes, static_cast<int64_t>(produced_elements) * dtype_bytes);  // (not built: see below)
  }
};

// `trainable_elements`: the trainable parameters (one device); `dtype_bytes`: the 16-bit dtype of
// the engine's parameters (the gradient buckets' element size).
inline Zero2AccumulationPartition Zero2AccumulationPartitionFor(const DataParallel& dp, int64_t grad_accum_steps, bool optimizer_in_backward,
                                                                int64_t trainable_elements, int64_t dtype_bytes) {
  Zero2AccumulationPartition z;
  const bool deepspeed_zero2 = dp.shard_grads && !dp.shard_params && !dp.fsdp && dp.reduce_bucket_elements > 0;
  // Without contiguous_gradients the fresh .grad tensors are already the gradients in flight
  // (RankView::pending_grad_bytes); the part of them kept until the epilogue is not separated here.
  if (!deepspeed_zero2 || !dp.contiguous_gradients || dp.grads_on_host || dp.offload_states || grad_accum_steps <= 1 || optimizer_in_backward ||
      trainable_elements <= 0)
    return z;
  z.partition_elements = dp.dp > 1 ? (trainable_elements + dp.dp - 1) / dp.dp : trainable_elements;
  z.partition_bytes = z.partition_elements * dtype_bytes;
  z.dtype_bytes = dtype_bytes;
  z.trainable_elements = trainable_elements;
  z.reduce_bucket_elements = dp.reduce_bucket_elements;
  z.contiguous = dp.contiguous_gradients;
  return z;
}

}  // namespace vramplan
