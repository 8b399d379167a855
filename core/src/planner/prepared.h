// The staged estimator's first stage: what an estimate needs that depends on the model and the
// GPU only, never on batch, sequence, method or parallel degrees. Made once (Prepare), then read by
// every estimate of the same model: the pipeline (api/pipeline.h), both inverse searches and the
// planner's many variants. It replaces the per-estimate recounts (CountParams ran twice per
// estimate, MeasureModel once per search, the GPU catalogue was searched by id on every probe)
// and the hidden thread_local caches of the weight-format bytes and the torchtune load replay.
//
// The two caches below fill lazily as estimates ask for them (mutable): one Prepared is used by
// one thread at a time (copies of a vramplan::PreparedModel share it; prepare one per thread).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gpu/device_overhead.h"
#include "inference/weight_formats.h"
#include "parallel/zero3_gather.h"
#include "train/load_phase.h"
#include "train/precision.h"
#include "train/train_plan.h"
#include "util/size_limits.h"
#include "vramplan/model_spec.h"
#include "vramplan/scenario.h"

namespace vramplan {

// A cheap structural fingerprint of a model (sizes, layer kinds, linear shapes): a scenario whose
// model has another fingerprint than the prepared one is estimated from a fresh preparation.
uint64_t ModelFingerprint(const ModelSpec& model);

struct Prepared {
  uint64_t model_fingerprint = 0;  // ModelFingerprint(model): set by vramplan::Prepare (the public API) only
  std::string gpu_id;
  DeviceTraits device;
  ParamCounts params;  // CountParams(model), exact
  ModelSizes sizes;    // MeasureModel(model): the pre-flight's and the searches' bounds

  // ComputeWeightBytes(model, format, tp, loader), computed on first use (inference engines and
  // the smallest-format search ask for the same few pairs dozens of times).
  const WeightBytes& WeightBytesFor(const ModelSpec& model, WeightFormat format, int64_t tp,
                                    PackedLoader loader = PackedLoader::kModules) const;

  // The last torchtune 0.1 load replay and the key of everything it read (train/load_phase.cpp):
  // a replay walks the allocator through every tensor of the model, so variants that differ only in
  // batch, sequence or the optimizer reuse it.
  mutable LoadReplayCache load_replay;

  // MakeTrainPlan(model, train, prec), kept for the last few methods: what trains, the adapters and
  // the trainable tensors depend on the method, its LoRA/freeze settings and the precision, never
  // on batch, sequence or parallel degrees, so the inverse searches and the planner's variants of
  // one method share one plan (the planner walks its combinations by cost, which interleaves a
  // handful of methods and precisions: kTrainPlans of them are kept).
  std::shared_ptr<const TrainPlan> TrainPlanFor(const ModelSpec& model, const TrainConfig& train, const PrecisionModel& prec) const;

  // DeepSpeed ZeRO-3 (parallel/zero3_gather.h): the parameter elements over the model's leaf
  // modules and those gathered at the turn. The module list depends on the model only, the
  // gathered count on the stage-3 knobs too: both computed on first use (a ZeRO-3 estimate built
  // and walked the list of every module each time; the planner's ZeRO-3 variants ask hundreds of
  // times for the same knobs).
  struct Zero3Count {
    int64_t elements = 0;
    Zero3Gathered gathered;
  };
  Zero3Count Zero3CountFor(const ModelSpec& model, const Zero3Knobs& knobs) const;

 private:
  mutable std::vector<Zero3Module> zero3_modules_;
  mutable bool zero3_modules_made_ = false;
  struct Zero3Entry {
    Zero3Knobs knobs;
    Zero3Count count;
  };
  static constexpr size_t kZero3Counts = 8;
  mutable std::deque<Zero3Entry> zero3_counts_;  // most recent last
  struct WeightEntry {
    WeightFormat format;
    int64_t tp;
    PackedLoader loader;
    WeightBytes bytes;
  };
  mutable std::deque<WeightEntry> weight_bytes_;
  struct PlanEntry {
    TrainConfig train;  // the settings the plan was made for
    PrecisionModel prec;
    std::shared_ptr<const TrainPlan> plan;
  };
  static constexpr size_t kTrainPlans = 8;
  mutable std::deque<PlanEntry> plans_;  // most recently used first
};

// The preparation of `scenario`'s model and GPU (without the fingerprint: callers that keep the
// preparation across scenarios set it and check it with PreparedFor).
Prepared PrepareModel(const Scenario& scenario);

// Whether `prepared` was made for this scenario's model and GPU.
bool PreparedFor(const Prepared& prepared, const Scenario& scenario);

}  // namespace vramplan
