// One training step on one rank of a model-parallel job (tensor, sequence, pipeline, context or
// expert parallelism, or Megatron-LM's trainer at any size), moment by moment like
// train/train_step.h but for the rank's own share of the model (parallel/model_shard.h), its
// pipeline stage (parallel/pipeline.h) and its slice of the sequence (context parallelism):
//
//   model states   the rank-local model's parameters; Megatron keeps bf16 weights, an fp32
//                  main_grad buffer allocated with the model (persistent: it is the gradient
//                  accumulator) and, with the distributed optimizer (parallel.zero 1), the fp32
//                  master weights and Adam moments sharded over the data-parallel group (experts:
//                  over the expert-data-parallel group); other trainers shard through ZeRO/FSDP
//                  exactly as a single-replica step does (parallel/data_parallel.h).
//   activations    per layer and micro-batch, on the rank's tokens (b x s / cp), with the
//                  tensor-parallel width; sequence parallelism divides the norm and residual
//                  regions by tp. Megatron: the TransformerEngine inventory (docs/parallel.md);
//                  other trainers: the autograd rules of train/activations.h on the local layer.
//   in flight      a pipeline stage holds its schedule's micro-batches (PipelineStage).
//   loss           on the last stage only, on vocab / tp logits; Megatron's vocab-parallel cross
//                  entropy works on an fp32 copy of the logits.
//   buffers        context parallelism's K/V exchange, the sequence-parallel all-gather, the MoE
//                  token dispatch.
#pragma once

#include "parallel/pipeline.h"
#include "parallel/shard.h"
#include "parallel/topology.h"
#include "vramplan/result.h"
#include "vramplan/scenario.h"

namespace vramplan {

struct Prepared;

// Whether a training scenario runs through EstimateParallelTraining (model parallelism of any
// kind, or the Megatron trainer) instead of the single-replica step (train/train_step.h).
bool UsesModelParallelStep(const Scenario& scenario);

void EstimateParallelTraining(const Scenario& scenario, const Topology& topology, const PipelineStage& stage,
                              const RankShard& rank, const Prepared& prepared, Result* result, bool explain);

}  // namespace vramplan
