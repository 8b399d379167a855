// What a GPU adds beyond the tensors the step simulation counts:
//  * cuBLAS workspace, allocated through PyTorch's caching allocator (so inside "allocated"):
//    8,519,680 B (":4096:2:16:8") per handle/stream, 32 MiB on Hopper/Blackwell
//    (aten/src/ATen/cuda/CublasHandlePool.cpp, parseChosenWorkspaceSize).
//  * allocator_overhead = reserved - allocated: block rounding and cached-but-free segments
//    (c10/cuda/CUDACachingAllocator.cpp); a fraction of the peak, calibrated in docs/accuracy.md.
//  * cuda_context: the CUDA context and lazily loaded kernels (CUDA >= 11.7 lazy loading; pytorch#86509
//    measured 274 MiB bare, more once cuBLAS/attention kernels load), outside the allocator, seen by nvidia-smi.
//  * comm_buffers: NCCL's communicator buffers, outside the allocator too (parallel/comm_buffers.h).
// An engine may set cuda_context / allocator_overhead itself (vLLM manages its own pool); they are
// only filled here when absent.
#include "gpu/device_overhead.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "format.h"
#include "model/catalog.h"
#include "util/checked_math.h"

namespace vramplan {
namespace {

constexpr int64_t kMiB = 1024 * 1024;

Term* FindTerm(std::vector<Term>* terms, std::string_view key) {
  for (auto& t : *terms) {
    if (t.key == key) return &t;
  }
  return nullptr;
}

size_t KeyIndex(const std::string& key) {
  const std::vector<std::string>& keys = BreakdownKeys();
  return static_cast<size_t>(std::find(keys.begin(), keys.end(), key) - keys.begin());
}

}  // namespace

DeviceTraits DeviceTraitsFor(const std::string& gpu_id) {
  DeviceTraits d;
  const GpuEntry* gpu = FindGpu(gpu_id);
  if (gpu == nullptr) return d;  // a custom {name, memory_bytes} GPU: no catalogue facts
  d.hopper_or_newer = gpu->arch == "hopper" || gpu->arch == "blackwell";
  d.apple = gpu->vendor == "apple";
  // NVLink boards: the SXM / NVL / HGX parts (their catalogue ids say so; H20 and the GH200 superchip
  // are HGX / NVLink-C2C boards, B200 and B300 are SXM only); PCIe cards and custom GPUs talk over PCIe.
  const std::string& id = gpu->id;
  d.nvlink = gpu->vendor == "nvidia" && (id.find("sxm") != std::string::npos || id.find("-nvl-") != std::string::npos ||
                                         id.rfind("h20-", 0) == 0 || id.rfind("gh200", 0) == 0 || id.rfind("b200", 0) == 0 ||
                                         id.rfind("b300", 0) == 0);
  return d;
}

int64_t CublasWorkspaceBytes(const Scenario& s, const DeviceTraits& device) {
  if (s.framework.device != Device::kCuda) return 0;
  return device.hopper_or_newer ? 32 * kMiB : 8519680;
}

int64_t CudaContextBytes(const Scenario& s, const DeviceTraits& device) {
  if (s.framework.device != Device::kCuda) return 0;
  if (device.apple) return 0;  // MPS has no separate context reservation
  return (s.framework.cuda_lazy_loading ? kCudaContextMiB : kCudaContextEagerMiB) * kMiB;
}

double DynamicReserveFraction(const Scenario& s) {
  if (s.framework.expandable_segments) return kExpandableReserveFraction;
  // Unpacked batches (train.packing false) are padded per batch: shapes vary as with variable_shapes.
  const bool varying = s.framework.variable_shapes || (s.mode == Mode::kTrain && !s.train.packing);
  return varying ? kVariableShapesReserveFraction : kDynamicReserveFraction;
}

int64_t AllocatorOverheadBytes(const Scenario& s, int64_t static_bytes, int64_t dynamic_bytes) {
  if (s.framework.device != Device::kCuda) return 0;
  return static_cast<int64_t>(std::llround(kStaticReserveFraction * static_cast<double>(static_bytes) +
                                           DynamicReserveFraction(s) * static_cast<double>(dynamic_bytes)));
}

void ApplyDeviceOverheads(const Scenario& scenario, const DeviceTraits& device, const CommBuffers& comm, Result* result, bool explain) {
  GpuResult& g = result->gpu;
  // Where each key sits once the breakdown is in the fixed order (looked up once, not per call).
  static const size_t kWeights = KeyIndex("weights"), kStates = KeyIndex("optimizer_states"),
                      kContext = KeyIndex("cuda_context"), kAllocator = KeyIndex("allocator_overhead"),
                      kComm = KeyIndex("comm_buffers");
  // Make sure every breakdown key exists, in the fixed order.
  const bool has_context = FindTerm(&g.breakdown, "cuda_context") != nullptr;
  const bool has_allocator = FindTerm(&g.breakdown, "allocator_overhead") != nullptr;
  const bool has_comm = FindTerm(&g.breakdown, "comm_buffers") != nullptr;
  const std::vector<std::string>& keys = BreakdownKeys();
  size_t in_order = 0;  // the training steps report the first keys in the fixed order already
  while (in_order < g.breakdown.size() && in_order < keys.size() && g.breakdown[in_order].key == keys[in_order]) ++in_order;
  if (in_order == g.breakdown.size()) {
    g.breakdown.reserve(keys.size());
    for (size_t i = in_order; i < keys.size(); ++i) g.breakdown.push_back(Term{keys[i], 0, ""});
  } else {
    std::vector<Term> ordered;
    ordered.reserve(keys.size());
    for (const auto& key : keys) {
      Term* t = FindTerm(&g.breakdown, key);
      ordered.push_back(t != nullptr ? std::move(*t) : Term{key, 0, ""});  // moved: each key is found once
    }
    g.breakdown = std::move(ordered);
  }

  int64_t allocated = 0;
  for (size_t i = 0; i < g.breakdown.size(); ++i) {
    if (i != kContext && i != kAllocator && i != kComm) allocated = checked::Add(allocated, g.breakdown[i].bytes);
  }
  // An inverse-search probe (a longer sequence, a larger batch) can build terms the pre-flight never
  // saw, since it checks the user's scenario: a peak past the per-device limit is an overflow, refused
  // as one (the probe "does not fit"), and the sums below start from the limit, not from beyond it.
  if (allocated > checked::kMaxDeviceBytes) {
    checked::ReportOverflow();
    allocated = checked::kOverflowBytes;
  }
  g.peak_allocated_bytes = allocated;
  if (!has_allocator) {
    const int64_t static_bytes = std::min(allocated, checked::Add(g.breakdown[kWeights].bytes, g.breakdown[kStates].bytes));
    Term* a = &g.breakdown[kAllocator];
    a->bytes = AllocatorOverheadBytes(scenario, static_bytes, allocated - static_bytes);
    if (explain) a->explain = a->bytes == 0 ? "no caching allocator on this device"
                               : "caching allocator reserve (block rounding, cached free segments): 1% of weights + states " +
                                     Gib(static_bytes) + " + " + std::to_string(static_cast<int>(DynamicReserveFraction(scenario) * 100 + 0.5)) + "% of the rest of the peak " +
                                     Gib(allocated - static_bytes) +
                                     " = " + Gib(a->bytes) + " (docs/accuracy.md, calibration)";
  }
  if (!has_context) {
    Term* c = &g.breakdown[kContext];
    c->bytes = CudaContextBytes(scenario, device);
    if (explain) c->explain = c->bytes == 0 ? "no CUDA context on this device"
                               : "CUDA context + lazily loaded kernels, outside the allocator: " + Gib(c->bytes) + " (docs/training.md section 7)";
  }
  if (!has_comm && !has_context && scenario.framework.device == Device::kCuda && !device.apple) {
    Term* c = &g.breakdown[kComm];
    c->bytes = comm.bytes;
    if (explain) c->explain = comm.bytes == 0 ? "no NCCL communicator on one GPU" : comm.explain;
  }
  // Segments reserved while the model loaded stay reserved (nothing calls empty_cache): when the
  // load reserved more than the step needs, it sets the reserve (train/load_phase.h).
  Term* reserve = &g.breakdown[kAllocator];
  if (!has_allocator && g.load_reserved_bytes > checked::Add(allocated, reserve->bytes)) {
    reserve->bytes = g.load_reserved_bytes - allocated;
    if (explain) reserve->explain = "segments the caching allocator reserved while the model loaded and keeps: " + g.load_explain +
                                    "; reserved - allocated at the step peak = " + Gib(reserve->bytes);
  }
  g.reserved_bytes = checked::Add(allocated, reserve->bytes);
  g.device_total_bytes = checked::Add(checked::Add(g.reserved_bytes, g.breakdown[kContext].bytes), g.breakdown[kComm].bytes);
  // The totals of an estimate stay within 2^62 B (util/checked_math.h); beyond, it is refused.
  if (g.device_total_bytes > checked::kMaxDeviceBytes) checked::ReportOverflow();
  g.headroom_bytes = g.capacity_bytes - g.device_total_bytes;
  g.fits = g.headroom_bytes >= 0;
}

}  // namespace vramplan
