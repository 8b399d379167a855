// What a GPU adds beyond tensors: CUDA context, library workspaces, the caching allocator's
// reserve; and the fit verdict against the chosen device.
#pragma once

#include <cstdint>

#include "vramplan/result.h"
#include "vramplan/scenario.h"

namespace vramplan {

// Calibrated constants (docs/accuracy.md, "GPU overheads").
inline constexpr int64_t kCudaContextMiB = 500;
inline constexpr double kFragmentationFraction = 0.05;

// cuBLAS workspace allocated through the caching allocator (counted in allocated bytes).
int64_t CublasWorkspaceBytes(const Scenario& scenario);
int64_t CudaContextBytes(const Scenario& scenario);
int64_t AllocatorOverheadBytes(const Scenario& scenario, int64_t peak_allocated);

// Fills cuda_context / allocator_overhead terms, reserved/device totals, headroom and fits.
void ApplyDeviceOverheads(const Scenario& scenario, Result* result);

}  // namespace vramplan
