// accelerate's convert_outputs_to_fp32 on the SFT loss (framework.amp_outputs_fp32, train/logits_loss.h):
// the HF Trainer under native AMP (fp16=True / bf16=True, no DeepSpeed) wraps the model's forward in
// autocast and in convert_outputs_to_fp32 (accelerate accelerator.py prepare_model, the
// `if self.native_amp:` branch; utils/operations.py convert_to_fp32: `.float()` on every fp16 / bf16
// tensor of the outputs). A model whose forward computes its loss and returns 16-bit logits (unsloth's
// CausalLM_fast_forward before Cut Cross Entropy: `logits.to(config.torch_dtype)` handed to
// fast_cross_entropy_loss and returned) gets an fp32 copy of those logits after it returned, beside
// what the loss saved. The preference heads' form of the same wrapper is in preference_step_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "test_support.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace amp_outputs_test {

constexpr int64_t kVocab = 32000;  // Llama-2-7b-hf: one 65,536-wide chunk of unsloth's loss
constexpr int64_t kTokens = 2 * 4096;

// The highest forward moment at the loss: the loss's own, or the copy's after the forward returned.
int64_t ForwardLossMoment(const Result& r) {
  int64_t best = -1;
  for (const auto& p : r.timeline) {
    if (p.phase == "forward" && p.step == "cross_entropy") best = std::max(best, p.allocated_bytes);
  }
  return best;
}

Result Sft(const std::string& train_extra, bool wrap, int zero = 0, const std::string& framework_extra = "") {
  return testing_support::EstimateText(
      R"({"model":"meta-llama/Llama-2-7b-hf","gpu":"a100-sxm-80gb","parallel":{"gpus":)" + std::string(zero ? "2" : "1") +
      R"(,"zero":)" + std::to_string(zero) + R"(},"framework":{"amp_outputs_fp32":)" + (wrap ? "true" : "false") +
      framework_extra +
      R"(},"train":{"method":"qlora","precision":"bf16","micro_batch_size":2,"seq_len":4096,"gradient_checkpointing":true,)"
      R"("activation_offload":true,"attention":"flash","kernels":"unsloth","lora":{"rank":8,"targets":"all-linear","dropout":0},)" +
      train_extra + "}}");
}

// The copy comes after the model's forward returned: unsloth's loss moment (the fp32 losses, 4 B per
// token, and `labels != -100`, 1 B per token, before n_items exists) is over and so is the final
// norm's 16-bit output (a local of the forward; the frozen lm_head saved nothing of it); the saved set
// (the 16-bit logits among it) and the scalar loss (4 B) are alive beside the 4·b·s·V copy.
// Measured on the CPU: UL02 / UL10 against UL01 / UL09 in measured_cpu_unsloth_loss.json.
TEST(AmpOutputs, UnslothLossGetsAnFp32CopyOfItsLogitsUnderAutocast) {
  const std::string amp = R"("loss":"unsloth","autocast":true)";
  const Result wrapped = Sft(amp, true), direct = Sft(amp, false);
  ASSERT_GT(ForwardLossMoment(direct), 0);
  constexpr int64_t kHidden = 4096;
  EXPECT_EQ(ForwardLossMoment(wrapped) - ForwardLossMoment(direct),
            (4 * kTokens * kVocab + 4) - (5 * kTokens - 8 + 2 * kTokens * kHidden));
  EXPECT_EQ(wrapped.gpu.phase_peaks.backward, direct.gpu.phase_peaks.backward);  // not on the loss's autograd path
}

TEST(AmpOutputs, NoCopyWithoutAutocastUnderDeepSpeedOrWithoutReturnedLogits) {
  auto same = [](const std::string& train, int zero) {
    return Sft(train, true, zero).gpu.phase_peaks.forward == Sft(train, false, zero).gpu.phase_peaks.forward;
  };
  EXPECT_TRUE(same(R"("loss":"unsloth")", 0));                        // no autocast: no native AMP
  EXPECT_TRUE(same(R"("loss":"unsloth","autocast":true)", 2));        // DeepSpeed runs the 16-bit model itself
  EXPECT_TRUE(same(R"("loss":"fused_linear","autocast":true)", 0));   // no logits returned (Cut Cross Entropy, Liger)
}

// A caller that keeps the outputs through backward keeps the fp32 copy, not the 16-bit logits.
TEST(AmpOutputs, KeptOutputsAreTheFp32Copy) {
  const std::string amp = R"("loss":"standard","autocast":true)";
  const Result wrapped = Sft(amp, true, 0, R"(,"keep_outputs":true)"), direct = Sft(amp, false, 0, R"(,"keep_outputs":true)");
  ASSERT_GT(direct.gpu.phase_peaks.forward, 0);
  EXPECT_EQ(wrapped.gpu.phase_peaks.backward - direct.gpu.phase_peaks.backward, 2 * kTokens * kVocab);  // 4 B instead of 2
}

}  // namespace
}  // namespace vramplan
