// "How many GPUs of this kind, with the cheapest parallel layout" (docs/planner.md, "Fewest GPUs"):
// the smallest GPU count of the budget's kind at which the job fits as configured except for its
// parallel layout, searched over the layouts its trainer runs (HF trainer: DDP and DeepSpeed
// ZeRO-1/2/3; Megatron / torchtitan: tensor x pipeline degrees, and Megatron's distributed
// optimizer), and among the layouts that fit at that count the cheapest by the step-time model.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "planner/prepared.h"
#include "planner/step_time.h"
#include "vramplan/result.h"
#include "vramplan/scenario.h"

namespace vramplan {

struct GpuLayout {
  Scenario scenario;  // the user's scenario with that GPU count and layout
  Result result;      // its estimate (no explain strings)
  StepTime time;
  double cost = 1;    // GPU-seconds per token relative to the user's scenario
  std::string label;  // "8 GPUs, DeepSpeed ZeRO-3 (DP 8)"
};

struct FewestGpus {
  int64_t gpus = 0;             // data parallel only, as configured (the estimate's training.min_gpus / inference.min_gpus); 0: none
  int64_t gpus_with_zero3 = 0;  // training without sharding that fits on no count as configured: with ZeRO-3 (training.min_gpus_zero3)
  std::optional<GpuLayout> layout;  // training: the fewest GPUs over the layouts, the cheapest layout at that count
  int64_t layouts = 0;          // layouts tried
};

// `base`: the user's scenario on the budget's GPU (model included), `base_total` its device total.
FewestGpus FindFewestGpus(const Scenario& base, int64_t base_total, const Prepared& prepared, const HardwareRates& rates,
                          double base_gpu_seconds_per_token);

}  // namespace vramplan
