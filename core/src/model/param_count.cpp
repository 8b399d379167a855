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
  for (uint8_t idx : spec.layer_kind) {
    const LayerKind& kind = spec.kinds[idx];
    c.attention += kind.extra_attention_params;
    c.router += kind.extra_router_params;
    int64_t layer_active = kind.extra_attention_params + kind.extra_router_params;
    for (const auto& l : kind.linears) {
      int64_t p = l.Params();
      switch (l.role) {
        case ModuleRole::kAttention: c.attention += p; break;
        case ModuleRole::kMlp: c.mlp += p; break;
        case ModuleRole::kExperts: c.experts += p; break;
        case ModuleRole::kSharedExperts: c.shared_experts += p; break;
        case ModuleRole::kRouter: c.router += p; break;
        default: c.mlp += p; break;
      }
      // A token touches experts_per_token of the routed copies.
      if (l.role == ModuleRole::kExperts && l.copies > 0 && kind.mlp.experts_per_token > 0) {
        layer_active += p / l.copies * kind.mlp.experts_per_token;
      } else {
        layer_active += p;
      }
    }
    for (const auto& norm : kind.norms) {
      c.norms += norm.Params();
      layer_active += norm.Params();
    }
    active += layer_active;
  }
  c.total = c.embedding + c.attention + c.mlp + c.experts + c.shared_experts + c.router + c.norms + c.lm_head;
  c.active_per_token = active;
  return c;
}

}  // namespace vramplan
