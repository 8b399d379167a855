// The optimizer step's temporaries by implementation and PyTorch version. Expected values come
// from the framework code, not from this estimator: PyTorch <= 2.0 `_multi_tensor_adamw` keeps
// `exp_avg_sq_sqrt` and `denom = _foreach_add(exp_avg_sq_sqrt, eps)` (two lists the size of the
// trainable parameters), >= 2.1 updates the first in place (pytorch#97712, #104898); the fused
// kernel allocates nothing (torch/optim/adamw.py, _fused_adamw).
#include <gtest/gtest.h>

#include <string>

#include "test_support.h"

namespace vramplan {
namespace optimizer_step_test {

Result RunAdamW(const std::string& impl, bool denom_copy) {
  const std::string json = R"({"model":"Qwen/Qwen2.5-0.5B","gpu":"a100-sxm-80gb","train":{"method":"full","precision":"bf16","optimizer":"adamw","optimizer_impl":")" +
                           impl + R"(","micro_batch_size":1,"seq_len":16},"framework":{"adamw_foreach_denom_copy":)" +
                           (denom_copy ? "true" : "false") + "}}";
  return testing_support::EstimateText(json);
}

TEST(OptimizerStep, ForeachAdamWIntermediatesByVersion) {
  const Result fused = RunAdamW("fused", false);
  const Result foreach_21 = RunAdamW("foreach", false);
  const Result foreach_20 = RunAdamW("foreach", true);
  // bf16 parameters: one intermediate list = 2 B x trainable parameters.
  const int64_t list_bytes = 2 * fused.trainable_params;
  EXPECT_EQ(foreach_20.gpu.phase_peaks.optimizer_step - foreach_21.gpu.phase_peaks.optimizer_step, list_bytes);
  // fused keeps each tensor's `step` counter on the GPU (4 B): Qwen2.5-0.5B has 24 layers x 12
  // tensors (q/k/v weights and biases, o, gate, up, down, two norms) + embedding + final norm = 290.
  const int64_t step_counters = 4 * (24 * 12 + 2);
  EXPECT_EQ(fused.gpu.optimizer_state_bytes - foreach_21.gpu.optimizer_state_bytes, step_counters);
  EXPECT_EQ(foreach_21.gpu.phase_peaks.optimizer_step - fused.gpu.phase_peaks.optimizer_step, list_bytes - step_counters);
  EXPECT_EQ(RunAdamW("fused", true).gpu.phase_peaks.optimizer_step, fused.gpu.phase_peaks.optimizer_step);
  EXPECT_EQ(foreach_20.gpu.phase_peaks.forward, foreach_21.gpu.phase_peaks.forward);  // only the step changes
}

// PyTorch >= 2.0 runs foreach AdamW once per dtype group with loop-local lists: with bf16
// modules_to_save copies and fp32 LoRA adapters, <= 2.0 peaks at max(2·S1 + S2, S1 + 2·S2), not
// 2·(S1 + S2) (torch/optim/adamw.py 2.0, _multi_tensor_adamw). Sizes by hand for Llama-3.1-8B:
// bf16 group = embed_tokens + lm_head copies 2 x 128256 x 4096 params x 2 B = 2,101,346,304 B;
// fp32 group = LoRA r8 on q (8·(4096+4096)) and v (8·(4096+1024)) x 32 layers x 4 B = 13,631,488 B.
TEST(OptimizerStep, ForeachAdamWGroupsByDtype) {
  auto run = [](const std::string& impl, bool denom_copy) {
    const std::string json = R"({"model":"meta-llama/Llama-3.1-8B","gpu":"a100-sxm-80gb","train":{"method":"lora","precision":"bf16","optimizer":"adamw","optimizer_impl":")" +
                             impl + R"(","micro_batch_size":1,"seq_len":16,"lora":{"rank":8,"targets":["q_proj","v_proj"],"adapter_dtype":"fp32","modules_to_save":["embed_tokens","lm_head"]}},"framework":{"adamw_foreach_denom_copy":)" +
                             (denom_copy ? "true" : "false") + "}}";
    return testing_support::EstimateText(json);
  };
  const int64_t bf16_group = 2101346304, fp32_group = 13631488;
  const Result fused = run("fused", false), v21 = run("foreach", false), v20 = run("foreach", true);
  const int64_t counters = fused.gpu.optimizer_state_bytes - v21.gpu.optimizer_state_bytes;
  EXPECT_EQ(v21.gpu.phase_peaks.optimizer_step - fused.gpu.phase_peaks.optimizer_step + counters, bf16_group + fp32_group);
  EXPECT_EQ(v20.gpu.phase_peaks.optimizer_step - fused.gpu.phase_peaks.optimizer_step + counters, 2 * bf16_group + fp32_group);
}

}  // namespace
}  // namespace vramplan
