// The planner's search (docs/planner.md, "Search, ranking and exactness"): the Pareto front of
// the plans that fit, over (cost: lower is better, fidelity: higher is better), each front point
// the plan with the fewest changes among its ties. Exact over the lever space of levers.h:
// tests/core/planner_test.cpp compares it with BruteForceFront on small spaces.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "planner/levers.h"
#include "planner/prepared.h"
#include "planner/step_time.h"
#include "vramplan/result.h"
#include "vramplan/scenario.h"

namespace vramplan {

enum class RankBy { kBalanced, kFidelity, kCost };

struct PlanRequest {
  Scenario scenario;
  PlanBudget budget;
  LeverSwitches levers;
  int64_t min_headroom_bytes = 0;  // a plan fits when its headroom is at least this
  int64_t max_plans = 0;           // 0: the whole front
  RankBy rank_by = RankBy::kBalanced;
};

struct Plan {
  Scenario scenario;
  Result result;  // the estimate without explain strings
  StepTime time;
  double cost = 1;          // GPU-seconds per token relative to the user's scenario (on the budget's GPU)
  int fidelity = 100;       // 100 minus the documented losses
  double score = 0;         // the ranking key (lower first)
  std::vector<std::string> levers;    // the options changed, in words
  std::vector<std::string> gave_up;   // what fidelity was spent on
};

struct PlanSearch {
  Scenario base;            // the user's scenario on the budget's GPU
  Result base_result;
  StepTime base_time;
  bool base_fits = false;
  std::vector<Plan> plans;  // the front, ranked
  int64_t combinations = 0; // outer lever combinations in the space
  int64_t estimates = 0;    // estimates the search ran
  std::vector<std::string> notes;
  // The search's preparation of the model on the budget's GPU and the GPU's rates, for the
  // reply's extras (fewest GPUs) to estimate without preparing again.
  std::shared_ptr<const Prepared> prepared;
  HardwareRates rates;
  Issues errors;
};

PlanSearch SearchPlans(const PlanRequest& request);

// The oracle: every combination and every inner value estimated, the exact front (cost, fidelity)
// as (cost, fidelity) pairs, ascending cost.
std::vector<std::pair<double, int>> BruteForceFront(const PlanRequest& request, int64_t* estimates = nullptr);

}  // namespace vramplan
