// One training step simulated event by event: weights -> forward (saved tensors pile up) ->
// logits and loss -> backward (saved tensors freed, gradients appear) -> optimizer step -> zero_grad.
#pragma once

#include "parallel/shard.h"
#include "vramplan/result.h"
#include "vramplan/scenario.h"

namespace vramplan {

struct Prepared;

// What one rank of role `rank.role` holds through the step (every moment goes through the shard
// step, parallel/shard.h). `explain`: build the explain strings and the timeline (off inside
// searches, for speed). `prepared` is PrepareModel(scenario) or one of the same model and GPU
// (planner/prepared.h).
void EstimateTraining(const Scenario& scenario, const RankShard& rank, const Prepared& prepared, Result* result, bool explain = true);

// Largest micro-batch and sequence length that still fit the GPU, and the fewest GPUs (searches
// over the same simulation); fills result->training. `result` holds the scenario's own estimate,
// device overheads included (its device total answers the probe of the scenario itself).
void SolveTrainingCapacity(const Scenario& scenario, const Prepared& prepared, Result* result);

}  // namespace vramplan
