// Inference and serving memory (transformers generate, vLLM, llama.cpp).
#pragma once

#include "vramplan/result.h"
#include "vramplan/scenario.h"

namespace vramplan {

// `inverse`: also answer the inverse questions (max context, batch, format, GPUs).
void EstimateInference(const Scenario& scenario, Result* result, bool inverse = true);

}  // namespace vramplan
