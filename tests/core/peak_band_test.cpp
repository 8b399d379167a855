// The fine-tuning frameworks' knobs (docs/frameworks.md) and the honest range: gpu.band, the
// typical step of unpacked data, unsloth's offloaded checkpointing and cross-entropy, torchtune's
// optimizer in backward. The measured steps of these rules are in train_step_test.cpp
// (measured_cpu_frameworks.json).
#include <gtest/gtest.h>

#include <string>

#include "test_support.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace peak_band_test {

using testing_support::EstimateText;
using testing_support::GpuTerm;
using testing_support::HasWarning;
using testing_support::TermBytes;

std::string Llama8B(const std::string& train_extra, const std::string& gpu = "\"h100-sxm-80gb\"") {
  return R"({"model":"meta-llama/Llama-3.1-8B","mode":"train","gpu":)" + gpu +
         R"(,"train":{"method":"qlora","precision":"bf16","micro_batch_size":1,"seq_len":8192,"gradient_checkpointing":true)" + train_extra + "}}";
}

TEST(PeakBand, ExpectedIsTheDeviceTotalAndTheBandHoldsIt) {
  const Result r = EstimateText(Llama8B(""));
  EXPECT_EQ(r.gpu.band.expected_bytes, r.gpu.device_total_bytes);
  EXPECT_LT(r.gpu.band.low_bytes, r.gpu.band.expected_bytes);
  EXPECT_GT(r.gpu.band.high_bytes, r.gpu.band.expected_bytes);
  // the reserve and the CUDA context replaced by the lowest and the highest published readings
  // (gpu/allocator_spread.h): reserve 0.14%-28.67% of the peak allocated, context 377-1407 MiB
  const int64_t reserve = GpuTerm(r, "allocator_overhead");
  const int64_t context = GpuTerm(r, "cuda_context");
  const double allocated = static_cast<double>(r.gpu.peak_allocated_bytes);
  const double mib = 1024.0 * 1024.0;
  ASSERT_LT(0.0014 * allocated, reserve);
  ASSERT_GT(0.2867 * allocated, reserve);
  EXPECT_NEAR(static_cast<double>(r.gpu.band.high_bytes - r.gpu.band.expected_bytes),
              0.2867 * allocated - reserve + 1407 * mib - context, 1.0);
  EXPECT_NEAR(static_cast<double>(r.gpu.band.expected_bytes - r.gpu.band.low_bytes),
              reserve - 0.0014 * allocated + context - 377 * mib, 1.0);
  EXPECT_NE(r.gpu.band.basis.find("0.14-28.67% of the peak allocated"), std::string::npos) << r.gpu.band.basis;
  EXPECT_EQ(r.gpu.band.verdict, "fits");
  EXPECT_EQ(r.training.batches, "packed");
}

TEST(PeakBand, TightWhenTheBandStraddlesTheCapacity) {
  // custom GPUs (the band does not depend on the capacity): one whose capacity sits between the
  // expected total and the high end, one just below the low end
  const Result probe = EstimateText(Llama8B("", R"({"name":"x","memory_bytes":1099511627776})"));
  const int64_t cap = (probe.gpu.band.expected_bytes + probe.gpu.band.high_bytes) / 2;
  const Result r = EstimateText(Llama8B("", R"({"name":"x","memory_bytes":)" + std::to_string(cap) + "}"));
  EXPECT_TRUE(r.gpu.fits);  // fits stays the expected verdict
  EXPECT_EQ(r.gpu.band.verdict, "tight");
  const int64_t small = probe.gpu.band.low_bytes - 1;
  const Result n = EstimateText(Llama8B("", R"({"name":"x","memory_bytes":)" + std::to_string(small) + "}"));
  EXPECT_EQ(n.gpu.band.verdict, "does_not_fit");
}

TEST(PeakBand, UnpackedDataReportsTheTypicalStepAndTheLongestBatch) {
  const Result packed = EstimateText(Llama8B(""));
  const Result r = EstimateText(Llama8B(R"(,"packing":false,"typical_seq_len":2048)"));
  EXPECT_EQ(r.training.batches, "longest_batch");
  EXPECT_EQ(r.training.typical_seq_len, 2048);
  // the same step at 8192 tokens (the longest batch) with the varying-shape allocator reserve
  EXPECT_EQ(r.gpu.peak_allocated_bytes, packed.gpu.peak_allocated_bytes);
  EXPECT_GT(r.gpu.reserved_bytes, packed.gpu.reserved_bytes);
  const Result typical = EstimateText(Llama8B(R"(,"packing":false,"seq_len":2048)"));
  EXPECT_EQ(r.training.typical_peak_allocated_bytes, typical.gpu.peak_allocated_bytes);
  EXPECT_EQ(r.training.typical_device_total_bytes, typical.gpu.device_total_bytes);
  EXPECT_LE(r.gpu.band.low_bytes, typical.gpu.device_total_bytes);
}

TEST(Frameworks, UnslothOffloadedCheckpointingMovesTheLayerInputsToTheHost) {
  const Result hf = EstimateText(Llama8B(""));
  const Result u = EstimateText(Llama8B(R"(,"activation_offload":true)"));
  // 32 layers x 2 B x 8192 tokens x 4096 hidden
  const int64_t inputs = int64_t{32} * 2 * 8192 * 4096;
  EXPECT_EQ(TermBytes(u.cpu.breakdown, "offloaded_activations"), inputs);
  // ... and the other checkpoint arguments (position ids, cos/sin) are ctx attributes of the
  // offloading Function, alive but not saved tensors
  EXPECT_EQ(hf.gpu.saved_activation_bytes - u.gpu.saved_activation_bytes, inputs + 8 * 8192 + 2 * 8192 * 128 * 2);
  EXPECT_LT(u.gpu.peak_allocated_bytes, hf.gpu.peak_allocated_bytes);
  EXPECT_FALSE(HasWarning(u, "not_modeled", "train.activation_offload"));
}

TEST(Frameworks, UnslothCrossEntropyKeepsNoFp32Logits) {
  const Result hf = EstimateText(Llama8B(R"(,"activation_offload":true)"));
  const Result u = EstimateText(Llama8B(R"(,"activation_offload":true,"loss":"unsloth")"));
  // Llama-3.1's vocabulary (128,256) is above 65,536: two logsumexp chunks
  const int64_t T = 8192, V = 128256;
  // at most: bf16 logits + logsumexp, labels, losses and the two chunks' logsumexp (+ the loss)
  EXPECT_LE(GpuTerm(u, "logits_and_loss"), 2 * T * V + 12 * T + 4 * T + 8 * T + 4);
  // HF's ForCausalLMLoss holds the bf16 logits, their fp32 copy and the fp32 log-probs: 10 B per
  // token and vocabulary entry against unsloth's 2
  EXPECT_GE(hf.gpu.phase_peaks.forward - u.gpu.phase_peaks.forward, 7 * T * V);
  EXPECT_LT(u.gpu.peak_allocated_bytes, hf.gpu.peak_allocated_bytes);
}

TEST(Frameworks, OptimizerInBackwardNeverHoldsAllGradients) {
  const std::string full = R"({"model":"meta-llama/Llama-3.2-3B","mode":"train","gpu":"a100-sxm-80gb","train":{"method":"full","precision":"bf16",)"
                           R"("optimizer_impl":"fused","micro_batch_size":2,"seq_len":4096,"gradient_checkpointing":true,"loss":"chunked")";
  const Result plain = EstimateText(full + "}}");
  const Result in_bwd = EstimateText(full + R"(,"optimizer_in_backward":true}})");
  EXPECT_EQ(in_bwd.gpu.gradient_bytes, 0);
  EXPECT_EQ(in_bwd.gpu.optimizer_state_bytes, plain.gpu.optimizer_state_bytes);
  EXPECT_LT(in_bwd.gpu.peak_allocated_bytes, plain.gpu.peak_allocated_bytes);
  // the optimizer phase holds weights, states and the batch only
  EXPECT_LT(in_bwd.gpu.phase_peaks.optimizer_step, plain.gpu.phase_peaks.optimizer_step);
  const Result accum = EstimateText(full + R"(,"optimizer_in_backward":true,"grad_accum_steps":4}})");
  EXPECT_TRUE(HasWarning(accum, "unsupported_combination", "train.optimizer_in_backward"));
}

}  // namespace
}  // namespace vramplan
