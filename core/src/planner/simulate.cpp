#include "planner/simulate.h"

#include "gpu/device_overhead.h"
#include "inference/inference.h"
#include "train/train_step.h"
#include "util/checked_math.h"
#include "util/size_limits.h"

namespace vramplan {

void Simulate(const Scenario& s, const Prepared& prepared, const SimulateOptions& options, Result* r) {
  if (s.mode == Mode::kTrain) {
    EstimateTraining(s, prepared, r, options.explain);
    if (options.inverse) SolveTrainingCapacity(s, prepared, r);
  } else {
    EstimateInference(s, prepared, r, options.explain || options.warnings, options.inverse);
  }
  ApplyDeviceOverheads(s, prepared.device, r, options.explain);
}

std::optional<Result> Probe(const Scenario& s, const Prepared& prepared) {
  if (!WithinSizeLimits(s, prepared.sizes)) return std::nullopt;
  checked::OverflowScope overflow;
  Result r;
  r.gpu.capacity_bytes = s.gpu.memory_bytes;
  SimulateOptions options;
  options.warnings = false;
  Simulate(s, prepared, options, &r);
  if (overflow.overflowed()) return std::nullopt;
  return r;
}

}  // namespace vramplan
