#include "planner/peak_band.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "planner/simulate.h"

namespace vramplan {
namespace {

int64_t AllocatorReserve(const GpuResult& g) {
  for (const Term& t : g.breakdown) {
    if (t.key == "allocator_overhead") return std::max<int64_t>(0, t.bytes);
  }
  return 0;
}

int64_t Spread(const GpuResult& g) { return static_cast<int64_t>(std::llround(kAllocatorSpread * static_cast<double>(AllocatorReserve(g)))); }

}  // namespace

void AddPeakBand(const Scenario& s, const Prepared& prepared, Result* r) {
  GpuResult& g = r->gpu;
  PeakBand& band = g.band;
  const int64_t spread = Spread(g);
  band.expected_bytes = g.device_total_bytes;
  band.low_bytes = g.device_total_bytes - spread;
  band.high_bytes = g.device_total_bytes + spread;
  band.basis = "allocator reserve +/- 50%";
  if (s.mode == Mode::kTrain) {
    r->training.batches = s.train.packing ? "packed" : "longest_batch";
    const int64_t typical = s.train.typical_seq_len;
    if (!s.train.packing && typical > 0 && typical < s.train.seq_len) {
      // Unpacked data: the run's peak is at its longest batch (seq_len, the expected figure); the
      // typical batch is shorter, and a run whose longest batch stays below seq_len peaks lower.
      Scenario t = s;
      t.train.seq_len = typical;
      if (std::optional<Result> p = Probe(t, prepared)) {
        r->training.typical_seq_len = typical;
        r->training.typical_peak_allocated_bytes = p->gpu.peak_allocated_bytes;
        r->training.typical_device_total_bytes = p->gpu.device_total_bytes;
        band.low_bytes = std::min(band.low_bytes, p->gpu.device_total_bytes - Spread(p->gpu));
        band.basis += "; low end at the typical batch (" + std::to_string(typical) + " tokens)";
      }
    }
  }
  const int64_t cap = g.capacity_bytes;
  band.verdict = band.high_bytes <= cap ? "fits" : band.low_bytes > cap ? "does_not_fit" : "tight";
}

}  // namespace vramplan
