// torchao NF4 under FSDP (parallel/fsdp_nf4_shard.h) and under torch.compile (train/activations.cpp),
// bitsandbytes' 4-bit QuantState under FSDP (parallel/fsdp_bnb_quant_state.h):
// the shards' compact quantization factors and the fused dequantization. Expectations are worked
// out from torchao's layout (block 64, scaler block 256, one bf16 factor per scaler block once
// new_zeros has rebuilt the inner tensors), not read off the code's output.
#include "parallel/fsdp_nf4_shard.h"
#include "parallel/fsdp_bnb_quant_state.h"
#include "model/quantized_layouts.h"

#include <gtest/gtest.h>

#include <string>

#include "test_support.h"

namespace vramplan {
namespace fsdp_nf4_shard_test {

TEST(FsdpNf4Shard, SavedBytesHandWorked) {
  // Llama-3-70B gate_proj, 8192 x 28672 = 234,881,024 weights: 3,670,016 blocks of 64, 14,336
  // scaler blocks of 256. The single-GPU storage keeps 2 B per block; the shard's new_zeros keeps 2 B
  // per scaler block.
  EXPECT_EQ(TorchaoNf4ShardedSavedBytes(234881024), 2 * 3670016 - 2 * 14336);
  EXPECT_EQ(TorchaoNf4ShardedSavedBytes(0), 0);
}

std::string QloraJson(int gpus, const char* backend, bool compile, int seq_len = 2048) {
  return std::string(R"({"mode":"train","gpu":"a100-sxm-80gb","model":"meta-llama/Llama-3.1-8B",)") +
         R"("parallel":{"gpus":)" + std::to_string(gpus) + (gpus > 1 ? R"(,"fsdp":true,"fsdp_no_sync":false})" : "}") +
         R"(,"train":{"method":"qlora","precision":"bf16","micro_batch_size":1,"seq_len":)" + std::to_string(seq_len) + R"(,"gradient_checkpointing":true,)" +
         R"("attention":"sdpa","qlora_bits":4,"qlora_backend":")" + backend +
         R"(","lora":{"rank":16,"alpha":32,"targets":"all-linear","adapter_dtype":"base"}},)" +
         R"("framework":{"torch_compile":)" + (compile ? "true" : "false") + "}}";
}

TEST(FsdpNf4Shard, ShardsHoldTheCompactLayout) {
  const Result one = testing_support::EstimateText(QloraJson(1, "torchao", false));
  const Result eight = testing_support::EstimateText(QloraJson(8, "torchao", false));
  const int64_t w1 = testing_support::TermBytes(one.gpu.breakdown, "weights");
  const int64_t w8 = testing_support::TermBytes(eight.gpu.breakdown, "weights");
  // Llama-3.1-8B's 32 decoder layers: 32 x (4096 x (4096 + 1024 + 1024 + 4096) + 3 x 4096 x 14336).
  const int64_t quantized = 32LL * (4096LL * (4096 + 1024 + 1024 + 4096) + 3LL * 4096 * 14336);
  const int64_t saved = TorchaoNf4ShardedSavedBytes(quantized);
  EXPECT_NEAR(static_cast<double>(w8), static_cast<double>(w1 - saved) / 8.0, 1.0);
}

TEST(FsdpBnbQuantState, StaysWholeOnEveryRank) {
  // bitsandbytes' Params4bit: FSDP shards the packed data; the QuantState (Nf4Bytes less the packed
  // half byte per weight) stays whole on each rank (parallel/fsdp_bnb_quant_state.h).
  int64_t quant_state = 0;
  for (int64_t n : {4096LL * 4096, 4096LL * 1024, 4096LL * 1024, 4096LL * 4096, 4096LL * 14336, 4096LL * 14336, 14336LL * 4096}) {
    quant_state += 32 * (Nf4Bytes(n, /*double_quant=*/true) - n / 2);  // the scenario default
  }
  const int64_t b1 = testing_support::TermBytes(testing_support::EstimateText(QloraJson(1, "bitsandbytes", false)).gpu.breakdown, "weights");
  const int64_t b8 = testing_support::TermBytes(testing_support::EstimateText(QloraJson(8, "bitsandbytes", false)).gpu.breakdown, "weights");
  EXPECT_NEAR(static_cast<double>(b8), static_cast<double>(b1 - quant_state) / 8.0 + static_cast<double>(quant_state), 1.0);
}

TEST(FsdpNf4Shard, CompileFusesTorchaoDequantization) {
  // The largest projection (4096 x 14336) dequantized: eager 14n + n/32 B, fused 2n B. At 128
  // tokens that transient, not the logits, sets the peak.
  const int64_t n = 4096LL * 14336;
  const Result eager = testing_support::EstimateText(QloraJson(1, "torchao", false, 128));
  const Result fused = testing_support::EstimateText(QloraJson(1, "torchao", true, 128));
  EXPECT_LT(fused.gpu.peak_allocated_bytes, eager.gpu.peak_allocated_bytes);
  EXPECT_LE(eager.gpu.peak_allocated_bytes - fused.gpu.peak_allocated_bytes, 12 * n + n / 32);
  // bitsandbytes dequantizes in its own kernel: compile changes nothing here.
  const Result bnb_eager = testing_support::EstimateText(QloraJson(1, "bitsandbytes", false, 128));
  const Result bnb_compiled = testing_support::EstimateText(QloraJson(1, "bitsandbytes", true, 128));
  EXPECT_EQ(bnb_compiled.gpu.peak_allocated_bytes, bnb_eager.gpu.peak_allocated_bytes);
}

}  // namespace
}  // namespace vramplan
