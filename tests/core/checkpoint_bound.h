// A bound for the property and physics tests of gradient checkpointing.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "vramplan/estimate.h"

namespace vramplan {
namespace testing_support {
// What checkpointing may add beyond the inputs all layers share, while one checkpointed layer runs
// its own backward (docs/training.md section 3, measured): its kept input (full) or the core's
// arguments q_embed, k_embed, v beside their copies (selective), and the recomputation's last
// statement's buffers (residual, down_proj's output, the sum, the CPU promotion copy, the output
// gradient's 16-bit copy, under AMP with an adapter on down_proj the fp32 copy of its input) and
// fork_rng's state copy. A bound at fp32 sizes: 4·T·(7·h + q + 2·kv) + 6·T·I + 2 RNG states.
inline int64_t CheckpointedLayerBound(const std::string& scenario_json) {
  auto sc = ParseScenario(scenario_json);
  if (!sc.ok()) return 0;
  const ModelSpec& m = sc.value().model;
  const TrainConfig& t = sc.value().train;
  const int64_t T = t.micro_batch_size * t.seq_len;
  int64_t width = 0, inter = 0;
  for (const LayerKind& k : m.kinds) {
    const AttentionGeometry& g = k.attention;
    width = std::max(width, 7 * m.hidden_size + g.num_heads * g.head_dim + 2 * g.num_kv_heads * std::max(g.head_dim, g.v_head_dim));
    inter = std::max(inter, k.mlp.num_experts > 0 ? k.mlp.intermediate * k.mlp.experts_per_token : k.mlp.intermediate);
  }
  return 4 * T * width + 6 * T * inter + 2 * 5056;
}

}  // namespace testing_support
}  // namespace vramplan
