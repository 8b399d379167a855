// Inference and serving memory (transformers generate, vLLM, llama.cpp).
#pragma once

#include "parallel/shard.h"
#include "vramplan/result.h"
#include "vramplan/scenario.h"

namespace vramplan {

struct Prepared;

// What one rank of role `rank.role` holds while serving: the engine's terms, before the device
// overheads (planner/simulate.h runs both). `explain`: explain strings and the engines' warnings;
// `inverse`: also answer the inverse questions (max context, batch, format, GPUs). `prepared` is
// PrepareModel(scenario) or one of the same model.
void EstimateInference(const Scenario& scenario, const RankShard& rank, const Prepared& prepared, Result* result, bool explain, bool inverse);

}  // namespace vramplan
