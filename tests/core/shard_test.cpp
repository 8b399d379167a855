// The shard step (core/src/parallel/shard.h): what one rank holds. Tensor-parallel splits round up
// (a rank holds at most ceil(n / tp)); KV heads fewer than tp are replicated, one per rank
// (vllm ModelConfig.get_num_kv_heads); the data-parallel view follows the ZeRO / FSDP rules of
// parallel/data_parallel.h, checked here on small hand-made sizes.
#include <gtest/gtest.h>

#include "parallel/shard.h"
#include "test_support.h"
#include "units.h"

namespace vramplan {
namespace shard_test {

TEST(Units, CeilDiv) {
  EXPECT_EQ(CeilDiv(0, 4), 0);
  EXPECT_EQ(CeilDiv(1, 4), 1);
  EXPECT_EQ(CeilDiv(8, 4), 2);
  EXPECT_EQ(CeilDiv(9, 4), 3);
  EXPECT_EQ(CeilDiv(128256, 8), 16032);
  EXPECT_EQ(CeilDiv(151936, 3), 50646);  // 50645.33 rounded up
}

RankShard Shard(const std::string& parallel, const char* mode = "train") {
  auto s = ParseScenario(std::string(R"({"model":"meta-llama/Llama-3.1-8B","mode":")") + mode + R"(","parallel":)" + parallel + "}");
  EXPECT_TRUE(s.ok()) << parallel;
  const Topology t = TopologyOf(s.value());
  return ShardFor(s.value(), t, t.roles.front());
}

TEST(Shard, TensorParallelSplits) {
  const RankShard r = Shard(R"({"gpus":8,"tp":8})", "inference");
  EXPECT_EQ(r.tp, 8);
  EXPECT_EQ(r.Columns(32), 4);       // attention heads
  EXPECT_EQ(r.Columns(14336), 1792);  // intermediate
  EXPECT_EQ(r.Columns(128256), 16032);  // vocabulary rows
  EXPECT_EQ(r.KvHeads(8), 1);
  EXPECT_EQ(r.KvHeads(4), 1);  // fewer KV heads than ranks: replicated, one each
  EXPECT_EQ(r.KvHeads(0), 1);
  EXPECT_EQ(r.TensorBytes(1001), 126);
  EXPECT_EQ(KvHeadsPerRank(8, 2), 4);
  EXPECT_EQ(KvHeadsPerRank(8, 16), 1);
}

TEST(Shard, LayerSplitOfTransformersInference) {
  const RankShard r = Shard(R"({"gpus":4})", "inference");
  EXPECT_EQ(r.layer_split, 4);
  EXPECT_EQ(r.LayerSplitBytes(10), 3);
  EXPECT_EQ(Shard(R"({"gpus":4})").layer_split, 1);  // training: data-parallel replicas, no layer split
}

// ZeRO stages (Rajbhandari et al. 2020): stage 1 shards optimizer states, 2 also gradients, 3 also
// parameters; each rank holds ceil(x / dp).
// One decoder layer of 100 B, a root unit of 50 B, 30 B of the largest layer's gradients, 2-byte buckets and gradients.
ShardedUnitBytes SmallUnits() {
  ShardedUnitBytes u;
  u.layer_weight_bytes = 100;
  u.root_weight_bytes = 50;
  u.max_layer_grad_bytes = 30;
  u.bucket_dtype_bytes = 2;
  u.grad_dtype_bytes = 2;
  return u;
}

TEST(Shard, DataParallelStatesView) {
  const RankShard z1 = Shard(R"({"gpus":8,"zero":1})");
  const RankView v1 = z1.StatesView(SmallUnits());
  EXPECT_EQ(v1.Weights(801), 801);
  EXPECT_EQ(v1.States(801), 101);
  EXPECT_EQ(v1.Gradients(801), 801);
  const RankView v2 = Shard(R"({"gpus":8,"zero":2})").StatesView(SmallUnits());
  EXPECT_EQ(v2.Gradients(801), 101);
  EXPECT_EQ(v2.Weights(801), 801);
  const RankView v3 = Shard(R"({"gpus":8,"zero":3})").StatesView(SmallUnits());
  EXPECT_EQ(v3.Weights(801), 101);
  EXPECT_EQ(v3.gathered_bytes, 2 * 100);  // the running unit and the prefetched one
  // FSDP: also the root unit stays gathered, and one unit's full gradient waits for its reduce-scatter.
  const RankView fsdp = Shard(R"({"gpus":4,"fsdp":true})").StatesView(SmallUnits());
  EXPECT_EQ(fsdp.Weights(801), 201);
  EXPECT_EQ(fsdp.gathered_bytes, 2 * 100 + 50);
  EXPECT_EQ(fsdp.unit_grad_bytes, 30);
  // Offload: states (and with ZeRO-3 the parameters) leave the GPU.
  const RankView off = Shard(R"({"gpus":8,"zero":3,"offload_optimizer":"cpu","offload_params":"cpu"})").StatesView(SmallUnits());
  EXPECT_EQ(off.States(801), 0);
  EXPECT_EQ(off.Weights(801), 0);
}

// Offload moves this rank's 1/dp shard of the states and of the fp32 gradients (DeepSpeedCPUAdam)
// and of the parameters (offload_param) into the rank's host RAM.
TEST(Shard, OffloadedHostTerms) {
  const RankShard r = Shard(R"({"gpus":8,"zero":3,"offload_optimizer":"cpu","offload_params":"cpu"})");
  std::vector<Term> host;
  r.AddOffloadedHostTerms(/*optimizer_state_bytes=*/8000, /*trainable_params=*/1000, /*weight_bytes=*/1601, /*explain=*/true, &host);
  ASSERT_EQ(host.size(), 2u);
  EXPECT_EQ(host[0].key, "offloaded_optimizer_states");
  EXPECT_EQ(host[0].bytes, 8000 / 8 + 4 * 1000 / 8);
  EXPECT_EQ(host[1].key, "offloaded_parameters");
  EXPECT_EQ(host[1].bytes, 201);
  host.clear();
  Shard(R"({"gpus":8,"zero":3})").AddOffloadedHostTerms(8000, 1000, 1601, true, &host);
  EXPECT_TRUE(host.empty());
}

// gpu is the worst rank; the host of a node runs host_processes_per_node processes.
TEST(Shard, WorstRankAndHostPerNode) {
  std::vector<RankResult> ranks(3);
  ranks[0].device_total_bytes = 10;
  ranks[1].device_total_bytes = 30;
  ranks[2].device_total_bytes = 30;  // a tie: the first one wins
  ranks[0].host_bytes = 7;
  ranks[1].host_bytes = 5;
  EXPECT_EQ(&WorstRank(ranks), &ranks[1]);
  Topology t;
  t.host_processes_per_node = 8;
  EXPECT_EQ(HostBytesPerNode(t, ranks), 56);  // the largest rank's host bytes on every process: an upper bound
}

}  // namespace
}  // namespace vramplan
