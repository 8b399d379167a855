// import(export(s)) estimates the same as s, format by format, over a table of scenarios; and each
// export carries in its vramplan comment/member exactly the fields the table says the format
// cannot express (everything else is written as the framework's own keys and read back).
#include <algorithm>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "launch/launch_ops.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace launch_roundtrip_test {

using nlohmann::json;

struct Case {
  const char* format;
  const char* name;
  const char* scenario;
  std::set<std::string> not_expressed;  // scenario paths the vramplan comment/member must carry
};

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
      // LLaMA-Factory
      {"llamafactory", "lora_4090", R"({"model":"meta-llama/Llama-3.1-8B","train":{"method":"lora","micro_batch_size":4,"seq_len":4096,"grad_accum_steps":2,"lora":{"rank":16,"alpha":32,"targets":"all-linear"}},"gpu":"rtx-4090-24gb"})", {"gpu"}},
      {"llamafactory", "lora_autocast_dora", R"({"model":"Qwen/Qwen2.5-7B","train":{"method":"lora","precision":"bf16","autocast":true,"attention":"flash","loss":"fused_linear","kernels":"liger","gradient_checkpointing":false,"lora":{"rank":64,"alpha":128,"targets":["q_proj","k_proj","v_proj","o_proj"],"use_dora":true,"dropout":0.05,"modules_to_save":["lm_head"]}}})", {}},
      {"llamafactory", "qlora_70b", R"({"model":"meta-llama/Llama-3.1-70B-Instruct","train":{"method":"qlora","qlora_bits":4,"micro_batch_size":1,"seq_len":2048,"optimizer":"paged_adamw_8bit","lora":{"rank":8,"alpha":16,"targets":"all-linear"}},"gpu":"a100-sxm-80gb"})", {"gpu"}},
      {"llamafactory", "full_amp_fused", R"({"model":"Qwen/Qwen2.5-1.5B","train":{"method":"full","precision":"amp_bf16","optimizer":"adamw","optimizer_impl":"fused","micro_batch_size":2,"seq_len":1024}})", {}},
      {"llamafactory", "full_zero3_offload", R"({"model":"meta-llama/Llama-3.1-8B","train":{"method":"full","precision":"mixed_bf16","micro_batch_size":2,"seq_len":2048,"grad_accum_steps":4},"parallel":{"gpus":8,"zero":3,"offload_optimizer":"cpu"}})", {"parallel.gpus"}},
      {"llamafactory", "freeze", R"({"model":"Qwen/Qwen2.5-7B","train":{"method":"freeze","precision":"bf16","autocast":true,"freeze":{"trainable_layers":4,"train_lm_head":true}}})", {}},
      // axolotl
      {"axolotl", "qlora", R"({"model":"mistralai/Mistral-7B-v0.1","train":{"method":"qlora","precision":"bf16","autocast":true,"micro_batch_size":2,"seq_len":4096,"grad_accum_steps":4,"attention":"flash","optimizer":"paged_adamw_8bit","lora":{"rank":32,"alpha":16,"dropout":0.05,"targets":"all-linear"}}})", {}},
      // cut_cross_entropy: true (axolotl's CutCrossEntropyPlugin) <-> train.loss "cce".
      {"axolotl", "lora_cce", R"({"model":"meta-llama/Llama-3.2-3B","train":{"method":"lora","precision":"bf16","autocast":true,"loss":"cce","lora":{"rank":16,"alpha":32,"targets":"all-linear"},"seq_len":4096}})", {}},
      {"axolotl", "lora_list", R"({"model":"meta-llama/Llama-3.2-3B","train":{"method":"lora","precision":"bf16","autocast":true,"gradient_checkpointing":true,"lora":{"rank":16,"alpha":32,"targets":["q_proj","v_proj"]},"seq_len":2048}})", {}},
      {"axolotl", "full_fsdp", R"({"model":"meta-llama/Llama-3.1-8B","train":{"method":"full","precision":"bf16","autocast":true,"optimizer":"adamw","optimizer_impl":"fused","seq_len":2048},"parallel":{"gpus":4,"fsdp":true,"offload_params":"cpu","offload_optimizer":"cpu"}})", {"parallel.gpus"}},
      {"axolotl", "zero2", R"({"model":"Qwen/Qwen2.5-7B","train":{"method":"full","precision":"mixed_bf16","optimizer":"adamw","optimizer_impl":"fused","loss":"fused_linear"},"parallel":{"gpus":2,"zero":2}})", {"parallel.gpus"}},
      // DeepSpeed alone: the model and what the training script decides travel in the member.
      {"deepspeed", "zero3_nvme", R"({"model":"meta-llama/Llama-3.1-70B-Instruct","train":{"method":"full","precision":"mixed_bf16","optimizer":"adamw","optimizer_impl":"fused","gradient_checkpointing":false,"micro_batch_size":1,"grad_accum_steps":8},"parallel":{"gpus":16,"zero":3,"offload_optimizer":"nvme","offload_params":"cpu","overlap_comm":true,"reduce_bucket_size":200000000}})", {"model"}},
      {"deepspeed", "zero1_fp16", R"({"model":"Qwen/Qwen2.5-1.5B","train":{"method":"full","precision":"mixed_fp16","optimizer":"adamw","gradient_checkpointing":false,"micro_batch_size":4,"seq_len":4096},"parallel":{"gpus":4,"zero":1,"overlap_comm":false}})", {"model", "train.seq_len"}},
      // HF trainer JSON (TRL spelling)
      {"hf", "lora_bf16", R"({"model":"meta-llama/Llama-3.1-8B","train":{"method":"lora","precision":"bf16","autocast":true,"gradient_checkpointing":true,"micro_batch_size":2,"seq_len":2048,"lora":{"rank":16,"alpha":32,"targets":"all-linear"}}})", {}},
      {"hf", "qlora_8bit", R"({"model":"Qwen/Qwen2.5-7B","train":{"method":"qlora","qlora_bits":8,"precision":"bf16","autocast":true,"gradient_checkpointing":true,"optimizer":"adamw_8bit","lora":{"rank":8,"alpha":16,"targets":["q_proj","v_proj"]}}})", {}},
      {"hf", "full_amp_fsdp", R"({"model":"meta-llama/Llama-3.2-1B-Instruct","train":{"method":"full","precision":"amp_bf16","gradient_checkpointing":false,"micro_batch_size":8,"seq_len":1024},"parallel":{"gpus":8,"fsdp":true,"fsdp_sharding":"shard_grad_op"}})", {"parallel.gpus"}},
      {"hf", "zero2_mixed", R"({"model":"Qwen/Qwen3-8B","train":{"method":"full","precision":"mixed_bf16","gradient_checkpointing":true,"loss":"fused_linear","kernels":"liger"},"parallel":{"gpus":4,"zero":2,"offload_optimizer":"cpu"}})", {"parallel.gpus"}},
      // accelerate: the launcher's side; the script's side travels in the comment.
      {"accelerate", "fsdp8", R"({"model":"meta-llama/Llama-3.1-8B","train":{"method":"full","precision":"amp_bf16","gradient_checkpointing":true,"micro_batch_size":1,"seq_len":4096},"parallel":{"gpus":8,"fsdp":true,"offload_params":"cpu","offload_optimizer":"cpu"}})", {"model", "train.seq_len"}},
      {"accelerate", "zero3", R"({"model":"Qwen/Qwen2.5-7B","train":{"method":"full","precision":"mixed_bf16","gradient_checkpointing":false},"parallel":{"gpus":4,"zero":3,"offload_optimizer":"cpu"}})", {"model"}},
      // torchtune
      {"torchtune", "lora_single", R"({"model":"meta-llama/Llama-3.1-8B","train":{"method":"lora","precision":"bf16","gradient_checkpointing":true,"micro_batch_size":2,"grad_accum_steps":8,"seq_len":2048,"loss":"chunked","optimizer":"adamw","optimizer_impl":"fused","lora":{"rank":8,"alpha":16,"targets":["q_proj","v_proj","o_proj"],"adapter_dtype":"base"}}})", {}},
      {"torchtune", "qlora", R"({"model":"meta-llama/Llama-3.1-70B-Instruct","train":{"method":"qlora","qlora_backend":"torchao","precision":"bf16","gradient_checkpointing":true,"lora":{"rank":8,"alpha":16,"targets":"all-linear","adapter_dtype":"base"}},"gpu":"a100-sxm-80gb"})", {"gpu"}},
      {"torchtune", "full_distributed", R"({"model":"Qwen/Qwen2.5-7B","train":{"method":"full","precision":"bf16","gradient_checkpointing":true,"optimizer":"paged_adamw_8bit","activation_offload":true},"parallel":{"gpus":4,"fsdp":true,"offload_params":"cpu","offload_optimizer":"cpu"}})", {"parallel.gpus"}},
      // vLLM: the workload (concurrency, prompt, output) is not a serve option.
      {"vllm", "tp2_fp8kv", R"({"model":"meta-llama/Llama-3.1-8B","mode":"inference","inference":{"engine":"vllm","max_model_len":32768,"kv_cache":"fp8","gpu_memory_utilization":0.85,"max_num_seqs":64},"parallel":{"gpus":2,"tp":2}})", {}},
      {"vllm", "awq_eager", R"({"model":"Qwen/Qwen2.5-32B","mode":"inference","inference":{"engine":"vllm","weights":"awq_4bit","cuda_graphs":false,"batch_size":8,"prompt_len":2000,"new_tokens":500,"max_num_batched_tokens":4096},"gpu":"rtx-4090-24gb"})", {"gpu", "inference.batch_size", "inference.prompt_len", "inference.new_tokens", "inference.max_model_len"}},
      // llama.cpp
      {"llama_cpp", "q4km_fa", R"({"model":"Qwen/Qwen3-32B","mode":"inference","inference":{"engine":"llama_cpp","weights":"gguf_q4_k_m","n_ctx":32768,"flash_attn":true,"kv_cache":"int8"},"gpu":"rtx-4090-24gb"})", {"gpu"}},
      {"llama_cpp", "partial_offload", R"({"model":"meta-llama/Llama-3.1-70B-Instruct","mode":"inference","inference":{"engine":"llama_cpp","weights":"gguf_q4_0","n_gpu_layers":40,"batch_size":2,"prompt_len":4000,"new_tokens":96,"n_ubatch":256}})", {"inference.prompt_len", "inference.new_tokens", "inference.n_ctx"}},
  };
  return cases;
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.format << "/" << c.name; }

std::string CaseName(const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.format) + "_" + info.param.name; }

class LaunchRoundTrip : public ::testing::TestWithParam<Case> {};

TEST_P(LaunchRoundTrip, ImportOfExportEstimatesTheSame) {
  const Case& c = GetParam();
  auto original = ParseScenario(c.scenario);
  ASSERT_TRUE(original.ok()) << original.errors()[0].field_path << ": " << original.errors()[0].message;
  const launch::ExportOutcome exported = launch::ExportLaunchConfig(original.value(), c.format);
  ASSERT_TRUE(exported.errors.empty()) << exported.errors[0].message;
  std::set<std::string> carried;
  for (const auto& n : exported.notes) {
    if (n.status == "not_expressed") carried.insert(n.key);
  }
  EXPECT_EQ(carried, c.not_expressed) << exported.text;

  const launch::ImportOutcome imported = launch::ImportLaunchConfig(exported.text, "auto");
  ASSERT_TRUE(imported.errors.empty()) << imported.errors[0].field_path << ": " << imported.errors[0].message << "\n" << exported.text;
  EXPECT_EQ(imported.format, c.format) << "auto-detection";
  auto back = ParseScenario(imported.scenario.dump());
  ASSERT_TRUE(back.ok()) << back.errors()[0].field_path << ": " << back.errors()[0].message;
  const Result a = Estimate(original.value()), b = Estimate(back.value());
  EXPECT_EQ(a.gpu.peak_allocated_bytes, b.gpu.peak_allocated_bytes) << exported.text;
  EXPECT_EQ(a.gpu.reserved_bytes, b.gpu.reserved_bytes);
  EXPECT_EQ(a.gpu.device_total_bytes, b.gpu.device_total_bytes);
  EXPECT_EQ(a.gpu.capacity_bytes, b.gpu.capacity_bytes);
  EXPECT_EQ(a.gpu.fits, b.gpu.fits);
  EXPECT_EQ(a.cpu.bytes, b.cpu.bytes);
  EXPECT_EQ(a.trainable_params, b.trainable_params);
}

// Without the vramplan comment/member (the file as the framework sees it), the formats that name
// the model still estimate the same whenever nothing was carried.
TEST_P(LaunchRoundTrip, WithoutTheCommentOnlyTheCarriedFieldsChange) {
  const Case& c = GetParam();
  if (!c.not_expressed.empty()) GTEST_SKIP() << "carries " << *c.not_expressed.begin();
  auto original = ParseScenario(c.scenario);
  ASSERT_TRUE(original.ok());
  const launch::ExportOutcome exported = launch::ExportLaunchConfig(original.value(), c.format);
  EXPECT_EQ(exported.text.find("vramplan:"), std::string::npos) << "nothing to carry, yet a comment:\n" << exported.text;
  EXPECT_EQ(exported.text.find("\"vramplan\""), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Formats, LaunchRoundTrip, ::testing::ValuesIn(Cases()), CaseName);

TEST(LaunchRoundTrip, EveryFormatHasCases) {
  std::set<std::string> covered;
  for (const Case& c : Cases()) covered.insert(c.format);
  EXPECT_EQ(covered, (std::set<std::string>{"vllm", "llama_cpp", "llamafactory", "axolotl", "deepspeed", "hf", "accelerate", "torchtune"}));
}

TEST(LaunchRoundTrip, ExportRefusesTheWrongMode) {
  auto s = ParseScenario(R"({"model":"meta-llama/Llama-3.1-8B"})");
  ASSERT_TRUE(s.ok());
  const auto out = launch::ExportLaunchConfig(s.value(), "vllm");
  ASSERT_EQ(out.errors.size(), 1u);
  EXPECT_EQ(out.errors[0].code, "wrong_mode");
}

TEST(LaunchRoundTrip, InlineConfigTravelsInTheComment) {
  const char* scenario = R"({"model":{"model_type":"llama","hidden_size":256,"intermediate_size":512,"num_hidden_layers":4,
    "num_attention_heads":4,"num_key_value_heads":4,"vocab_size":1000,"max_position_embeddings":2048},
    "train":{"method":"lora","lora":{"targets":["q_proj","v_proj"]}}})";
  auto s = ParseScenario(scenario);
  ASSERT_TRUE(s.ok());
  const auto out = launch::ExportLaunchConfig(s.value(), "llamafactory");
  ASSERT_TRUE(out.errors.empty());
  const auto back = launch::ImportLaunchConfig(out.text, "auto");
  ASSERT_TRUE(back.errors.empty()) << back.errors[0].message;
  auto parsed = ParseScenario(back.scenario.dump());
  ASSERT_TRUE(parsed.ok()) << parsed.errors()[0].message;
  EXPECT_EQ(Estimate(s.value()).gpu.device_total_bytes, Estimate(parsed.value()).gpu.device_total_bytes);
}

// vLLM: an explicit "--quantization gptq" forces the plain GPTQ kernel, which keeps qzeros
// (GPTQMarlinConfig.override_quantization_method); a checkpoint whose config allows Marlin is
// exported with gptq_marlin, the method the estimate counts, and reads back to the same estimate.
TEST(LaunchRoundTrip, VllmGptqNamesTheMarlinMethodTheEstimateCounts) {
  const char* scenario = R"({"model":{"model_type":"llama","hidden_size":256,"intermediate_size":512,"num_hidden_layers":4,
    "num_attention_heads":4,"num_key_value_heads":4,"vocab_size":1000,"max_position_embeddings":2048,
    "quantization_config":{"quant_method":"gptq","bits":4,"group_size":128,"desc_act":false,"sym":true}},
    "mode":"inference","inference":{"engine":"vllm","weights":"gptq_4bit","max_model_len":2048}})";
  auto s = ParseScenario(scenario);
  ASSERT_TRUE(s.ok());
  const auto out = launch::ExportLaunchConfig(s.value(), "vllm");
  ASSERT_TRUE(out.errors.empty());
  EXPECT_NE(out.text.find("--quantization gptq_marlin"), std::string::npos) << out.text;
  const auto back = launch::ImportLaunchConfig(out.text, "auto");
  ASSERT_TRUE(back.errors.empty()) << back.errors[0].message;
  auto parsed = ParseScenario(back.scenario.dump());
  ASSERT_TRUE(parsed.ok()) << parsed.errors()[0].message;
  EXPECT_EQ(Estimate(s.value()).gpu.device_total_bytes, Estimate(parsed.value()).gpu.device_total_bytes);
  // Without a GPTQ layout in the config (an unquantized preset) the plain method stays.
  auto preset = ParseScenario(R"({"model":"meta-llama/Llama-3.1-8B","mode":"inference","inference":{"engine":"vllm","weights":"gptq_4bit"}})");
  ASSERT_TRUE(preset.ok());
  EXPECT_NE(launch::ExportLaunchConfig(preset.value(), "vllm").text.find("--quantization gptq \\"), std::string::npos);
}

TEST(LaunchRoundTrip, OpsReplyWithEnvelopes) {
  const json exported = json::parse(launch::ExportJson(R"({"to":"llama_cpp","scenario":{"model":"Qwen/Qwen3-8B","mode":"inference","inference":{"engine":"llama_cpp","weights":"gguf_q8_0"}}})"));
  ASSERT_TRUE(exported.value("ok", false)) << exported.dump();
  EXPECT_EQ(exported["format"], "llama_cpp");
  ASSERT_TRUE(exported["text"].is_string());
  const json imported = json::parse(launch::ImportJson(json({{"format", "auto"}, {"text", exported["text"]}}).dump()));
  ASSERT_TRUE(imported.value("ok", false)) << imported.dump();
  EXPECT_EQ(imported["scenario"]["model"], "Qwen/Qwen3-8B");
  EXPECT_EQ(imported["scenario"]["inference"]["weights"], "gguf_q8_0");
  EXPECT_TRUE(imported["complete"].get<bool>());
  const json bad = json::parse(launch::ExportJson(R"({"to":"nope","scenario":{"model":"Qwen/Qwen3-8B"}})"));
  EXPECT_FALSE(bad.value("ok", true));
  EXPECT_EQ(bad["errors"][0]["code"], "unknown_format");
  const json bad_scenario = json::parse(launch::ExportJson(R"({"to":"hf","scenario":{"model":"Qwen/Qwen3-8B","train":{"seq_len":-4}}})"));
  EXPECT_EQ(bad_scenario["errors"][0]["field_path"], "scenario.train.seq_len");
}

}  // namespace
}  // namespace vramplan
