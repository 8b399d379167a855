// The training-step simulation against measured steps (tests/fixtures/training/*.json: exact tensor
// bytes from PyTorch on CPU; measured_cpu_random.json is a seeded random draw, regenerated with
// tests/fixtures/training/measure_random_steps.py): weights, gradients, optimizer states and saved
// activations exact to the byte; every phase peak (forward, backward, optimizer) within 0.1% and the
// step's peak (the highest of the three) exact on every row.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_support.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace train_step_test {

using testing_support::GpuTerm;

nlohmann::json Load(const std::string& name) { return testing_support::LoadFixture("training/" + name); }


void ExpectWithin(int64_t predicted, int64_t measured, double tol, const std::string& what) {
  double err = std::abs(static_cast<double>(predicted - measured)) / static_cast<double>(measured);
  EXPECT_LE(err, tol) << what << ": predicted " << predicted << " measured " << measured << " (" << err * 100 << "%)";
}

// The fixtures' `weights` are the harness's parameters and buffers. auto-gptq's QuantLinear also
// keeps its int32 shift table `wf` (32/bits entries) as a plain attribute, resident beside them: the
// estimate counts it with the weights (train/weights.cpp). Every decoder linear of these Llama rows
// is quantized (7 per layer).
int64_t GptqShiftTables(const nlohmann::json& scenario) {
  const auto& t = scenario["train"];
  if (t.value("qlora_backend", "") != "gptq") return 0;
  return scenario["model"]["num_hidden_layers"].get<int64_t>() * 7 * 4 * (32 / t["qlora_bits"].get<int64_t>());
}

class MeasuredStep : public ::testing::TestWithParam<std::string> {};

TEST_P(MeasuredStep, MatchesFixtures) {
  nlohmann::json table = Load(GetParam());
  ASSERT_TRUE(table.is_object()) << GetParam();
  int count = 0, exact_phases = 0;
  for (const auto& row : table["rows"]) {
    const std::string name = row["name"].get<std::string>();
    auto scenario = ParseScenario(row["scenario"].dump());
    ASSERT_TRUE(scenario.ok()) << name << ": " << (scenario.ok() ? "" : scenario.errors()[0].message);
    Result r = Estimate(scenario.value());
    const auto& m = row["measured"];
    EXPECT_EQ(GpuTerm(r, "weights"), m["weights"].get<int64_t>() + GptqShiftTables(row["scenario"])) << name << " weights";
    EXPECT_EQ(r.gpu.gradient_bytes, m["gradients"].get<int64_t>()) << name << " gradients";
    EXPECT_EQ(r.gpu.optimizer_state_bytes, m["optimizer_states"].get<int64_t>()) << name << " optimizer states";
    EXPECT_EQ(r.gpu.saved_activation_bytes, m["saved_activations"].get<int64_t>()) << name << " saved activations";
    const double tol = 0.001;
    ExpectWithin(r.gpu.phase_peaks.forward, m["peak_forward"].get<int64_t>(), tol, name + " forward peak");
    ExpectWithin(r.gpu.phase_peaks.backward, m["peak_backward"].get<int64_t>(), tol, name + " backward peak");
    ExpectWithin(r.gpu.phase_peaks.optimizer_step, m["peak_optimizer"].get<int64_t>(), tol, name + " optimizer peak");
    const int64_t predicted_step = std::max({r.gpu.phase_peaks.forward, r.gpu.phase_peaks.backward, r.gpu.phase_peaks.optimizer_step});
    const int64_t measured_step = std::max({m["peak_forward"].get<int64_t>(), m["peak_backward"].get<int64_t>(), m["peak_optimizer"].get<int64_t>()});
    EXPECT_EQ(predicted_step, measured_step) << name << " step peak";
    exact_phases += (r.gpu.phase_peaks.forward == m["peak_forward"].get<int64_t>()) + (r.gpu.phase_peaks.backward == m["peak_backward"].get<int64_t>()) +
                    (r.gpu.phase_peaks.optimizer_step == m["peak_optimizer"].get<int64_t>());
    ++count;
  }
  EXPECT_GT(count, 0);
  std::cout << "[ measured ] " << GetParam() << ": " << count << " steps, every one at the exact bar; " << exact_phases << " of " << 3 * count
            << " phase peaks exact to the byte\n";
}

TEST(MeasuredStepTable, AtLeastEightyFixtures) {
  size_t rows = Load("measured_cpu.json")["rows"].size() + Load("measured_cpu_ext.json")["rows"].size();
  EXPECT_GE(rows, 80u);
  EXPECT_GE(Load("measured_cpu_random.json")["rows"].size(), 150u);  // the seeded random draw
}

INSTANTIATE_TEST_SUITE_P(Fixtures, MeasuredStep, ::testing::Values("measured_cpu.json", "measured_cpu_ext.json", "measured_cpu_dora.json",
                                                                 "measured_cpu_gptq.json", "measured_cpu_random.json",
                                                                 "measured_cpu_frameworks.json"));

}  // namespace
}  // namespace vramplan
