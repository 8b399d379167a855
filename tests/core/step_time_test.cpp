// The planner's cost model (planner/step_time.h): each mechanism moves the step time the way its
// source says, on a Llama-3.1-8B step on one H100.
#include <gtest/gtest.h>

#include "model/catalog.h"
#include "planner/step_time.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace step_time_test {

Scenario Base() {
  Expected<Scenario> s = ParseScenario(
      R"({"model":"meta-llama/Llama-3.1-8B","mode":"train","gpu":"h100-sxm-80gb",
          "train":{"method":"full","precision":"bf16","micro_batch_size":4,"seq_len":4096,"grad_accum_steps":4,"gradient_checkpointing":false}})");
  EXPECT_TRUE(s.ok());
  return s.value();
}

StepTime Time(const Scenario& s) {
  return TrainingStepTime(s, s.model, CountParams(s.model), RatesFor(FindGpu(s.gpu.id)));
}

TEST(StepTime, ComputeIsSixFlopsPerParameterPerTokenAtTheAssumedUtilization) {
  const Scenario s = Base();
  const StepTime t = Time(s);
  const ParamCounts p = CountParams(s.model);
  const double tokens = 4.0 * 4096 * 4;
  // 6 N T (Kaplan et al. 2020) plus the attention core, at 45% of 989 TFLOPS.
  const double matmul = 6.0 * static_cast<double>(p.active_per_token - p.embedding) * tokens / (989e12 * 0.45);
  EXPECT_GT(t.compute_s, matmul);
  EXPECT_LT(t.compute_s, matmul * 1.35);  // attention at 4k adds well under a third for 8B
  EXPECT_DOUBLE_EQ(t.tokens, tokens);
}

TEST(StepTime, FullCheckpointingAddsOneForwardSelectiveOnlyTheAttentionCore) {
  Scenario s = Base();
  const double none = Time(s).total_s;
  s.train.gradient_checkpointing = Checkpointing::kFull;
  const StepTime full = Time(s);
  EXPECT_NEAR(full.recompute_s / full.compute_s, 1.0 / 3.0, 0.01);  // forward = 1/3 of forward + backward
  s.train.gradient_checkpointing = Checkpointing::kSelective;
  const StepTime selective = Time(s);
  EXPECT_GT(selective.recompute_s, 0);
  EXPECT_LT(selective.recompute_s, full.recompute_s / 3);
  EXPECT_GT(full.total_s, none);
}

TEST(StepTime, SmallerMicroBatchesCostLaunchesNotCompute) {
  Scenario s = Base();
  const StepTime big = Time(s);
  s.train.micro_batch_size = 1;
  s.train.grad_accum_steps = 16;
  const StepTime small = Time(s);
  EXPECT_DOUBLE_EQ(small.compute_s, big.compute_s);
  EXPECT_GT(small.launch_s, big.launch_s);
  EXPECT_GT(small.total_s, big.total_s);
}

TEST(StepTime, LoraSkipsWeightGradientsQloraPaysDequantization) {
  Scenario s = Base();
  const double full = Time(s).compute_s;
  s.train.method = TrainMethod::kLora;
  const double lora = Time(s).compute_s;
  EXPECT_NEAR(lora / full, 2.0 / 3.0, 0.05);  // 4N of 6N per token
  s.train.method = TrainMethod::kQlora;
  const StepTime q = Time(s);
  EXPECT_GT(q.dequant_s, 0);
}

TEST(StepTime, OffloadAndFp32AreSlowerEagerAttentionToo) {
  Scenario s = Base();
  const double base = Time(s).total_s;
  Scenario off = s;
  off.parallel.zero = 2;
  off.parallel.offload_optimizer = Offload::kCpu;
  EXPECT_GT(Time(off).offload_s, 0);
  EXPECT_GT(Time(off).total_s, base);
  Scenario fp32 = s;
  fp32.train.precision = Precision::kFp32;
  EXPECT_GT(Time(fp32).compute_s, 10 * Time(s).compute_s);
  Scenario eager = s;
  eager.train.attention = AttentionImpl::kEager;
  EXPECT_GT(Time(eager).compute_s, Time(s).compute_s);
}

TEST(StepTime, ZeroThreeCommunicatesMoreThanDdpOverASlowLink) {
  Scenario s = Base();
  s.gpu.id = "rtx-4090-24gb";  // PCIe only
  s.parallel.gpus = 8;
  s.train.micro_batch_size = 1;
  s.train.seq_len = 256;  // little compute to hide the traffic under
  s.train.grad_accum_steps = 1;
  s.parallel.zero = 2;
  const double zero2 = Time(s).communication_s;
  s.parallel.zero = 3;
  const double zero3 = Time(s).communication_s;
  EXPECT_GT(zero2, 0);
  EXPECT_GT(zero3, zero2);
}

TEST(StepTime, ServingOffloadedLayersReadFromHostMemory) {
  Expected<Scenario> e = ParseScenario(R"({"model":"meta-llama/Llama-3.1-8B","mode":"inference","gpu":"rtx-4090-24gb",
      "inference":{"engine":"llama_cpp","weights":"gguf_q4_k_m","prompt_len":1024,"new_tokens":256}})");
  ASSERT_TRUE(e.ok());
  Scenario s = e.value();
  const HardwareRates rates = RatesFor(FindGpu(s.gpu.id));
  const ParamCounts p = CountParams(s.model);
  const StepTime all = ServingTime(s, s.model, p, int64_t{5} << 30, 131072, 1, rates);
  s.inference.n_gpu_layers = 16;
  const StepTime half = ServingTime(s, s.model, p, int64_t{5} << 30, 131072, 1, rates);
  EXPECT_GT(half.offload_s, 0);
  EXPECT_GT(half.total_s, 2 * all.total_s);  // host DRAM is ~25x slower than the 4090's GDDR6X
  // Serving 4 requests one at a time reads the weights 4 times as often.
  s.inference.n_gpu_layers = -1;
  const StepTime serial = ServingTime(s, s.model, p, int64_t{5} << 30, 131072, 4, rates);
  s.inference.batch_size = 4;
  const StepTime batched = ServingTime(s, s.model, p, int64_t{5} << 30, 131072, 4, rates);
  EXPECT_GT(serial.total_s, 2 * batched.total_s);
}

}  // namespace
}  // namespace vramplan
