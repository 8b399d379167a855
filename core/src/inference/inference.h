// Inference and serving memory (transformers generate, vLLM, llama.cpp).
#pragma once

#include "parallel/shard.h"
#include "vramplan/result.h"
#include "vramplan/scenario.h"

namespace vramplan {

// `inverse`: also answer the inverse questions (max context, batch, format, GPUs).
// What one rank of role `rank.role` holds while serving.
void EstimateInference(const Scenario& scenario, const RankShard& rank, Result* result, bool inverse = true);

}  // namespace vramplan
