#include "train/optimizer.h"

#include <algorithm>
#include <utility>

#include "format.h"

namespace vramplan {

OptimizerImpl DefaultOptimizerImpl(Device device) {
  return device == Device::kCuda ? OptimizerImpl::kForeach : OptimizerImpl::kForLoop;
}

namespace {

// bitsandbytes 8-bit states: 1 B per element + an fp32 absmax per 256-element block
// (bitsandbytes/optim/optimizer.py Optimizer8bit.init_state, blocksize 256); tensors with fewer
// than 4096 elements (min_8bit_size) keep 32-bit states.
int64_t Bnb8bitStateBytes(int64_t n, int states) {
  if (n < 4096) return int64_t{4} * n * states;
  return states * (n + 4 * ((n + 255) / 256));
}

// max_i (k * P_i + P_{i-1}): the single-tensor loop's temporaries of tensor i plus the previous
// tensor's result, still referenced when the next one is computed (measured, analysis.md section 5).
int64_t ForLoopPeak(const std::vector<TensorShape>& tensors, int64_t k, int64_t prev_factor) {
  int64_t best = 0, prev = 0;
  for (const TensorShape& t : tensors) {
    const int64_t n = t.Elements() * t.dtype_bytes;
    best = std::max(best, k * n + prev_factor * prev);
    if (t.count > 1) best = std::max(best, k * n + prev_factor * n);
    prev = n;
  }
  return best;
}

// foreach AdamW's intermediates, `k` parameter-sized lists per dtype group. PyTorch >= 2.0 runs
// the update once per (device, dtype) group (_group_tensors_by_device_and_dtype) with loop-local
// lists: while group j allocates its lists, group j-1's are still bound to the same names, so the
// peak is max over j of S(j-1)·k + S(j) (first list) and S(j-1)·(k-1) + S(j)·k (second).
// PyTorch 1.13 has no grouping: all lists at once.
int64_t ForeachPeak(const std::vector<TensorShape>& tensors, int64_t k, bool grouped) {
  std::vector<std::pair<int64_t, int64_t>> groups;  // (dtype bytes, state bytes), first-seen order
  for (const TensorShape& t : tensors) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == t.dtype_bytes || !grouped; });
    if (it == groups.end()) groups.emplace_back(t.dtype_bytes, 0), it = groups.end() - 1;
    it->second += t.Total() * t.dtype_bytes;
  }
  int64_t peak = 0, prev = 0;
  for (const auto& g : groups) {
    peak = std::max({peak, k * prev + g.second, (k - 1) * prev + k * g.second});
    prev = g.second;
  }
  return peak;
}

}  // namespace

OptimizerMemory ComputeOptimizerMemory(const TrainConfig& train, const PrecisionModel& prec,
                                       const std::vector<TensorShape>& tensors, bool legacy_torch,
                                       bool foreach_denom_copy, Device device, bool explain) {
  OptimizerMemory m;
  int64_t total = 0, largest = 0;
  int64_t count = 0;
  int64_t total_state_bytes = 0;  // one state element per parameter, in the parameter's dtype
  for (const TensorShape& t : tensors) {
    total += t.Total();
    total_state_bytes += t.Total() * t.dtype_bytes;
    largest = std::max(largest, t.Elements());
    count += t.count * t.repeat;
  }
  m.impl = train.optimizer_impl.value_or(DefaultOptimizerImpl(device));
  // The fp32 `step` counter per tensor lives on the CPU unless fused/capturable; PyTorch 1.13's CPU
  // run keeps it with the parameters (4 B per tensor, measured).
  const int64_t step_counters = (legacy_torch || m.impl == OptimizerImpl::kFused || device == Device::kCpu) ? 4 * count : 0;
  const int64_t master = prec.master * total;
  std::string master_note = master > 0 && explain ? " + fp32 master weights 4 B x " + WithCommas(total) : "";
  switch (train.optimizer) {
    case Optimizer::kAdamW: {
      m.state_bytes = 2 * total_state_bytes + step_counters + master;
      if (explain) {
        m.explain_states = "AdamW exp_avg + exp_avg_sq in the parameters' dtype: 2 x " + WithCommas(total_state_bytes) + " B (" +
                           WithCommas(total) + " trainable params)" + master_note;
      }
      if (m.impl == OptimizerImpl::kForeach) {
        // <= 2.0: exp_avg_sq_sqrt and denom = _foreach_add(exp_avg_sq_sqrt, eps), two group-wide
        // lists; >= 2.1: one, updated in place (pytorch#97712, #104898).
        const int64_t k = foreach_denom_copy ? 2 : 1;
        m.step_temporary_bytes = ForeachPeak(tensors, k, !legacy_torch);
        if (explain) {
          m.explain_temporary = "foreach AdamW: " + std::to_string(k) + " parameter-sized list" + (k > 1 ? "s" : "") +
                                " per dtype group = " + WithCommas(m.step_temporary_bytes) + " B at the peak";
        }
      } else if (m.impl == OptimizerImpl::kForLoop) {
        m.step_temporary_bytes = ForLoopPeak(tensors, 2, 1);
        if (explain) m.explain_temporary = "single-tensor AdamW: sqrt and quotient of the largest tensor (+ previous denom)";
      } else {
        if (explain) m.explain_temporary = "fused AdamW: no temporaries";
      }
      break;
    }
    case Optimizer::kAdamW8bit:
    case Optimizer::kPagedAdamW8bit: {
      int64_t states = 0;
      for (const TensorShape& t : tensors) states += t.count * t.repeat * Bnb8bitStateBytes(t.Elements(), 2);
      if (train.optimizer == Optimizer::kPagedAdamW8bit) {
        // Paged states (tensors >= 1e5 elements) live in cudaMallocManaged memory: not in torch's allocated.
        int64_t small = 0;
        for (const TensorShape& t : tensors) {
          if (t.Elements() < 100000) small += t.count * t.repeat * Bnb8bitStateBytes(t.Elements(), 2);
        }
        m.paged_bytes = states - small;
        states = small;
      }
      m.state_bytes = states + master;
      if (explain) m.explain_states = "bitsandbytes 8-bit AdamW: 2 x (1 B + 4 B/256 absmax) per param (fp32 below 4096 elements)" + master_note;
      if (explain) m.explain_temporary = "8-bit blockwise kernel updates in place";
      break;
    }
    case Optimizer::kAdafactor: {
      // transformers.optimization.Adafactor (beta1=None): factored second moment for matrices
      // (row + column vectors, fp32), full exp_avg_sq for vectors; params/grads upcast to fp32 in step().
      int64_t states = 0;
      for (const TensorShape& t : tensors) {
        states += t.count * t.repeat * ((t.rows > 1 && t.cols > 1 ? 4 * (t.rows + t.cols) : 4 * t.Elements()) + 4);  // + RMS scalar
      }
      m.state_bytes = states + step_counters + master;
      m.step_temporary_bytes = (prec.half ? 16 : 8) * largest;
      if (explain) m.explain_states = "Adafactor: fp32 row + column second-moment vectors per matrix, full for vectors" + master_note;
      if (explain) m.explain_temporary = "Adafactor step: fp32 copies of grad/param and the update of the largest tensor";
      break;
    }
    case Optimizer::kSgd:
      m.state_bytes = master;
      if (explain) m.explain_states = "SGD without momentum keeps no state" + master_note;
      if (explain) m.explain_temporary = "SGD updates in place";
      break;
    case Optimizer::kSgdMomentum:
      m.state_bytes = total_state_bytes + master;
      if (explain) m.explain_states = "SGD momentum buffer: " + WithCommas(total_state_bytes) + " B" + master_note;
      if (explain) m.explain_temporary = "SGD updates in place";
      break;
    case Optimizer::kLion:
      m.state_bytes = total_state_bytes + master;
      // update = exp_avg.clone().lerp_(grad).sign_(): one clone, referenced until the next tensor's.
      m.step_temporary_bytes = ForLoopPeak(tensors, 1, 1);
      if (explain) m.explain_states = "Lion exp_avg: " + WithCommas(total_state_bytes) + " B" + master_note;
      if (explain) m.explain_temporary = "Lion (single tensor): interpolation and sign of the largest tensor";
      break;
  }
  if (device == Device::kCpu && legacy_torch) {
    // PyTorch 1.13 on the CPU (the measured fixtures), scalars and handles the profiler sees as
    // tensors: AdamW's bias correction divides by a Python float, wrapped into a float64 scalar and
    // cast to the parameter dtype (8 + 2/4 B, live at the `div` / `_foreach_add` peak); SGD's peak is
    // the optimizer's record_function handle (288 B) and a 4-B zeros (measured: SGD rows of
    // tests/fixtures/training/measured_cpu*.json, the top temporaries of `Optimizer.step#SGD.step`).
    int64_t dtype = 0;
    for (const TensorShape& t : tensors) dtype = std::max(dtype, t.dtype_bytes);
    if (train.optimizer == Optimizer::kAdamW && m.impl != OptimizerImpl::kFused && count > 0) m.step_temporary_bytes += 8 + dtype;
    if (train.optimizer == Optimizer::kSgd || train.optimizer == Optimizer::kSgdMomentum) m.step_temporary_bytes += 292;
  }
  if (prec.master > 0) {
    // DeepSpeed/Megatron convert the 16-bit grads to an fp32 copy for the update.
    m.step_temporary_bytes += 4 * total;
    if (explain) m.explain_temporary += " + fp32 gradient copy 4 B x " + WithCommas(total);
  }
  return m;
}

}  // namespace vramplan
