// Preference objectives (train.objective, train/preference.h): the DPO step measured to the byte on
// CPU (measured_cpu_dpo.json, from tests/fixtures/training/measure_dpo.py: TRL v1.9
// DPOTrainer._compute_loss on the SFT fixtures' Llama) and the rules each objective follows.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>

#include "test_support.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace preference_step_test {

using testing_support::GpuTerm;

int64_t Term(const std::vector<vramplan::Term>& terms, const std::string& key) {
  for (const auto& t : terms) {
    if (t.key == key) return t.bytes;
  }
  return -1;
}

// Every phase peak and the step's peak exact (K01's forward peaks at the policy's own eager attention
// scores over 1,024 tokens: docs/training.md section 3, the eager scores moment).

TEST(PreferenceStep, MatchesMeasuredDpoSteps) {
  const nlohmann::json table = testing_support::LoadFixture("training/measured_cpu_dpo.json");
  ASSERT_TRUE(table.is_object());
  int count = 0, exact = 0;
  for (const auto& row : table["rows"]) {
    const std::string name = row["name"].get<std::string>();
    if (row["scenario"]["train"].value("objective", "dpo") != "dpo") continue;  // ORPO / KTO: the next test
    auto scenario = ParseScenario(row["scenario"].dump());
    ASSERT_TRUE(scenario.ok()) << name;
    const Result r = Estimate(scenario.value());
    const auto& m = row["measured"];
    const int64_t ref = m["reference_weights"].get<int64_t>();
    EXPECT_EQ(GpuTerm(r, "weights"), m["weights"].get<int64_t>() + ref) << name << " weights (policy + reference copy)";
    EXPECT_EQ(r.gpu.gradient_bytes, m["gradients"].get<int64_t>()) << name << " gradients";
    EXPECT_EQ(r.gpu.optimizer_state_bytes, m["optimizer_states"].get<int64_t>()) << name << " optimizer states";
    // The compute_loss window after the reference pass (the loss; KTO's metrics) counts as the forward.
    const int64_t forward = std::max(m["peak_forward"].get<int64_t>(), m.value("peak_loss", int64_t{0}));
    EXPECT_EQ(r.gpu.phase_peaks.forward, forward) << name << " forward (policy log-probs) peak";
    EXPECT_EQ(r.gpu.phase_peaks.reference, m["peak_reference"].get<int64_t>()) << name << " reference peak";
    EXPECT_EQ(r.gpu.phase_peaks.backward, m["peak_backward"].get<int64_t>()) << name << " backward peak";
    EXPECT_EQ(r.gpu.phase_peaks.optimizer_step, m["peak_optimizer"].get<int64_t>()) << name << " optimizer peak";
    const int64_t measured_peak = std::max({forward, m["peak_reference"].get<int64_t>(),
                                            m["peak_backward"].get<int64_t>(), m["peak_optimizer"].get<int64_t>()});
    EXPECT_EQ(r.gpu.peak_allocated_bytes, measured_peak) << name << " step peak";
    exact += r.gpu.peak_allocated_bytes == measured_peak ? 1 : 0;
    const std::string phase = m["peak_phase"].get<std::string>() == "loss" ? "forward" : m["peak_phase"].get<std::string>();
    EXPECT_EQ(r.peak_phase, phase == "optimizer" ? "optimizer_step" : phase) << name;
    EXPECT_EQ(r.peak_model, phase == "reference" ? "reference" : "policy") << name;
    EXPECT_EQ(Term(r.gpu.models, "policy") + Term(r.gpu.models, "reference"), r.gpu.peak_allocated_bytes) << name;
    ++count;
  }
  EXPECT_GE(count, 43);
  std::cout << "[ measured ] measured_cpu_dpo.json: " << count << " DPO steps, step peak exact on " << exact << "\n";
}

// ORPO and KTO steps measured the same way (the O and T rows; docs/post_training.md): the model
// states, the optimizer peak, every ORPO phase peak, the KTO forward (the loss window's entropy
// metric), reference and backward peaks exact.
TEST(PreferenceStep, MatchesMeasuredOrpoAndKtoSteps) {
  const nlohmann::json table = testing_support::LoadFixture("training/measured_cpu_dpo.json");
  int orpo = 0, kto = 0;
  for (const auto& row : table["rows"]) {
    const std::string objective = row["scenario"]["train"].value("objective", "dpo");
    if (objective == "dpo") continue;
    const std::string name = row["name"].get<std::string>();
    auto scenario = ParseScenario(row["scenario"].dump());
    ASSERT_TRUE(scenario.ok()) << name;
    const Result r = Estimate(scenario.value());
    const auto& m = row["measured"];
    EXPECT_EQ(GpuTerm(r, "weights"), m["weights"].get<int64_t>() + m["reference_weights"].get<int64_t>()) << name;
    EXPECT_EQ(r.gpu.gradient_bytes, m["gradients"].get<int64_t>()) << name;
    EXPECT_EQ(r.gpu.optimizer_state_bytes, m["optimizer_states"].get<int64_t>()) << name;
    auto near = [&](int64_t predicted, int64_t measured, const char* what) {
      std::cout << "[ measured ] " << name << " " << what << ": " << predicted - measured << " B of " << measured << "\n";
      EXPECT_EQ(predicted, measured) << name << " " << what;
    };
    near(r.gpu.phase_peaks.forward, std::max(m["peak_forward"].get<int64_t>(), m["peak_loss"].get<int64_t>()), "forward");
    near(r.gpu.phase_peaks.reference, m["peak_reference"].get<int64_t>(), "reference");
    near(r.gpu.phase_peaks.backward, m["peak_backward"].get<int64_t>(), "backward");
    EXPECT_EQ(r.gpu.phase_peaks.optimizer_step, m["peak_optimizer"].get<int64_t>()) << name;
    (objective == "kto" ? kto : orpo) += 1;
  }
  EXPECT_GE(orpo, 4);
  EXPECT_GE(kto, 6);
}

Result RunTrain(const std::string& train) {
  return testing_support::EstimateText(R"({"model":"Qwen/Qwen2.5-0.5B","gpu":"a100-sxm-80gb","train":{"precision":"bf16","micro_batch_size":2,"seq_len":512,)" + train + "}}");
}

// accelerate's convert_outputs_to_fp32 (framework.amp_outputs_fp32; measured: the W rows above):
// only under autocast, and not under DeepSpeed, whose engine runs the 16-bit model itself.
TEST(PreferenceStep, AccelerateFp32OutputsOnlyUnderAutocastWithoutDeepSpeed) {
  auto run = [](const std::string& train, bool wrap, int zero) {
    return testing_support::EstimateText(R"({"model":"Qwen/Qwen2.5-0.5B","gpu":"a100-sxm-80gb","parallel":{"gpus":)" +
                                         std::string(zero ? "2" : "1") + R"(,"zero":)" + std::to_string(zero) +
                                         R"(},"framework":{"amp_outputs_fp32":)" + (wrap ? "true" : "false") +
                                         R"(},"train":{"method":"lora","objective":"dpo","micro_batch_size":2,"seq_len":512,)" + train + "}}");
  };
  const std::string amp = R"("precision":"bf16","autocast":true)", pure = R"("precision":"bf16")";
  EXPECT_GT(run(amp, true, 0).gpu.peak_allocated_bytes, run(amp, false, 0).gpu.peak_allocated_bytes);  // fp32 logits
  EXPECT_EQ(run(pure, true, 0).gpu.peak_allocated_bytes, run(pure, false, 0).gpu.peak_allocated_bytes);  // no autocast
  EXPECT_EQ(run(amp, true, 2).gpu.peak_allocated_bytes, run(amp, false, 2).gpu.peak_allocated_bytes);    // DeepSpeed
}

TEST(PreferenceStep, FullFineTuningKeepsAFrozenReferenceCopy) {
  const Result sft = RunTrain(R"("method":"full")"), dpo = RunTrain(R"("method":"full","objective":"dpo")");
  // DPOTrainer.__init__: create_model_from_path(... model_init_kwargs): the policy's weights again.
  EXPECT_EQ(Term(dpo.gpu.models, "reference") >= GpuTerm(sft, "weights"), true);
  EXPECT_GT(dpo.gpu.phase_peaks.reference, 0);
  EXPECT_GT(dpo.gpu.saved_activation_bytes, sft.gpu.saved_activation_bytes);  // 2 x the rows
}

TEST(PreferenceStep, LoraReferenceIsTheBaseWithAdaptersDisabled) {
  const Result dpo = RunTrain(R"("method":"lora","objective":"dpo")");
  EXPECT_GT(dpo.gpu.phase_peaks.reference, 0);  // the reference forward still runs
  EXPECT_EQ(GpuTerm(dpo, "weights"), GpuTerm(RunTrain(R"("method":"lora")"), "weights"));  // no copy
}

TEST(PreferenceStep, PrecomputedReferenceAndReferenceFreeObjectivesRunNoReference) {
  const Result pre = RunTrain(R"("method":"full","objective":"dpo","precompute_ref_log_probs":true)");
  const Result simpo = RunTrain(R"("method":"full","objective":"simpo")");
  EXPECT_EQ(pre.gpu.phase_peaks.reference, 0);
  EXPECT_EQ(Term(pre.gpu.models, "reference"), 0);
  // SimPO (CPOTrainer loss_type simpo, cpo_alpha 0) has DPO's policy side without a reference.
  EXPECT_EQ(simpo.gpu.peak_allocated_bytes, pre.gpu.peak_allocated_bytes);
  // ORPO adds the chosen rows' cross-entropy: its saved tensors lie under the log-prob head's backward.
  EXPECT_GT(RunTrain(R"("method":"full","objective":"orpo")").gpu.phase_peaks.backward, simpo.gpu.phase_peaks.backward);
}

TEST(PreferenceStep, RpoAlphaAddsTheChosenRowsCrossEntropyToDpoOnly) {
  const Result dpo = RunTrain(R"("method":"full","objective":"dpo")");
  const Result rpo = RunTrain(R"("method":"full","objective":"dpo","rpo_alpha":1.0)");
  const Result rpo_small = RunTrain(R"("method":"full","objective":"dpo","rpo_alpha":0.1)");
  EXPECT_GT(rpo.gpu.peak_allocated_bytes, dpo.gpu.peak_allocated_bytes);  // the term's cross-entropy and gradient
  EXPECT_GT(rpo.gpu.phase_peaks.forward, dpo.gpu.phase_peaks.forward);    // after the reference, its logits alive
  EXPECT_EQ(rpo_small.gpu.peak_allocated_bytes, rpo.gpu.peak_allocated_bytes);  // the weight is no memory
  // Other objectives ignore it (ORPO has its own NLL head; KTO and SFT none).
  EXPECT_EQ(RunTrain(R"("method":"full","objective":"orpo","rpo_alpha":1.0)").gpu.peak_allocated_bytes,
            RunTrain(R"("method":"full","objective":"orpo")").gpu.peak_allocated_bytes);
  EXPECT_EQ(RunTrain(R"("method":"full","rpo_alpha":1.0)").gpu.peak_allocated_bytes, RunTrain(R"("method":"full")").gpu.peak_allocated_bytes);
}

TEST(PreferenceStep, KtoForwardsUnpairedRowsWithAReference) {
  const Result kto = RunTrain(R"("method":"full","objective":"kto")"), dpo = RunTrain(R"("method":"full","objective":"dpo")");
  EXPECT_GT(kto.gpu.phase_peaks.reference, 0);
  EXPECT_LT(kto.gpu.saved_activation_bytes, dpo.gpu.saved_activation_bytes);  // b rows, not 2b
}

TEST(PreferenceStep, Zero3ShardsTheReferenceCopy) {
  auto run = [](int zero, const char* objective) {
    return testing_support::EstimateText(R"({"model":"Qwen/Qwen2.5-0.5B","gpu":"a100-sxm-80gb","parallel":{"gpus":8,"zero":)" + std::to_string(zero) +
                                         R"(},"train":{"method":"full","precision":"bf16","objective":")" + objective + R"("}})");
  };
  // The reference copy is resident from the load on: what it adds to the load's peak, per rank.
  const int64_t z2 = run(2, "dpo").gpu.phase_peaks.load - run(2, "sft").gpu.phase_peaks.load;
  const int64_t z3 = run(3, "dpo").gpu.phase_peaks.load - run(3, "sft").gpu.phase_peaks.load;
  EXPECT_GT(z3, 0);
  EXPECT_LT(z3 * 4, z2);  // / 8 ranks (prepare_deepspeed keeps stage 3 for the reference)
}

}  // namespace
}  // namespace vramplan
