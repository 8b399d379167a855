// transformers' ForCausalLMLoss (the loss of every *ForCausalLM since 4.46) against measured steps
// (tests/fixtures/training/measured_cpu_hf_loss.json, PyTorch 1.13.1 on CPU, measure_hf_loss.py): the
// harness's Llama returns the lm_head's output as it is and computes its loss with
// transformers/loss/loss_utils.py ForCausalLMLoss, called with the Trainer's num_items_in_batch:
//   HL01-HL04: >= 4.49 (labels padded, no copy of the logits), the `current` preset's loss;
//   HL05-HL09: 4.46-4.48 (the shifted fp32 logits copied with .contiguous()),
//              framework.loss_function_shift_copy / preset torch_2_hf_4_46.
// Weights, gradients, states and saved sets exact on every row, and the phase peaks.
#include <iostream>

#include <gtest/gtest.h>

#include "support/measured_loss_steps.h"
#include "test_support.h"

namespace vramplan {
namespace hf_loss_test {

const std::vector<testing_support::PhaseGap> kKnownGaps = {};

TEST(HfCausalLmLoss, MatchesMeasuredSteps) {
  const auto summary = testing_support::CheckMeasuredLossSteps(
      "training/measured_cpu_hf_loss.json", "standard", kKnownGaps, [](const std::string& name, const nlohmann::json& row, const Result&) {
        EXPECT_EQ(row["measured"].value("baseline_other", int64_t{0}), 0) << name;  // nothing kept across steps
        const bool v446 = row["scenario"]["framework"].value("loss_function_shift_copy", false);
        EXPECT_EQ(v446, name >= std::string("HL05")) << name;
      });
  EXPECT_EQ(summary.rows, 9);
  std::cout << "[ measured ] measured_cpu_hf_loss.json: " << summary.rows << " steps; " << summary.exact_phase_peaks << " of "
            << 3 * summary.rows << " phase peaks exact to the byte\n";
}

// The presets name the versions: `current` is >= 4.49, `torch_2_hf_4_46` turns the copy on; the two
// versions' copies together are refused at the new field.
TEST(HfCausalLmLoss, PresetsAndTheExclusiveVersions) {
  auto current = ParseScenario(R"({"model":"meta-llama/Llama-3.1-8B"})");
  ASSERT_TRUE(current.ok());
  EXPECT_FALSE(current.value().framework.loss_function_shift_copy);
  EXPECT_FALSE(current.value().framework.loss_shift_logits_copy);
  auto v446 = ParseScenario(R"({"model":"meta-llama/Llama-3.1-8B","framework":{"preset":"torch_2_hf_4_46"}})");
  ASSERT_TRUE(v446.ok());
  EXPECT_TRUE(v446.value().framework.loss_function_shift_copy);
  EXPECT_FALSE(v446.value().framework.loss_shift_logits_copy);
  EXPECT_EQ(v446.value().framework.device, Device::kCuda);
  auto both = ParseScenario(R"({"model":"meta-llama/Llama-3.1-8B","framework":{"preset":"torch_2_hf_4_46","loss_shift_logits_copy":true}})");
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.errors()[0].code, "unsupported_combination");
  EXPECT_EQ(both.errors()[0].field_path, "framework.loss_function_shift_copy");
}

// On a GPU with b > 1 the two versions' loss moments differ by what each loss holds beside the same
// 16-bit logits, fp32 upcast and scalars: 4.46-4.48 the shifted fp32 copy and the log-probs over
// b·(s-1) rows and the shifted labels' copy; >= 4.49 the log-probs over b·s rows, the labels' shifted
// slice copy and the padded labels. Llama-3.1-8B, b = 4, s = 2,048: 4.2 GB more under 4.46.
TEST(HfCausalLmLoss, Version446AddsTheShiftedCopyOnGpu) {
  const std::string base = R"({"model":"meta-llama/Llama-3.1-8B","gpu":"h100-sxm-80gb","train":{"method":"lora","micro_batch_size":4,"seq_len":2048,"gradient_checkpointing":true},"framework":{"preset":")";
  const Result r449 = testing_support::EstimateText(base + R"(current"}})");
  const Result r446 = testing_support::EstimateText(base + R"(torch_2_hf_4_46"}})");
  auto loss_moment = [](const Result& r) {
    for (const auto& p : r.timeline) if (p.step == "cross_entropy") return p.allocated_bytes;
    return int64_t{-1};
  };
  const int64_t b = 4, s = 2048, V = 128256;
  const int64_t T = b * s, shifted = b * (s - 1) * V;
  const int64_t expected = (4 * shifted + 4 * shifted + 8 * b * (s - 1)) - (4 * T * V + 8 * T + 8 * b * (s + 1));
  EXPECT_EQ(loss_moment(r446) - loss_moment(r449), expected);
}

}  // namespace
}  // namespace vramplan
