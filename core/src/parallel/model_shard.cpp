#include "parallel/model_shard.h"

#include <algorithm>

#include "parallel/shard.h"
#include "units.h"

namespace vramplan {
namespace {

bool IsKv(LinearSlot s) { return s == LinearSlot::kK || s == LinearSlot::kV; }

bool SplitsOutput(LinearSlot s) {  // an expert's first linear(s): column-parallel inside the expert
  return s == LinearSlot::kExpertGate || s == LinearSlot::kExpertUp || s == LinearSlot::kExpertGateUp;
}

}  // namespace

LayerKind ShardLayerKind(const LayerKind& kind, const ModelSplit& split) {
  const int64_t tp = split.tp;
  LayerKind k = kind;
  AttentionGeometry& g = k.attention;
  const int64_t kv_rank = KvHeadsPerRank(g.num_kv_heads, tp);
  const int64_t heads_rank = CeilDiv(g.num_heads, tp);
  for (LinearSpec& l : k.linears) {
    switch (l.parallel) {
      case ParallelStyle::kColumn:
        if (IsKv(l.slot) && !g.mla) {
          l.out_features = kv_rank * (l.slot == LinearSlot::kK ? g.head_dim : g.v_head_dim);
        } else if (l.slot == LinearSlot::kQkv && !g.mla && g.num_heads > 0) {
          l.out_features = heads_rank * g.head_dim + kv_rank * (g.head_dim + g.v_head_dim);
        } else {
          l.out_features = CeilDiv(l.out_features, tp);
        }
        break;
      case ParallelStyle::kRow:
        l.in_features = CeilDiv(l.in_features, tp);
        break;
      case ParallelStyle::kExpert:
        l.copies = CeilDiv(l.copies, split.ep);
        if (SplitsOutput(l.slot)) l.out_features = CeilDiv(l.out_features, split.etp);
        else l.in_features = CeilDiv(l.in_features, split.etp);
        break;
      case ParallelStyle::kReplicated:
      case ParallelStyle::kVocab:
      case ParallelStyle::kUnset:
        break;
    }
  }
  for (NormSpec& n : k.norms) {
    if (n.slot == NormSlot::kQ || n.slot == NormSlot::kK) n.dim = CeilDiv(n.dim, tp);
  }
  k.extra_attention_params = CeilDiv(k.extra_attention_params, tp);  // per-head sinks follow the heads
  // A recurrent mixer's heads, channels and groups split like attention heads (vLLM MambaMixer2 /
  // Qwen3NextGatedDeltaNet shard them over tp).
  RecurrentGeometry& rg = k.recurrent;
  rg.num_heads = CeilDiv(rg.num_heads, tp);
  rg.num_k_heads = CeilDiv(rg.num_k_heads, tp);
  rg.inner = CeilDiv(rg.inner, tp);
  rg.groups = CeilDiv(rg.groups, tp);
  g.num_heads = heads_rank;
  g.num_kv_heads = g.mla ? heads_rank : kv_rank;
  k.mlp.intermediate = k.mlp.num_experts > 0 ? CeilDiv(k.mlp.intermediate, split.etp) : CeilDiv(k.mlp.intermediate, tp);
  k.mlp.shared_intermediate = CeilDiv(k.mlp.shared_intermediate, tp);
  // Routed experts on this rank; top-k stays: a rank computes, on average, top_k x its tokens'
  // worth of expert rows (the tokens of all its EP peers routed to its experts).
  k.mlp.num_experts = CeilDiv(k.mlp.num_experts, split.ep);
  return k;
}

std::vector<int64_t> StageLayerIndices(const PipelineStage& stage) {
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(stage.num_layers));
  if (!stage.chunk_layers.empty()) {
    // Interleaved: chunk v holds the layers of virtual stage v x pp + r (parallel/pipeline.h).
    for (size_t c = 0; c < stage.chunk_layers.size(); ++c) {
      for (int64_t i = 0; i < stage.chunk_layers[c]; ++i) out.push_back(stage.chunk_first_layer[c] + i);
    }
  } else {
    for (int64_t i = 0; i < stage.num_layers; ++i) out.push_back(stage.first_layer + i);
  }
  return out;
}

ModelSpec RankLocalModel(const ModelSpec& model, const ModelSplit& split, const PipelineStage& stage) {
  ModelSpec m;
  m.model_type = model.model_type;
  m.architecture = model.architecture;
  m.display_name = model.display_name;
  m.hidden_size = model.hidden_size;
  m.max_position_embeddings = model.max_position_embeddings;
  m.context_limit = model.context_limit;
  m.context_limit_source = model.context_limit_source;
  m.unquantized_modules = model.unquantized_modules;
  m.quantization_method = model.quantization_method;
  m.norm_kind = model.norm_kind;
  m.rope_fraction = model.rope_fraction;
  m.attention_dropout = model.attention_dropout;
  m.hidden_dropout = model.hidden_dropout;
  m.embedding_dropout = stage.embedding ? model.embedding_dropout : 0.0;
  m.softmax_fp32 = model.softmax_fp32;
  m.scale_is_tensor = model.scale_is_tensor;
  m.legacy_logits_upcast = model.legacy_logits_upcast;
  m.loss_upcasts_logits = model.loss_upcasts_logits;
  // Vocabulary rows on this rank: the embedding (first stage) and the output layer (last stage).
  const bool vocab_here = stage.embedding || stage.head;
  const int64_t multiple = std::max<int64_t>(1, split.vocab_divisible_by) * split.tp;
  const int64_t padded = CeilDiv(model.vocab_size, multiple) * multiple;
  m.vocab_size = vocab_here ? CeilDiv(padded, split.tp) : 0;
  // One vocab x hidden matrix on an end stage of a pipeline (a tied output layer is a copy);
  // both on a single stage, unless tied.
  m.tied_embeddings = split.pp > 1 ? true : model.tied_embeddings;
  m.lm_head_bias = stage.head && model.lm_head_bias;
  m.position_embedding_rows = stage.embedding ? model.position_embedding_rows : 0;
  m.extra_embedding_params = stage.embedding ? model.extra_embedding_params : 0;  // kept whole on the first stage
  m.final_norm = model.final_norm;
  if (!stage.head) m.final_norm.dim = 0;
  m.kinds.reserve(model.kinds.size());
  for (const LayerKind& k : model.kinds) m.kinds.push_back(ShardLayerKind(k, split));
  const std::vector<int64_t> layers = StageLayerIndices(stage);
  m.layer_kind.reserve(layers.size());
  for (int64_t i : layers) m.layer_kind.push_back(model.layer_kind[static_cast<size_t>(i)]);
  m.num_layers = static_cast<int64_t>(m.layer_kind.size());
  return m;
}

}  // namespace vramplan
