// What vLLM reserves beside weights and the KV pool, per release range (docs/inference.md, "vLLM
// versions"): the non-torch memory its profiler counts, the default token budget of the profile
// run, and the CUDA-graph pool (inside or on top of gpu_memory_utilization).
#pragma once

#include <cstdint>

#include "gpu/device_overhead.h"
#include "vramplan/scenario.h"

namespace vramplan {

// non_torch_memory as vLLM's memory_profiling prints it: growth of (used - torch reserved) since
// the worker's baseline snapshot, so the CUDA context is not in it but NCCL / custom all-reduce
// buffers (created after the snapshot) and lazily loaded kernels are.
int64_t VllmNonTorchBytes(int64_t tp, const DeviceTraits& device);

// max_num_batched_tokens when the scenario leaves it 0.
int64_t VllmDefaultBatchedTokens(VllmVersion version, int64_t gpu_memory_bytes, int64_t max_model_len);

// CUDA graph sizes captured by default.
int64_t VllmCapturedGraphs(VllmVersion version, int64_t max_num_seqs);

// The CUDA-graph pool: per decoder layer and captured size (calibrated on "Graph capturing
// finished ..., took X GiB" lines, docs/accuracy_inference.md).
int64_t VllmCudaGraphBytes(VllmVersion version, int64_t layers, int64_t max_num_seqs);

// Whether the graph pool is subtracted from the KV budget (0.21+: VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1).
inline bool VllmGraphsInsideBudget(VllmVersion version) { return version == VllmVersion::kV0_21Plus; }

}  // namespace vramplan
