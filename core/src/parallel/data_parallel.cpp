#include "parallel/data_parallel.h"

#include <algorithm>

namespace vramplan {

DataParallel DataParallelFor(const ParallelConfig& p, int64_t dp, Trainer trainer, int64_t grad_accum_steps, int64_t units) {
  DataParallel d;
  d.dp = std::max<int64_t>(1, dp);
  d.units = std::max<int64_t>(1, units);
  const bool fsdp = p.fsdp && p.fsdp_sharding != FsdpSharding::kNoShard;  // NO_SHARD: data parallel, nothing sharded
  // HYBRID_SHARD shards inside a node and replicates across nodes (the shard group is the node's
  // GPUs: torch/distributed/fsdp _init_process_group_state_for_hybrid_shard).
  if (p.fsdp && p.fsdp_sharding == FsdpSharding::kHybridShard) {
    const int64_t per_node = p.gpus_per_node > 0 ? p.gpus_per_node : std::min<int64_t>(std::max<int64_t>(1, p.gpus), 8);
    d.dp = std::min(d.dp, per_node);
  }
  if ((d.dp & (d.dp - 1)) == 0) {
    d.dp_shift = 0;
    while ((int64_t{1} << d.dp_shift) < d.dp) ++d.dp_shift;
  }
  const int stage = fsdp ? 3 : p.fsdp ? 0 : p.zero;
  d.fsdp = fsdp;
  d.keep_gathered = fsdp && p.fsdp_sharding == FsdpSharding::kShardGradOp;
  d.embedding_units = fsdp && p.fsdp_embedding_units;
  d.ddp_gradient_copy = d.dp > 1 && !p.fsdp && p.zero == 0 && !p.ddp_bucket_view && trainer != Trainer::kMegatron;
  // FSDP1 FlatParameter no_sync(): "gradients are accumulated in unsharded form" until the context
  // exits (torch/distributed/fsdp/fully_sharded_data_parallel.py no_sync); accelerate's
  // Accelerator.accumulate() enters it on every micro-batch but the last (accelerator.py
  // _do_sync / no_sync; GradientAccumulationPlugin.sync_each_batch turns it off).
  d.unsharded_grads_until_step = fsdp && grad_accum_steps > 1 && p.fsdp_no_sync.value_or(trainer == Trainer::kHf);
  d.shard_states = stage >= 1;
  d.shard_grads = stage >= 2;
  d.shard_params = stage >= 3;
  d.offload_states = p.offload_optimizer != Offload::kNone;
  d.offload_params = p.offload_params != Offload::kNone && stage >= 3;
  d.grads_on_host = d.shard_grads && (d.offload_states || (fsdp && d.offload_params));
  // stage_1_and_2.py: contiguous_gradients = contiguous_gradients or cpu_offload.
  const bool contiguous = p.contiguous_gradients.value_or(true) || (p.zero <= 2 && p.offload_optimizer != Offload::kNone);
  if (!p.fsdp && p.zero >= 1) {
    d.contiguous_gradients = contiguous;
    d.reduce_bucket_elements = p.reduce_bucket_size.value_or(500'000'000);  // deepspeed/runtime/zero/config.py
  }
  if (d.contiguous_gradients) {
    const bool overlap = p.overlap_comm.value_or(p.zero == 3);
    if (p.zero == 3) d.persistent_bucket_elements = d.reduce_bucket_elements;
    else d.backward_bucket_elements = (overlap ? 2 : 1) * d.reduce_bucket_elements;
  }
  return d;
}

RankView RankViewFor(const DataParallel& dp, const ShardedUnitBytes& u) {
  const int64_t layer_weight_bytes = u.layer_weight_bytes;
  const int64_t root_weight_bytes = u.root_weight_bytes;
  RankView v;
  v.dp = dp;
  // The running unit + the prefetched one (+ FSDP's root unit); DeepSpeed ZeRO-3's own rule replaces it
  // in the training step (parallel/zero3_gather.h), which knows the model's modules.
  if (dp.shard_params) v.gathered_bytes = 2 * layer_weight_bytes + (dp.fsdp ? root_weight_bytes : 0);
  // Around the loss FSDP holds no decoder layer (RankView::GatheredAt): the root unit, or with the
  // embedding and the output layer as units of their own the one running there and the final norm.
  if (dp.shard_params && dp.fsdp && !dp.keep_gathered && root_weight_bytes > 0) {
    v.gathered_root_bytes = dp.embedding_units && u.embedding_unit_bytes > 0 ? u.embedding_unit_bytes + u.root_rest_bytes : root_weight_bytes;
    v.gathered_layer_bytes = layer_weight_bytes;
  }
  // Embedding and output layer as units of their own: the root keeps the final norm; the most
  // gathered at once is two decoder layers, or the output layer (at the forward-to-backward turn)
  // with the last layer prefetched for the backward (FSDP prefetches one unit ahead).
  if (dp.shard_params && dp.fsdp && dp.embedding_units && !dp.keep_gathered && u.embedding_unit_bytes > 0) {
    v.gathered_bytes = std::max(2 * layer_weight_bytes, u.embedding_unit_bytes + layer_weight_bytes) + u.root_rest_bytes;
  }
  // SHARD_GRAD_OP does not reshard after forward: by the end of the forward every unit is gathered.
  if (dp.shard_params && dp.keep_gathered) v.gathered_bytes = layer_weight_bytes * dp.units + root_weight_bytes;
  if (dp.shard_grads && dp.fsdp) v.unit_grad_bytes = u.max_layer_grad_bytes;
  if (dp.shard_grads && !dp.fsdp && !dp.contiguous_gradients) v.pending_grad_bytes = dp.reduce_bucket_elements * u.grad_dtype_bytes;
  v.backward_bucket_bytes = dp.backward_bucket_elements * u.bucket_dtype_bytes;
  v.persistent_bucket_bytes = dp.persistent_bucket_elements * u.bucket_dtype_bytes + (dp.ddp_gradient_copy ? u.all_grad_bytes : 0);
  return v;
}

}  // namespace vramplan
