// Training's inverse questions are exact: the answer fits and one more does not.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "vramplan/estimate.h"

namespace vramplan {
namespace train_capacity_test {

bool Fits(Scenario s) { return Estimate(s, EstimateOptions{false, false}).gpu.fits; }

TEST(TrainCapacity, MaxMicroBatchAndSeqAreTight) {
  const char* scenarios[] = {
      R"({"model":"meta-llama/Llama-3.1-8B","train":{"method":"qlora","micro_batch_size":4},"gpu":"rtx-4090-24gb"})",
      R"({"model":"Qwen/Qwen2.5-0.5B","train":{"method":"full","attention":"eager","gradient_checkpointing":false,"seq_len":512},"gpu":"t4-16gb"})",
      R"({"model":"google/gemma-2-9b-it","train":{"method":"lora","seq_len":8192},"gpu":"a100-sxm-80gb"})",
  };
  for (const char* text : scenarios) {
    auto parsed = ParseScenario(text);
    ASSERT_TRUE(parsed.ok()) << text;
    const Scenario& s = parsed.value();
    Result r = Estimate(s);
    ASSERT_TRUE(r.training.present);
    const int64_t b = r.training.max_micro_batch_fits, len = r.training.max_seq_len_fits;
    ASSERT_GT(b, 0) << text;
    Scenario t = s;
    t.train.micro_batch_size = b;
    EXPECT_TRUE(Fits(t)) << text << " b=" << b;
    t.train.micro_batch_size = b + 1;
    EXPECT_FALSE(Fits(t)) << text << " b=" << b + 1;
    ASSERT_GT(len, 0) << text;
    t = s;
    t.train.seq_len = len;
    EXPECT_TRUE(Fits(t)) << text << " s=" << len;
    // The search stops at the model's context limit (Gemma 2: 8,192); below it, one more does not fit.
    if (r.training.max_seq_len_bound == "model_context") {
      EXPECT_EQ(len, s.model.context_limit) << text;
      continue;
    }
    EXPECT_EQ(r.training.max_seq_len_bound, "memory") << text;
    t.train.seq_len = len + 1;
    EXPECT_FALSE(Fits(t)) << text << " s=" << len + 1;
  }
}

TEST(TrainCapacity, NothingFitsGivesZero) {
  auto s = ParseScenario(R"({"model":"meta-llama/Llama-3.1-405B","train":{"method":"full"},"gpu":"rtx-3060-12gb"})");
  ASSERT_TRUE(s.ok());
  Result r = Estimate(s.value());
  EXPECT_EQ(r.training.max_micro_batch_fits, 0);
  EXPECT_EQ(r.training.max_seq_len_fits, 0);
}

Scenario Parse(const char* text) {
  auto s = ParseScenario(text);
  EXPECT_TRUE(s.ok()) << text;
  return s.ok() ? s.value() : Scenario{};
}

int64_t DeviceTotal(Scenario s, int64_t gpus) {
  s.parallel.gpus = gpus;
  return Estimate(s, EstimateOptions{false, false}).gpu.device_total_bytes;
}

// training.min_gpus is the smallest multiple of tp x pp x cp that fits: it fits, one data-parallel
// replica fewer does not, and it is never above a GPU count that is known to fit.
TEST(TrainCapacity, MinGpusIsTight) {
  const char* scenarios[] = {
      R"({"model":"meta-llama/Llama-3.1-70B-Instruct","train":{"method":"full"},"parallel":{"gpus":8,"zero":3},"gpu":"h100-sxm-80gb"})",
      R"({"model":"meta-llama/Llama-3.2-3B","train":{"method":"full"},"parallel":{"gpus":2,"zero":1},"gpu":"rtx-4090-24gb"})",
      R"({"model":"meta-llama/Llama-3.1-8B","train":{"method":"full"},"parallel":{"gpus":4,"zero":2},"gpu":"rtx-4090-24gb"})",
      R"({"model":"meta-llama/Llama-3.1-8B","train":{"method":"full","seq_len":4096},"parallel":{"gpus":4,"fsdp":true},"gpu":"a10-24gb"})",
      R"({"model":"meta-llama/Llama-3.1-70B-Instruct","train":{"method":"full"},"parallel":{"gpus":8,"zero":3,"offload_optimizer":"cpu"},"gpu":"a100-sxm-80gb"})",
      R"({"model":"meta-llama/Llama-3.1-70B-Instruct","train":{"method":"full"},"parallel":{"gpus":16,"tp":2,"zero":3},"gpu":"h100-sxm-80gb"})",
      R"({"model":"Qwen/Qwen2.5-0.5B","train":{"method":"full"},"gpu":"t4-16gb"})",
  };
  for (const char* text : scenarios) {
    const Scenario s = Parse(text);
    const Result r = Estimate(s);
    const int64_t mp = s.parallel.tp * s.parallel.pp * s.parallel.cp;
    const int64_t n = r.training.min_gpus;
    ASSERT_GT(n, 0) << text;
    EXPECT_EQ(n % mp, 0) << text;
    EXPECT_LE(n, kMaxGpus) << text;
    EXPECT_LE(DeviceTotal(s, n), s.gpu.memory_bytes) << text << " gpus=" << n;
    if (n > mp) EXPECT_GT(DeviceTotal(s, n - mp), s.gpu.memory_bytes) << text << " gpus=" << n - mp;
    if (r.gpu.fits) EXPECT_LE(n, s.parallel.gpus) << text;
    EXPECT_EQ(r.training.min_gpus_zero3, 0) << text;  // only asked when min_gpus is 0
  }
}

// A lower bound from the ZeRO paper (Rajbhandari et al., 2020, section 5): mixed-precision Adam
// holds 16 B per parameter of model states (2 fp16 weights + 2 gradients + 12 fp32 master weights
// and moments); ZeRO-3 divides all of it by Nd, so Nd >= 16 x params / capacity. 70B (70,553,706,496
// parameters) on 80 GB: 16 x 70.55e9 / 85.0e9 B = 13.3 -> at least 14 GPUs, before activations.
TEST(TrainCapacity, MinGpusRespectsTheZeroPaperBound) {
  const Scenario s = Parse(R"({"model":"meta-llama/Llama-3.1-70B-Instruct","train":{"method":"full","precision":"mixed_bf16"},)"
                           R"("parallel":{"gpus":8,"zero":3},"gpu":"h100-sxm-80gb"})");
  const Result r = Estimate(s);
  ASSERT_EQ(r.params.total, 70553706496);
  const int64_t bound = (16 * r.params.total + s.gpu.memory_bytes - 1) / s.gpu.memory_bytes;
  EXPECT_GE(r.training.min_gpus, bound);
  EXPECT_LT(r.training.min_gpus, 4 * bound);  // the activations and gathered units are not that large
}

// Plain data parallelism (no ZeRO / FSDP) replicates the model states on every GPU: more GPUs do
// not lower per-GPU memory, so a scenario that does not fit one replica has min_gpus 0, and
// min_gpus_zero3 answers with ZeRO-3 instead (tight, like min_gpus).
TEST(TrainCapacity, PlainDataParallelSaysWhichShardingWouldFit) {
  const Scenario s = Parse(R"({"model":"meta-llama/Llama-3.1-70B-Instruct","train":{"method":"full"},"parallel":{"gpus":8},"gpu":"h100-sxm-80gb"})");
  const Result r = Estimate(s);
  EXPECT_FALSE(r.gpu.fits);
  EXPECT_EQ(r.training.min_gpus, 0);
  const int64_t n = r.training.min_gpus_zero3;
  ASSERT_GT(n, 0);
  Scenario z = s;
  z.parallel.zero = 3;
  EXPECT_LE(DeviceTotal(z, n), s.gpu.memory_bytes);
  EXPECT_GT(DeviceTotal(z, n - 1), s.gpu.memory_bytes);
  // A 0.5B full fine-tune fits one 80 GB GPU: it needs just that one.
  const Result small = Estimate(Parse(R"({"model":"Qwen/Qwen2.5-0.5B","train":{"method":"full"},"parallel":{"gpus":4},"gpu":"h100-sxm-80gb"})"));
  EXPECT_EQ(small.training.min_gpus, 1);
  // Nothing fits even with ZeRO-3 over 2^20 GPUs: activations alone exceed a 12 GB card.
  const Result none = Estimate(Parse(R"({"model":"meta-llama/Llama-3.1-405B","train":{"method":"full","seq_len":131072,)"
                                     R"("gradient_checkpointing":false},"gpu":"rtx-3060-12gb"})"));
  EXPECT_EQ(none.training.min_gpus, 0);
  EXPECT_EQ(none.training.min_gpus_zero3, 0);
}

// The bisection relies on the device total being non-increasing in the data-parallel degree from
// 2 GPUs up (SmallestGpusFitting in train_capacity.cpp); check it over every sharding, and the
// search against a linear scan where the answer is small.
TEST(TrainCapacity, MinGpusSearchIsMonotoneAndMatchesALinearScan) {
  const char* parallel[] = {R"("zero":1)", R"("zero":2)", R"("zero":3)", R"("fsdp":true)", R"("zero":2,"offload_optimizer":"cpu")",
                            R"("zero":3,"offload_optimizer":"cpu","offload_params":"cpu")", R"("zero":1,"overlap_comm":true)"};
  const char* models[] = {R"("model":"meta-llama/Llama-3.1-8B","train":{"method":"full"})",
                          R"("model":"Qwen/Qwen1.5-MoE-A2.7B","train":{"method":"full","optimizer":"adamw_8bit"})",
                          R"("model":"meta-llama/Llama-3.1-8B","train":{"method":"lora"})"};
  for (const char* model : models) {
    for (const char* p : parallel) {
      const std::string text = std::string("{") + model + R"(,"gpu":"t4-16gb","parallel":{"gpus":2,)" + p + "}}";
      const Scenario s = Parse(text.c_str());
      int64_t previous = DeviceTotal(s, 2);
      for (int64_t dp : {3, 4, 5, 7, 8, 16, 31, 64, 1000, 65536, 1 << 20}) {
        const int64_t total = DeviceTotal(s, dp);
        EXPECT_LE(total, previous) << text << " dp=" << dp;
        previous = total;
      }
      int64_t scan = 0;
      for (int64_t g = 1; g <= 64 && scan == 0; ++g) {
        if (DeviceTotal(s, g) <= s.gpu.memory_bytes) scan = g;
      }
      const int64_t answer = Estimate(s).training.min_gpus;
      if (scan > 0) EXPECT_EQ(answer, scan) << text;
      else EXPECT_TRUE(answer == 0 || answer > 64) << text << " -> " << answer;
    }
  }
}

// The GPU-count search guesses from the A + B / dp line through its last probes; whatever the
// guesses, the answer is the linear scan's. Capacities are taken from the device totals themselves
// (exactly at and one byte below the total at g GPUs) so the answers fall on every stretch of the
// curve, and the scenario's own GPU count (whose total the search reads from the estimate) lies
// inside the searched range.
TEST(TrainCapacity, MinGpusMatchesALinearScanAtEveryCapacity) {
  const char* parallel[] = {R"("zero":3)", R"("zero":2)", R"("fsdp":true)", R"("zero":3,"offload_optimizer":"cpu")"};
  constexpr int64_t kScan = 256;
  for (const char* p : parallel) {
    const std::string head = std::string(R"({"model":"meta-llama/Llama-3.1-8B","train":{"method":"full","seq_len":1024},"parallel":{"gpus":8,)") + p +
                             R"(},"gpu":{"name":"test","memory_bytes":)";
    const Scenario probe = Parse((head + "85899345920}}").c_str());
    std::vector<int64_t> totals(kScan + 1);
    for (int64_t g = 1; g <= kScan; ++g) totals[static_cast<size_t>(g)] = DeviceTotal(probe, g);
    for (int64_t at : {3, 5, 8, 9, 17, 33, 58, 100, 200}) {
      for (int64_t below : {0, 1}) {
        const int64_t capacity = totals[static_cast<size_t>(at)] - below;
        int64_t scan = 0;
        for (int64_t g = 1; g <= kScan && scan == 0; ++g) {
          if (totals[static_cast<size_t>(g)] <= capacity) scan = g;
        }
        const Scenario s = Parse((head + std::to_string(capacity) + "}}").c_str());
        const int64_t answer = Estimate(s).training.min_gpus;
        if (scan > 0) EXPECT_EQ(answer, scan) << p << " capacity " << capacity;
        else EXPECT_TRUE(answer == 0 || answer > kScan) << p << " capacity " << capacity << " -> " << answer;
      }
    }
    // Below the total at the largest GPU count, nothing fits.
    const int64_t floor_total = DeviceTotal(probe, int64_t{1} << 20);
    for (int64_t capacity : {floor_total - 1, floor_total / 2}) {
      EXPECT_EQ(Estimate(Parse((head + std::to_string(capacity) + "}}").c_str())).training.min_gpus, 0) << p << " capacity " << capacity;
    }
    EXPECT_EQ(Estimate(Parse((head + std::to_string(floor_total) + "}}").c_str())).training.min_gpus > kScan, true) << p;
  }
}

}  // namespace
}  // namespace vramplan
