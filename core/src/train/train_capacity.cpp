// Training's inverse questions: the largest micro-batch (at the scenario's sequence length) and
// the longest sequence (at its micro-batch) that still fit the GPU. Exact by binary search over the
// same step simulation (memory is monotone in both); probes are the pipeline's simulation
// without explain strings or the timeline (planner/simulate.h), from the estimate's preparation.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>

#include <optional>

#include "planner/simulate.h"
#include "train/train_step.h"
#include "util/size_limits.h"

namespace vramplan {
namespace {

constexpr int64_t kMaxMicroBatch = kMaxBatch;
constexpr int64_t kMaxSeq = kMaxTokens;

// The search domain: micro-batches the validator accepts (at most 2^31 tokens, scenario_json.cpp)
// whose byte counts are representable (the probe's pre-flight, util/size_limits.h, which replaced
// fixed element-count caps here). Beyond either, a probe "does not fit": capacities are at most
// 2^50 B. Returns the bytes the device would show (nvidia-smi), or INT64_MAX outside the domain or
// when the engines' checked arithmetic overflowed.
int64_t DeviceTotal(const Scenario& s, const Prepared& prepared) {
  const double tokens = static_cast<double>(s.train.micro_batch_size) * static_cast<double>(s.train.seq_len);
  if (tokens > 2147483648.0) return INT64_MAX;
  std::optional<Result> r = Probe(s, prepared);
  return r ? r->gpu.device_total_bytes : INT64_MAX;
}

// Largest x in [1, hi] with total(x) <= capacity, memory being monotone in x. Starts from a linear
// extrapolation of two probes and gallops/bisects from there: a handful of simulations instead of
// ~log2(hi).
template <typename Total>
int64_t LargestFitting(int64_t hi, int64_t x0, int64_t capacity, Total total) {
  auto fits = [&](int64_t x) { return total(x) <= capacity; };
  if (!fits(1)) return 0;
  x0 = std::max<int64_t>(1, std::min(x0, hi / 2));
  const int64_t x1 = std::min(hi, 2 * x0);
  const double m0 = static_cast<double>(total(x0)), m1 = static_cast<double>(total(x1));
  int64_t guess = x1;
  if (m1 > m0 && x1 > x0) {
    const double slope = (m1 - m0) / static_cast<double>(x1 - x0);
    guess = static_cast<int64_t>(std::min<double>(static_cast<double>(hi), static_cast<double>(x0) + (static_cast<double>(capacity) - m0) / slope));
  }
  guess = std::max<int64_t>(1, std::min(guess, hi));
  int64_t lo, up;  // invariant: fits(lo), !fits(up) (up may be hi + 1)
  if (fits(guess)) {
    lo = guess;
    int64_t step = std::max<int64_t>(1, guess / 64);
    up = hi + 1;
    while (lo < hi) {
      const int64_t next = std::min(hi, lo + step);
      if (!fits(next)) {
        up = next;
        break;
      }
      lo = next;
      step *= 2;
    }
    if (lo == hi) return hi;
  } else {
    up = guess;
    int64_t step = std::max<int64_t>(1, guess / 64);
    lo = 1;
    while (up > 1) {
      const int64_t next = std::max<int64_t>(1, up - step);
      if (fits(next)) {
        lo = next;
        break;
      }
      up = next;
      step *= 2;
    }
  }
  while (up - lo > 1) {
    const int64_t mid = lo + (up - lo) / 2;
    if (fits(mid)) lo = mid;
    else up = mid;
  }
  return lo;
}

}  // namespace

void SolveTrainingCapacity(const Scenario& s, const Prepared& prepared, Result* r) {
  Scenario work = s;  // one copy: copying a Scenario copies its ModelSpec
  TrainingCapacity& c = r->training;
  c.present = true;
  const int64_t capacity = s.gpu.memory_bytes;
  c.max_micro_batch_fits = LargestFitting(kMaxMicroBatch, std::max<int64_t>(1, s.train.micro_batch_size), capacity, [&](int64_t b) {
    work.train.micro_batch_size = b;
    return DeviceTotal(work, prepared);
  });
  work.train.micro_batch_size = s.train.micro_batch_size;
  c.max_seq_len_fits = LargestFitting(kMaxSeq, std::max<int64_t>(1, s.train.seq_len), capacity, [&](int64_t len) {
    work.train.seq_len = len;
    return DeviceTotal(work, prepared);
  });
}

}  // namespace vramplan
