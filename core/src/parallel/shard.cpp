#include "parallel/shard.h"

#include <algorithm>
#include <string>

#include "util/checked_math.h"

namespace vramplan {

RankShard ShardFor(const Scenario& s, const Topology& t, const RankRole& role) {
  RankShard r;
  r.role = role;
  r.tp = t.tp;
  r.layer_split = t.layer_split;
  // ZeRO / FSDP shard over the data-parallel ranks together with the context-parallel ones: they
  // hold the same parameters (torchtitan's dp_shard x cp FSDP mesh, parallel_dims.py; DeepSpeed's
  // seq_data_parallel_group; Megatron's intra_dp_cp group).
  r.data = DataParallelFor(s.parallel, t.dp * t.cp, s.framework.trainer, s.train.grad_accum_steps,
                           CeilDiv(s.model.num_layers, t.pp));
  return r;
}

void RankShard::AddOffloadedHostTerms(int64_t optimizer_state_bytes, int64_t trainable_params, int64_t weight_bytes, bool explain,
                                      std::vector<Term>* host) const {
  const DataParallel& d = data;
  if (d.offload_states) {
    host->push_back(Term{"offloaded_optimizer_states", d.Shard(optimizer_state_bytes) + d.Shard(4 * trainable_params),
                         explain ? "optimizer states + fp32 gradients of this rank's 1/" + std::to_string(d.dp) + " shard in host RAM (DeepSpeedCPUAdam)" : ""});
  }
  if (d.offload_params) host->push_back(Term{"offloaded_parameters", d.Shard(weight_bytes), explain ? "this rank's parameter shard in host RAM" : ""});
}

RankResult RankResultOf(const RankRole& role, const Result& e) {
  RankResult r;
  r.role = role.name;
  r.count = role.count;
  r.breakdown.reserve(e.gpu.breakdown.size());
  for (const Term& t : e.gpu.breakdown) r.breakdown.push_back(Term{t.key, t.bytes, ""});  // the explain strings stay with gpu
  r.peak_allocated_bytes = e.gpu.peak_allocated_bytes;
  r.reserved_bytes = e.gpu.reserved_bytes;
  r.device_total_bytes = e.gpu.device_total_bytes;
  r.timeline = e.timeline;
  r.phase_peaks = e.gpu.phase_peaks;
  r.host_bytes = e.cpu.bytes;
  return r;
}

RankResult RankResultOf(const RankRole& role, Result&& e) {
  RankResult r;
  r.role = role.name;
  r.count = role.count;
  r.breakdown.reserve(e.gpu.breakdown.size());
  for (Term& t : e.gpu.breakdown) r.breakdown.push_back(Term{std::move(t.key), t.bytes, ""});  // the explain strings stay with gpu
  r.peak_allocated_bytes = e.gpu.peak_allocated_bytes;
  r.reserved_bytes = e.gpu.reserved_bytes;
  r.device_total_bytes = e.gpu.device_total_bytes;
  r.timeline = std::move(e.timeline);
  r.phase_peaks = e.gpu.phase_peaks;
  r.host_bytes = e.cpu.bytes;
  return r;
}

const RankResult& WorstRank(const std::vector<RankResult>& ranks) {
  size_t worst = 0;
  for (size_t i = 1; i < ranks.size(); ++i) {
    if (ranks[i].device_total_bytes > ranks[worst].device_total_bytes) worst = i;
  }
  return ranks[worst];
}

int64_t HostBytesPerNode(const Topology& topology, const std::vector<RankResult>& ranks) {
  int64_t largest = 0;
  for (const RankResult& r : ranks) largest = std::max(largest, r.host_bytes);
  return checked::Mul(largest, topology.host_processes_per_node);
}

}  // namespace vramplan
