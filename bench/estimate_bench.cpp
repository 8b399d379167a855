// ns per estimate: the serialized API (parse + estimate + serialize) and the typed core alone.
#include <string>

#include <benchmark/benchmark.h>

#include "vramplan/estimate.h"
#include "vramplan/plan.h"

namespace {

const char* kScenarios[] = {
    R"({"model":"meta-llama/Llama-3.1-8B","mode":"train","train":{"method":"lora","precision":"amp_bf16","micro_batch_size":4,"seq_len":2048}})",
    R"({"model":"meta-llama/Meta-Llama-3-70B","mode":"train","train":{"method":"full","precision":"bf16","optimizer":"adamw","gradient_checkpointing":true,"seq_len":4096}})",
    R"({"model":"Qwen/Qwen2.5-0.5B","mode":"inference","inference":{"batch_size":8,"prompt_len":4096,"new_tokens":512}})",
    R"({"model":"meta-llama/Llama-3.1-405B","mode":"train","train":{"method":"qlora","seq_len":4096,"lora":{"targets":"all-linear"}}})",
    R"({"model":"deepseek-ai/DeepSeek-V3","mode":"inference","inference":{"engine":"vllm","max_model_len":32768},"parallel":{"gpus":8,"tp":8},"gpu":"h200-sxm-141gb"})",
};

void BM_EstimateJson(benchmark::State& state) {
  std::string scenario = kScenarios[state.range(0)];
  for (auto _ : state) benchmark::DoNotOptimize(vramplan::EstimateJson(scenario));
}
BENCHMARK(BM_EstimateJson)->DenseRange(0, 4);

void BM_EstimateTyped(benchmark::State& state) {
  auto scenario = vramplan::ParseScenario(kScenarios[state.range(0)]);
  if (!scenario.ok()) {
    state.SkipWithError("scenario did not parse");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(vramplan::Estimate(scenario.value()));
}
BENCHMARK(BM_EstimateTyped)->DenseRange(0, 4);

// The simulation alone: no inverse searches (max batch/sequence, max context/format/GPUs).
void BM_SimulateOnly(benchmark::State& state) {
  auto scenario = vramplan::ParseScenario(kScenarios[state.range(0)]);
  if (!scenario.ok()) {
    state.SkipWithError("scenario did not parse");
    return;
  }
  vramplan::EstimateOptions options;
  options.inverse = false;
  for (auto _ : state) benchmark::DoNotOptimize(vramplan::Estimate(scenario.value(), options));
}
BENCHMARK(BM_SimulateOnly)->DenseRange(0, 4);

void BM_EstimateSummaryJson(benchmark::State& state) {
  std::string scenario = kScenarios[state.range(0)];
  for (auto _ : state) benchmark::DoNotOptimize(vramplan::EstimateSummaryJson(scenario));
}
BENCHMARK(BM_EstimateSummaryJson)->DenseRange(0, 4);

// torchtune 0.1's model init replayed through the caching allocator (framework.model_load), cold:
// alternating the LoRA rank defeats the one-entry replay cache. Llama-2-7B QLoRA, all linears.
void BM_TorchtuneLoadReplayCold(benchmark::State& state) {
  const std::string head = R"({"model":"meta-llama/Llama-2-7b-hf","train":{"method":"qlora","qlora_backend":"torchao","seq_len":512,"lora":{"targets":"all-linear","rank":)";
  const std::string tail = R"(}},"framework":{"model_load":"torchtune_0_1"}})";
  auto a = vramplan::ParseScenario(head + "8" + tail), b = vramplan::ParseScenario(head + "16" + tail);
  if (!a.ok() || !b.ok()) {
    state.SkipWithError("scenario did not parse");
    return;
  }
  vramplan::EstimateOptions options;
  options.inverse = false;
  bool flip = false;
  for (auto _ : state) {
    benchmark::DoNotOptimize(vramplan::Estimate(flip ? a.value() : b.value(), options));
    flip = !flip;
  }
}
BENCHMARK(BM_TorchtuneLoadReplayCold)->Unit(benchmark::kMillisecond);

// The issue's speed targets (docs/api.md, "Speed"): Llama-3.1-70B LoRA and Llama-3.1-405B full.
const char* kTargets[] = {
    R"({"model":"meta-llama/Llama-3.1-70B-Instruct","mode":"train","train":{"method":"lora","precision":"amp_bf16","micro_batch_size":1,"seq_len":2048}})",
    R"({"model":"meta-llama/Llama-3.1-405B","mode":"train","train":{"method":"full","precision":"bf16","optimizer":"adamw","gradient_checkpointing":true,"seq_len":4096},"parallel":{"gpus":8,"zero":3}})",
    // 4D-parallel 405B (Megatron TP8 x PP9 x CP2 x DP4, sequence parallel, distributed optimizer):
    // nine pipeline-stage roles; the target is within 3x of the single-rank estimate above.
    R"({"model":"meta-llama/Llama-3.1-405B","mode":"train","train":{"method":"full","precision":"mixed_bf16","seq_len":8192,"grad_accum_steps":32,"gradient_checkpointing":"selective","attention":"flash"},"parallel":{"gpus":576,"tp":8,"pp":9,"cp":2,"sequence_parallel":true,"zero":1},"framework":{"trainer":"megatron"}})",
};

// Typed estimate, no explain, no inverse searches.
void BM_TargetTypedNoExplain(benchmark::State& state) {
  auto scenario = vramplan::ParseScenario(kTargets[state.range(0)]);
  if (!scenario.ok()) {
    state.SkipWithError("scenario did not parse");
    return;
  }
  vramplan::EstimateOptions options;
  options.explain = false;
  options.inverse = false;
  for (auto _ : state) benchmark::DoNotOptimize(vramplan::Estimate(scenario.value(), options));
}
BENCHMARK(BM_TargetTypedNoExplain)->DenseRange(0, 2);

// The staged estimator: the model and GPU prepared once, then the typed estimate (no explain, no
// inverse searches): what the planner calls for each variant.
void BM_TargetPreparedNoExplain(benchmark::State& state) {
  auto scenario = vramplan::ParseScenario(kTargets[state.range(0)]);
  if (!scenario.ok()) {
    state.SkipWithError("scenario did not parse");
    return;
  }
  const vramplan::PreparedModel prepared = vramplan::Prepare(scenario.value());
  vramplan::EstimateOptions options;
  options.explain = false;
  options.inverse = false;
  for (auto _ : state) benchmark::DoNotOptimize(vramplan::Estimate(prepared, scenario.value(), options));
}
BENCHMARK(BM_TargetPreparedNoExplain)->DenseRange(0, 2);

void BM_TargetSummaryJson(benchmark::State& state) {
  std::string scenario = kTargets[state.range(0)];
  for (auto _ : state) benchmark::DoNotOptimize(vramplan::EstimateSummaryJson(scenario));
}
BENCHMARK(BM_TargetSummaryJson)->DenseRange(0, 2);

// The typed estimate with explain and the inverse searches: the full JSON result less the parse
// and the serialization.
void BM_TargetTypedFull(benchmark::State& state) {
  auto scenario = vramplan::ParseScenario(kTargets[state.range(0)]);
  if (!scenario.ok()) {
    state.SkipWithError("scenario did not parse");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(vramplan::Estimate(scenario.value()));
}
BENCHMARK(BM_TargetTypedFull)->DenseRange(0, 2);

// The full JSON result with the inverse searches.
void BM_TargetFullJson(benchmark::State& state) {
  std::string scenario = kTargets[state.range(0)];
  for (auto _ : state) benchmark::DoNotOptimize(vramplan::EstimateJson(scenario));
}
BENCHMARK(BM_TargetFullJson)->DenseRange(0, 2);

}  // namespace

// The planner (the plan op, docs/planner.md): the issue's 70B full fine-tune (ZeRO-3 on 8x H100,
// 8.8 GiB short) and an 8B LoRA on a 24 GB card (micro-batch 4 at 4k), whole op: search, the plans'
// diffs and sentences, the fewest GPUs and the larger GPUs that fit.
const char* kPlans[] = {
    R"({"scenario":{"model":"meta-llama/Meta-Llama-3-70B","mode":"train","train":{"method":"full","precision":"bf16"},"parallel":{"gpus":8,"zero":3},"gpu":"h100-sxm-80gb"},"max_plans":8})",
    R"({"scenario":{"model":"meta-llama/Llama-3.1-8B","mode":"train","train":{"method":"lora","precision":"bf16","micro_batch_size":4,"seq_len":4096},"gpu":"rtx-4090-24gb"},"max_plans":8})",
};
void BM_PlanJson(benchmark::State& state) {
  std::string request = kPlans[state.range(0)];
  for (auto _ : state) benchmark::DoNotOptimize(vramplan::PlanJson(request));
}
BENCHMARK(BM_PlanJson)->DenseRange(0, 1)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
