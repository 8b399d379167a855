// vLLM's start-up overheads by release range. Sources (vllm-project/vllm):
//  * non-torch memory: vllm/utils.py memory_profiling + MemorySnapshot (0.6.5+, V0 worker.py and V1
//    gpu_worker.py determine_available_memory): non_torch_increase = (cuda used - torch reserved)
//    after the profile run minus the same at the worker's baseline snapshot (taken in init_device
//    after torch.cuda.set_device, before init_worker_distributed_environment). The CUDA context is
//    in the baseline; pynccl's communicator and the custom all-reduce IPC buffers
//    (distributed/device_communicators/custom_all_reduce.py, cudaMalloc'd, outside torch) are not.
//    Early V1 (0.8.0-0.8.4, gpu_worker.py at commit 0012cf6) added all non-torch memory, context
//    included; not modelled separately.
//  * default token budget: V0 (config.py SchedulerConfig) uses max(max_model_len, 2048) without
//    chunked prefill, which `vllm serve` enables only above 32K (then 2048); V1
//    (engine/arg_utils.py EngineArgs._set_default_args) 8192 on GPUs with >= 70 GiB, 2048 below.
//  * CUDA graphs: V0 captures batch sizes [1, 2, 4] + 8·i up to max_num_seqs (worker/model_runner.py
//    _BATCH_SIZES_TO_CAPTURE); V1 0.8-0.10 [1, 2, 4] + 8..512 step 8 = 67 piecewise graphs (the 0.10.1
//    start-up config prints that list); later releases stop at min(2·max_num_seqs, 512) with steps of
//    16 above 256 (vllm/config/vllm.py _set_cudagraph_sizes), modelled for 0.21+. Before 0.21 they are captured after the KV
//    pool (Worker.compile_or_warm_up_model -> capture_model), on top of gpu_memory_utilization;
//    from 0.21 (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS default 1, PR #30515 added it opt-in)
//    gpu_worker.py subtracts the profiled estimate from the KV budget.
#include "inference/vllm_overheads.h"

#include <algorithm>

namespace vramplan {
namespace {

constexpr int64_t kMiB = 1024 * 1024;

// Calibrated on start-up logs (tests/fixtures/inference/vllm_startup_logs.json): one GPU prints
// 0.03-0.08 GiB before Hopper (kernel modules loaded during the profile run) and 0.07-0.26 GiB on
// Hopper/Blackwell; tensor parallelism adds the communicators' buffers (pynccl's ncclComm and torch's
// device group, plus custom all-reduce's IPC buffers): 0.20-0.30 GiB in total over PCIe (RTX 3090 /
// 4090, L40S) and 1.79 GiB more at tp 2 than at tp 1 over NVLink (H100 SXM, vLLM PR #10511), where
// NCCL opens many more channels (nccl#964: 544-688 MB per communicator on A100 NVLink).
constexpr int64_t kKernelsMiB = 48, kKernelsHopperMiB = 160;
constexpr int64_t kNcclPcieMiB = 192, kNcclNvlinkMiB = 1792;

// Per decoder layer and captured size: V1's piecewise graphs 0.52 GiB for Llama-3.1-8B (32 layers,
// 67 sizes) and 0.65 GiB for gemma-3-4b (34 layers): 0.25-0.29 MiB each.
constexpr int64_t kGraphBytesPerLayerSize = 272 * 1024;

}  // namespace

int64_t VllmNonTorchBytes(int64_t tp, const DeviceTraits& device) {
  int64_t bytes = (device.hopper_or_newer ? kKernelsHopperMiB : kKernelsMiB) * kMiB;
  if (tp > 1) bytes += (device.nvlink ? kNcclNvlinkMiB : kNcclPcieMiB) * kMiB;
  return bytes;
}

int64_t VllmDefaultBatchedTokens(VllmVersion version, int64_t gpu_memory_bytes, int64_t max_model_len) {
  if (version == VllmVersion::kV0Engine) return max_model_len > 32768 ? 2048 : std::max<int64_t>(max_model_len, 2048);
  return gpu_memory_bytes >= 70LL * 1024 * kMiB ? 8192 : 2048;
}

int64_t VllmCapturedGraphs(VllmVersion version, int64_t max_num_seqs) {
  int64_t n = 0;
  if (version == VllmVersion::kV0_21Plus) {
    // [1, 2, 4] + range(8, 256, 8) + range(256, largest + 1, 16), largest = min(2·max_num_seqs, 512)
    // (vllm/config/vllm.py VllmConfig._set_cudagraph_sizes; no speculative decoding).
    const int64_t largest = std::min<int64_t>(2 * max_num_seqs, 512);
    for (int64_t size : {1, 2, 4}) n += size <= largest;
    for (int64_t size = 8; size < 256 && size <= largest; size += 8) ++n;
    for (int64_t size = 256; size <= largest; size += 16) ++n;
    return n;
  }
  // V0: [1, 2, 4] + 8·i up to max_num_seqs (at most 256); V1 before the rule above: up to 512.
  const int64_t largest = version == VllmVersion::kV0Engine ? std::min<int64_t>(256, max_num_seqs) : 512;
  for (int64_t size : {1, 2, 4}) n += size <= largest;
  return n + largest / 8;
}

int64_t VllmCudaGraphBytes(VllmVersion version, int64_t layers, int64_t max_num_seqs) {
  return VllmCapturedGraphs(version, max_num_seqs) * std::max<int64_t>(layers, 1) * kGraphBytesPerLayerSize;
}

}  // namespace vramplan
