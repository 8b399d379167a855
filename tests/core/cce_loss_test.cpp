// train.loss "cce" against measured steps (tests/fixtures/training/measured_cpu_cce.json, PyTorch 1.13.1
// on CPU, measure_cce.py): Apple's Cut Cross Entropy (apple/ml-cross-entropy 1f3ebdb, cce.py
// LinearCrossEntropyFunction, cce_lse_forward.py, indexed_dot.py, cce_backward.py, utils.py) as unsloth
// 2024.12 calls it (unsloth_zoo loss_utils.py fused_linear_cross_entropy), its Triton kernels emulated with
// their own allocations and saved tensors, on top of unsloth's layer kernels (measure_kernels.py), with
// and without checkpointing (HF's, unsloth's offloaded), LoRA and full, bf16 (CCE's backward needs 16-bit
// operands). Weights, gradients, states and saved sets exact on every row; the loss head's backward
// (the backward peak of CC01 and CC04, at cce_backward_kernel's last allocation) exact; the phase
// peaks elsewhere within the bars of kKnownGaps.
#include <iostream>

#include <gtest/gtest.h>

#include "support/measured_loss_steps.h"

namespace vramplan {
namespace cce_loss_test {

// Known gaps, not the loss (the bar per phase, forward / backward / optimizer, as a relative error).
// The forward peaks: the last layer's eager attention scores (long rows) under unsloth's layer kernels
// (train_step.cpp, "the last layer's eager attention scores"), over by b·s·h·2 (LoRA) or 2·b·s·h·2 (full)
// and under by b·s·h·2 with the offloaded checkpoint (CC03): the same with unsloth's own loss (measured
// with measure_unsloth_loss.py's Function on CC01's model at b=1, s=1,040: +266,240 B), a gap of that
// moment no earlier fixture reached. The backward: CC03's attention backward under the offloaded
// checkpoint (-0.77%), and the full fine-tunes' attention backward over by 2·h bytes (128 / 160 B).
const std::vector<testing_support::PhaseGap> kKnownGaps = {
    {"CC01", {0.007, 0.0, 0.0}}, {"CC03", {0.008, 0.008, 0.0}}, {"CC04", {0.01, 0.0, 0.0}},
    {"CC05", {0.008, 1e-5, 0.0}}, {"CC06", {0.0, 1e-5, 0.0}}, {"CC07", {0.013, 1e-5, 0.0}}};

TEST(CceLoss, MatchesMeasuredSteps) {
  const auto summary = testing_support::CheckMeasuredLossSteps(
      "training/measured_cpu_cce.json", "cce", kKnownGaps, [](const std::string& name, const nlohmann::json& row, const Result&) {
        EXPECT_EQ(row["measured"].value("baseline_other", int64_t{0}), 0) << name;  // nothing kept across steps
      });
  EXPECT_EQ(summary.rows, 7);
  std::cout << "[ measured ] measured_cpu_cce.json: " << summary.rows << " steps; " << summary.exact_phase_peaks << " of "
            << 3 * summary.rows << " phase peaks exact to the byte\n";
}

}  // namespace
}  // namespace vramplan
