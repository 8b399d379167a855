// TRL use_liger_kernel for DPO and GRPO (train/liger_chunked_loss.h, docs/post_training.md):
// the chunked losses' tensors, computed by hand from Liger-Kernel's LigerFusedLinearPPOBase /
// LigerFusedLinearPreferenceBase.forward (v0.6.4), and their place in the step.
#include <gtest/gtest.h>

#include <string>

#include "test_support.h"
#include "train/liger_chunked_loss.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace liger_chunked_loss_test {

TrainConfig Train(Objective objective, int64_t grad_accum) {
  TrainConfig t;
  t.objective = objective;
  t.loss = LossImpl::kFusedLinear;
  t.grad_accum_steps = grad_accum;
  return t;
}

// The TRL GRPO QLoRA notebook's head: 8 completions of 256 tokens, Qwen2 7B's lm_head
// (V 152,064 x h 3,584, float16), 16-bit hidden states and logits.
TEST(LigerChunkedLoss, GrpoHeadKeepsTheAccumulatedGradientsAndOneCompletionsChunk) {
  const LigerChunkedHead g = ComputeLigerChunkedHead(Train(Objective::kGrpo, 1), 8, 256, 768, 152'064, 3'584, 2, 2, 2, false, false);
  // saved: grad_weight 2·V·h = 1,089,994,752 + grad_input 2·(8·256)·h = 14,680,064
  EXPECT_EQ(g.policy.saved_bytes, 1'104'674'816);
  // at the last chunk: grad_weight + 7 rows' input gradients (12,845,056) + the chunk: max(three fp32
  // (256, V) tensors = 467,140,608, fp32 gradient + its 16-bit cast 6·256·V = 233,570,304 + the
  // chunk's weight gradient 1,089,994,752) = 2,426,404,864 in all, less the saved bytes, plus the
  // backbone's last hidden state 2·8·768·h = 44,040,192 (the loss reads a view of it).
  EXPECT_EQ(g.policy.forward_extra_bytes, 1'365'770'240);
  EXPECT_EQ(g.policy.backward_extra_bytes, 0);  // grad_output == 1: the saved gradients are returned as they are
  EXPECT_EQ(g.policy_hidden_bytes, 44'040'192);
  EXPECT_EQ(g.reference_hidden_bytes, 0);
  // Under autocast each chunk's matmul casts the weight to 16 bits (2·V·h more at the chunk).
  EXPECT_EQ(ComputeLigerChunkedHead(Train(Objective::kGrpo, 1), 8, 256, 768, 152'064, 3'584, 2, 2, 2, true, false).policy.forward_extra_bytes,
            int64_t{1'365'770'240} + 1'089'994'752);
  // With accumulation the loss is divided, grad_output != 1: both gradients are multiplied into new tensors.
  EXPECT_EQ(ComputeLigerChunkedHead(Train(Objective::kGrpo, 4), 8, 256, 768, 152'064, 3'584, 2, 2, 2, false, false).policy.backward_extra_bytes,
            1'104'674'816);
}

// DPO: 2 pairs (4 rows) of 512 tokens (511 log-prob positions), V 32,000, h 4,096, 16-bit.
TEST(LigerChunkedLoss, DpoHeadChunksOnePairAndKeepsBothHiddenCopies) {
  const LigerChunkedHead d = ComputeLigerChunkedHead(Train(Objective::kDpo, 1), 4, 511, 512, 32'000, 4'096, 2, 2, 2, false, false);
  // saved: grad_weight 262,144,000 + grad_input 2·2,044·4,096 = 16,744,448
  EXPECT_EQ(d.policy.saved_bytes, 278'888'448);
  // last_hidden_state 2·4·512·4,096 = 16,777,216 + its [:, :-1].contiguous() 16,744,448
  EXPECT_EQ(d.policy_hidden_bytes, 33'521'664);
  EXPECT_EQ(d.reference_hidden_bytes, 33'521'664);  // the reference's, no grad
  // last chunk (one pair, 1,022 tokens): grad_weight + the other pair's input gradient 8,372,224 +
  // kept 16-bit logits 65,408,000 + max(12·1,022·V = 392,448,000, 6·1,022·V + 262,144,000 =
  // 458,368,000) = 794,292,224; less saved, plus both backbones' hidden states and copies.
  EXPECT_EQ(d.policy.forward_extra_bytes, 582'447'104);
}

TEST(LigerChunkedLoss, AppliesToTrlsLigerPathsOnly) {
  EXPECT_TRUE(LigerChunkedLossApplies(Train(Objective::kDpo, 1)));
  EXPECT_TRUE(LigerChunkedLossApplies(Train(Objective::kGrpo, 1)));
  EXPECT_FALSE(LigerChunkedLossApplies(Train(Objective::kKto, 1)));
  EXPECT_FALSE(LigerChunkedLossApplies(Train(Objective::kPpo, 1)));
  TrainConfig standard = Train(Objective::kDpo, 1);
  standard.loss = LossImpl::kStandard;
  EXPECT_FALSE(LigerChunkedLossApplies(standard));
}

Result RunDpo(const std::string& loss, const std::string& objective = "dpo") {
  return testing_support::EstimateText(
      R"({"model":"Qwen/Qwen2.5-0.5B","gpu":"a100-sxm-80gb","train":{"method":"full","precision":"bf16","micro_batch_size":8,"seq_len":512,"objective":")" +
      objective + R"(","loss":")" + loss + R"("}})");
}

// In the step: no logits anywhere (policy or reference) and no "not modeled" warning for the paths
// TRL routes through Liger. With 8 pairs one chunk is an eighth of the rows, so the loss is smaller
// than TRL's full-logits head; with one or two long pairs the chunk's eager upper bound (14 B per
// chunk logit in bf16) can exceed TRL's bf16 head, which keeps no fp32 copy (docs/post_training.md).
TEST(LigerChunkedLoss, DpoStepWithoutLogits) {
  const Result standard = RunDpo("standard");
  const Result liger = RunDpo("fused_linear");
  EXPECT_FALSE(testing_support::HasWarning(liger, "not_modeled", "train.loss"));
  EXPECT_TRUE(testing_support::HasWarning(liger, "approximate", "train.loss"));  // the chunk's eager upper bound
  EXPECT_FALSE(testing_support::HasWarning(standard, "approximate", "train.loss"));
  EXPECT_TRUE(testing_support::HasWarning(RunDpo("fused_linear", "kto"), "not_modeled", "train.loss"));
  EXPECT_LT(liger.gpu.phase_peaks.reference, standard.gpu.phase_peaks.reference);
  EXPECT_LT(liger.gpu.peak_allocated_bytes, standard.gpu.peak_allocated_bytes);
  EXPECT_LT(testing_support::GpuTerm(liger, "logits_and_loss"), testing_support::GpuTerm(standard, "logits_and_loss"));
  EXPECT_EQ(liger.gpu.phase_peaks.optimizer_step, standard.gpu.phase_peaks.optimizer_step);  // the model states are the same
}

}  // namespace
}  // namespace vramplan
