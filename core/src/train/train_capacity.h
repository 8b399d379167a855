// Training's fewest-GPUs search (train/train_capacity.cpp), shared by the estimate's inverse answer
// (`training.min_gpus`) and the planner's layout search (planner/fewest_gpus.h).
#pragma once

#include <cstdint>

#include "planner/prepared.h"
#include "vramplan/scenario.h"

namespace vramplan {

// Smallest total GPU count (a multiple of tp x pp x cp, at most `max_gpus`) at which `work` fits
// its GPU when only the data-parallel degree grows, under its own sharding; 0 if none.
// `own_gpus`/`own_total`: a GPU count whose device total is known already, or 0.
int64_t SmallestGpusFitting(Scenario work, const Prepared& prepared, int64_t capacity, int64_t own_gpus, int64_t own_total, int64_t max_gpus);

}  // namespace vramplan
