// Pipeline stages: the layer split and the micro-batches each stage holds, against Megatron-LM's
// schedules (megatron/core/pipeline_parallel/schedules.py) and its own memory formula's pipeline
// factors (megatron/training/theoretical_memory_usage.py).
#include "parallel/pipeline.h"

#include <gtest/gtest.h>

namespace vramplan {
namespace pipeline_test {

TEST(Pipeline, OneFOneBHoldsPpMinusRankMicroBatches) {
  // forward_backward_pipelining_without_interleaving: warmup = min(pp - rank - 1, m), plus one.
  for (int64_t r = 0; r < 4; ++r) EXPECT_EQ(InFlightChunks(PipelineSchedule::k1F1B, 4, 1, r, 32), 4 - r) << r;
  EXPECT_EQ(InFlightChunks(PipelineSchedule::k1F1B, 8, 1, 0, 3), 3);  // fewer micro-batches than stages
  EXPECT_EQ(InFlightChunks(PipelineSchedule::k1F1B, 8, 1, 7, 3), 1);
}

TEST(Pipeline, InterleavedFirstRankMatchesMegatronsPenalty) {
  // theoretical_memory_usage.py: the first stage holds pp micro-batches x (1 + (pp - 1) / (pp x vpp)),
  // i.e. pp x vpp + pp - 1 chunk-forwards of 1/vpp of the stage.
  for (int64_t pp : {2, 4, 8}) {
    for (int64_t vpp : {2, 3, 5}) {
      const int64_t chunks = InFlightChunks(PipelineSchedule::kInterleaved1F1B, pp, vpp, 0, 64);
      EXPECT_EQ(chunks, pp * vpp + pp - 1) << pp << " " << vpp;
      EXPECT_DOUBLE_EQ(static_cast<double>(chunks) / static_cast<double>(vpp),
                       static_cast<double>(pp) * (1.0 + static_cast<double>(pp - 1) / static_cast<double>(pp * vpp)));
    }
  }
  // The last rank: warmup (vpp - 1) x pp, plus one; capped by m x vpp chunk-forwards.
  EXPECT_EQ(InFlightChunks(PipelineSchedule::kInterleaved1F1B, 4, 2, 3, 64), 5);
  EXPECT_EQ(InFlightChunks(PipelineSchedule::kInterleaved1F1B, 4, 2, 0, 2), 4);
}

TEST(Pipeline, GpipeHoldsEveryMicroBatch) { EXPECT_EQ(InFlightChunks(PipelineSchedule::kGpipe, 4, 1, 2, 16), 16); }

TEST(Pipeline, StagesSplitTheLayersAndPlaceEmbeddingAndHead) {
  ParallelConfig p;
  p.pp = 4;
  std::vector<PipelineStage> stages = PipelineStages(p, 32, 16);
  ASSERT_EQ(stages.size(), 4u);
  EXPECT_TRUE(stages[0].embedding);
  EXPECT_FALSE(stages[0].head);
  EXPECT_TRUE(stages[3].head);
  EXPECT_FALSE(stages[3].embedding);
  for (const auto& s : stages) EXPECT_EQ(s.num_layers, 8);
  EXPECT_EQ(stages[2].first_layer, 16);
  p.pp_layers = {7, 9, 9, 7};
  stages = PipelineStages(p, 32, 16);
  EXPECT_EQ(stages[1].first_layer, 7);
  EXPECT_EQ(stages[3].num_layers, 7);
}

TEST(Pipeline, InterleavedCustomLayoutListsTheVirtualStages) {
  // Megatron's functional test gpt3_mcore_te_tp1_pp4_vp2_account_for_embedding_loss_in_pipeline_split:
  // 6 layers + the embedding and the loss as one slot each over 8 virtual stages; virtual stage
  // v x pp + r is chunk v of rank r.
  ParallelConfig p;
  p.pp = 4;
  p.vpp = 2;
  p.pp_layers = {0, 1, 1, 1, 1, 1, 1, 0};
  Issues errors;
  ValidatePipeline(p, 6, &errors);
  EXPECT_TRUE(errors.empty()) << (errors.empty() ? "" : errors[0].message);
  const std::vector<PipelineStage> stages = PipelineStages(p, 6, 4);
  ASSERT_EQ(stages.size(), 4u);
  const std::vector<int64_t> expect_layers = {1, 2, 2, 1};  // rank r: virtual stages r and 4 + r
  for (size_t r = 0; r < 4; ++r) EXPECT_EQ(stages[r].num_layers, expect_layers[r]) << r;
  EXPECT_EQ(stages[3].chunk_layers, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(stages[3].chunk_first_layer, (std::vector<int64_t>{2, 6}));
  EXPECT_EQ(stages[0].chunk_first_layer, (std::vector<int64_t>{0, 3}));
  // The last rank holds warmup (vpp - 1) x pp + 1 = 5 chunk-forwards: 4 of chunk 0, 1 of chunk 1.
  EXPECT_EQ(stages[3].in_flight_chunks, 5);
  EXPECT_EQ(stages[3].chunk_in_flight, (std::vector<int64_t>{4, 1}));
  // The first rank (16 micro-batches): 2(pp - 1) + (vpp - 1) pp + 1 = 11 forwards, 7 of chunk 0.
  EXPECT_EQ(PipelineStages(p, 6, 16)[0].chunk_in_flight, (std::vector<int64_t>{7, 4}));
  // An even interleaved split keeps the old layout: chunk c of rank r starts at (c pp + r) L / (pp vpp).
  ParallelConfig even;
  even.pp = 4;
  even.vpp = 2;
  EXPECT_EQ(PipelineStages(even, 32, 8)[1].chunk_first_layer, (std::vector<int64_t>{4, 20}));
}

TEST(Pipeline, ValidationNamesTheField) {
  auto first_field = [](const ParallelConfig& p, int64_t layers) {
    Issues e;
    ValidatePipeline(p, layers, &e);
    return e.empty() ? std::string() : e[0].field_path;
  };
  ParallelConfig p;
  p.pp = 3;
  EXPECT_EQ(first_field(p, 32), "parallel.pp");  // 3 does not divide 32 without a split
  p.pp_layers = {10, 11, 11};
  EXPECT_EQ(first_field(p, 32), "");
  p.pp_layers = {10, 11, 10};
  EXPECT_EQ(first_field(p, 32), "parallel.pp_layers");
  p.pp_layers = {16, 16};
  EXPECT_EQ(first_field(p, 32), "parallel.pp_layers");
  ParallelConfig v;
  v.pp = 4;
  v.vpp = 3;
  EXPECT_EQ(first_field(v, 32), "parallel.vpp");  // 12 does not divide 32
  v.vpp = 2;
  EXPECT_EQ(first_field(v, 32), "");
  v.pp_schedule = PipelineSchedule::k1F1B;
  EXPECT_EQ(first_field(v, 32), "parallel.pp_schedule");
  ParallelConfig i;
  i.pp = 4;
  i.pp_schedule = PipelineSchedule::kInterleaved1F1B;
  EXPECT_EQ(first_field(i, 32), "parallel.pp_schedule");
}

}  // namespace
}  // namespace vramplan
