// bitsandbytes 4-bit QLoRA under autocast with fp32 hidden states (PEFT's
// prepare_model_for_kbit_training keeps the norms in fp32). Expected values are worked by hand from
// bitsandbytes 0.43.1: Linear4bit.forward (bitsandbytes/nn/modules.py) does x.to(compute_dtype),
// matmul_4bit, then out.to(inp_dtype), so every 4-bit linear fed fp32 returns fp32; and
// MatMul4Bit.forward (bitsandbytes/autograd/_functions.py) keeps its 16-bit input in ctx.tensors
// whenever that input needs a gradient. PEFT's lora Linear4bit (peft/tuners/lora/bnb.py v0.11)
// adds its 16-bit adapter output to that fp32 result, so the MLP's element-wise tensors are fp32.
#include <gtest/gtest.h>

#include <string>

#include "test_support.h"

namespace vramplan {
namespace qlora_bnb_dtype_test {

Result RunBnbOrGptq(const std::string& precision, const std::string& backend, int seq) {
  const std::string json = R"({"model":"Qwen/Qwen2.5-0.5B","gpu":"a100-sxm-80gb","train":{"method":"qlora","precision":")" +
                           precision + R"(","micro_batch_size":1,"seq_len":)" + std::to_string(seq) +
                           R"(,"gradient_checkpointing":false,"qlora_backend":")" + backend +
                           R"(","lora":{"targets":"all-linear","dropout":0.0}}})";
  return testing_support::EstimateText(json);
}

// Qwen2.5-0.5B: hidden 896, MLP 4864, 24 layers.
constexpr int64_t kHidden = 896, kInter = 4864, kLayers = 24;

TEST(QloraBnbDtype, FourBitLinearsFollowTheirFp32InputUnderAutocast) {
  // Below 128 rows a GPTQ base saves nothing of its own, so against it only the bnb rule remains.
  const int64_t T = 100;
  const Result bnb = RunBnbOrGptq("amp_bf16", "bitsandbytes", T);
  const Result gptq = RunBnbOrGptq("amp_bf16", "gptq", T);
  // Per layer: gate/up keep a bf16 cast of their fp32 input (2·T·h each), down a bf16 cast of its
  // now fp32 input (2·T·I), and act(gate)'s input, act * up's two operands are fp32 instead of bf16
  // (3 · 2 B · T·I). q/k/v keep a cast each (3 · 2·T·h) except in layer 0, whose input (the frozen
  // embeddings' output) needs no gradient; o_proj reads the 16-bit attention output (no cast).
  const int64_t per_layer = 2 * 2 * T * kHidden + 2 * T * kInter + 3 * 2 * T * kInter;
  const int64_t qkv = 3 * 2 * T * kHidden;
  EXPECT_EQ(bnb.gpu.saved_activation_bytes - gptq.gpu.saved_activation_bytes, kLayers * per_layer + (kLayers - 1) * qkv);
}

TEST(QloraBnbDtype, SixteenBitInputsAreNotCast) {
  // Pure bf16: x.to(compute_dtype) is x itself and the output stays bf16; nothing changes.
  const Result bnb = RunBnbOrGptq("bf16", "bitsandbytes", 100);
  const Result gptq = RunBnbOrGptq("bf16", "gptq", 100);
  EXPECT_EQ(bnb.gpu.saved_activation_bytes, gptq.gpu.saved_activation_bytes);
}

}  // namespace
}  // namespace vramplan
