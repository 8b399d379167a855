// Every key the export writes is one the framework documents: each of the eight formats exports a
// table of scenarios chosen to reach every branch of its exporter, the keys of each text are
// collected (command-line flags; YAML / JSON key paths) and each must be in the format's list in
// tests/fixtures/launch/documented_keys.json, which cites where the framework defines it (repo,
// file, class or function, version or commit). The other way round, every listed key is written by
// at least one scenario, so the list cannot keep a key the exporter no longer writes.
#include <cctype>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "launch/launch_ops.h"
#include "launch/shell_words.h"
#include "launch/yaml_subset.h"
#include "test_support.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace launch_documented_keys_test {

using nlohmann::json;

json DocumentedKeys() { return testing_support::LoadFixture("launch/documented_keys.json"); }

// Scenarios that together reach every key each exporter can write.
const std::map<std::string, std::vector<std::string>>& Scenarios() {
  static const std::vector<std::string> training = {
      R"({"model":"meta-llama/Llama-3.1-8B","train":{"method":"lora","micro_batch_size":4,"seq_len":4096,"grad_accum_steps":2,"lora":{"rank":16,"alpha":32,"targets":"all-linear"}}})",
      R"({"model":"Qwen/Qwen2.5-7B","train":{"method":"lora","precision":"bf16","autocast":true,"attention":"flash","loss":"fused_linear","gradient_checkpointing":false,"lora":{"rank":64,"alpha":128,"targets":["q_proj","k_proj","v_proj","o_proj","gate_proj"],"use_dora":true,"dropout":0.05,"modules_to_save":["lm_head"]}},"framework":{"torch_compile":true}})",
      R"({"model":"meta-llama/Llama-3.1-70B-Instruct","train":{"method":"qlora","qlora_bits":4,"attention":"eager","optimizer":"paged_adamw_8bit","loss":"chunked","lora":{"rank":8,"alpha":16,"targets":"all-linear"}}})",
      R"({"model":"Qwen/Qwen2.5-7B","train":{"method":"qlora","qlora_bits":8,"qlora_backend":"gptq","precision":"bf16","autocast":true,"optimizer":"adamw_8bit","activation_offload":true,"lora":{"rank":8,"alpha":16,"targets":["q_proj","v_proj"]}}})",
      R"({"model":"Qwen/Qwen2.5-1.5B","train":{"method":"full","precision":"amp_bf16","optimizer":"adamw","optimizer_impl":"fused","micro_batch_size":2,"seq_len":1024}})",
      R"({"model":"Qwen/Qwen2.5-1.5B","train":{"method":"full","precision":"fp32","optimizer":"adamw","optimizer_impl":"for_loop","optimizer_in_backward":true},"framework":{"device":"cpu"}})",
      R"({"model":"Qwen/Qwen2.5-1.5B","train":{"method":"full","precision":"amp_fp16","optimizer":"sgd_momentum"}})",
      R"({"model":"Qwen/Qwen2.5-1.5B","train":{"method":"full","precision":"bf16","optimizer":"lion","gradient_checkpointing":true}})",
      R"({"model":"meta-llama/Llama-3.1-8B","train":{"method":"full","precision":"mixed_bf16","micro_batch_size":2,"grad_accum_steps":4,"activation_offload":true},"parallel":{"gpus":8,"zero":3,"offload_optimizer":"cpu","offload_params":"cpu","overlap_comm":true,"contiguous_gradients":true,"reduce_bucket_size":200000000,"stage3_prefetch_bucket_size":20000000,"stage3_param_persistence_threshold":50000,"stage3_max_live_parameters":500000000,"stage3_max_reuse_distance":500000000}})",
      R"({"model":"Qwen/Qwen2.5-7B","train":{"method":"full","precision":"mixed_fp16","optimizer":"adamw","optimizer_impl":"fused"},"parallel":{"gpus":2,"zero":2}})",
      R"({"model":"Qwen/Qwen2.5-7B","train":{"method":"freeze","precision":"bf16","autocast":true,"freeze":{"trainable_layers":4,"train_embeddings":true,"train_lm_head":true}}})",
      R"({"model":"meta-llama/Llama-3.1-8B","train":{"method":"full","precision":"amp_bf16","gradient_checkpointing":true},"parallel":{"gpus":8,"fsdp":true,"offload_params":"cpu","offload_optimizer":"cpu","fsdp_embedding_units":true}})",
      R"({"model":"meta-llama/Llama-3.2-1B-Instruct","train":{"method":"lora","precision":"bf16","lora":{"rank":8,"alpha":16,"targets":["q_proj","v_proj"]}},"parallel":{"gpus":4,"fsdp":true,"fsdp_sharding":"shard_grad_op"}})",
  };
  static const std::vector<std::string> vllm = {
      R"({"model":"meta-llama/Llama-3.1-8B","mode":"inference","inference":{"engine":"vllm","max_model_len":32768,"kv_cache":"fp8","gpu_memory_utilization":0.85,"max_num_seqs":64},"parallel":{"gpus":8,"tp":2,"pp":2}})",
      R"({"model":"Qwen/Qwen2.5-32B","mode":"inference","inference":{"engine":"vllm","weights":"awq_4bit","kv_cache":"auto","cuda_graphs":false,"max_num_batched_tokens":4096}})",
      R"({"model":"Qwen/Qwen2.5-7B","mode":"inference","inference":{"engine":"vllm","weights":"fp16"}})",
  };
  static const std::vector<std::string> llama_cpp = {
      R"({"model":"Qwen/Qwen3-32B","mode":"inference","inference":{"engine":"llama_cpp","weights":"gguf_q4_k_m","n_ctx":32768,"flash_attn":true,"kv_cache":"int8"}})",
      R"({"model":"meta-llama/Llama-3.1-70B-Instruct","mode":"inference","inference":{"engine":"llama_cpp","weights":"gguf_q4_0","n_gpu_layers":40,"batch_size":2,"n_ubatch":256}})",
  };
  static const std::map<std::string, std::vector<std::string>> table = {
      {"vllm", vllm},          {"llama_cpp", llama_cpp}, {"llamafactory", training}, {"axolotl", training},
      {"deepspeed", training}, {"hf", training},         {"accelerate", training},   {"torchtune", training},
  };
  return table;
}

// A document's key paths: maps joined with '.', the maps inside a list as "[]". A DeepSpeed config
// embedded under "deepspeed" goes to `deepspeed` (checked against DeepSpeed's own list);
// `skip_vramplan` drops a JSON export's top-level "vramplan" member (vramplan's carrier).
void CollectPaths(const json& v, const std::string& prefix, std::set<std::string>* paths, std::set<std::string>* deepspeed) {
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      const std::string path = prefix.empty() ? it.key() : prefix + "." + it.key();
      if (prefix.empty() && it.key() == "deepspeed" && it.value().is_object() && deepspeed != nullptr) {
        CollectPaths(it.value(), "", deepspeed, nullptr);
      } else {
        CollectPaths(it.value(), path, paths, deepspeed);
      }
    }
    return;
  }
  if (v.is_array() && !v.empty() && v[0].is_object()) {
    for (const json& e : v) CollectPaths(e, prefix + "[]", paths, deepspeed);
    return;
  }
  paths->insert(prefix);
}

struct Keys {
  std::set<std::string> own;
  std::set<std::string> deepspeed;  // of an embedded DeepSpeed config
};

Keys KeysOf(const std::string& format, const std::string& text) {
  Keys keys;
  if (format == "vllm" || format == "llama_cpp") {
    std::vector<launch::ShellCommand> commands;
    Issues errors;
    EXPECT_TRUE(launch::SplitShellCommands(text, &commands, &errors)) << text;
    for (const auto& c : commands) {
      for (const std::string& w : c.words) {
        if (w.size() > 1 && w[0] == '-' && !std::isdigit(static_cast<unsigned char>(w[1]))) keys.own.insert(w);
      }
    }
    return keys;
  }
  std::vector<io::Json> docs;
  if (format == "deepspeed" || format == "hf") {
    docs.push_back(json::parse(text, nullptr, false));
    EXPECT_FALSE(docs.back().is_discarded()) << text;
    docs.back().erase("vramplan");
  } else {
    Issues errors;
    EXPECT_TRUE(launch::ParseYamlDocuments(text, &docs, &errors)) << text;
  }
  for (const json& d : docs) CollectPaths(d, "", &keys.own, &keys.deepspeed);
  return keys;
}

std::set<std::string> Listed(const json& documented, const std::string& format) {
  std::set<std::string> out;
  for (const json& k : documented["formats"][format]["keys"]) out.insert(k.get<std::string>());
  return out;
}

TEST(LaunchDocumentedKeys, EveryFormatCitesItsSources) {
  const json documented = DocumentedKeys();
  ASSERT_TRUE(documented.is_object()) << "tests/fixtures/launch/documented_keys.json is missing or not JSON";
  for (const auto& [format, scenarios] : Scenarios()) {
    ASSERT_TRUE(documented["formats"].contains(format)) << format;
    const json& entry = documented["formats"][format];
    ASSERT_TRUE(entry["sources"].is_array() && !entry["sources"].empty()) << format;
    bool versioned = false;  // the sources name the version or commit they were read at
    for (const json& source : entry["sources"]) {
      const std::string s = source.get<std::string>();
      EXPECT_NE(s.find('/'), std::string::npos) << format << ": a source names its repository and file: " << s;
      versioned = versioned || s.find("commit ") != std::string::npos;
    }
    EXPECT_TRUE(versioned) << format << ": no source names the commit it was read at";
  }
}

TEST(LaunchDocumentedKeys, EveryExportedKeyIsDocumentedAndEveryListedKeyIsExported) {
  const json documented = DocumentedKeys();
  ASSERT_TRUE(documented.is_object());
  const std::set<std::string> deepspeed_keys = Listed(documented, "deepspeed");
  for (const auto& [format, scenarios] : Scenarios()) {
    const std::set<std::string> listed = Listed(documented, format);
    std::set<std::string> written;
    for (const std::string& text : scenarios) {
      auto scenario = ParseScenario(text);
      ASSERT_TRUE(scenario.ok()) << format << ": " << scenario.errors()[0].field_path << ": " << scenario.errors()[0].message;
      const launch::ExportOutcome exported = launch::ExportLaunchConfig(scenario.value(), format);
      ASSERT_TRUE(exported.errors.empty()) << format << ": " << exported.errors[0].message;
      const Keys keys = KeysOf(format, exported.text);
      for (const std::string& k : keys.own) {
        EXPECT_TRUE(listed.count(k)) << format << " writes " << k << ", which documented_keys.json does not list\n" << exported.text;
        written.insert(k);
      }
      for (const std::string& k : keys.deepspeed) {
        EXPECT_TRUE(deepspeed_keys.count(k)) << format << "'s embedded DeepSpeed config writes " << k << ", not in the deepspeed list";
      }
    }
    for (const std::string& k : listed) EXPECT_TRUE(written.count(k)) << format << ": " << k << " is listed but no scenario of the table writes it";
  }
}

}  // namespace
}  // namespace vramplan
