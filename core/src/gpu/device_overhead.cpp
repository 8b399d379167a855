#include "gpu/device_overhead.h"

namespace vramplan {

void ApplyDeviceOverheads(const Scenario& scenario, Result* result) {
  (void)scenario;
  GpuResult& g = result->gpu;
  int64_t allocated = 0;
  for (const auto& t : g.breakdown) {
    if (t.key != "cuda_context" && t.key != "allocator_overhead") allocated += t.bytes;
  }
  g.peak_allocated_bytes = allocated;
  g.reserved_bytes = allocated;
  g.device_total_bytes = allocated;
  g.headroom_bytes = g.capacity_bytes - g.device_total_bytes;
  g.fits = g.headroom_bytes >= 0;
}

}  // namespace vramplan
