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

#include <string>
#include <vector>

#include "parallel/pipeline.h"
#include "parallel/shard.h"
#include "train/optimizer.h"
#include "parallel/topology.h"
#include "vramplan/result.h"
#include "vramplan/scenario.h"

namespace vramplan {

struct Prepared;

// What one layer of the rank holds for one micro-batch.
struct LayerBytes {
  int64_t saved = 0;           // saved for backward by its forward (no recomputation)
  int64_t kept = 0;            // what stays after its forward (recomputation: its checkpointed input)
  int64_t forward_temp = 0;    // buffers alive inside its forward (all-gather, K/V exchange, token dispatch)
  int64_t mlp_temp = 0;        // backward temporaries at its MLP / experts
  int64_t attention_temp = 0;  // backward temporaries at its attention
  int64_t grad_bytes = 0;      // gradients of its trainable parameters
  int64_t chunk_start = 0;     // the first layer of its recomputed chunk (itself when not recomputed in a chunk)
};

// The shape of one rank's work: tokens, sequence-parallel split, widths.
struct RankGeometry {
  int64_t b = 1;   // micro-batch
  int64_t s = 1;   // sequence on this rank (seq_len / cp)
  int64_t T = 1;   // tokens on this rank, b x s
  int64_t u = 1;   // sequence-parallel divisor of the norm / residual regions (tp with SP, else 1)
  int64_t Tu = 1;  // ceil(T / u)
  int64_t h = 0;
  int64_t etp = 1;
  int64_t ep = 1;
  int64_t cp = 1;
  ContextParallelKind cp_kind = ContextParallelKind::kRing;
  double moe_capacity_factor = 0;  // Megatron token dropping; 0 = dropless
  bool moe_pad_to_capacity = false;
};

// Rows the experts of one rank compute per micro-batch (Megatron's alltoall token dispatcher).
// Dropless: the rank's Tu tokens x top_k, gathered over the expert-tensor-parallel group (etp). With
// a capacity factor cf each expert takes at most ceil(cf x Tu x top_k / E) tokens from each source
// rank (moe_utils.py get_capacity); padding fills every local expert to capacity x etp x ep rows
// (token_dispatcher.py MoEAlltoAllTokenDispatcher.preprocess, drop_and_pad), i.e. E x etp x capacity
// on the rank. `experts` is the model's routed experts (all ranks).
int64_t RoutedRows(const RankGeometry& g, int64_t experts, int64_t top_k);

// Everything a pipeline stage's ranks hold that does not depend on the micro-batches in flight:
// stages of the same shape (the middle stages of a uniform model) share one preparation, so a
// 4D-parallel estimate costs about one single-rank estimate per distinct stage shape.
struct StagePrep {
  bool embedding = false, head = false, megatron = false, embedding_trainable = false;
  TrainMethod method = TrainMethod::kFull;
  int64_t num_layers = 0, params_total = 0;
  RankGeometry g;
  int64_t act = 2, microbatches = 1, trainable = 0, grad_dtype = 4, grads_total = 0;
  int64_t weight_bytes = 0, weight_dtype = 2;
  OptimizerMemory opt;
  int64_t states_dev = 0, weights_dev = 0, grads_dev = 0, dp = 1, edp = 1;
  RankView view;
  std::vector<LayerBytes> layers;
  std::vector<int64_t> chunk_kept;  // interleaved: kept per micro-batch by each model chunk
  int64_t stage_kept = 0, embedding_saved = 0, head_saved = 0, loss_forward = 0, loss_backward = 0;
  std::string loss_explain;
};

// Whether a training scenario runs through EstimateParallelTraining (model parallelism of any
// kind, or the Megatron trainer) instead of the single-replica step (train/train_step.h).
bool UsesModelParallelStep(const Scenario& scenario);

StagePrep PrepareStage(const Scenario& scenario, const Topology& topology, const PipelineStage& stage, const RankShard& rank, bool explain);
// Whether two stages differ only in their micro-batches in flight (one StagePrep serves both).
bool SameStageShape(const PipelineStage& a, const PipelineStage& b);

void EstimateParallelTraining(const Scenario& scenario, const Topology& topology, const PipelineStage& stage,
                              const RankShard& rank, const Prepared& prepared, const StagePrep& prep, Result* result, bool explain);

}  // namespace vramplan
