// Training's inverse questions: the largest micro-batch (at the scenario's sequence length) and
// the longest sequence (at its micro-batch) that still fit the GPU, and the fewest GPUs the
// scenario fits on when only data parallelism grows. Exact by binary search over the same step
// simulation (memory is monotone in each, see SmallestGpusFitting for the GPU count); probes are the
// pipeline's simulation without explain strings or the timeline (planner/simulate.h), from the
// estimate's preparation.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>

#include <optional>

#include "parallel/data_parallel.h"
#include "planner/context_limit_check.h"
#include "planner/simulate.h"
#include "train/train_capacity.h"
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

// Smallest total GPU count (a multiple of mp = tp x pp x cp, at most max_gpus and kMaxGpus) at which `work`
// fits when only the data-parallel degree dp = gpus / mp grows, under its own sharding; 0 if none.
// Monotonicity: one rank's bytes depend on dp only through DataParallel::Shard, ceil(bytes / dp)
// (parallel/data_parallel.h), which is non-increasing in dp, and through what switches on once the
// run has more than one GPU (NCCL buffers, gpu/device_overhead.cpp; the multi-GPU model load,
// train/load_phase.cpp), the same for every gpus > 1. So the device total is non-increasing over
// dp >= 2, but dp = 1 may be smaller than dp = 2: probe dp = 1 and dp = 2, then search [3, max]
// (tests/core/train_capacity_test.cpp checks the monotonicity on a grid and the answer against a
// linear scan). Without sharding (no ZeRO/FSDP) nothing shrinks with dp: dp >= 3 fits only if
// dp = 2 does, so two probes answer. With sharding, each moment holds A + B / dp (A: what every
// rank holds whole, B: what is divided, give or take the ceil() of each shard) and the peak is the
// highest of them: the guesses are where the A + B / dp line through the last two probes meets the
// capacity. Once two probes lie where one moment holds the peak the line is that moment's, and its
// guess is off by the ceil() alone; three guesses in a row that fail to halve the bracket are
// followed by a gallop (nothing has fit yet) or a bisection step, which keeps the worst case
// logarithmic. ~5 step simulations instead of ~22 (the dp = 1 and 2 probes included).
// `own_gpus`/`own_total`: a GPU count whose device total is known already (the estimate's own), or 0.

int64_t SmallestGpusFitting(Scenario work, const Prepared& prepared, int64_t capacity, int64_t own_gpus, int64_t own_total, int64_t max_gpus) {
  const int64_t mp = std::max<int64_t>(1, work.parallel.tp * work.parallel.pp * work.parallel.cp);
  const int64_t max_dp = std::min(kMaxGpus, max_gpus) / mp;
  auto total = [&](int64_t dp) {
    if (dp * mp == own_gpus) return own_total;
    work.parallel.gpus = dp * mp;
    return DeviceTotal(work, prepared);
  };
  if (max_dp < 1) return 0;
  const int64_t t1 = total(1);
  if (t1 <= capacity) return mp;
  if (max_dp < 2) return 0;
  const int64_t t2 = total(2);
  if (t2 <= capacity) return 2 * mp;
  if (!DataParallelFor(work.parallel, 2).shard_states || max_dp < 3) return 0;
  // invariant: !fits(bad); fits(good), or good == max_dp + 1 while no probe has fit (if the bracket
  // closes there, no GPU count does). (x0, y0) and (x1, y1): the last two probes; the first line
  // runs through dp = 1 and 2 (dp = 1 lacks the multi-GPU buffers: it only steers the first guess).
  int64_t bad = 2, good = max_dp + 1;
  int64_t x0 = 1, y0 = t1, x1 = 2, y1 = t2;
  int slow = 0;  // model guesses in a row that did not halve the bracket
  while (good - bad > 1) {
    // The fallback: a gallop up while nothing has fit, a bisection once something has.
    int64_t x = good > max_dp ? std::min(max_dp, 2 * bad) : bad + (good - bad) / 2;
    if (slow < 3) {
      // The line A + B / dp through the last two probes, and the dp at which it meets the capacity.
      const double b = (static_cast<double>(y0) - static_cast<double>(y1)) / (1.0 / static_cast<double>(x0) - 1.0 / static_cast<double>(x1));
      const double a = static_cast<double>(y1) - b / static_cast<double>(x1);
      const double room = static_cast<double>(capacity) - a;
      if (b > 0 && room > 0) x = static_cast<int64_t>(std::min(std::ceil(b / room), static_cast<double>(max_dp)));
      else if (b > 0) x = good - 1;  // the line never meets the capacity: the largest candidate
      x = std::max(bad + 1, std::min(x, good - 1));
    }
    const int64_t width = good - bad;
    const int64_t y = total(x);
    if (y <= capacity) good = x;
    else bad = x;
    x0 = x1, y0 = y1, x1 = x, y1 = y;
    slow = slow < 3 && 2 * (good - bad) > width ? slow + 1 : 0;
  }
  return good > max_dp ? 0 : good * mp;
}

void SolveTrainingCapacity(const Scenario& s, const Prepared& prepared, Result* r) {
  Scenario work = s;  // one copy: copying a Scenario copies its ModelSpec
  TrainingCapacity& c = r->training;
  c.present = true;
  const int64_t capacity = s.gpu.memory_bytes;
  // The scenario itself is not probed again: its device total is the estimate's (the same
  // simulation; explain strings and the timeline change no figure, tests/core/timeline_test.cpp).
  const int64_t own_total = r->gpu.device_total_bytes;
  c.max_micro_batch_fits = LargestFitting(kMaxMicroBatch, std::max<int64_t>(1, s.train.micro_batch_size), capacity, [&](int64_t b) {
    if (b == s.train.micro_batch_size) return own_total;
    work.train.micro_batch_size = b;
    return DeviceTotal(work, prepared);
  });
  work.train.micro_batch_size = s.train.micro_batch_size;
  // Never beyond the model's own context limit (planner/context_limit_check.h).
  const int64_t seq_hi = CapAtModelContext(s.model, kMaxSeq);
  c.max_seq_len_fits = LargestFitting(seq_hi, std::max<int64_t>(1, s.train.seq_len), capacity, [&](int64_t len) {
    if (len == s.train.seq_len) return own_total;
    work.train.seq_len = len;
    return DeviceTotal(work, prepared);
  });
  c.max_seq_len_bound = SearchBound(s.model, c.max_seq_len_fits, seq_hi);
  work.train.seq_len = s.train.seq_len;
  c.min_gpus = SmallestGpusFitting(work, prepared, capacity, s.parallel.gpus, own_total, kMaxGpus);
  if (c.min_gpus == 0 && s.parallel.zero < 3 && !s.parallel.fsdp) {
    work.parallel.zero = 3;
    c.min_gpus_zero3 = SmallestGpusFitting(work, prepared, capacity, /*own_gpus=*/0, 0, kMaxGpus);
  }
}

}  // namespace vramplan
