#include "parallel/zero3_gather.h"

#include <algorithm>

namespace vramplan {

Zero3Knobs Zero3KnobsOf(const ParallelConfig& p) {
  Zero3Knobs k;
  k.prefetch_bucket = p.stage3_prefetch_bucket_size.value_or(k.prefetch_bucket);
  k.persistence_threshold = p.stage3_param_persistence_threshold.value_or(k.persistence_threshold);
  k.max_live = p.stage3_max_live_parameters.value_or(k.max_live);
  k.max_reuse_distance = p.stage3_max_reuse_distance.value_or(k.max_reuse_distance);
  return k;
}

std::vector<Zero3Module> Zero3ModulesOf(const ModelSpec& model) {
  std::vector<Zero3Module> modules;
  const int64_t vh = model.vocab_size * model.hidden_size;
  if (!model.tied_embeddings) modules.push_back({vh, 0});
  for (int64_t i = 0; i < model.num_layers; ++i) {
    const size_t kind_index = i < static_cast<int64_t>(model.layer_kind.size()) ? model.layer_kind[i] : 0;
    if (kind_index >= model.kinds.size()) continue;
    const LayerKind& kind = model.kinds[kind_index];
    for (const NormSpec& n : kind.norms) {
      if (n.has_weight) modules.push_back({n.dim, n.bias ? n.dim : 0});
    }
    if (kind.extra_attention_params > 0) modules.push_back({kind.extra_attention_params, 0});
    if (kind.extra_router_params > 0) modules.push_back({kind.extra_router_params, 0});
    for (const LinearSpec& l : kind.linears) {
      for (int64_t c = 0; c < l.copies; ++c) modules.push_back({l.in_features * l.out_features, l.bias ? l.out_features : 0});
    }
  }
  if (model.final_norm.has_weight) modules.push_back({model.final_norm.dim, model.final_norm.bias ? model.final_norm.dim : 0});
  modules.push_back({vh, 0});  // lm_head (tied: the embedding's weight)
  return modules;
}

Zero3Gathered Zero3GatheredAtTurn(const Zero3Knobs& k, const std::vector<Zero3Module>& modules) {
  Zero3Gathered g;
  const auto partitioned = [&](int64_t numel) { return numel > k.persistence_threshold ? numel : 0; };
  for (const Zero3Module& m : modules) g.persistent += m.Params() - partitioned(m.weight) - partitioned(m.bias);
  if (modules.empty()) return g;
  // Backward from lm_head: a module is still gathered when 2 x F < max_reuse_distance, F the
  // elements of the modules after it (persistent ones included: __params_to_release counts every
  // parameter it walks). lm_head runs at the turn: gathered whatever the distance.
  std::vector<bool> kept(modules.size(), false);
  int64_t after = 0;
  for (size_t i = modules.size(); i-- > 0;) {
    const Zero3Module& m = modules[i];
    if (i + 1 == modules.size() || 2 * after < k.max_reuse_distance) {
      kept[i] = true;
      g.kept += partitioned(m.weight) + partitioned(m.bias);
    }
    after += m.Params();
  }
  // Prefetch in the backward's order (the forward's reverse), skipping what is gathered, while
  // fewer than min(bucket, max live - gathered) elements are in flight. DeepSpeed's count of live
  // parameters restarts at every step (reset_step), so it leaves out the persistent ones.
  const int64_t cap = std::min(k.prefetch_bucket, k.max_live - g.kept);
  for (size_t i = modules.size(); cap > 0 && g.prefetched < cap && i-- > 0;) {
    if (!kept[i]) g.prefetched += partitioned(modules[i].weight) + partitioned(modules[i].bias);
  }
  return g;
}

}  // namespace vramplan
