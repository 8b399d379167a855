// What a GPU adds beyond tensors: CUDA context, library workspaces, the caching allocator's
// reserve; and the fit verdict against the chosen device.
#pragma once

#include "vramplan/result.h"
#include "vramplan/scenario.h"

namespace vramplan {

// Fills cuda_context / allocator_overhead terms, reserved/device totals, headroom and fits.
void ApplyDeviceOverheads(const Scenario& scenario, Result* result);

}  // namespace vramplan
