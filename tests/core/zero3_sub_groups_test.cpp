// DeepSpeed ZeRO-3's optimizer sub-groups (parallel/zero3_sub_groups.h). Expectations worked out by
// hand from stage3.py _create_fp16_sub_groups: walk the parameters in order, add each one's rank
// partition ceil(numel / dp), close the sub-group once it reaches sub_group_size.
#include "parallel/zero3_sub_groups.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "vramplan/api.h"

namespace vramplan {
namespace zero3_sub_groups_test {

TensorShape Tensor(int64_t rows, int64_t cols, int64_t count = 1, int64_t repeat = 1) {
  TensorShape t;
  t.rows = rows;
  t.cols = cols;
  t.count = count;
  t.repeat = repeat;
  return t;
}

TEST(Zero3SubGroups, GreedyByRankPartitions) {
  // embedding 1000, then layers of [A 300, B 301] (first copy, then the second copy standing for 3
  // layers), lm_head 1000; dp 2 -> partitions 500 | 150, 151 per layer | 500.
  const std::vector<TensorShape> t = {Tensor(1000, 1), Tensor(300, 1), Tensor(301, 1), Tensor(300, 1, 1, 3), Tensor(301, 1, 1, 3),
                                      Tensor(1000, 1)};
  // sub_group_size 800: 500+150+151 = 801 closes; then 150+151+150+151+150+151 = 903 closes at the
  // 6th; then 500: the last sub-group. Largest 903.
  EXPECT_EQ(Zero3LargestSubGroupElements(t, 2, 800), 903);
  // sub_group_size larger than the rank's whole partition: one sub-group of 500 + 4 x 301 + 500.
  EXPECT_EQ(Zero3LargestSubGroupElements(t, 2, 1'000'000), 2204);
  // dp 1, sub_group_size 1000: the embedding closes alone (1000); the 4 layers of 300 + 301 close
  // two at a time (300, 601, 901, 1202: twice); the lm_head is the last (1000). Largest 1202.
  EXPECT_EQ(Zero3LargestSubGroupElements(t, 1, 1000), 1202);
}

TEST(Zero3SubGroups, IdenticalTensorsInARowAreSeparateParameters) {
  // 4 experts of 100 in one entry, dp 1, sub_group_size 250: 100+100+100 closes (300), then 100.
  EXPECT_EQ(Zero3LargestSubGroupElements({Tensor(100, 1, 4)}, 1, 250), 300);
}

// Adafactor keeps its per-parameter (factored) states and temporaries in every ZeRO stage: the
// sub-group rule (one flat fp32 tensor) is not applied to it, so ZeRO-3 never steps above ZeRO-2
// by its unfactored update (phi-2 full, 4 GPUs: ZeRO-3 was 20.49 GB at the step against ZeRO-2's
// 16.27 GB, found by Physics.MoreShardingNeverCostsMemoryExceptZeroBuckets under the sanitizers).
TEST(Zero3SubGroups, AdafactorStepIsNotAFlatTensor) {
  auto peak = [](int zero) {
    nlohmann::json sc = {{"model", "microsoft/phi-2"}, {"mode", "train"}, {"gpu", "h100-sxm-80gb"},
                         {"parallel", {{"gpus", 4}, {"zero", zero}}},
                         {"train", {{"method", "full"}, {"optimizer", "adafactor"}, {"precision", "mixed_bf16"}, {"seq_len", 256},
                                    {"micro_batch_size", 4}, {"grad_accum_steps", 4}, {"gradient_checkpointing", "selective"}}}};
    const nlohmann::json r = nlohmann::json::parse(CallOp("estimate", sc.dump()));
    EXPECT_TRUE(r.value("ok", false)) << r.dump();
    return r["gpu"]["peak_allocated_bytes"].get<int64_t>();
  };
  EXPECT_LE(peak(3), peak(2));
}

}  // namespace
}  // namespace vramplan
