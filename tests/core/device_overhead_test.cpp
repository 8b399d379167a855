// gpu/device_overhead.cpp: what a GPU adds beyond the tensors. Expected bytes are written out from
// the sources the header cites: PyTorch's default cuBLAS workspace config ":4096:2:16:8" (two
// 4096 KiB chunks and eight 16 KiB chunks) and ":4096:8" on Hopper (CublasHandlePool.cpp), the
// documented context and NCCL sizes (docs/training.md section 7), and the reserve fractions of
// docs/accuracy.md (1% of weights + states, 10% of the rest; 25% with variable shapes; 2% with
// expandable segments).
#include "gpu/device_overhead.h"
#include "parallel/comm_buffers.h"
#include "parallel/topology.h"
#include "util/checked_math.h"

#include <cstdint>

#include <gtest/gtest.h>

#include "test_support.h"

namespace vramplan {
namespace device_overhead_test {

constexpr int64_t kKiB = 1024, kMiBytes = 1024 * 1024;

// The GPU's catalogue facts are looked up once per estimate (planner/prepared.h); here per call.
int64_t Cublas(const Scenario& s) { return CublasWorkspaceBytes(s, DeviceTraitsFor(s.gpu.id)); }
int64_t Context(const Scenario& s) { return CudaContextBytes(s, DeviceTraitsFor(s.gpu.id)); }
int64_t Comm(const Scenario& s) { return CommBuffersOf(s, TopologyOf(s), DeviceTraitsFor(s.gpu.id), 0, false).bytes; }
void Apply(const Scenario& s, Result* r, bool explain) {
  ApplyDeviceOverheads(s, DeviceTraitsFor(s.gpu.id), CommBuffersOf(s, TopologyOf(s), DeviceTraitsFor(s.gpu.id), 0, explain), r, explain);
}

Scenario OnGpu(const char* id, int64_t gpus = 1) {
  Scenario s;
  s.gpu.id = id;
  s.gpu.memory_bytes = 80 * 1024 * kMiBytes;
  s.parallel.gpus = gpus;
  return s;
}

TEST(DeviceOverhead, CublasWorkspaceFollowsTheArchitecture) {
  EXPECT_EQ(Cublas(OnGpu("a100-sxm-80gb")), 2 * 4096 * kKiB + 8 * 16 * kKiB);  // 8,519,680
  EXPECT_EQ(Cublas(OnGpu("a100-sxm-80gb")), 8519680);
  EXPECT_EQ(Cublas(OnGpu("h100-sxm-80gb")), 8 * 4096 * kKiB);  // 32 MiB
  Scenario cpu = OnGpu("h100-sxm-80gb");
  cpu.framework.device = Device::kCpu;
  EXPECT_EQ(Cublas(cpu), 0);
}

TEST(DeviceOverhead, ContextIsLazyOrEagerAndNcclIsItsOwnTerm) {
  EXPECT_EQ(Context(OnGpu("a100-sxm-80gb")), 500 * kMiBytes);
  EXPECT_EQ(Comm(OnGpu("a100-sxm-80gb")), 0);  // one GPU: no communicator
  EXPECT_EQ(Context(OnGpu("a100-sxm-80gb", 8)), 500 * kMiBytes);
  // Data parallelism on an NVLink board: one collective communicator, 32 channels x 2 x 10 MiB.
  EXPECT_EQ(Comm(OnGpu("a100-sxm-80gb", 8)), 640 * kMiBytes);
  Scenario eager = OnGpu("a100-sxm-80gb");
  eager.framework.cuda_lazy_loading = false;
  EXPECT_EQ(Context(eager), 1343 * kMiBytes);
  eager.framework.device = Device::kCpu;
  EXPECT_EQ(Context(eager), 0);
  // transformers' device_map="auto" (inference, tp = 1) is one process: no NCCL communicator;
  // with tensor parallelism each GPU's process joins one (inference keeps the flat 512 MiB).
  Scenario split = OnGpu("a100-sxm-80gb", 4);
  split.mode = Mode::kInference;
  EXPECT_EQ(Comm(split), 0);
  split.parallel.tp = 4;
  EXPECT_EQ(Context(split), 500 * kMiBytes);
  EXPECT_EQ(Comm(split), 512 * kMiBytes);
}

TEST(DeviceOverhead, AllocatorReserveFractions) {
  const int64_t static_bytes = 10'000'000'000, dynamic_bytes = 4'000'000'000;
  Scenario s = OnGpu("h100-sxm-80gb");
  EXPECT_EQ(AllocatorOverheadBytes(s, static_bytes, dynamic_bytes), 100'000'000 + 400'000'000);
  s.framework.variable_shapes = true;
  EXPECT_EQ(AllocatorOverheadBytes(s, static_bytes, dynamic_bytes), 100'000'000 + 1'000'000'000);
  s.framework.expandable_segments = true;  // expandable segments win over variable shapes
  EXPECT_EQ(AllocatorOverheadBytes(s, static_bytes, dynamic_bytes), 100'000'000 + 80'000'000);
  s.framework.device = Device::kCpu;
  EXPECT_EQ(AllocatorOverheadBytes(s, static_bytes, dynamic_bytes), 0);
}

// The totals compose: peak = the tensor terms, reserved = peak + reserve, device = reserved +
// context, headroom = capacity - device; fits when headroom >= 0.
TEST(DeviceOverhead, TotalsComposeAndDecideTheFit) {
  Scenario s = OnGpu("h100-sxm-80gb");
  Result r;
  r.gpu.capacity_bytes = s.gpu.memory_bytes;
  r.gpu.breakdown = {Term{"weights", 16'000'000'000, ""}, Term{"optimizer_states", 4'000'000'000, ""},
                     Term{"activations", 10'000'000'000, ""}};
  Apply(s, &r, /*explain=*/false);
  const int64_t peak = 30'000'000'000;
  const int64_t reserve = 200'000'000 + 1'000'000'000;  // 1% of 20e9 + 10% of 10e9
  EXPECT_EQ(r.gpu.peak_allocated_bytes, peak);
  EXPECT_EQ(r.gpu.reserved_bytes, peak + reserve);
  EXPECT_EQ(r.gpu.device_total_bytes, peak + reserve + 500 * kMiBytes);
  EXPECT_EQ(r.gpu.headroom_bytes, s.gpu.memory_bytes - r.gpu.device_total_bytes);
  EXPECT_TRUE(r.gpu.fits);
  EXPECT_EQ(r.gpu.breakdown.size(), BreakdownKeys().size());  // every key, in the fixed order
  EXPECT_EQ(testing_support::GpuTerm(r, "kv_cache"), 0);

  // One byte over the capacity does not fit.
  Result tight = r;
  tight.gpu.breakdown = {Term{"weights", 16'000'000'000, ""}};
  tight.gpu.capacity_bytes = 16'000'000'000 + 160'000'000 + 500 * kMiBytes - 1;
  Apply(s, &tight, false);
  EXPECT_EQ(tight.gpu.headroom_bytes, -1);
  EXPECT_FALSE(tight.gpu.fits);
}

// A model load that reserved more than the step needs keeps those segments (nothing calls
// empty_cache): the reserve becomes load_reserved - peak.
TEST(DeviceOverhead, LoadReservedSegmentsSetTheReserve) {
  Scenario s = OnGpu("h100-sxm-80gb");
  Result r;
  r.gpu.capacity_bytes = s.gpu.memory_bytes;
  r.gpu.breakdown = {Term{"weights", 1'000'000'000, ""}};
  r.gpu.load_reserved_bytes = 3'000'000'000;
  Apply(s, &r, false);
  EXPECT_EQ(r.gpu.reserved_bytes, 3'000'000'000);
  EXPECT_EQ(testing_support::GpuTerm(r, "allocator_overhead"), 2'000'000'000);
}

// An inverse-search probe can build terms the pre-flight never saw (found by the scenario fuzzer: a
// Qwen3-VL-MoE serving probe with 8.4e18 B of terms, whose reserve then overflowed int64 in the
// load-reserve comparison). A peak past the per-device limit is an overflow, flagged and clamped,
// and nothing after it wraps.
TEST(DeviceOverhead, APeakPastTheDeviceLimitIsFlaggedNotWrapped) {
  Scenario s = OnGpu("h100-sxm-80gb");
  Result r;
  r.gpu.capacity_bytes = s.gpu.memory_bytes;
  r.gpu.breakdown = {Term{"weights", 1'000'000'000, ""}, Term{"activations", 8'408'783'620'193'994'750, ""}};
  r.gpu.load_reserved_bytes = 3'000'000'000;
  checked::OverflowScope scope;
  Apply(s, &r, false);
  EXPECT_TRUE(scope.overflowed());
  EXPECT_EQ(r.gpu.peak_allocated_bytes, checked::kOverflowBytes);
  EXPECT_GE(r.gpu.reserved_bytes, r.gpu.peak_allocated_bytes);
}

}  // namespace
}  // namespace vramplan
