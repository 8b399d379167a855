// Pipeline parallelism: which layers each stage runs, and how many micro-batches' activations a
// stage holds at once.
//
// The layer split: parallel.pp_layers when given (uneven splits; with vpp > 1 it lists the pp x vpp
// virtual stages in Megatron's order, virtual stage v x pp + r being chunk v of rank r), else
// num_layers / pp on every stage (Megatron-LM requires pp to divide the layers unless the first/last stage sizes are given:
// megatron/core/transformer/transformer_block.py get_num_layers_to_build). The first stage also
// runs the token embedding, the last the final norm, the output layer and the loss.
//
// In flight (megatron/core/pipeline_parallel/schedules.py):
//   1F1B (forward_backward_pipelining_without_interleaving): pipeline rank r runs
//       num_warmup_microbatches = min(pp - r - 1, m) forwards, then one more forward before its
//       first backward, so it holds min(pp - r, m) micro-batches' activations at once.
//   interleaved 1F1B (forward_backward_pipelining_with_interleaving, vpp model chunks per rank):
//       num_warmup = (pp - r - 1) * 2 + (vpp - 1) * pp (microbatch_group_size_per_vp_stage = pp),
//       capped at m * vpp chunk-forwards, plus one: chunk-forwards of 1/vpp of the stage each.
//       On the first rank that is pp + (pp - 1) / vpp stage micro-batches: Megatron's own
//       theoretical_memory_usage.py penalty (1 + (pp - 1) / (pp * vpp)) on pp.
//   GPipe (torchtitan ScheduleGPipe, PiPPy): every micro-batch's forward before any backward: m.
// `m` is train.grad_accum_steps: the micro-batches of one optimizer step on one data-parallel rank
// (Megatron: global_batch_size / (micro_batch_size x dp)).
#pragma once

#include <cstdint>
#include <vector>

#include "vramplan/error.h"
#include "vramplan/scenario.h"

namespace vramplan {

struct PipelineStage {
  int64_t index = 0;        // pipeline rank
  int64_t first_layer = 0;  // the first decoder layer this rank runs (interleaved: of its first chunk)
  int64_t num_layers = 0;   // decoder layers this rank runs (all its chunks)
  bool embedding = true;    // runs the token embedding (the first stage)
  bool head = true;         // runs the final norm, the output layer and the loss (the last stage)
  // Activations held at the peak, in chunk-forwards of one micro-batch; a chunk is 1/vpp of the
  // stage's layers (vpp = 1: micro-batches of the whole stage).
  int64_t in_flight_chunks = 1;
  int64_t vpp = 1;
  // Interleaved (vpp > 1): each model chunk's decoder layers and first layer (global index), and
  // how many of the in-flight chunk-forwards run each chunk (Megatron's forward order: pp
  // micro-batches through chunk 0, then pp through chunk 1, ...). Chunks may differ in size when
  // parallel.pp_layers lists the pp x vpp virtual stages.
  std::vector<int64_t> chunk_layers, chunk_first_layer, chunk_in_flight;
};

// The schedule a configuration runs (pp_schedule, or its default: interleaved when vpp > 1).
PipelineSchedule ScheduleOf(const ParallelConfig& parallel);

// Layers per pipeline rank (each rank's chunks together), first to last.
std::vector<int64_t> StageLayerCounts(const ParallelConfig& parallel, int64_t num_layers);

// Chunk-forwards pipeline rank `rank` holds at its first backward, for `microbatches` per step.
int64_t InFlightChunks(PipelineSchedule schedule, int64_t pp, int64_t vpp, int64_t rank, int64_t microbatches);

// Every stage of a training job (one entry when pp = 1).
std::vector<PipelineStage> PipelineStages(const ParallelConfig& parallel, int64_t num_layers, int64_t microbatches);

// The pipeline settings against the model: the split covers the layers, vpp divides each stage,
// the schedule matches vpp. Errors name the field.
void ValidatePipeline(const ParallelConfig& parallel, int64_t num_layers, Issues* errors);

}  // namespace vramplan
