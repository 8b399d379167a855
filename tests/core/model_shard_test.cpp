// The rank-local model: tensor, expert and pipeline splits of published models, checked against
// the whole model's exact count (every parameter lands on exactly one rank of a tp x pp grid, the
// replicated norms and routers once per tensor-parallel rank).
#include "parallel/model_shard.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace vramplan {
namespace model_shard_test {

int64_t ReplicatedParams(const ModelSpec& m) {
  int64_t n = 0;
  for (uint8_t k : m.layer_kind) {
    for (const auto& norm : m.kinds[k].norms) n += norm.Params();
    for (const auto& l : m.kinds[k].linears) {
      if (l.parallel == ParallelStyle::kReplicated) n += l.Params();  // routers
    }
  }
  return n;
}

TEST(ModelShard, EveryParameterLandsOnOneRankOfTheGrid) {
  for (const char* id : {"meta-llama/Llama-2-7b-hf", "meta-llama/Meta-Llama-3-70B", "mistralai/Mixtral-8x7B-v0.1"}) {
    const ModelSpec& m = testing_support::PresetSpec(id);
    const ParamCounts whole = CountParams(m);
    for (int64_t tp : {1, 2, 8}) {
      for (int64_t pp : {1, 4}) {
        ParallelConfig p;
        p.pp = pp;
        const ModelSplit split{tp, tp, 1, pp, 1};
        int64_t sum = 0;
        for (const PipelineStage& stage : PipelineStages(p, m.num_layers, 8)) sum += CountParams(RankLocalModel(m, split, stage)).total;
        // tp ranks each hold their share; the norms and routers are whole on every tensor-parallel rank.
        const int64_t replicated = ReplicatedParams(m) + m.final_norm.Params();
        EXPECT_EQ(sum * tp - (tp - 1) * replicated, whole.total) << id << " tp " << tp << " pp " << pp;
      }
    }
  }
}

TEST(ModelShard, KvHeadsReplicateBeyondTheirCount) {
  const ModelSpec& m = testing_support::PresetSpec("meta-llama/Meta-Llama-3-70B");  // 64 heads, 8 KV heads
  const LayerKind k = ShardLayerKind(m.kinds[0], ModelSplit{16, 16, 1, 1, 1});
  EXPECT_EQ(k.attention.num_heads, 4);
  EXPECT_EQ(k.attention.num_kv_heads, 1);  // one KV head per rank, replicated in pairs
  for (const auto& l : k.linears) {
    if (l.slot == LinearSlot::kK) EXPECT_EQ(l.out_features, 128);
  }
}

TEST(ModelShard, ExpertsSplitOverEpAndTheirWidthOverEtp) {
  const ModelSpec& m = testing_support::PresetSpec("mistralai/Mixtral-8x7B-v0.1");
  const LayerKind k = ShardLayerKind(m.kinds[0], ModelSplit{2, 1, 4, 1, 1});
  EXPECT_EQ(k.mlp.num_experts, 2);
  EXPECT_EQ(k.mlp.intermediate, 14336);  // etp 1: whole experts
  for (const auto& l : k.linears) {
    if (l.parallel == ParallelStyle::kExpert) EXPECT_EQ(l.copies, 2);
  }
}

TEST(ModelShard, EndStagesHoldOneVocabularyMatrixEach) {
  const ModelSpec& m = testing_support::PresetSpec("meta-llama/Llama-2-7b-hf");  // untied, V = 32000
  ParallelConfig p;
  p.pp = 4;
  const auto stages = PipelineStages(p, m.num_layers, 8);
  const ModelSpec first = RankLocalModel(m, ModelSplit{2, 2, 1, 4, 128}, stages[0]);
  const ModelSpec middle = RankLocalModel(m, ModelSplit{2, 2, 1, 4, 128}, stages[1]);
  const ModelSpec last = RankLocalModel(m, ModelSplit{2, 2, 1, 4, 128}, stages[3]);
  EXPECT_EQ(CountParams(first).embedding, 16000 * 4096);  // 32000 is already a multiple of 128 x 2
  EXPECT_EQ(CountParams(first).lm_head, 0);
  EXPECT_EQ(CountParams(middle).embedding + CountParams(middle).lm_head, 0);
  EXPECT_EQ(CountParams(last).embedding + CountParams(last).lm_head, 16000 * 4096);
  EXPECT_EQ(CountParams(last).norms - CountParams(middle).norms, 4096);  // the final norm
  // Megatron pads 128256 to a multiple of 128 x 8 = 1024: 129024 rows, 16128 per rank.
  const ModelSpec& l3 = testing_support::PresetSpec("meta-llama/Llama-3.1-8B");
  EXPECT_EQ(RankLocalModel(l3, ModelSplit{8, 8, 1, 4, 128}, stages[0]).vocab_size, 16128);
}

}  // namespace
}  // namespace vramplan
