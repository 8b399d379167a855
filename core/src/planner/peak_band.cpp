#include "planner/peak_band.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "format.h"
#include "gpu/allocator_spread.h"
#include "planner/simulate.h"

namespace vramplan {
namespace {

constexpr int64_t kMiB = 1024 * 1024;

int64_t TermBytes(const GpuResult& g, const char* key) {
  for (const Term& t : g.breakdown) {
    if (t.key == key) return std::max<int64_t>(0, t.bytes);
  }
  return 0;
}

int64_t Fraction(double f, int64_t bytes) { return static_cast<int64_t>(std::llround(f * static_cast<double>(bytes))); }

struct Ends {
  int64_t low = 0;
  int64_t high = 0;
};

// A training estimate's ends: the expected device total with its reserve and its CUDA context each
// replaced by the lowest and the highest a published process showed (gpu/allocator_spread.h), never
// narrower than the expected terms themselves. A reserve set by the load replay (segments kept from
// torchtune 0.1's init, train/load_phase.h) follows the allocator's rules, not a fraction: it stays.
Ends TrainingEnds(const Scenario& s, const GpuResult& g) {
  const int64_t reserve = TermBytes(g, "allocator_overhead");
  const int64_t context = TermBytes(g, "cuda_context");
  const int64_t allocated = g.peak_allocated_bytes;
  const bool replayed = g.load_reserved_bytes > 0 && g.load_reserved_bytes >= g.reserved_bytes;
  const int64_t reserve_low = reserve == 0 || replayed ? reserve : std::min(reserve, Fraction(kReserveRatioLow, allocated));
  const int64_t reserve_high = reserve == 0 || replayed ? reserve : std::max(reserve, Fraction(kReserveRatioHigh, allocated));
  const bool lazy = s.framework.cuda_lazy_loading;
  const int64_t context_low = context == 0 ? 0 : std::min(context, (lazy ? kContextLazyLowMiB : kContextEagerLowMiB) * kMiB);
  const int64_t context_high = context == 0 ? 0 : std::max(context, (lazy ? kContextLazyHighMiB : kContextEagerHighMiB) * kMiB);
  return {g.device_total_bytes - (reserve - reserve_low) - (context - context_low),
          g.device_total_bytes + (reserve_high - reserve) + (context_high - context)};
}

// Inference: the engines' own pools set their terms (vLLM); half the modeled reserve either way.
Ends InferenceEnds(const GpuResult& g) {
  const int64_t spread = Fraction(kAllocatorSpread, TermBytes(g, "allocator_overhead"));
  return {g.device_total_bytes - spread, g.device_total_bytes + spread};
}

Ends BandEnds(const Scenario& s, const GpuResult& g) { return s.mode == Mode::kTrain ? TrainingEnds(s, g) : InferenceEnds(g); }

std::string TrainingBasis(const Scenario& s) {
  const bool lazy = s.framework.cuda_lazy_loading;
  return "allocator reserve " + Hundredths(static_cast<uint64_t>(std::llround(kReserveRatioLow * 10000))) + "-" +
         Hundredths(static_cast<uint64_t>(std::llround(kReserveRatioHigh * 10000))) +
         "% of the peak allocated, CUDA context " + std::to_string(lazy ? kContextLazyLowMiB : kContextEagerLowMiB) + "-" +
         std::to_string(lazy ? kContextLazyHighMiB : kContextEagerHighMiB) + " MiB (published readings, docs/training.md section 7)";
}

}  // namespace

void AddPeakBand(const Scenario& s, const Prepared& prepared, Result* r) {
  GpuResult& g = r->gpu;
  PeakBand& band = g.band;
  const Ends ends = BandEnds(s, g);
  band.expected_bytes = g.device_total_bytes;
  band.low_bytes = ends.low;
  band.high_bytes = ends.high;
  band.basis = s.mode == Mode::kTrain ? TrainingBasis(s) : "allocator reserve +/- 50%";
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
        band.low_bytes = std::min(band.low_bytes, BandEnds(t, p->gpu).low);
        band.basis += "; low end at the typical batch (" + std::to_string(typical) + " tokens)";
      }
    }
  }
  const int64_t cap = g.capacity_bytes;
  band.verdict = band.high_bytes <= cap ? "fits" : band.low_bytes > cap ? "does_not_fit" : "tight";
}

}  // namespace vramplan
