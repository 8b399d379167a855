// Data-parallel sharding of model states (DeepSpeed ZeRO 1/2/3, PyTorch FSDP FULL_SHARD) and CPU
// offload, per GPU:
//   ZeRO-1: optimizer states (incl. fp32 master weights) / dp      (Rajbhandari et al., ZeRO, 2020)
//   ZeRO-2: + gradients / dp (each unit's full gradient exists until its reduce-scatter)
//   ZeRO-3 / FSDP: + parameters / dp; FSDP: while a unit runs, its full parameters are gathered,
//           plus the next one prefetched, and the root unit (embeddings, final norm, lm_head) stays
//           gathered from forward to backward (torch/distributed/fsdp, root module). ZeRO-3: what
//           DeepSpeed's coordinator keeps gathered (parallel/zero3_gather.h, set by the training step).
//   offload_optimizer: states and the optimizer step move to host RAM (DeepSpeedCPUAdam).
//   offload_params: sharded parameters live in host RAM; only gathered units are on the GPU.
//   DeepSpeed gradient buckets (contiguous_gradients): ZeRO-1/2 allocate reduce_bucket_size
//           elements (x2 with overlap_comm) in the gradients' dtype at each backward and free them
//           in the backward epilogue (deepspeed/runtime/zero/stage_1_and_2.py, backward() and
//           _release_ipg_buffers()); ZeRO-3 allocates one such buffer at init and keeps it
//           (stage3.py, __ipg_bucket_flat_buffer). The size does not depend on the model.
//   Gradients in flight (backward, ZeRO-2/3): DeepSpeed registers a hook on every parameter's
//           gradient accumulator (stage_1_and_2.py create_reduce_and_remove_grad_hooks; stage3.py
//           likewise) and autograd runs AccumulateGrad before any other ready node
//           (torch/csrc/autograd/functions/accumulate_grad.cpp: sequence_nr UINT64_MAX). With
//           contiguous_gradients the hook copies the new gradient into the bucket and drops its own
//           storage (reduce_independent_p_g_buckets_and_remove_grads; stage3.py
//           __add_grad_to_ipg_bucket): only the gradient an op is producing exists in full
//           (Moment::fresh_gradient_bytes). Without contiguous_gradients the gradients wait in their own
//           tensors until a bucket's worth is reduced (reduce_ipg_grads -> buffered_reduce_fallback):
//           up to reduce_bucket_size elements in full. FSDP reduce-scatters one unit's flat gradient
//           in its post-backward hook: the largest unit's full gradient is counted through the backward
//           (and its flat copy at the unit's last gradient: a moment of the training step). The root
//           unit (embedding, final norm, lm_head) reduces only at the backward's end, when its last
//           gradient (the embedding's) exists: until then the lm_head's weight gradient is whole on
//           the rank (Moment::unreduced_gradient_bytes), and at the end the root's gradients are whole
//           twice (per parameter and flat).
//   ZeRO-1 registers no such hooks without overlap_comm (`if self.partition_gradients or
//           self.overlap_comm`): every gradient stays in param.grad, in full, until reduce_gradients()
//           after the backward. (With overlap_comm it reduces in the hooks like ZeRO-2; counted here
//           as without: an over-estimate.)
// dp = gpus / (tp x pp x cp) (parallel/topology.h). Tensor/pipeline/context/expert parallelism are
// not modeled yet for training.
//
// RankView (reached through the shard step, parallel/shard.h) is the one place where a moment of
// the step, built as one device would hold it, becomes what one rank holds: every moment (the load, each forward and backward point, the optimizer
// step) goes through it before the peak is taken, so the peak, the per-phase peaks and the
// timeline all see the same sharded bytes.
#pragma once

#include <algorithm>
#include <cstdint>

#include "train/moment.h"
#include "units.h"
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
  // FSDP no_sync() under gradient accumulation: full gradients on every rank through the forward
  // and backward of the micro-batches; sharded after the last reduce-scatter (optimizer step).
  bool unsharded_grads_until_step = false;
  // Reduced gradient partitions live in host RAM: ZeRO-Offload copies each reduced partition into
  // the host fp32 buffer and keeps none on the GPU (stage_1_and_2.py copy_grads_in_partition;
  // stage3.py grad_partitions_flat_buffer on self.device, the CPU); FSDP's CPUOffload moves the
  // sharded gradients with the parameters (torch/distributed/fsdp _offload_grad / cpu_offload).
  bool grads_on_host = false;
  bool keep_gathered = false;
  // FSDP: the embedding and the output layer are units of their own (parallel.fsdp_embedding_units).
  bool embedding_units = false;
  // PyTorch DDP without gradient_as_bucket_view: the Reducer's buckets hold a flat copy of every
  // gradient (torch/csrc/distributed/c10d/reducer.cpp initialize_buckets: bucket.gradients =
  // at::empty(total_length)), allocated when the model is wrapped.
  bool ddp_gradient_copy = false;  // FSDP SHARD_GRAD_OP: every unit stays gathered from its forward to its backward
  int64_t units = 1;           // FSDP / ZeRO-3 units (decoder layers) of the model
  bool contiguous_gradients = false;       // DeepSpeed ZeRO 1-3: gradients are copied into the ipg buckets
  int64_t reduce_bucket_elements = 0;      // DeepSpeed ZeRO 1-3: reduce_bucket_size
  int64_t backward_bucket_elements = 0;    // ZeRO-1/2 ipg buffers, alive during backward
  int64_t persistent_bucket_elements = 0;  // ZeRO-3 ipg buffer, alive all along
  int dp_shift = -1;  // log2(dp) when dp is a power of two (Shard runs for several terms of every moment)
  int64_t Shard(int64_t bytes) const {  // CeilDiv(bytes, dp) (units.h)
    if (dp <= 1) return bytes;
    return dp_shift >= 0 && bytes >= 0 ? (bytes + dp - 1) >> dp_shift : CeilDiv(bytes, dp);
  }
};

// `dp`: the data-parallel degree (parallel/topology.h); the scenario's trainer and micro-batches
// decide FSDP's no_sync accumulation.
DataParallel DataParallelFor(const ParallelConfig& parallel, int64_t dp, Trainer trainer = Trainer::kHf, int64_t grad_accum_steps = 1,
                             int64_t units = 1);

struct RankView {
  DataParallel dp;
  int64_t gathered_bytes = 0;           // ZeRO-3/FSDP: gathered units while layers run (forward and backward)
  // FSDP (FULL_SHARD): around the loss no decoder layer is gathered, only the root unit (embedding,
  // final norm, lm_head; with fsdp_embedding_units the output or the embedding unit and the norm). The last layer is resharded in its post-forward, before the final
  // norm and the loss run in the root; the backward prefetches it only in the root's pre-backward
  // hook, which fires when the logits' gradient exists (FSDP1 _pre_backward_hook ->
  // _prefetch_handle(BACKWARD), _runtime_utils.py; FSDP2 FSDPState._pre_backward ->
  // _backward_prefetch, _fsdp_state.py), and layer 0 is resharded in its post-backward before the
  // embedding's backward. So the final norm and the loss in the forward and the embedding's backward
  // hold the root alone; the loss head's backward and the final norm's backward the root and the
  // last layer (the loss head's backward moment stands for the lm_head's backward too, which runs
  // after the hook has prefetched it). 0: no such rule (gathered_bytes everywhere).
  int64_t gathered_root_bytes = 0, gathered_layer_bytes = 0;
  int64_t GatheredAt(At at) const {
    if (gathered_root_bytes <= 0) return gathered_bytes;
    switch (at) {
      case At::kFinalNorm:
      case At::kCrossEntropy:
      case At::kEmbeddingBackward:
        return gathered_root_bytes;
      case At::kCrossEntropyBackward:
      case At::kFinalNormBackward:
        return gathered_root_bytes + gathered_layer_bytes;
      default:
        return gathered_bytes;
    }
  }
  int64_t unit_grad_bytes = 0;          // FSDP: one unit's full flat gradient until its reduce-scatter (backward)
  int64_t pending_grad_bytes = 0;       // DeepSpeed ZeRO-2/3 without contiguous_gradients: gradients awaiting a bucket's reduce
  int64_t backward_bucket_bytes = 0;    // ZeRO-1/2 ipg buffers (backward)
  int64_t persistent_bucket_bytes = 0;  // ZeRO-3 ipg buffer, allocated when the engine starts (after the load)
  // DeepSpeed ZeRO-3: the optimizer step's temporaries on this rank, those of its largest sub-group
  // (parallel/zero3_sub_groups.h); -1: the rank's share of the whole step's (States).
  int64_t zero3_step_temporary_bytes = -1;
  // DeepSpeed ZeRO-3: the partitioned parameters gathered at once at the turn (the kept tail and the
  // prefetch, not the persistent ones, which are never released), whose blocks stay cached on the
  // all-gather stream (parallel/fsdp_stream_pools.h). Set by the training step with the turn's set.
  int64_t zero3_gather_pool_bytes = 0;

  // FSDP / ZeRO-3: weight bytes outside the sharded parameter data, whole on every rank, never offloaded
  // (bitsandbytes' QuantState: parallel/fsdp_bnb_quant_state.h).
  int64_t unsharded_weight_bytes = 0;

  int64_t Weights(int64_t bytes) const {
    if (!dp.shard_params) return bytes;
    const int64_t kept = std::min(unsharded_weight_bytes, bytes);
    return dp.offload_params ? kept : dp.Shard(bytes - kept) + kept;
  }
  int64_t States(int64_t bytes) const { return dp.offload_states ? 0 : dp.shard_states ? dp.Shard(bytes) : bytes; }
  int64_t Gradients(int64_t bytes) const { return dp.grads_on_host ? 0 : dp.shard_grads ? dp.Shard(bytes) : bytes; }
  // Turns moment `m`, built as one device holds it, into what one rank holds.
  void Apply(Moment* m) const;
  // The least by which a backward moment's gradient bytes grow on this rank when, built as one
  // device holds them, they grow by `bytes` >= 0 (they never grow by more than `bytes`). Apply
  // keeps in full what is in flight and shards the rest: ceil(x / dp) grows by at least
  // floor(bytes / dp), and moving bytes from in flight (whole) to reduced (sharded) never shrinks
  // the growth below that. (The training walk skips the layers this proves cannot hold a peak.)
  // With the reduced partitions on the host (grads_on_host) nothing but the gradient in flight
  // stays: the least growth is 0.
  int64_t LeastGradientGrowth(int64_t bytes) const { return dp.grads_on_host ? 0 : dp.shard_grads ? bytes / dp.dp : bytes; }
};

// What a data-parallel rank gathers and reduces, in bytes: the sizes RankViewFor turns into the
// rank's in-flight terms (named fields, so a call site says which number is which).
struct ShardedUnitBytes {
  int64_t layer_weight_bytes = 0;    // one decoder layer's parameters (the unit ZeRO-3/FSDP gathers)
  int64_t root_weight_bytes = 0;     // embeddings, final norm and lm_head (FSDP's root unit)
  int64_t embedding_unit_bytes = 0;  // the largest of the embedding and the output layer (gathered alone when they are units of their own)
  int64_t root_rest_bytes = 0;       // what the root keeps then (the final norm)
  int64_t max_layer_grad_bytes = 0;  // the largest layer's gradients
  int64_t all_grad_bytes = 0;        // every gradient (DDP's bucket copy of them)
  int64_t bucket_dtype_bytes = 0;    // the gradient buckets' element size
  int64_t grad_dtype_bytes = 0;      // the gradients' element size
};

RankView RankViewFor(const DataParallel& dp, const ShardedUnitBytes& units);

// Inline: it runs once per moment, hundreds of times per estimate.
inline void RankView::Apply(Moment* moment) const {
  Moment& m = *moment;
  m.weight_bytes = Weights(m.weight_bytes);
  m.optimizer_state_bytes = States(m.optimizer_state_bytes);
  const bool unsharded = dp.unsharded_grads_until_step && (m.phase == Phase::kForward || m.phase == Phase::kReference || m.phase == Phase::kBackward);
  if (dp.shard_grads && !unsharded) {
    // The rank's shard of what has been reduced and, in a DeepSpeed backward, in full what is
    // still in flight: the gradient being produced, or (without contiguous buckets) up to a
    // bucket's worth. (FSDP: the unit's flat gradient, unit_grad_bytes, below.)
    // FSDP: the root unit's gradients stay whole until the root reduces them at the backward's end.
    const bool deepspeed_backward = m.phase == Phase::kBackward && !dp.fsdp;
    const bool fsdp_backward = m.phase == Phase::kBackward && dp.fsdp;
    const int64_t in_flight = deepspeed_backward ? std::min(m.gradient_bytes, std::max(m.fresh_gradient_bytes, pending_grad_bytes))
                              : fsdp_backward    ? std::min(m.gradient_bytes, m.unreduced_gradient_bytes)
                                                 : 0;
    m.gradient_bytes = (dp.grads_on_host ? 0 : dp.Shard(m.gradient_bytes - in_flight)) + in_flight;
  }
  switch (m.phase) {
    case Phase::kLoad:  // before the engine starts: no buckets, nothing gathered
      return;
    case Phase::kOptimizerStep:  // the optimizer's temporaries follow its states (sharded, or on the host)
      m.temporary_bytes = zero3_step_temporary_bytes >= 0 ? zero3_step_temporary_bytes : States(m.temporary_bytes);
      break;
    case Phase::kRollout:  // the engine's own copy generates (colocated vLLM, or generate() on the gathered policy)
      break;
    case Phase::kForward:
    case Phase::kReference:  // a sharded reference gathers its running layer as the policy does
    case Phase::kLogprob:
      m.temporary_bytes += GatheredAt(m.at);
      break;
    case Phase::kBackward:
      m.temporary_bytes += GatheredAt(m.at) + unit_grad_bytes + backward_bucket_bytes;
      break;
    case Phase::kZeroGrad:
      break;
  }
  m.persistent_bucket_bytes = persistent_bucket_bytes;
}

}  // namespace vramplan
