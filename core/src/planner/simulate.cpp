#include "planner/simulate.h"

#include "gpu/device_overhead.h"
#include "inference/inference.h"
#include "parallel/shard.h"
#include "parallel/topology.h"
#include "train/train_step.h"
#include "util/checked_math.h"
#include "util/size_limits.h"

namespace vramplan {

void Simulate(const Scenario& s, const Prepared& prepared, const SimulateOptions& options, Result* r) {
  // The topology, validated by the reader, gives the distinct rank roles (parallel/topology.h).
  // Every rank of a job is alike today: its one role is estimated once, and that estimate is
  // `gpu`, `cpu` and `timeline`. Roles that differ (pipeline stages, expert ranks) will each be
  // estimated through their own shard, and `gpu` will be the worst of them (WorstRank).
  const Topology topology = TopologyOf(s);
  const RankRole& role = topology.roles.front();
  const RankShard shard = ShardFor(s, topology, role);
  if (s.mode == Mode::kTrain) {
    EstimateTraining(s, shard, prepared, r, options.explain);
    ApplyDeviceOverheads(s, prepared.device, topology.communicator, r, options.explain);
    // After the overheads: the searches read the estimate's own device total for the scenario
    // itself instead of probing it again.
    if (options.inverse) SolveTrainingCapacity(s, prepared, r);
  } else {
    EstimateInference(s, shard, prepared, r, options.explain || options.warnings, options.inverse);
    ApplyDeviceOverheads(s, prepared.device, topology.communicator, r, options.explain);
  }
  if (!options.ranks) return;
  r->ranks.push_back(RankResultOf(role, *r));  // gpu == WorstRank(r->ranks): the one role
  r->cpu.node_processes = topology.host_processes_per_node;
  r->cpu.node_bytes = HostBytesPerNode(topology, r->ranks);
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
