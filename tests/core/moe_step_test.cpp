// Mixture-of-experts training steps against measured ones (tests/fixtures/training/
// measured_cpu_moe.json, PyTorch 1.13.1 on CPU, from measure_moe.py: the harness's Llama with
// transformers' MixtralSparseMoeBlock loop, v4.44, under balanced routing, T·k/E rows per expert).
// Weights, gradients, optimizer states and saved activations are exact to the byte on every row.
// The phase peaks (one expert's buffers, the re-run layer's statements under checkpointing, the
// second expert's input-gradient sum with many experts, the checkpointed last expert's SiLU·up,
// peft's scaling in the last expert's w3 without checkpointing, the final RMSNorm with a 64-token
// vocabulary) are exact to the byte on MOE01-30, the steps the rules were read from. MOE31-38 were
// measured afterwards as a held-out check: saved sets exact on all eight, every phase on four;
// four phases are below the measurement, at moments the estimate does not model: the re-run MoE
// layer under checkpointing inside the last expert's projections with LoRA (backward: MOE31 AMP,
// adapters on the experts, -0.6%; MOE32 bf16, adapters on attention, -1.9%; MOE34 AMP, q/v
// adapters, -0.9%) and a bf16 model with fp32 adapters on the experts without checkpointing
// (forward: MOE35, peft's fp32 sum inside an expert, -2.7%).
#include <algorithm>
#include <iostream>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_support.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace moe_step_test {

using testing_support::GpuTerm;

// One measured fixture against the estimate: weights, gradients, optimizer states, saved
// activations and the optimizer-step peak exact to the byte on every row; the forward / backward
// peaks exact except the `below` phases ("NAME.phase"), which must stay under the measurement by
// less than 1 - floor_fraction. Every row's model_type must be one of `types`.
void CheckMeasuredSteps(const char* fixture, const std::set<std::string>& types, const std::set<std::string>& below, double floor_fraction,
                        int min_rows, const char* what) {
  const nlohmann::json table = testing_support::LoadFixture(std::string("training/") + fixture);
  int rows = 0, exact = 0;
  for (const auto& row : table["rows"]) {
    const std::string name = row["name"].get<std::string>();
    ASSERT_EQ(types.count(row["scenario"]["model"]["model_type"].get<std::string>()), 1u) << name;
    auto scenario = ParseScenario(row["scenario"].dump());
    ASSERT_TRUE(scenario.ok()) << name;
    const Result r = Estimate(scenario.value());
    const auto& m = row["measured"];
    EXPECT_EQ(GpuTerm(r, "weights"), m["weights"].get<int64_t>()) << name;
    EXPECT_EQ(r.gpu.gradient_bytes, m["gradients"].get<int64_t>()) << name;
    EXPECT_EQ(r.gpu.optimizer_state_bytes, m["optimizer_states"].get<int64_t>()) << name;
    EXPECT_EQ(r.gpu.saved_activation_bytes, m["saved_activations"].get<int64_t>()) << name;
    EXPECT_EQ(r.gpu.phase_peaks.optimizer_step, m["peak_optimizer"].get<int64_t>()) << name;
    for (const char* phase : {"forward", "backward"}) {
      const int64_t predicted = std::string(phase) == "forward" ? r.gpu.phase_peaks.forward : r.gpu.phase_peaks.backward;
      const int64_t measured = m[std::string("peak_") + phase].get<int64_t>();
      if (below.count(name + "." + phase) > 0) {
        EXPECT_LT(predicted, measured) << name << " " << phase;
        EXPECT_GT(static_cast<double>(predicted), floor_fraction * static_cast<double>(measured)) << name << " " << phase;
      } else {
        EXPECT_EQ(predicted, measured) << name << " " << phase;
        ++exact;
      }
    }
    ++rows;
  }
  EXPECT_GE(rows, min_rows);
  std::cout << "[ measured ] " << fixture << ": " << rows << " " << what << " steps, saved sets exact; " << exact << " of " << 2 * rows
            << " forward / backward peaks exact to the byte\n";
}

TEST(MoeStep, MatchesMeasuredSteps) {
  CheckMeasuredSteps("measured_cpu_moe.json", {"mixtral"}, {"MOE31.backward", "MOE32.backward", "MOE34.backward", "MOE35.forward"}, 0.97,
                     38, "MoE");
}

// Qwen2-MoE- and Qwen3-MoE-style steps (tests/fixtures/training/measured_cpu_qwen_moe.json, from
// measure_qwen_moe.py: transformers' Qwen2MoeSparseMoeBlock (v4.44) and Qwen3MoeSparseMoeBlock /
// Qwen3MoeAttention (v4.51) under the same balanced routing; norm_topk_prob off and on, the shared
// expert with its sigmoid gate, q/k RMSNorm). Weights, gradients, optimizer states and saved
// activations are exact to the byte on all 25 rows. The phase peaks (the shared expert's
// element-wise backward, the re-run block's last statement, the checkpointed forward inside the
// shared expert) are exact on QMOE01-11, QMOE13, QMOE15 and Q3MOE01-09, except QMOE06's backward,
// 512 B under (AMP, checkpointed: one 512-B block at the re-run's last add not identified).
// QMOE12-15 and Q3MOE09-10 were measured after the rules were written (QMOE15's checkpointed
// forward, 24% under, then gave the shared-expert forward moment); three phases stay under, at
// moments not modelled: QMOE12 backward (AMP, LoRA on the experts, 3 layers, tied) -3.6%, QMOE14
// forward (16 experts, top-4) -0.1%, Q3MOE10 forward (bf16 adapters on attention, 32 experts) -0.5%.
TEST(MoeStep, MatchesMeasuredQwenMoeSteps) {
  CheckMeasuredSteps("measured_cpu_qwen_moe.json", {"qwen2_moe", "qwen3_moe"},
                     {"QMOE06.backward", "QMOE12.backward", "QMOE14.forward", "Q3MOE10.forward"}, 0.96, 25, "Qwen MoE");
}

// Without norm_topk_prob (the Qwen2MoeConfig / Qwen3MoeConfig default) the block skips
// `routing_weights /= routing_weights.sum(dim=-1, keepdim=True)`: no fp32 sum (4·T B) and no copy
// of the top-k values (4·T·k B) per layer (worked from Qwen3MoeSparseMoeBlock.forward, v4.51).
TEST(MoeStep, NormTopkProbSavesTheNormalisation) {
  const nlohmann::json table = testing_support::LoadFixture("training/measured_cpu_qwen_moe.json");
  for (const auto& row : table["rows"]) {
    if (row["name"] != "Q3MOE01") continue;
    nlohmann::json a = row["scenario"], b = row["scenario"];
    b["model"]["norm_topk_prob"] = false;
    const Result ra = Estimate(ParseScenario(a.dump()).value());
    const Result rb = Estimate(ParseScenario(b.dump()).value());
    const int64_t T = 2 * 128, k = 2, L = 2;
    EXPECT_EQ(ra.gpu.saved_activation_bytes - rb.gpu.saved_activation_bytes, L * (4 * T + 4 * T * k));
  }
}

// Qwen3-VL-MoE's text block renormalises whatever its text_config says (Qwen3VLMoeTextSparseMoeBlock:
// "all the models use norm_topk_prob", modeling_qwen3_vl_moe.py v4.57): the same text config wrapped
// as qwen3_vl_moe saves the normalisation even with norm_topk_prob false, as qwen3_moe does only with true.
TEST(MoeStep, Qwen3VlMoeAlwaysNormalisesTheTopK) {
  const nlohmann::json table = testing_support::LoadFixture("training/measured_cpu_qwen_moe.json");
  for (const auto& row : table["rows"]) {
    if (row["name"] != "Q3MOE01") continue;
    nlohmann::json text = row["scenario"]["model"];
    text["norm_topk_prob"] = false;
    nlohmann::json plain = row["scenario"], wrapped = row["scenario"], normalised = row["scenario"];
    plain["model"] = text;
    nlohmann::json inner = text;
    inner["model_type"] = "qwen3_vl_moe_text";
    wrapped["model"] = {{"model_type", "qwen3_vl_moe"}, {"text_config", inner}};
    normalised["model"] = text;
    normalised["model"]["norm_topk_prob"] = true;
    const auto rp = ParseScenario(plain.dump()), rw = ParseScenario(wrapped.dump()), rn = ParseScenario(normalised.dump());
    ASSERT_TRUE(rp.ok() && rw.ok() && rn.ok()) << (rw.ok() ? "" : rw.errors()[0].message);
    const Result wrapped_result = Estimate(rw.value());
    const int64_t saved_wrapped = wrapped_result.gpu.saved_activation_bytes;
    // Its fused experts are not the measured loop: the estimate says so.
    EXPECT_TRUE(std::any_of(wrapped_result.warnings.begin(), wrapped_result.warnings.end(),
                            [](const Issue& w) { return w.message.find("Qwen3VLMoeTextExperts") != std::string::npos; }));
    EXPECT_EQ(saved_wrapped, Estimate(rn.value()).gpu.saved_activation_bytes);
    EXPECT_GT(saved_wrapped, Estimate(rp.value()).gpu.saved_activation_bytes);
  }
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
