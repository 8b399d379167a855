// The planner's cost of what an online RL step (GRPO, PPO) does besides the policy's training
// step: generating the completions, the no-grad log-prob passes, syncing the policy's weights into
// the rollout engine and waking a sleeping engine (docs/planner.md, "Cost model"). An estimate for
// ranking plans, as step_time.h.
#pragma once

#include <cstdint>

#include "planner/step_time.h"

namespace vramplan {

struct RolloutTime {
  double seconds = 0;      // per optimizer step, on the job's critical path (TRL runs the phases in turn)
  int64_t extra_gpus = 0;  // a vLLM server's GPUs (idle while the trainer runs, counted in GPU-seconds)
};

// Zero for objectives without a rollout.
RolloutTime RolloutStepTime(const Scenario& s, const ModelSpec& model, const ParamCounts& params, const HardwareRates& rates);

}  // namespace vramplan
