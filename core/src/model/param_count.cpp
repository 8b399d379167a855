// Exact parameter counts: every nn.Parameter the transformers model instantiates, tied tensors once.
#include "vramplan/model_spec.h"

namespace vramplan {

int64_t LayerKindParams(const LayerKind& kind) {
  int64_t n = kind.extra_attention_params + kind.extra_router_params;
  for (const auto& l : kind.linears) n += l.Params();
  for (const auto& norm : kind.norms) n += norm.Params();
  return n;
}

ParamCounts CountParams(const ModelSpec& spec) {
  ParamCounts c;
  c.embedding = spec.vocab_size * spec.hidden_size + spec.position_embedding_rows * spec.hidden_size;
  c.lm_head = spec.tied_embeddings ? 0 : spec.vocab_size * spec.hidden_size;
  if (spec.lm_head_bias) c.lm_head += spec.vocab_size;
  c.norms = spec.final_norm.Params();
  int64_t active = c.embedding + c.lm_head + c.norms;
  // Count each distinct layer kind once, weighted by how many layers use it.
  int64_t uses[256] = {0};
  for (uint8_t idx : spec.layer_kind) ++uses[idx];
  for (size_t idx = 0; idx < spec.kinds.size(); ++idx) {
    const int64_t n = uses[idx];
    if (n == 0) continue;
    const LayerKind& kind = spec.kinds[idx];
    ParamCounts one;
    one.attention += kind.extra_attention_params;
    one.router += kind.extra_router_params;
    int64_t layer_active = kind.extra_attention_params + kind.extra_router_params;
    for (const auto& l : kind.linears) {
      int64_t p = l.Params();
      switch (l.role) {
        case ModuleRole::kAttention: one.attention += p; break;
        case ModuleRole::kMlp: one.mlp += p; break;
        case ModuleRole::kExperts: one.experts += p; break;
        case ModuleRole::kSharedExperts: one.shared_experts += p; break;
        case ModuleRole::kRouter: one.router += p; break;
        default: one.mlp += p; break;
      }
      // A token touches experts_per_token of the routed copies.
      if (l.role == ModuleRole::kExperts && l.copies > 0 && kind.mlp.experts_per_token > 0) {
        layer_active += p / l.copies * kind.mlp.experts_per_token;
      } else {
        layer_active += p;
      }
    }
    for (const auto& norm : kind.norms) {
      one.norms += norm.Params();
      layer_active += norm.Params();
    }
    c.attention += n * one.attention;
    c.mlp += n * one.mlp;
    c.experts += n * one.experts;
    c.shared_experts += n * one.shared_experts;
    c.router += n * one.router;
    c.norms += n * one.norms;
    active += n * layer_active;
  }
  c.total = c.embedding + c.attention + c.mlp + c.experts + c.shared_experts + c.router + c.norms + c.lm_head;
  c.active_per_token = active;
  return c;
}

}  // namespace vramplan
