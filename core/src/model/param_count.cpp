// Exact parameter counts: every nn.Parameter the transformers model instantiates, tied tensors once.
// Products and sums are checked (util/checked_math.h): an inline config can multiply its widths,
// layers and expert counts past int64; the pre-flight size check refuses such models first.
#include "util/checked_math.h"
#include "vramplan/model_spec.h"

namespace vramplan {
namespace {

using checked::Add;
using checked::Mul;

int64_t LinearParams(const LinearSpec& l) { return Mul(l.copies, Add(Mul(l.in_features, l.out_features), l.bias ? l.out_features : 0)); }

}  // namespace

int64_t LayerKindParams(const LayerKind& kind) {
  int64_t n = Add(kind.extra_attention_params, kind.extra_router_params);
  for (const auto& l : kind.linears) n = Add(n, LinearParams(l));
  for (const auto& norm : kind.norms) n = Add(n, norm.Params());
  return n;
}

ParamCounts CountParams(const ModelSpec& spec) {
  ParamCounts c;
  c.embedding = Add(Mul(spec.vocab_size, spec.hidden_size), Mul(spec.position_embedding_rows, spec.hidden_size));
  c.lm_head = spec.tied_embeddings ? 0 : Mul(spec.vocab_size, spec.hidden_size);
  if (spec.lm_head_bias) c.lm_head = Add(c.lm_head, spec.vocab_size);
  c.norms = spec.final_norm.Params();
  int64_t active = Add(c.embedding, c.lm_head, c.norms);
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
    int64_t layer_active = Add(kind.extra_attention_params, kind.extra_router_params);
    for (const auto& l : kind.linears) {
      int64_t p = LinearParams(l);
      switch (l.role) {
        case ModuleRole::kAttention: one.attention = Add(one.attention, p); break;
        case ModuleRole::kMlp: one.mlp = Add(one.mlp, p); break;
        case ModuleRole::kExperts: one.experts = Add(one.experts, p); break;
        case ModuleRole::kSharedExperts: one.shared_experts = Add(one.shared_experts, p); break;
        case ModuleRole::kRouter: one.router = Add(one.router, p); break;
        default: one.mlp = Add(one.mlp, p); break;
      }
      // A token touches experts_per_token of the routed copies.
      if (l.role == ModuleRole::kExperts && l.copies > 0 && kind.mlp.experts_per_token > 0) {
        layer_active = Add(layer_active, Mul(p / l.copies, kind.mlp.experts_per_token));
      } else {
        layer_active = Add(layer_active, p);
      }
    }
    for (const auto& norm : kind.norms) {
      one.norms = Add(one.norms, norm.Params());
      layer_active = Add(layer_active, norm.Params());
    }
    c.attention = Add(c.attention, Mul(n, one.attention));
    c.mlp = Add(c.mlp, Mul(n, one.mlp));
    c.experts = Add(c.experts, Mul(n, one.experts));
    c.shared_experts = Add(c.shared_experts, Mul(n, one.shared_experts));
    c.router = Add(c.router, Mul(n, one.router));
    c.norms = Add(c.norms, Mul(n, one.norms));
    active = Add(active, Mul(n, layer_active));
  }
  c.total = Add(c.embedding, c.attention, c.mlp, c.experts, c.shared_experts, c.router, c.norms, c.lm_head);
  c.active_per_token = active;
  return c;
}

}  // namespace vramplan
