// DeepSpeed ZeRO-3: the parameters one rank holds gathered (in full) at the step's peak, the turn
// from the forward to the backward. DeepSpeed v0.16-0.17 (deepspeed/runtime/zero/
// partitioned_param_coordinator.py, PartitionedParameterCoordinator) gathers each leaf module's
// own parameters before it runs (fetch_sub_module) and, once the step's module trace is known:
//   - prefetch: after fetching a module it gathers the next not-yet-gathered parameters of the
//     trace while fewer than min(stage3_prefetch_bucket_size, stage3_max_live_parameters -
//     gathered) elements are in flight (_fetch_sub_module_impl; the last one may overshoot);
//   - reuse distance: release_sub_module keeps a parameter gathered when the modules run before its
//     next use hold fewer than stage3_max_reuse_distance elements (__params_to_release). The trace
//     covers the forward and the backward, so a module of the forward's tail is reused by its own
//     backward after the rest of the forward and the same modules' backward: after 2 x F elements,
//     F being the parameters that follow it in the forward. At the turn, every module with
//     2 x F < max_reuse_distance is still gathered: the forward's last max_reuse_distance / 2
//     elements (to within one module), and always lm_head, which runs there.
//     (Under gradient checkpointing a recomputed layer stays gathered from its recompute to its
//     backward by the same rule: at most a layer, never more than that tail.)
//   - persistence: parameters of at most stage3_param_persistence_threshold elements are never
//     partitioned (deepspeed/runtime/zero/parameter_offload.py mark_persistent_parameters): the
//     norms' weights, every rank holds all of them.
// Defaults: deepspeed/runtime/zero/config.py DeepSpeedZeroConfig (prefetch 5e7, persistence 1e5,
// max live 1e9, max reuse distance 1e9).
#pragma once

#include <cstdint>
#include <vector>

#include "vramplan/model_spec.h"
#include "vramplan/scenario.h"

namespace vramplan {

struct Zero3Knobs {
  int64_t prefetch_bucket = 50'000'000;
  int64_t persistence_threshold = 100'000;
  int64_t max_live = 1'000'000'000;
  int64_t max_reuse_distance = 1'000'000'000;
};
Zero3Knobs Zero3KnobsOf(const ParallelConfig& p);

// One leaf module as ZeRO-3 fetches it: its own parameters' element counts (weight, bias), in
// the forward's order. Hooks sit on every module; a module's own parameters are gathered together
// (iter_params(recurse=False)), so the unit is a Linear, a norm, the embedding, lm_head.
struct Zero3Module {
  int64_t weight = 0;
  int64_t bias = 0;
  int64_t Params() const { return weight + bias; }
};

// The forward's leaf modules of `model`: the embedding, every layer's norms and linears (one
// module per expert), the final norm and lm_head (tied: the embedding's parameter, gathered for
// lm_head; the embedding module then holds none of its own here).
std::vector<Zero3Module> Zero3ModulesOf(const ModelSpec& model);

struct Zero3Gathered {
  int64_t persistent = 0;  // elements never partitioned
  int64_t kept = 0;        // the forward's tail kept for reuse by the backward (lm_head at least)
  int64_t prefetched = 0;  // the prefetch, within max live parameters (the last parameter may overshoot)
  int64_t Total() const { return persistent + kept + prefetched; }
};

// At the turn from the forward to the backward (lm_head's backward running), with `modules` in
// the forward's order: the backward runs them in reverse.
Zero3Gathered Zero3GatheredAtTurn(const Zero3Knobs& k, const std::vector<Zero3Module>& modules);

}  // namespace vramplan
