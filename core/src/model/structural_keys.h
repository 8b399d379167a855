// The config.json keys that change a model's structure beyond what the generic readers understand
// (the Llama-style decoder and the standard mixture-of-experts keys): linear-attention and
// state-space layers, vision and audio towers, multi-token prediction, sparse-attention indexers,
// latent attention, chunked attention, layer-type patterns. An unknown model_type with any of them
// is refused (or, with model_reading "approximate", read with them ignored and listed), so that no
// architecture is silently counted as a dense Llama.
#pragma once

#include <string>
#include <vector>

#include "io/json_reader.h"

namespace vramplan {

struct UnreadKey {
  std::string path;  // JSON path in the scenario ("model.linear_num_value_heads")
  std::string what;  // what it configures ("linear attention")
};

// The structural keys of `cfg` (at `path`) that neither the Llama-style nor the generic MoE reader
// reads; null, false and 0 values configure nothing and are skipped.
std::vector<UnreadKey> UnreadStructuralKeys(const io::Json& cfg, const std::string& path);

// Whether `cfg` names routed experts with the standard keys (num_experts, num_local_experts,
// n_routed_experts): the generic MoE reader applies.
bool HasStandardMoeKeys(const io::Json& cfg);

}  // namespace vramplan
