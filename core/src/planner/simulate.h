// The pipeline, written once: topology (the rank roles, parallel/topology.h) -> per-rank simulate
// (the training step or the inference engine, through the role's shard) -> device overheads (CUDA
// context, allocator reserve) -> fits -> ranks[] and host RAM per node. The estimate (api/), both inverse searches
// (train/train_capacity.cpp, inference/inverse.cpp) and the planner all run it.
#pragma once

#include <optional>

#include "planner/prepared.h"
#include "vramplan/result.h"
#include "vramplan/scenario.h"

namespace vramplan {

struct SimulateOptions {
  bool explain = false;   // explain strings, the timeline's labels (and the inference engines' warnings)
  bool inverse = false;   // the inverse searches (max micro-batch/sequence; max context/batch/format/GPUs)
  bool warnings = true;   // the inference engines' warnings even without explain (they ride on explain there)
  bool ranks = false;     // ranks[] and host RAM per node (an estimate's answer; probes only need gpu)
};

// Runs in the caller's checked::OverflowScope; `r` holds the GPU's id, name and capacity.
void Simulate(const Scenario& s, const Prepared& prepared, const SimulateOptions& options, Result* r);

// One probe of an inverse search: the pre-flight size check, its own overflow scope and the
// simulation without explain, warnings or searches. nullopt when its byte counts would not be
// representable: such a probe does not fit (capacities are at most 2^50 B).
std::optional<Result> Probe(const Scenario& s, const Prepared& prepared);
// The same with the caller's simulate options (the planner keeps the engines' warnings, and ranks
// when host RAM is budgeted).
std::optional<Result> Probe(const Scenario& s, const Prepared& prepared, const SimulateOptions& options);

}  // namespace vramplan
