// train.loss "unsloth" against measured steps (tests/fixtures/training/measured_cpu_unsloth_loss.json,
// PyTorch 1.13.1 on CPU, measure_unsloth_loss.py): unsloth's CausalLM_fast_forward and
// Fast_CrossEntropyLoss (unslothai/unsloth c069555, models/llama.py and kernels/cross_entropy_loss.py)
// emulated with their own allocations, saved tensors and in-place backward, on top of unsloth's layer
// kernels (measure_kernels.py), with and without checkpointing (HF's, unsloth's offloaded), LoRA and full,
// bf16 and fp32, and with the forward wrapped as accelerate's native AMP wraps it (autocast +
// convert_outputs_to_fp32: the rows with train.autocast). Saved sets, weights, gradients and states
// exact on every row; phase peaks exact on every row but the one listed in kKnownGaps.
#include <cmath>
#include <iostream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_support.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace {

using testing_support::GpuTerm;

// Known gap (docs/frameworks.md, unsloth): the bar per phase (forward, backward, optimizer) as a
// relative error. UL08's backward (+1.5%, over): the last checkpointed layer recomputed inside
// LoRA_MLP.backward (HF's non-reentrant checkpoint unpacks at the Function's first saved tensor),
// where measure_kernels.py's own chunk scratch and the recomputed attention overlap; UK07 in
// measured_cpu_kernels.json is the same moment (layer_kernels_test.cpp).
struct Gap {
  const char* row;
  double bar[3];
};
constexpr Gap kKnownGaps[] = {{"UL08", {0.0, 0.016, 0.0}}};

TEST(UnslothLoss, MatchesMeasuredSteps) {
  const nlohmann::json table = testing_support::LoadFixture("training/measured_cpu_unsloth_loss.json");
  int rows = 0, wrapped = 0, exact = 0;
  for (const auto& row : table["rows"]) {
    const std::string name = row["name"].get<std::string>();
    ASSERT_EQ(row["scenario"]["train"]["loss"], "unsloth") << name;
    ASSERT_EQ(row["scenario"]["train"]["kernels"], "unsloth") << name;
    wrapped += row["scenario"]["train"].value("autocast", false);
    auto parsed = ParseScenario(row["scenario"].dump());
    ASSERT_TRUE(parsed.ok()) << name;
    const Result r = Estimate(parsed.value());
    const auto& m = row["measured"];
    EXPECT_EQ(GpuTerm(r, "weights"), m["weights"].get<int64_t>()) << name;
    const Gap* gap = nullptr;
    for (const Gap& g : kKnownGaps) gap = name == g.row ? &g : gap;
    // CausalLM_fast_forward's extra_ignored_labels (max_seq_length x 1 int64, kept from the first step):
    // alive at the measured step's start beyond weights, states and batch.
    EXPECT_EQ(m["baseline_other"].get<int64_t>(), 8 * row["scenario"]["train"]["seq_len"].get<int64_t>()) << name;
    EXPECT_EQ(r.gpu.gradient_bytes, m["gradients"].get<int64_t>()) << name;
    EXPECT_EQ(r.gpu.optimizer_state_bytes, m["optimizer_states"].get<int64_t>()) << name;
    EXPECT_EQ(r.gpu.saved_activation_bytes, m["saved_activations"].get<int64_t>()) << name << " saved activations";
    const int64_t predicted[3] = {r.gpu.phase_peaks.forward, r.gpu.phase_peaks.backward, r.gpu.phase_peaks.optimizer_step};
    const int64_t measured[3] = {m["peak_forward"].get<int64_t>(), m["peak_backward"].get<int64_t>(), m["peak_optimizer"].get<int64_t>()};
    for (int p = 0; p < 3; ++p) {
      const double err = std::abs(static_cast<double>(predicted[p] - measured[p])) / static_cast<double>(measured[p]);
      EXPECT_LE(err, gap ? gap->bar[p] : 0.0) << name << " phase " << p << ": predicted - measured = " << predicted[p] - measured[p];
      exact += predicted[p] == measured[p];
    }
    ++rows;
  }
  EXPECT_EQ(rows, 11);
  EXPECT_EQ(wrapped, 5);
  std::cout << "[ measured ] measured_cpu_unsloth_loss.json: " << rows << " steps (" << wrapped << " under accelerate's native AMP); "
            << exact << " of " << 3 * rows << " phase peaks exact to the byte\n";
}

}  // namespace
}  // namespace vramplan
