// QLoRA on a GPTQ checkpoint (auto-gptq / optimum QuantLinear). Expected values are computed here
// from the buffer shapes in auto_gptq/nn_modules/qlinear (qweight int32 packing 8 x 4-bit along the
// input, qzeros int32 packing 8 zeros per group along the output, fp16 scales per group and
// column, int32 g_idx per input feature, and the int32 shift table `wf`, an attribute moved to the
// device at the first forward) and from qlinear_cuda_old.py's forward, which at >= 128
// rows dequantizes in torch and lets torch.matmul(x, weight) save the fp16 weight.
#include <gtest/gtest.h>

#include <string>

#include "test_support.h"

namespace vramplan {
namespace qlora_gptq_test {

using testing_support::GpuTerm;

Result RunQlora(const std::string& method, const std::string& extra, int seq, bool checkpointing) {
  const std::string json = R"({"model":"Qwen/Qwen2.5-0.5B","gpu":"a100-sxm-80gb","train":{"method":")" + method +
                           R"(","precision":"bf16","micro_batch_size":1,"seq_len":)" + std::to_string(seq) +
                           R"(,"gradient_checkpointing":)" + (checkpointing ? "true" : "false") +
                           R"(,"lora":{"targets":"all-linear","dropout":0.0})" + extra + "}}";
  return testing_support::EstimateText(json);
}


struct Linear {
  int64_t in, out;
};
// Qwen2.5-0.5B: hidden 896, 14 heads / 2 kv heads of 64, MLP 4864, 24 layers.
constexpr Linear kLinears[] = {{896, 896}, {896, 128}, {896, 128}, {896, 896}, {896, 4864}, {896, 4864}, {4864, 896}};
constexpr int64_t kLayers = 24;

TEST(QloraGptq, WeightBytesFollowTheQuantLinearBuffers) {
  int64_t gptq = 0, dense = 0;
  for (const Linear& l : kLinears) {
    const int64_t groups = (l.in + 127) / 128;
    // + the int32 shift table `wf` (32 / 4 entries) QuantLinear keeps as a plain attribute
    gptq += l.in * l.out / 2 + groups * l.out / 2 + groups * l.out * 2 + l.in * 4 + 4 * (32 / 4);
    dense += l.in * l.out;
  }
  const Result lora = RunQlora("lora", "", 512, true);
  const Result q = RunQlora("qlora", R"(,"qlora_backend":"gptq","qlora_group_size":128)", 512, true);
  // Same model, same adapters: only the quantized linears' storage differs (bf16 -> GPTQ buffers).
  EXPECT_EQ(GpuTerm(q, "weights") - GpuTerm(lora, "weights"), kLayers * (gptq - 2 * dense));
}

TEST(QloraGptq, DequantizedWeightsAreSavedForBackward) {
  // Without checkpointing every layer keeps its fp16 dequantized weights, except where the input
  // needs no gradient: layer 0's q/k/v read the frozen embeddings' output.
  int64_t saved = 0;
  for (const Linear& l : kLinears) saved += 2 * l.in * l.out;
  const int64_t layer0_qkv = 2 * (896 * 896 + 2 * 896 * 128);
  const Result bnb = RunQlora("qlora", "", 512, false);
  const Result gptq = RunQlora("qlora", R"(,"qlora_backend":"gptq")", 512, false);
  EXPECT_EQ(gptq.gpu.saved_activation_bytes - bnb.gpu.saved_activation_bytes, kLayers * saved - layer0_qkv);
  // Below 128 rows the CUDA kernel path writes into a fresh tensor and saves nothing.
  const Result bnb_short = RunQlora("qlora", "", 100, false);
  const Result gptq_short = RunQlora("qlora", R"(,"qlora_backend":"gptq")", 100, false);
  EXPECT_EQ(gptq_short.gpu.saved_activation_bytes, bnb_short.gpu.saved_activation_bytes);
}

TEST(QloraGptq, BadGroupSizeIsNamed) {
  auto s = ParseScenario(R"({"model":"Qwen/Qwen2.5-0.5B","train":{"method":"qlora","qlora_backend":"gptq","qlora_group_size":7}})");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.errors().front().field_path, "train.qlora_group_size");
}

}  // namespace
}  // namespace vramplan
