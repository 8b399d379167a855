// One training step simulated event by event: weights -> forward (saved tensors pile up) ->
// logits and loss -> backward (saved tensors freed, gradients appear) -> optimizer step -> zero_grad.
#pragma once

#include "vramplan/result.h"
#include "vramplan/scenario.h"

namespace vramplan {

void EstimateTraining(const Scenario& scenario, Result* result);

}  // namespace vramplan
