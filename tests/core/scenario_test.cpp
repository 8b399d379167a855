// Scenario parsing: defaults, presets of the framework block, per-model LoRA defaults, and errors
// that name the field path and what is allowed.
#include <string>

#include <gtest/gtest.h>

#include "test_support.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace scenario_test {

Scenario Parse(const std::string& text) {
  auto s = ParseScenario(text);
  EXPECT_TRUE(s.ok()) << text << (s.ok() ? "" : " -> " + s.errors()[0].message);
  return s.ok() ? s.value() : Scenario{};
}

Issue FirstError(const std::string& text) {
  auto s = ParseScenario(text);
  EXPECT_FALSE(s.ok()) << text;
  return s.ok() ? Issue{} : s.errors()[0];
}

TEST(Scenario, DefaultsMatchCommonPractice) {
  Scenario s = Parse(R"({"model":"meta-llama/Llama-3.1-8B"})");
  EXPECT_EQ(s.mode, Mode::kTrain);
  EXPECT_EQ(s.train.method, TrainMethod::kLora);
  EXPECT_EQ(s.train.precision, Precision::kBf16);
  EXPECT_EQ(s.train.gradient_checkpointing, Checkpointing::kFull);
  EXPECT_EQ(s.train.attention, AttentionImpl::kSdpa);
  EXPECT_EQ(s.gpu.id, "h100-sxm-80gb");
  EXPECT_FALSE(s.framework.rmsnorm_saves_squared_input);
  EXPECT_EQ(s.framework.device, Device::kCuda);
}

TEST(Scenario, LoraTargetsDefaultPerModelType) {
  EXPECT_EQ(Parse(R"({"model":"meta-llama/Llama-3.1-8B"})").train.lora.targets, (std::vector<std::string>{"q_proj", "v_proj"}));
  EXPECT_EQ(Parse(R"({"model":"openai-community/gpt2"})").train.lora.targets, (std::vector<std::string>{"c_attn"}));
  EXPECT_EQ(Parse(R"({"model":"tiiuae/falcon-7b"})").train.lora.targets, (std::vector<std::string>{"query_key_value"}));
  EXPECT_TRUE(Parse(R"({"model":"deepseek-ai/DeepSeek-V3"})").train.lora.all_linear);
  EXPECT_EQ(Parse(R"({"model":"openai-community/gpt2","train":{"lora":{"targets":["c_fc"]}}})").train.lora.targets,
            (std::vector<std::string>{"c_fc"}));
}

TEST(Scenario, FrameworkPresetThenOverrides) {
  Scenario s = Parse(R"({"model":"Qwen/Qwen2.5-0.5B","framework":{"preset":"torch_1_13_hf_4_44","device":"cuda"}})");
  EXPECT_TRUE(s.framework.rmsnorm_saves_squared_input);
  EXPECT_TRUE(s.framework.loss_shift_logits_copy);
  EXPECT_EQ(s.framework.device, Device::kCuda);
}

TEST(Scenario, ErrorsNameThePathAndWhatIsAllowed) {
  Issue e = FirstError(R"({"model":"meta-llama/Llama-3.1-8B","train":{"optimzer":"adamw"}})");
  EXPECT_EQ(e.code, "unknown_key");
  EXPECT_EQ(e.field_path, "train.optimzer");
  EXPECT_NE(e.message.find("did you mean \"optimizer\""), std::string::npos) << e.message;

  e = FirstError(R"({"model":"meta-llama/Llama-3.1-8B","train":{"precision":"bf61"}})");
  EXPECT_EQ(e.code, "unknown_value");
  EXPECT_NE(e.message.find("amp_bf16"), std::string::npos) << e.message;

  e = FirstError(R"({"model":"meta-llama/Llama-3.1-8B","parallel":{"gpus":3,"tp":2}})");
  EXPECT_EQ(e.field_path, "parallel.gpus");

  e = FirstError(R"({"model":"meta-llama/Llama-3.1-8B","train":{"method":"freeze","freeze":{"trainable_layers":40}}})");
  EXPECT_EQ(e.field_path, "train.freeze.trainable_layers");

  e = FirstError(R"({"model":{"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"vocab_size":100}})");
  EXPECT_EQ(e.field_path, "model.intermediate_size");

  e = FirstError(R"({"model":"Llama-3.1-8B"})");
  EXPECT_NE(e.message.find("meta-llama/Llama-3.1-8B"), std::string::npos) << e.message;

  e = FirstError(R"({"model":"meta-llama/Llama-3.1-8B","gpu":{"name":"x"}})");
  EXPECT_EQ(e.field_path, "gpu.memory_bytes");
}

TEST(Scenario, ParallelFieldsAreModeledOrWarnedNotIgnored) {
  // Tensor parallelism shards the weights (train/parallel_step.h); sequence parallelism without it
  // has nothing to split and says so.
  const Result one = testing_support::EstimateText(R"({"model":"meta-llama/Llama-3.1-8B","train":{"method":"full"}})");
  const Result tp2 = testing_support::EstimateText(R"({"model":"meta-llama/Llama-3.1-8B","train":{"method":"full"},"parallel":{"gpus":8,"tp":2}})");
  EXPECT_LT(testing_support::GpuTerm(tp2, "weights"), testing_support::GpuTerm(one, "weights") * 6 / 10);
  const Result sp = testing_support::EstimateText(R"({"model":"meta-llama/Llama-3.1-8B","parallel":{"sequence_parallel":true}})");
  EXPECT_TRUE(testing_support::HasWarning(sp, "no_effect", "parallel.sequence_parallel"));
}

}  // namespace
}  // namespace vramplan

namespace vramplan {
namespace scenario_test {

// Full fine-tuning trains every parameter, whatever the layer pattern (runs of identical layers
// are counted once in the optimizer's tensor list).
TEST(Scenario, FullTrainsEveryParameter) {
  for (const char* id : {"meta-llama/Llama-3.1-405B", "deepseek-ai/DeepSeek-V3", "google/gemma-3-1b-it", "openai/gpt-oss-20b",
                         "openai-community/gpt2", "Qwen/Qwen3-30B-A3B"}) {
    auto s = ParseScenario(std::string(R"({"train":{"method":"full"},"model":")") + id + "\"}");
    ASSERT_TRUE(s.ok()) << id;
    Result r = Estimate(s.value(), EstimateOptions{false, false});
    EXPECT_EQ(r.trainable_params, r.params.total) << id;
  }
}

}  // namespace
}  // namespace vramplan
