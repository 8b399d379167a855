// A quantized checkpoint's stored format (model/checkpoint_format.cpp) and the inference.weights a
// scenario gets from it (io/scenario_json.cpp ResolveCheckpointWeights). The quantization_config
// blocks are those of the named Hub checkpoints' config.json files.
#include "model/checkpoint_format.h"

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "io/scenario_json.h"
#include "test_support.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace checkpoint_format_test {

using nlohmann::json;
using testing_support::GpuTerm;

struct FormatCase {
  const char* what;
  const char* quantization_config;
  const char* weights;      // the inference.weights it is served as, "" when none is modelled
  const char* description;  // "" when the config is not quantized
};

const FormatCase kFormats[] = {
    {"Qwen/Qwen2.5-7B-Instruct-AWQ (AutoAWQ, GEMM)",
     R"({"bits":4,"group_size":128,"modules_to_not_convert":null,"quant_method":"awq","version":"gemm","zero_point":true})", "awq_4bit", "awq, 4-bit"},
    {"casperhansen AutoAWQ exports: w_bit instead of bits", R"({"quant_method":"awq","w_bit":4,"q_group_size":128,"zero_point":true})", "awq_4bit",
     "awq, 4-bit"},
    {"Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4",
     R"({"bits":4,"damp_percent":0.01,"desc_act":false,"group_size":128,"quant_method":"gptq","static_groups":false,"sym":true,"true_sequential":true})",
     "gptq_4bit", "gptq, 4-bit"},
    {"Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8", R"({"bits":8,"group_size":128,"quant_method":"gptq","sym":true})", "gptq_8bit", "gptq, 8-bit"},
    {"a 3-bit GPTQ export: no modelled format", R"({"bits":3,"group_size":128,"quant_method":"gptq"})", "", "gptq, 3-bit"},
    {"deepseek-ai/DeepSeek-V3 (block-wise FP8)", R"({"activation_scheme":"dynamic","fmt":"e4m3","quant_method":"fp8","weight_block_size":[128,128]})",
     "fp8", "fp8"},
    {"meta-llama/Llama-3.1-405B-Instruct-FP8 (fbgemm_fp8)", R"({"activation_scale_ub":1200.0,"modules_to_not_convert":["lm_head"],"quant_method":"fbgemm_fp8"})",
     "fp8", "fbgemm_fp8"},
    {"openai/gpt-oss-20b", R"({"modules_to_not_convert":["model.layers.*.self_attn","model.layers.*.mlp.router","model.embed_tokens","lm_head"],"quant_method":"mxfp4"})",
     "mxfp4", "mxfp4"},
    {"unsloth/Llama-3.2-1B-Instruct-bnb-4bit (bitsandbytes NF4)",
     R"({"_load_in_4bit":true,"_load_in_8bit":false,"bnb_4bit_compute_dtype":"bfloat16","bnb_4bit_quant_storage":"uint8","bnb_4bit_quant_type":"nf4","bnb_4bit_use_double_quant":true,"load_in_4bit":true,"load_in_8bit":false,"quant_method":"bitsandbytes"})",
     "nf4", "bitsandbytes, 4-bit"},
    {"a bitsandbytes LLM.int8() export", R"({"load_in_4bit":false,"load_in_8bit":true,"quant_method":"bitsandbytes"})", "int8", "bitsandbytes, 8-bit"},
    {"RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8 (compressed-tensors, per-tensor FP8)",
     R"({"config_groups":{"group_0":{"input_activations":{"num_bits":8,"type":"float","strategy":"tensor","dynamic":false,"symmetric":true},"weights":{"num_bits":8,"type":"float","strategy":"tensor","symmetric":true},"targets":["Linear"]}},"format":"naive-quantized","ignore":["lm_head"],"quant_method":"compressed-tensors","quantization_status":"frozen"})",
     "fp8", "compressed-tensors, 8-bit float weights"},
    {"RedHatAI W8A8 INT8 (compressed-tensors)",
     R"({"config_groups":{"group_0":{"weights":{"num_bits":8,"type":"int","strategy":"channel","symmetric":true},"targets":["Linear"]}},"format":"int-quantized","quant_method":"compressed-tensors"})",
     "int8", "compressed-tensors, 8-bit int weights"},
    {"RedHatAI W4A16 (compressed-tensors pack-quantized, group 128)",
     R"({"config_groups":{"group_0":{"weights":{"num_bits":4,"type":"int","strategy":"group","group_size":128,"symmetric":true},"targets":["Linear"]}},"format":"pack-quantized","quant_method":"compressed-tensors"})",
     "gptq_4bit", "compressed-tensors, 4-bit int weights"},
    {"nvidia / RedHatAI NVFP4 (compressed-tensors): no modelled format",
     R"({"config_groups":{"group_0":{"weights":{"num_bits":4,"type":"float","strategy":"tensor_group","group_size":16},"targets":["Linear"]}},"format":"nvfp4-pack-quantized","quant_method":"compressed-tensors"})",
     "", "compressed-tensors, 4-bit float weights"},
    {"NVIDIA ModelOpt FP8 export", R"({"quant_algo":"FP8","kv_cache_quant_algo":null,"quant_method":"modelopt"})", "fp8", "modelopt"},
    {"NVIDIA ModelOpt NVFP4 export: no modelled format", R"({"quant_algo":"NVFP4","quant_method":"modelopt"})", "", "modelopt"},
    {"HQQ: no modelled format", R"({"quant_method":"hqq","nbits":4})", "", "hqq"},
    {"microsoft/bitnet-b1.58-2B-4T: described by the model's checkpoint layout", R"({"quant_method":"bitnet","linear_class":"autobitlinear","quantization_mode":"offline"})", "", ""},
};

TEST(CheckpointFormat, FromQuantizationConfig) {
  for (const FormatCase& c : kFormats) {
    SCOPED_TRACE(c.what);
    const CheckpointFormat f = CheckpointFormatFromConfig(json{{"quantization_config", json::parse(c.quantization_config)}});
    EXPECT_EQ(f.weights, c.weights);
    EXPECT_EQ(f.description, c.description);
  }
  EXPECT_TRUE(CheckpointFormatFromConfig(json{{"hidden_size", 64}}).description.empty());
  EXPECT_TRUE(CheckpointFormatFromConfig(json{{"quantization_config", nullptr}}).description.empty());
}

json Llama31With(const char* quantization_config) {
  json config;
  const json table = testing_support::LoadFixture("param_counts.json");
  for (const auto& row : table["models"]) {
    if (row["id"] == "meta-llama/Llama-3.1-8B") config = row["config"];
  }
  if (quantization_config != nullptr) config["quantization_config"] = json::parse(quantization_config);
  return config;
}

struct Parsed {
  Scenario scenario;
  Issues warnings;
};

Parsed Parse(const json& scenario) {
  Parsed p;
  auto s = ParseScenarioWithWarnings(scenario.dump(), &p.warnings);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.errors()[0].message);
  if (s.ok()) p.scenario = s.value();
  return p;
}

bool Warns(const Parsed& p, const char* code) {
  for (const Issue& w : p.warnings) {
    if (w.code == code && w.field_path == "inference.weights") return true;
  }
  return false;
}

json Serving(json model, const char* engine) {
  return json{{"model", std::move(model)}, {"mode", "inference"}, {"gpu", "h100-sxm-80gb"},
              {"inference", {{"engine", engine}, {"max_model_len", 8192}}}};
}

TEST(CheckpointFormat, ServedInTheCheckpointsFormatWhenWeightsAreNotSet) {
  const char* awq = kFormats[0].quantization_config;
  for (const char* engine : {"vllm", "transformers"}) {
    SCOPED_TRACE(engine);
    const Parsed p = Parse(Serving(Llama31With(awq), engine));
    EXPECT_EQ(p.scenario.inference.weights, WeightFormat::kAwq4);
    EXPECT_TRUE(p.warnings.empty());
    // The same estimate as the unquantized config with awq_4bit set by hand.
    json by_hand = Serving(Llama31With(nullptr), engine);
    by_hand["inference"]["weights"] = "awq_4bit";
    EXPECT_EQ(GpuTerm(Estimate(p.scenario), "weights"), GpuTerm(Estimate(Parse(by_hand).scenario), "weights"));
  }
  // gpt-oss-20b's preset carries its MXFP4 quantization_config: vLLM serves MXFP4 experts.
  EXPECT_EQ(Parse(Serving("openai/gpt-oss-20b", "vllm")).scenario.inference.weights, WeightFormat::kMxfp4);
  const Parsed hf = Parse(Serving("openai/gpt-oss-20b", "transformers"));
  EXPECT_EQ(hf.scenario.inference.weights, WeightFormat::kMxfp4);
  EXPECT_TRUE(Warns(hf, "approximate"));  // dequantized to bf16 without the triton kernels
}

TEST(CheckpointFormat, ExplicitWeightsWinWithAWarning) {
  json s = Serving(Llama31With(kFormats[0].quantization_config), "vllm");
  s["inference"]["weights"] = "bf16";
  const Parsed p = Parse(s);
  EXPECT_EQ(p.scenario.inference.weights, WeightFormat::kBf16);
  EXPECT_TRUE(Warns(p, "approximate"));
  s["inference"]["weights"] = "awq_4bit";
  EXPECT_TRUE(Parse(s).warnings.empty());
}

TEST(CheckpointFormat, UnmodelledFormatsSaySo) {
  const Parsed nvfp4 = Parse(Serving(Llama31With(kFormats[13].quantization_config), "vllm"));
  EXPECT_EQ(nvfp4.scenario.inference.weights, WeightFormat::kBf16);
  EXPECT_TRUE(Warns(nvfp4, "not_modeled"));
}

TEST(CheckpointFormat, TrainingAndLlamaCppAreLeftAlone) {
  const char* awq = kFormats[0].quantization_config;
  json llama_cpp = Serving(Llama31With(awq), "llama_cpp");
  llama_cpp["inference"].erase("max_model_len");
  const Parsed gguf = Parse(llama_cpp);
  EXPECT_EQ(gguf.scenario.inference.weights, WeightFormat::kBf16);
  EXPECT_TRUE(gguf.warnings.empty());
  const Parsed train = Parse(json{{"model", Llama31With(awq)}, {"train", {{"method", "lora"}}}});
  EXPECT_EQ(train.scenario.inference.weights, WeightFormat::kBf16);
  EXPECT_TRUE(train.warnings.empty());
}

}  // namespace
}  // namespace vramplan
