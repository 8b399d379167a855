// Training's inverse questions are exact: the answer fits and one more does not.
#include <string>

#include <gtest/gtest.h>

#include "vramplan/estimate.h"

namespace vramplan {
namespace {

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

}  // namespace
}  // namespace vramplan
