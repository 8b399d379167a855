// DeepSpeed ZeRO-2 under gradient accumulation: a second 16-bit gradient partition in the backward of
// every micro-batch after the first (deepspeed/runtime/zero/stage_1_and_2.py v0.9.0 - v0.16.4:
// independent_gradient_partition_epilogue keeps the partition's gradients in averaged_gradients,
// _release_ipg_buffers drops grads_in_partition, the next backward's copy_grads_in_partition
// allocates a new one at its first bucket reduction). Numbers worked by hand from that code.
#include <gtest/gtest.h>

#include <string>

#include "parallel/data_parallel.h"
#include "parallel/zero2_accumulation.h"
#include "test_support.h"

namespace vramplan {
namespace zero2_accumulation_test {

// Llama-3.1-8B: 8,030,261,248 parameters (its model card's 8.03 B; the repo's safetensors index).
constexpr int64_t kLlama8bParams = 8'030'261'248;

TEST(Zero2Accumulation, PartitionByHand) {
  DataParallel dp;
  dp.dp = 8;
  dp.shard_states = dp.shard_grads = true;
  dp.contiguous_gradients = true;
  dp.reduce_bucket_elements = 500'000'000;
  const Zero2AccumulationPartition z = Zero2AccumulationPartitionFor(dp, 4, false, kLlama8bParams, 2);
  // copy_grads_in_partition: torch.empty(total_size) with total_size = the rank's elements, 16-bit.
  EXPECT_EQ(z.partition_bytes, 1'003'782'656 * 2);
  const int64_t total = kLlama8bParams * 2;
  // No bucket reduced before 5e8 elements are produced; the whole buffer from the first one.
  EXPECT_EQ(z.BytesAfter(400'000'000 * 2, total), 0);
  EXPECT_EQ(z.BytesAfter(600'000'000 * 2, total), 2'007'565'312);
  // Without contiguous_gradients the fresh .grad tensors are the in-flight gradients already counted.
  dp.contiguous_gradients = false;
  EXPECT_EQ(Zero2AccumulationPartitionFor(dp, 4, false, kLlama8bParams, 2).partition_bytes, 0);
  // None without accumulation, under ZeRO-1 (no epilogue off the boundary), or with cpu_offload.
  dp.contiguous_gradients = true;
  EXPECT_EQ(Zero2AccumulationPartitionFor(dp, 1, false, kLlama8bParams, 2).partition_bytes, 0);
  DataParallel z1 = dp;
  z1.shard_grads = false;
  EXPECT_EQ(Zero2AccumulationPartitionFor(z1, 4, false, kLlama8bParams, 2).partition_bytes, 0);
  DataParallel off = dp;
  off.offload_states = off.grads_on_host = true;
  EXPECT_EQ(Zero2AccumulationPartitionFor(off, 4, false, kLlama8bParams, 2).partition_bytes, 0);
}

Result RunWith(int64_t grad_accum_steps, const std::string& parallel) {
  return testing_support::EstimateText(
      R"({"model":"meta-llama/Llama-3.1-8B","train":{"method":"full","precision":"mixed_bf16","optimizer":"adamw","optimizer_impl":"fused",)"
      R"("micro_batch_size":1,"seq_len":16,"grad_accum_steps":)" +
      std::to_string(grad_accum_steps) + R"(},"parallel":)" + parallel + "}");
}

// A 2e10-element bucket is never reduced in the backward (8.03e9 trainable elements): no second
// partition there; a 1e9 one is, once lm_head's and a few layers' gradients exist. The backward
// peaks differ by the buckets ((2e10 - 1e9) x 2 B, data_parallel_test's rule) less, under ZeRO-2
// with accumulation, the second partition (1,003,782,656 x 2 B on each of 8 ranks). 16 tokens: the
// backward's peak is a layer's moment, past the first reduction.
TEST(Zero2Accumulation, SecondPartitionInTheBackward) {
  const int64_t buckets = (20'000'000'000 - 1'000'000'000) * int64_t{2};
  auto diff = [](int64_t ga, const std::string& stage) {
    const Result big = RunWith(ga, R"({"gpus":8,)" + stage + R"(,"reduce_bucket_size":20000000000})");
    const Result small = RunWith(ga, R"({"gpus":8,)" + stage + R"(,"reduce_bucket_size":1000000000})");
    EXPECT_EQ(big.gpu.phase_peaks.forward, small.gpu.phase_peaks.forward);
    return big.gpu.phase_peaks.backward - small.gpu.phase_peaks.backward;
  };
  EXPECT_EQ(diff(4, R"("zero":2)"), buckets - 2'007'565'312);
  EXPECT_EQ(diff(1, R"("zero":2)"), buckets);
  EXPECT_EQ(diff(4, R"("zero":1)"), buckets);
}

}  // namespace
}  // namespace vramplan
