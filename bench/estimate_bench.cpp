// ns per estimate: the serialized API (parse + estimate + serialize) and the typed core alone.
#include <string>

#include <benchmark/benchmark.h>

#include "vramplan/estimate.h"

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

}  // namespace

BENCHMARK_MAIN();
