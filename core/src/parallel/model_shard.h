// The model as one rank of a model-parallel training job holds it: tensor parallelism splits the
// linears, heads and vocabulary, expert parallelism the experts, and a pipeline stage keeps only
// its layers (and the embedding on the first stage, the final norm and output layer on the last).
// The result is an ordinary ModelSpec, so parameter counts, trainable tensors and the optimizer's
// states are computed for it exactly as for a whole model.
//
// Splits (Megatron-LM megatron/core/tensor_parallel/layers.py ColumnParallelLinear /
// RowParallelLinear / VocabParallelEmbedding; megatron/core/transformer/moe/experts.py):
//   column-parallel (q, k, v, fused qkv, gate, up, MLA q_b / kv_b, shared-expert gate/up): output
//       features / tp, biases with them; k and v keep KvHeadsPerRank(kv_heads, tp) heads (fewer KV
//       heads than tp are replicated: Megatron requires tp to divide them or be a multiple of them);
//   row-parallel (o, down, shared-expert down): input features / tp, the bias replicated;
//   replicated (routers, MLA q_a / kv_a, norms): whole on every rank; OLMo-2's q/k norms over all
//       heads are split with the heads;
//   routed experts: num_experts / ep experts per rank, each expert's width / etp;
//   vocabulary: the embedding and the output layer hold vocab / tp rows, rounded up; Megatron first
//       pads the vocabulary to a multiple of 128 x tp (ModelSplit::vocab_divisible_by).
// With pp > 1 a tied output layer is a second copy of the word embeddings on the last stage
// (megatron/core/models/common/language_module/language_module.py
// setup_embeddings_and_output_layer: the last stage allocates its own weight and all-reduces the
// gradients with the first stage's), so each end stage holds one vocab x hidden matrix.
#pragma once

#include <cstdint>

#include "parallel/pipeline.h"
#include "vramplan/model_spec.h"

namespace vramplan {

struct ModelSplit {
  int64_t tp = 1;
  int64_t etp = 1;
  int64_t ep = 1;
  int64_t pp = 1;
  // Megatron pads the vocabulary to a multiple of make_vocab_size_divisible_by (128) x tp
  // (megatron/core/tokenizers/utils/build_tokenizer.py vocab_size_with_padding); 1: no padding.
  int64_t vocab_divisible_by = 1;
};

// One layer kind as a rank holds it.
LayerKind ShardLayerKind(const LayerKind& kind, const ModelSplit& split);

// The whole model as the ranks of `stage` hold it (one rank of tp x etp x ep).
ModelSpec RankLocalModel(const ModelSpec& model, const ModelSplit& split, const PipelineStage& stage);

// The decoder layers of pipeline rank `stage` (its chunks in order), as indices into the model.
std::vector<int64_t> StageLayerIndices(const PipelineStage& stage);

}  // namespace vramplan
