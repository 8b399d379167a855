// Mixture-of-experts training steps against measured ones (tests/fixtures/training/
// measured_cpu_moe.json, PyTorch 1.13.1 on CPU, from measure_moe.py: the harness's Llama with
// transformers' MixtralSparseMoeBlock loop, v4.44, under balanced routing, T·k/E rows per expert).
// Weights, gradients, optimizer states and saved activations are exact to the byte on every row;
// the backward and optimizer peaks too (one expert's buffers, the re-run layer's statements under
// checkpointing, the second expert's input-gradient sum with many experts) and every forward peak
// (the checkpointed last expert's SiLU·up, peft's scaling in the last expert's w3 without
// checkpointing, the final RMSNorm with a 64-token vocabulary): every phase exact to the byte.
#include <algorithm>
#include <iostream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_support.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace {

using testing_support::GpuTerm;

TEST(MoeStep, MatchesMeasuredSteps) {
  const nlohmann::json table = testing_support::LoadFixture("training/measured_cpu_moe.json");
  int rows = 0;
  for (const auto& row : table["rows"]) {
    const std::string name = row["name"].get<std::string>();
    ASSERT_EQ(row["scenario"]["model"]["model_type"], "mixtral") << name;
    auto scenario = ParseScenario(row["scenario"].dump());
    ASSERT_TRUE(scenario.ok()) << name;
    const Result r = Estimate(scenario.value());
    const auto& m = row["measured"];
    EXPECT_EQ(GpuTerm(r, "weights"), m["weights"].get<int64_t>()) << name;
    EXPECT_EQ(r.gpu.gradient_bytes, m["gradients"].get<int64_t>()) << name;
    EXPECT_EQ(r.gpu.optimizer_state_bytes, m["optimizer_states"].get<int64_t>()) << name;
    EXPECT_EQ(r.gpu.saved_activation_bytes, m["saved_activations"].get<int64_t>()) << name;
    EXPECT_EQ(r.gpu.phase_peaks.backward, m["peak_backward"].get<int64_t>()) << name;
    EXPECT_EQ(r.gpu.phase_peaks.optimizer_step, m["peak_optimizer"].get<int64_t>()) << name;
    EXPECT_EQ(r.gpu.phase_peaks.forward, m["peak_forward"].get<int64_t>()) << name;
    ++rows;
  }
  EXPECT_GE(rows, 30);
  std::cout << "[ measured ] measured_cpu_moe.json: " << rows << " MoE steps, saved sets and every phase peak exact\n";
}

// Under balanced routing the experts' saves add up to the T·k routed rows however they split:
// doubling the experts at the same top-k adds only the router softmax's fp32 columns
// (F.softmax(router_logits, dim=1, dtype=torch.float) saves its (T, E) result), 4·T B per expert
// per layer (worked from MixtralSparseMoeBlock.forward).
TEST(MoeStep, RoutedRowsDoNotDependOnTheSplit) {
  const nlohmann::json table = testing_support::LoadFixture("training/measured_cpu_moe.json");
  for (const auto& row : table["rows"]) {
    if (row["name"] != "MOE01") continue;
    nlohmann::json a = row["scenario"], b = row["scenario"];
    b["model"]["num_local_experts"] = 8;
    const Result ra = Estimate(ParseScenario(a.dump()).value());
    const Result rb = Estimate(ParseScenario(b.dump()).value());
    const int64_t T = 2 * 128, L = 2;
    EXPECT_EQ(rb.gpu.saved_activation_bytes - ra.gpu.saved_activation_bytes, L * 4 * T * 4);
  }
}

}  // namespace
}  // namespace vramplan
