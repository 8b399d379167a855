// The check the kernel and loss-head fixtures share (layer_kernels_test.cpp, unsloth_loss_test.cpp,
// cce_loss_test.cpp): every measured
// row's weights, gradients, optimizer states and saved activations exact, and each phase peak
// (forward, backward, optimizer step) exact or within its row's known-gap bar.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_support.h"
#include "vramplan/estimate.h"

namespace vramplan::testing_support {

// A row's allowed relative error per phase (forward, backward, optimizer step); rows not listed: 0.
struct PhaseGap {
  const char* row;
  double bar[3];
};

struct MeasuredStepsSummary {
  int rows = 0;
  int exact_phase_peaks = 0;
};

// `loss` is the train.loss every row must use (nullptr: the rows vary, row_check says which);
// `row_check(name, row, result)` adds the fixture's own assertions (what it keeps across steps, its
// switches).
template <class RowCheck>
MeasuredStepsSummary CheckMeasuredLossSteps(const char* fixture, const char* loss, const std::vector<PhaseGap>& gaps,
                                            RowCheck row_check) {
  MeasuredStepsSummary summary;
  const nlohmann::json table = LoadFixture(fixture);
  for (const auto& row : table["rows"]) {
    const std::string name = row["name"].get<std::string>();
    if (loss != nullptr) EXPECT_EQ(row["scenario"]["train"]["loss"], loss) << name;
    auto parsed = ParseScenario(row["scenario"].dump());
    EXPECT_TRUE(parsed.ok()) << name;
    if (!parsed.ok()) continue;
    const Result r = Estimate(parsed.value());
    const auto& m = row["measured"];
    EXPECT_EQ(GpuTerm(r, "weights"), m["weights"].get<int64_t>()) << name;
    EXPECT_EQ(r.gpu.gradient_bytes, m["gradients"].get<int64_t>()) << name;
    EXPECT_EQ(r.gpu.optimizer_state_bytes, m["optimizer_states"].get<int64_t>()) << name;
    EXPECT_EQ(r.gpu.saved_activation_bytes, m["saved_activations"].get<int64_t>()) << name << " saved activations";
    row_check(name, row, r);
    const PhaseGap* gap = nullptr;
    for (const PhaseGap& g : gaps) gap = name == g.row ? &g : gap;
    const int64_t predicted[3] = {r.gpu.phase_peaks.forward, r.gpu.phase_peaks.backward, r.gpu.phase_peaks.optimizer_step};
    const int64_t measured[3] = {m["peak_forward"].get<int64_t>(), m["peak_backward"].get<int64_t>(), m["peak_optimizer"].get<int64_t>()};
    for (int p = 0; p < 3; ++p) {
      const double err = std::abs(static_cast<double>(predicted[p] - measured[p])) / static_cast<double>(measured[p]);
      EXPECT_LE(err, gap ? gap->bar[p] : 0.0) << name << " phase " << p << ": predicted - measured = " << predicted[p] - measured[p];
      summary.exact_phase_peaks += predicted[p] == measured[p];
    }
    ++summary.rows;
  }
  return summary;
}

}  // namespace vramplan::testing_support
