// DoRA (PEFT use_dora=True). Expected values from peft/tuners/lora/dora.py: one trainable
// magnitude per output feature of each adapted linear, and DoraLinearLayer.forward's products
// (mag_norm_scale - 1) * base_result and mag_norm_scale * lora_result keep the base output and the
// LoRA output saved for the magnitude's gradient.
#include <gtest/gtest.h>

#include <string>

#include "test_support.h"

namespace vramplan {
namespace dora_test {

Result RunDora(bool dora) {
  const std::string json = std::string(R"({"model":"Qwen/Qwen2.5-0.5B","gpu":"a100-sxm-80gb","train":{"method":"lora","precision":"bf16","micro_batch_size":1,"seq_len":512,"gradient_checkpointing":false,"lora":{"rank":8,"targets":["q_proj","v_proj"],"adapter_dtype":"fp32","use_dora":)") +
                           (dora ? "true" : "false") + "}}}";
  return testing_support::EstimateText(json);
}

TEST(Dora, MagnitudeParamsAndSavedOutputs) {
  const Result lora = RunDora(false), dora = RunDora(true);
  // Qwen2.5-0.5B: 24 layers, q_proj out 896, v_proj out 128.
  EXPECT_EQ(dora.trainable_params - lora.trainable_params, 24 * (896 + 128));
  // Per layer and adapted linear: base output in bf16 (2 B) + LoRA output in fp32 (4 B), T = 512,
  // plus the (1, out) fp32 factors weight_norm and mag_norm_scale, and mag_norm_scale - 1 where the
  // base output needs a gradient (not in layer 0, whose q/v read the frozen embeddings' output);
  // these small ones were found by measurement (measured_cpu_dora.json).
  const int64_t outs = 896 + 128;
  EXPECT_EQ(dora.gpu.saved_activation_bytes - lora.gpu.saved_activation_bytes,
            int64_t{24} * 512 * (2 + 4) * outs + 4 * outs * (2 + 3 * 23));
}

}  // namespace
}  // namespace vramplan
