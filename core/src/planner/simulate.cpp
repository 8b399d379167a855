#include "planner/simulate.h"

#include "gpu/device_overhead.h"
#include "inference/inference.h"
#include "parallel/comm_buffers.h"
#include "parallel/shard.h"
#include "planner/context_limit_check.h"
#include "parallel/topology.h"
#include "parallel/pipeline.h"
#include "train/parallel_step.h"
#include "train/train_step.h"
#include "util/checked_math.h"
#include "util/size_limits.h"

namespace vramplan {
namespace {

// A model-parallel training job: every rank role (pipeline stage) is estimated on its own; `gpu`,
// `cpu` and `timeline` are the worst role's (the first on a tie), `ranks` lists them all. The
// roles are estimated without explanations first; only the worst one is estimated again with
// them (its breakdown's explain strings and its timeline: the other ranks' entries carry none).
void SimulateRanks(const Scenario& s, const Topology& topology, const Prepared& prepared, const SimulateOptions& options, Result* r) {
  const std::vector<PipelineStage> stages = PipelineStages(s.parallel, s.model.num_layers, s.train.grad_accum_steps);
  const Result before = *r;
  std::vector<RankResult> ranks;
  ranks.reserve(topology.roles.size());
  StagePrep prep;
  const PipelineStage* prepared_for = nullptr;  // the stage `prep` was made for
  // A uniform model's middle stages share one preparation (only their micro-batches in flight
  // differ); a heterogeneous one (dense first layers, interleaved kinds) is prepared per stage.
  const bool uniform = s.model.kinds.size() == 1;
  auto estimate = [&](const RankRole& role, bool explain, Result* e) {
    const RankShard shard = ShardFor(s, topology, role);
    const PipelineStage& stage = stages[static_cast<size_t>(role.pipeline_stage)];
    if (prepared_for == nullptr || !uniform || !SameStageShape(*prepared_for, stage) || explain) {
      prep = PrepareStage(s, topology, stage, shard, explain);
      prepared_for = explain ? nullptr : &stage;
    }
    EstimateParallelTraining(s, topology, stage, shard, prepared, prep, e, explain);
    ApplyDeviceOverheads(s, prepared.device, CommBuffersOf(s, topology, prepared.device, role.pipeline_stage, explain), e, explain);
  };
  size_t worst = 0;
  int64_t worst_total = -1;
  for (size_t i = 0; i < topology.roles.size(); ++i) {
    Result e = before;
    estimate(topology.roles[i], /*explain=*/false, &e);
    if (e.gpu.device_total_bytes > worst_total) {
      worst = i;
      worst_total = e.gpu.device_total_bytes;
      if (!options.explain) {
        Issues warnings = std::move(r->warnings);
        *r = std::move(e);
        if (i > 0) r->warnings = std::move(warnings);  // the first role's warnings stand for the job
        if (options.ranks) ranks.push_back(RankResultOf(topology.roles[i], *r));
        continue;
      }
    }
    if (i == 0 && options.explain) r->warnings = e.warnings;
    if (options.ranks) ranks.push_back(RankResultOf(topology.roles[i], std::move(e)));  // e is not kept
  }
  if (options.explain) {
    Issues warnings = std::move(r->warnings);
    *r = before;
    estimate(topology.roles[worst], /*explain=*/true, r);
    r->warnings = std::move(warnings);
    if (options.ranks) ranks[worst] = RankResultOf(topology.roles[worst], *r);
  }
  if (options.inverse) SolveTrainingCapacity(s, prepared, r);
  if (!options.ranks) return;
  r->ranks = std::move(ranks);
  r->cpu.node_processes = topology.host_processes_per_node;
  r->cpu.node_bytes = HostBytesPerNode(topology, r->ranks);
}

void SimulateJob(const Scenario& s, const Prepared& prepared, const SimulateOptions& options, Result* r) {
  // The topology, validated by the reader, gives the distinct rank roles (parallel/topology.h).
  const Topology topology = TopologyOf(s);
  if (s.mode == Mode::kTrain && UsesModelParallelStep(s)) {
    SimulateRanks(s, topology, prepared, options, r);
    return;
  }
  // Every rank of a single-replica job is alike: its one role is estimated once, and that estimate
  // is `gpu`, `cpu` and `timeline`.
  const RankRole& role = topology.roles.front();
  const RankShard shard = ShardFor(s, topology, role);
  if (s.mode == Mode::kTrain) {
    EstimateTraining(s, shard, prepared, r, options.explain);
    ApplyDeviceOverheads(s, prepared.device, CommBuffersOf(s, topology, prepared.device, role.pipeline_stage, options.explain), r, options.explain);
    // After the overheads: the searches read the estimate's own device total for the scenario
    // itself instead of probing it again.
    if (options.inverse) SolveTrainingCapacity(s, prepared, r);
  } else {
    EstimateInference(s, shard, prepared, r, options.explain || options.warnings, options.inverse);
    ApplyDeviceOverheads(s, prepared.device, CommBuffersOf(s, topology, prepared.device, role.pipeline_stage, options.explain), r, options.explain);
  }
  if (!options.ranks) return;
  r->ranks.push_back(RankResultOf(role, *r));  // gpu == WorstRank(r->ranks): the one role
  r->cpu.node_processes = topology.host_processes_per_node;
  r->cpu.node_bytes = HostBytesPerNode(topology, r->ranks);
}

}  // namespace

void Simulate(const Scenario& s, const Prepared& prepared, const SimulateOptions& options, Result* r) {
  SimulateJob(s, prepared, options, r);
  if (options.warnings) WarnBeyondModelContext(s, r);
}

std::optional<Result> Probe(const Scenario& s, const Prepared& prepared) {
  SimulateOptions options;
  options.warnings = false;
  return Probe(s, prepared, options);
}

std::optional<Result> Probe(const Scenario& s, const Prepared& prepared, const SimulateOptions& options) {
  if (!WithinSizeLimits(s, prepared.sizes)) return std::nullopt;
  checked::OverflowScope overflow;
  Result r;
  r.gpu.capacity_bytes = s.gpu.memory_bytes;
  Simulate(s, prepared, options, &r);
  if (overflow.overflowed()) return std::nullopt;
  return r;
}

}  // namespace vramplan
