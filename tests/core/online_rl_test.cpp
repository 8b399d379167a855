// GRPO / PPO (train/online_rl.h, docs/post_training.md): the rules of each phase, table by table,
// with expectations computed by hand from the TRL code each rule cites.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "test_support.h"
#include "train/online_rl.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace online_rl_test {

int64_t Model(const Result& r, const std::string& key) {
  for (const auto& t : r.gpu.models) {
    if (t.key == key) return t.bytes;
  }
  return -1;
}

int64_t Host(const Result& r, const std::string& key) {
  for (const auto& t : r.cpu.breakdown) {
    if (t.key == key) return t.bytes;
  }
  return 0;
}

// Qwen2.5-0.5B: 494,032,768 parameters (tied embeddings), 24 layers, 2 KV heads of 64, h 896,
// intermediate 4,864, vocabulary 151,936.
constexpr int64_t kParams = 494'032'768;

Result RunRl(const std::string& train, const std::string& extra = "") {
  return testing_support::EstimateText(R"({"model":"Qwen/Qwen2.5-0.5B","gpu":"a100-sxm-80gb",)" + extra +
                                       R"("train":{"precision":"bf16","micro_batch_size":4,"seq_len":512,)" + train + "}}");
}

TEST(OnlineRl, BatchAndPassRules) {
  struct Row {
    const char* name;
    Objective objective;
    TrainMethod method;
    double beta;
    bool use_vllm;
    int64_t micro, accum, steps_per_generation, completion, seq, logprob_batch;
    // expected
    int64_t completion_tokens, sequences, chunk;
    bool ref_copy, ref_pass, old_pass;
  };
  const Row rows[] = {
      // GRPOConfig defaults: beta 0 (no reference), steps_per_generation = gradient_accumulation_steps,
      // TRL's log-prob batch_size = per_device_train_batch_size; completions cut to seq_len - 1.
      {"grpo full beta 0", Objective::kGrpo, TrainMethod::kFull, 0.0, false, 4, 2, 0, 512, 512, 0, 511, 8, 4, false, false, false},
      {"grpo full beta", Objective::kGrpo, TrainMethod::kFull, 0.04, false, 4, 1, 0, 256, 512, 0, 256, 4, 4, true, true, false},
      {"grpo lora beta", Objective::kGrpo, TrainMethod::kLora, 0.04, false, 2, 1, 3, 128, 512, 0, 128, 6, 2, false, true, true},
      // vLLM: old-policy log-probs for the importance-sampling correction (default on).
      {"grpo vllm", Objective::kGrpo, TrainMethod::kQlora, 0.0, true, 8, 4, 0, 256, 1024, 2, 256, 32, 2, false, false, true},
      // PPO: reference unless PEFT, local_rollout_forward_batch_size 64 (at most the rollouts).
      {"ppo full", Objective::kPpo, TrainMethod::kFull, 0.0, false, 16, 8, 0, 53, 512, 0, 53, 128, 64, true, true, false},
      {"ppo lora", Objective::kPpo, TrainMethod::kLora, 0.0, false, 4, 1, 0, 53, 512, 0, 53, 4, 4, false, true, false},
  };
  for (const Row& r : rows) {
    TrainConfig t;
    t.objective = r.objective;
    t.method = r.method;
    t.rollout.beta = r.beta;
    t.rollout.use_vllm = r.use_vllm;
    t.micro_batch_size = r.micro;
    t.grad_accum_steps = r.accum;
    t.rollout.steps_per_generation = r.steps_per_generation;
    t.rollout.max_completion_length = r.completion;
    t.seq_len = r.seq;
    t.rollout.logprob_batch_size = r.logprob_batch;
    EXPECT_TRUE(IsOnlineRl(t.objective)) << r.name;
    EXPECT_EQ(CompletionTokens(t), r.completion_tokens) << r.name;
    EXPECT_EQ(RolloutSequences(t), r.sequences) << r.name;
    EXPECT_EQ(LogprobChunkRows(t), r.chunk) << r.name;
    EXPECT_EQ(RlReferenceCopyResident(t), r.ref_copy) << r.name;
    EXPECT_EQ(RlReferencePassRuns(t), r.ref_pass) << r.name;
    EXPECT_EQ(OldPolicyPassRuns(t), r.old_pass) << r.name;
  }
  EXPECT_FALSE(IsOnlineRl(Objective::kDpo));
}

TEST(OnlineRl, ReferenceModelFollowsBetaAndPeft) {
  const Result none = RunRl(R"("method":"full","objective":"grpo","rollout":{"max_completion_length":256})");
  const Result full = RunRl(R"("method":"full","objective":"grpo","rollout":{"max_completion_length":256,"beta":0.04})");
  const Result lora = RunRl(R"("method":"lora","objective":"grpo","rollout":{"max_completion_length":256,"beta":0.04})");
  EXPECT_EQ(Model(none, "reference"), 0);
  EXPECT_EQ(none.gpu.phase_peaks.logprob, 0);  // beta 0, no vLLM: no no-grad pass runs
  // GRPOTrainer.__init__: create_model_from_path with the policy's dtype: 2 B per parameter, resident
  // at every phase (the reference's own pass adds its logits at the logprob phase's peak).
  EXPECT_GE(Model(full, "reference"), 2 * kParams);
  EXPECT_GT(full.gpu.phase_peaks.logprob, 0);
  EXPECT_EQ(Model(lora, "reference"), 0);  // the base with adapters disabled
  EXPECT_GT(lora.gpu.phase_peaks.logprob, 0);
}

TEST(OnlineRl, GenerateKeepsTheRolloutKvCache) {
  // generate() on the policy over 4 sequences of 512 tokens (256 prompt + 256 completion):
  //   KV: 4 x 512 x (24 layers x 2 x 2 heads x 64 x 2 B = 12,288) = 25,165,824
  //   prefill MLP: 4 x 256 x 2 B x (2 x 896 + 3 x 4,864) = 33,554,432
  //   last-position logits + fp32 copies: 4 x 151,936 x (2 + 4 + 4) = 6,077,440
  const Result r = RunRl(R"("method":"full","objective":"grpo","rollout":{"max_completion_length":256})");
  ASSERT_TRUE(r.rollout.present);
  EXPECT_EQ(r.rollout.engine, "generate");
  EXPECT_EQ(r.rollout.engine_bytes, 25'165'824 + 33'554'432 + 6'077'440);
  EXPECT_EQ(r.rollout.asleep_bytes, 0);  // nothing stays once generate() returns
  EXPECT_GT(r.gpu.phase_peaks.rollout, 0);
  EXPECT_EQ(Model(r, "rollout") > 0, r.peak_phase == "rollout");
}

TEST(OnlineRl, ColocatedVllmSleepLevels) {
  auto run = [](int level) {
    return RunRl(R"("method":"lora","objective":"grpo","rollout":{"max_completion_length":256,"use_vllm":true,"vllm_sleep_level":)" +
               std::to_string(level) + "}");
  };
  const Result awake = run(0), l1 = run(1), l2 = run(2);
  // vLLM's bf16 weights: 494,032,768 x 2 B (the tied embedding stored once).
  const int64_t vllm_weights = 2 * kParams;
  EXPECT_EQ(awake.rollout.engine_bytes, l2.rollout.engine_bytes);  // awake, every level holds the same
  // Level 1 offloads the weights to host RAM; level 2 discards them; both free the KV pool.
  EXPECT_EQ(Host(l1, "rollout_slept_weights"), vllm_weights);
  EXPECT_EQ(Host(l2, "rollout_slept_weights"), 0);
  EXPECT_EQ(l1.rollout.asleep_bytes, l2.rollout.asleep_bytes);
  EXPECT_GT(awake.rollout.asleep_bytes, vllm_weights + l2.rollout.asleep_bytes);  // + the KV pool
  // The training phases carry exactly the sleeping engine's residue.
  EXPECT_EQ(awake.gpu.phase_peaks.backward - l2.gpu.phase_peaks.backward, awake.rollout.asleep_bytes - l2.rollout.asleep_bytes);
  // Colocated, the rollout phase holds the whole engine: 0.3 x 80 GiB claimed + CUDA graphs outside it.
  EXPECT_GE(awake.rollout.engine_bytes, static_cast<int64_t>(0.3 * 80.0 * (1LL << 30)) - (1LL << 30));
  // Awake, the engine's weights and KV pool stay under the step (its peak is then in training);
  // asleep at level 2 the rollout itself is the peak.
  EXPECT_EQ(awake.gpu.phase_peaks.forward > awake.gpu.phase_peaks.rollout, true);
  EXPECT_EQ(l2.peak_phase, "rollout");
  EXPECT_EQ(l2.peak_model, "rollout");
}

TEST(OnlineRl, ServerModeKeepsTheEngineOffTheTrainingGpus) {
  const Result r = RunRl(R"("method":"lora","objective":"grpo","rollout":{"max_completion_length":256,"use_vllm":true,"vllm_mode":"server","vllm_gpu_memory_utilization":0.9,"vllm_tensor_parallel_size":2})");
  EXPECT_EQ(r.rollout.mode, "server");
  EXPECT_EQ(r.rollout.server_gpus, 2);
  EXPECT_GT(r.rollout.engine_bytes, 0);
  EXPECT_EQ(Model(r, "rollout"), 0);
  EXPECT_NE(r.peak_phase, "rollout");
}

TEST(OnlineRl, PpoHoldsCriticAndRewardModels) {
  const Result full = RunRl(R"("method":"full","objective":"ppo","rollout":{"max_completion_length":53})");
  const Result lora = RunRl(R"("method":"lora","objective":"ppo","rollout":{"max_completion_length":53})");
  // The reward model: frozen, the policy's architecture in bf16: the full policy's own weights term
  // (2 B per parameter and the rotary buffer).
  const int64_t policy_weights = testing_support::GpuTerm(RunRl(R"("method":"full")"), "weights");
  EXPECT_GE(policy_weights, 2 * kParams);
  EXPECT_EQ(Model(full, "reward"), policy_weights);
  EXPECT_EQ(Model(lora, "reward"), policy_weights);
  // The critic trains in full even for a LoRA policy (TRL applies PEFT to the policy only): at
  // least its bf16 weights and gradients and AdamW's two states per parameter.
  EXPECT_GE(Model(lora, "critic"), 2 * kParams + 2 * 2 * kParams);
  EXPECT_EQ(Model(lora, "reference"), 0);
  EXPECT_GE(Model(full, "reference"), 2 * kParams);
  int64_t sum = 0;
  for (const auto& t : full.gpu.models) sum += t.bytes;
  EXPECT_EQ(sum, full.gpu.peak_allocated_bytes);
  EXPECT_GT(full.gpu.phase_peaks.logprob, 0);
}

// The GRPO training step measured on CPU (measure_grpo.py: TRL v1.9's _compute_loss on the harness
// Llama): the model states exactly, the phase peaks within kGrpoPhaseTolerance (0.0-0.6% on the nine
// rows: the per-token loss tensors are counted as a fixed number of (R, C) fp32 tensors, not traced
// op by op). The CopySlices backward rule was fixed after the six G* rows were measured (before: -2%
// to -15%); the three H* rows (tied MQA one-layer, MHA checkpointed bf16, AMP LoRA on every linear)
// were measured after the fix and held out: within 0.5%.
constexpr double kGrpoPhaseTolerance = 0.01;

TEST(OnlineRl, MatchesMeasuredGrpoSteps) {
  const nlohmann::json table = testing_support::LoadFixture("training/measured_cpu_grpo.json");
  ASSERT_TRUE(table.is_object());
  int count = 0;
  double worst = 0;
  for (const auto& row : table["rows"]) {
    const std::string name = row["name"].get<std::string>();
    auto scenario = ParseScenario(row["scenario"].dump());
    ASSERT_TRUE(scenario.ok()) << name;
    const Result r = Estimate(scenario.value());
    const auto& m = row["measured"];
    EXPECT_EQ(r.gpu.gradient_bytes, m["gradients"].get<int64_t>()) << name << " gradients";
    EXPECT_EQ(r.gpu.optimizer_state_bytes, m["optimizer_states"].get<int64_t>()) << name << " optimizer states";
    const std::pair<int64_t, const char*> phases[] = {{r.gpu.phase_peaks.forward, "peak_forward"},
                                                      {r.gpu.phase_peaks.backward, "peak_backward"},
                                                      {r.gpu.phase_peaks.optimizer_step, "peak_optimizer"}};
    std::cout << "[ measured ] " << name;
    for (const auto& [estimated, key] : phases) {
      const double measured = m[key].get<double>();
      const double error = (static_cast<double>(estimated) - measured) / measured;
      worst = std::max(worst, std::abs(error));
      std::cout << " " << key << " " << static_cast<int64_t>(measured) << " est " << estimated << " (" << std::round(error * 1000) / 10 << "%)";
      EXPECT_LE(std::abs(error), kGrpoPhaseTolerance) << name << " " << key;
    }
    std::cout << "\n";
    ++count;
  }
  EXPECT_GE(count, 6);
  std::cout << "[ measured ] measured_cpu_grpo.json: " << count << " GRPO steps, worst phase error " << std::round(worst * 1000) / 10 << "%\n";
}

TEST(OnlineRl, SftResultsKeepTheirShape) {
  const Result sft = RunRl(R"("method":"full")");
  EXPECT_FALSE(sft.rollout.present);
  EXPECT_EQ(sft.gpu.models.size(), 2u);
  EXPECT_EQ(sft.gpu.phase_peaks.rollout, 0);
  EXPECT_EQ(sft.gpu.phase_peaks.logprob, 0);
}

}  // namespace
}  // namespace vramplan
