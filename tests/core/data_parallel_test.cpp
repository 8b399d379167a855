// Data-parallel sharding: ZeRO stages and FSDP divide exactly the model states they shard, offload
// moves them to host RAM, and a single GPU is unchanged.
#include <gtest/gtest.h>

#include "vramplan/estimate.h"

namespace vramplan {
namespace {

Result RunWith(const std::string& parallel) {
  auto s = ParseScenario(R"({"model":"meta-llama/Llama-3.1-8B","train":{"method":"full","precision":"mixed_bf16","optimizer":"adamw","optimizer_impl":"fused"},"parallel":)" + parallel + "}");
  EXPECT_TRUE(s.ok()) << parallel;
  return s.ok() ? Estimate(s.value()) : Result{};
}

int64_t Term(const Result& r, const char* key) {
  for (const auto& t : r.gpu.breakdown) {
    if (t.key == key) return t.bytes;
  }
  return -1;
}

TEST(DataParallel, ZeroStagesShardWhatTheySay) {
  const Result one = RunWith(R"({"gpus":1})");
  const Result z1 = RunWith(R"({"gpus":8,"zero":1})");
  const Result z2 = RunWith(R"({"gpus":8,"zero":2})");
  const Result z3 = RunWith(R"({"gpus":8,"zero":3})");
  const int64_t states = one.gpu.optimizer_state_bytes, grads = one.gpu.gradient_bytes, weights = Term(one, "weights");
  EXPECT_EQ(z1.gpu.optimizer_state_bytes, (states + 7) / 8);
  EXPECT_EQ(z1.gpu.gradient_bytes, grads);
  EXPECT_EQ(Term(z1, "weights"), weights);
  EXPECT_EQ(z2.gpu.gradient_bytes, (grads + 7) / 8);
  EXPECT_EQ(Term(z2, "weights"), weights);
  EXPECT_EQ(Term(z3, "weights"), (weights + 7) / 8);
  EXPECT_LT(z3.gpu.peak_allocated_bytes, z2.gpu.peak_allocated_bytes);
  EXPECT_LT(z2.gpu.peak_allocated_bytes, z1.gpu.peak_allocated_bytes);
}

TEST(DataParallel, FsdpMatchesZero3AndOffloadMovesStatesToHost) {
  const Result fsdp = RunWith(R"({"gpus":4,"fsdp":true})");
  const Result z3 = RunWith(R"({"gpus":4,"zero":3})");
  EXPECT_EQ(Term(fsdp, "weights"), Term(z3, "weights"));
  EXPECT_GT(fsdp.gpu.phase_peaks.forward, z3.gpu.phase_peaks.forward);  // FSDP keeps its root unit gathered
  const Result off = RunWith(R"({"gpus":4,"zero":3,"offload_optimizer":"cpu","offload_params":"cpu"})");
  EXPECT_EQ(Term(off, "optimizer_states"), 0);
  EXPECT_EQ(Term(off, "weights"), 0);
  EXPECT_GT(off.cpu.bytes, z3.gpu.optimizer_state_bytes);
  EXPECT_GT(Term(off, "cuda_context"), Term(RunWith(R"({"gpus":1})"), "cuda_context"));  // NCCL buffers
}

}  // namespace
}  // namespace vramplan
