// train.kernels "unsloth" and "liger" against measured steps (tests/fixtures/training/
// measured_cpu_kernels.json, PyTorch 1.13.1 on CPU): UK rows from measure_kernels.py (unsloth's
// Fast_RMS_Layernorm, LoRA_QKV, LoRA_W and LoRA_MLP Functions emulated with their own
// save_for_backward and outputs), LG rows from measure_liger.py (Liger's LigerRMSNormFunction,
// LigerSiLUMulFunction, LigerRopeFunction and LigerFusedLinearCrossEntropyFunction, train.loss
// "fused_linear"). The saved set, weights, gradients and optimizer states are exact to the byte;
// the phase peaks are exact on every row but UK07's backward (+1.3%: the recomputation inside
// LoRA_MLP.backward, docs/frameworks.md). The same steps with train.kernels "pytorch" (HF modules
// + PEFT) save more: the kernels are what the estimate follows.
#include <algorithm>
#include <cmath>
#include <iostream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/measured_loss_steps.h"
#include "test_support.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace {


Result EstimateRow(nlohmann::json scenario) {
  auto parsed = ParseScenario(scenario.dump());
  EXPECT_TRUE(parsed.ok());
  return Estimate(parsed.value());
}

TEST(LayerKernels, UnslothAndLigerMatchMeasuredSteps) {
  // UK07's backward is the one phase peak off (+103,348 B, 1.3%); every other is exact.
  const std::vector<testing_support::PhaseGap> known_gaps = {{"UK07", {0.0, 0.014, 0.0}}};
  int liger_rows = 0;
  const auto summary = testing_support::CheckMeasuredLossSteps(
      "training/measured_cpu_kernels.json", nullptr, known_gaps, [&](const std::string& name, const nlohmann::json& row, const Result&) {
        const bool liger = name.rfind("LG", 0) == 0;
        EXPECT_EQ(row["scenario"]["train"]["kernels"], liger ? "liger" : "unsloth") << name;
        if (liger) {
          EXPECT_EQ(row["scenario"]["train"]["loss"], "fused_linear") << name;
          ++liger_rows;
        }
      });
  EXPECT_EQ(summary.rows, 14);
  EXPECT_EQ(liger_rows, 7);
  std::cout << "[ measured ] measured_cpu_kernels.json: " << summary.rows << " steps (" << liger_rows << " Liger), saved sets exact; "
            << summary.exact_phase_peaks << " of " << 3 * summary.rows << " phase peaks exact to the byte\n";
}

TEST(LayerKernels, PytorchKernelsSaveMoreOnTheSameSteps) {
  // HF modules + PEFT: the MLP keeps gate, act(gate), up and act * up, each adapter its lora_A
  // output, each RMSNorm an fp32 copy of its input: more than unsloth's or Liger's Functions on
  // every row (the LG rows keep Liger's fused linear cross-entropy).
  const nlohmann::json table = testing_support::LoadFixture("training/measured_cpu_kernels.json");
  for (const auto& row : table["rows"]) {
    nlohmann::json sc = row["scenario"];
    sc["train"]["kernels"] = "pytorch";
    EXPECT_GT(EstimateRow(sc).gpu.saved_activation_bytes, row["measured"]["saved_activations"].get<int64_t>()) << row["name"];
  }
}

}  // namespace
}  // namespace vramplan
