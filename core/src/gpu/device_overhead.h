// What a GPU adds beyond tensors: CUDA context, library workspaces, the caching allocator's
// reserve; and the fit verdict against the chosen device.
#pragma once

#include <cstdint>
#include <string>

#include "vramplan/result.h"
#include "vramplan/scenario.h"

namespace vramplan {

// Calibrated constants (docs/accuracy.md, "GPU overheads").
inline constexpr int64_t kCudaContextMiB = 500;          // CUDA >= 11.7, lazy module loading
inline constexpr int64_t kCudaContextEagerMiB = 1343;    // all kernels loaded (HF docs, V100, 2022: measured)
inline constexpr int64_t kNcclMiB = 512;                 // inference: communicator buffers per process with > 1 GPU (nccl#964)
inline constexpr double kStaticReserveFraction = 0.01;   // weights, optimizer states: allocated once
inline constexpr double kDynamicReserveFraction = 0.10;  // activations, logits, grads, temporaries: churn
inline constexpr double kVariableShapesReserveFraction = 0.25;  // ... when every batch has a different length
// expandable_segments maps 2 MiB pages into one growing segment per stream: no cached-but-unusable
// segments, only page rounding remains (PyTorch docs, "CUDA memory management").
inline constexpr double kExpandableReserveFraction = 0.02;

// What the overheads need to know about the chosen GPU from the catalogue (model/catalog.h),
// looked up once per prepared model (planner/prepared.h), not on every simulation.
struct DeviceTraits {
  bool hopper_or_newer = false;  // cuBLAS reserves a 32 MiB workspace
  bool apple = false;            // MPS: no separate CUDA context reservation
  bool nvlink = false;           // SXM / NVL / HGX boards: GPUs joined by NVLink (NCCL opens many more channels)
};
DeviceTraits DeviceTraitsFor(const std::string& gpu_id);

// cuBLAS workspace allocated through the caching allocator (counted in allocated bytes).
int64_t CublasWorkspaceBytes(const Scenario& scenario, const DeviceTraits& device);
// The CUDA context and lazily loaded kernels (NCCL's buffers are their own term, comm_buffers).
int64_t CudaContextBytes(const Scenario& scenario, const DeviceTraits& device);

// NCCL's buffers on one rank (parallel/comm_buffers.h), outside the caching allocator.
struct CommBuffers {
  int64_t bytes = 0;
  std::string explain;
};
int64_t AllocatorOverheadBytes(const Scenario& scenario, int64_t static_bytes, int64_t dynamic_bytes);
double DynamicReserveFraction(const Scenario& scenario);

// Fills cuda_context / allocator_overhead / comm_buffers terms, reserved/device totals, headroom
// and fits. An engine that reports its own context (vLLM's non-torch memory) counts its
// communicators there: `comm` is then not added.
void ApplyDeviceOverheads(const Scenario& scenario, const DeviceTraits& device, const CommBuffers& comm, Result* result, bool explain = true);

}  // namespace vramplan
