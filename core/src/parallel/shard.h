// The shard step: what one rank of a role holds of the model, its states and its activations.
// Every per-rank division of the core goes through a RankShard:
//   tensor parallel (tp): column-parallel outputs, row-parallel inputs, attention heads and the
//       vocabulary are split tp ways, rounded up (Megatron-LM ColumnParallelLinear /
//       RowParallelLinear / VocabParallelEmbedding; vLLM's linear.py and vocab_parallel_embedding.py);
//       KV heads fewer than tp are replicated, one per rank (vllm ModelConfig.get_num_kv_heads);
//       which linears are split is the builders' LinearSpec::parallel_style (model_spec.h).
//   layer split: accelerate's device_map="auto" puts about 1/n of the layers (weights, KV cache) on
//       each of n GPUs (parallel/topology.h).
//   data parallel (dp): ZeRO 1-3, FSDP and offload shard the model states of a training step;
//       the rules are parallel/data_parallel.h, and StatesView() turns every moment of the step into
//       what this rank holds (RankView::Apply).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "parallel/data_parallel.h"
#include "parallel/topology.h"
#include "units.h"
#include "vramplan/result.h"

namespace vramplan {

// KV heads per rank under tensor parallelism: split tp ways, and replicated (one per rank) when
// there are fewer than tp (vllm/config ModelConfig.get_num_kv_heads: max(1, total // tp)).
inline int64_t KvHeadsPerRank(int64_t kv_heads, int64_t tp) { return std::max<int64_t>(1, CeilDiv(kv_heads, tp)); }

struct RankShard {
  RankRole role;
  int64_t tp = 1;
  int64_t layer_split = 1;
  DataParallel data;

  // ---- the model (tensor parallel)
  int64_t Columns(int64_t n) const { return CeilDiv(n, tp); }  // a split dimension: heads, intermediate, vocabulary rows
  int64_t KvHeads(int64_t n) const { return KvHeadsPerRank(n, tp); }
  int64_t TensorBytes(int64_t bytes) const { return CeilDiv(bytes, tp); }  // a tp-split tensor's bytes on this rank
  // ---- the layers (device_map="auto")
  int64_t LayerSplitBytes(int64_t bytes) const { return CeilDiv(bytes, layer_split); }

  // ---- the states (data parallel): the view every training moment goes through.
  // (ShardedUnitBytes names the sizes; see RankViewFor.)
  RankView StatesView(const ShardedUnitBytes& units) const { return RankViewFor(data, units); }
  // Host RAM of this rank's process under offload (DeepSpeed ZeRO-Offload / ZeRO-Infinity,
  // FSDP CPUOffload): the rank's shard of the optimizer states with their fp32 gradients
  // (DeepSpeedCPUAdam steps on the host), and of the parameters. Appended to `host` (cpu.breakdown);
  // the explain strings only with `explain`.
  void AddOffloadedHostTerms(int64_t optimizer_state_bytes, int64_t trainable_params, int64_t weight_bytes, bool explain,
                             std::vector<Term>* host) const;
};

// The shard of one role of `topology` for scenario `s`.
RankShard ShardFor(const Scenario& s, const Topology& topology, const RankRole& role);

// The result of one role, read from the estimate of that role (gpu, cpu, timeline).
RankResult RankResultOf(const RankRole& role, const Result& estimate);
// The same from an estimate that is not kept: its breakdown keys and timeline are moved.
RankResult RankResultOf(const RankRole& role, Result&& estimate);
// The rank with the largest device_total_bytes (the first on a tie): what `gpu` reports.
const RankResult& WorstRank(const std::vector<RankResult>& ranks);
// Host RAM of the fullest host: each of its topology.host_processes_per_node processes holds one
// rank's host_bytes (with several roles, the largest: an upper bound).
int64_t HostBytesPerNode(const Topology& topology, const std::vector<RankResult>& ranks);

}  // namespace vramplan
