// Inference and serving memory (transformers generate, vLLM, llama.cpp).
#pragma once

#include "vramplan/result.h"
#include "vramplan/scenario.h"

namespace vramplan {

void EstimateInference(const Scenario& scenario, Result* result);

}  // namespace vramplan
