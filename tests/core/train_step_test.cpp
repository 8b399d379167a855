// The training-step simulation against measured steps (tests/fixtures/training/*.json: exact tensor
// bytes from PyTorch on CPU, shared/measure harness): weights, gradients, optimizer states and saved
// activations exact to the byte; every phase peak within 1%.
#include <cmath>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_support.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace {

using testing_support::GpuTerm;

nlohmann::json Load(const std::string& name) { return testing_support::LoadFixture("training/" + name); }


void ExpectWithin(int64_t predicted, int64_t measured, double tol, const std::string& what) {
  double err = std::abs(static_cast<double>(predicted - measured)) / static_cast<double>(measured);
  EXPECT_LE(err, tol) << what << ": predicted " << predicted << " measured " << measured << " (" << err * 100 << "%)";
}

class MeasuredStep : public ::testing::TestWithParam<std::string> {};

TEST_P(MeasuredStep, MatchesFixtures) {
  nlohmann::json table = Load(GetParam());
  ASSERT_TRUE(table.is_object()) << GetParam();
  int count = 0;
  for (const auto& row : table["rows"]) {
    const std::string name = row["name"].get<std::string>();
    auto scenario = ParseScenario(row["scenario"].dump());
    ASSERT_TRUE(scenario.ok()) << name << ": " << (scenario.ok() ? "" : scenario.errors()[0].message);
    Result r = Estimate(scenario.value());
    const auto& m = row["measured"];
    EXPECT_EQ(GpuTerm(r, "weights"), m["weights"].get<int64_t>()) << name << " weights";
    EXPECT_EQ(r.gpu.gradient_bytes, m["gradients"].get<int64_t>()) << name << " gradients";
    EXPECT_EQ(r.gpu.optimizer_state_bytes, m["optimizer_states"].get<int64_t>()) << name << " optimizer states";
    EXPECT_EQ(r.gpu.saved_activation_bytes, m["saved_activations"].get<int64_t>()) << name << " saved activations";
    ExpectWithin(r.gpu.phase_peaks.forward, m["peak_forward"].get<int64_t>(), 0.01, name + " forward peak");
    ExpectWithin(r.gpu.phase_peaks.backward, m["peak_backward"].get<int64_t>(), 0.01, name + " backward peak");
    ExpectWithin(r.gpu.phase_peaks.optimizer_step, m["peak_optimizer"].get<int64_t>(), 0.01, name + " optimizer peak");
    ++count;
  }
  EXPECT_GT(count, 0);
}

TEST(MeasuredStepTable, AtLeastEightyFixtures) {
  size_t rows = Load("measured_cpu.json")["rows"].size() + Load("measured_cpu_ext.json")["rows"].size();
  EXPECT_GE(rows, 80u);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, MeasuredStep, ::testing::Values("measured_cpu.json", "measured_cpu_ext.json", "measured_cpu_dora.json",
                                                                 "measured_cpu_gptq.json"));

}  // namespace
}  // namespace vramplan
