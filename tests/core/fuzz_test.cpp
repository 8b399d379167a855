// Nothing crashes on any input: mutated scenarios and configs (type swaps, deletions, extreme
// numbers, garbage strings, truncated text) always come back as {"ok": true|false} JSON. The core is
// built with JSON_NOEXCEPTION, so a wrong nlohmann accessor would abort this test.
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/catalog.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace fuzz_test {

using nlohmann::json;

json RandomValue(std::mt19937_64& rng) {
  switch (rng() % 12) {
    case 0: return nullptr;
    case 1: return true;
    case 2: return -1;
    case 3: return 0;
    case 4: return int64_t{1} << (rng() % 63);
    case 5: return 1e308;
    case 6: return -0.5;
    case 7: return "";
    case 8: return "bf16";
    case 9: return json::array({1, "x", nullptr});
    case 10: return json::object({{"rank", -3}});
    default: return std::string(static_cast<size_t>(rng() % 300), static_cast<char>('a' + rng() % 26));
  }
}

// Replaces, deletes or inserts at a random place of the JSON tree.
void Mutate(json& j, std::mt19937_64& rng, int depth = 0) {
  if (j.is_object() && !j.empty() && depth < 4 && rng() % 4 != 0) {
    auto it = j.begin();
    std::advance(it, static_cast<long>(rng() % j.size()));
    if (rng() % 5 == 0) {
      j.erase(it);
    } else {
      Mutate(*it, rng, depth + 1);
    }
    return;
  }
  if (j.is_array() && !j.empty() && depth < 4 && rng() % 3 != 0) {
    Mutate(j[rng() % j.size()], rng, depth + 1);
    return;
  }
  if (j.is_object() && rng() % 3 == 0) {
    j["k" + std::to_string(rng() % 7)] = RandomValue(rng);
    return;
  }
  j = RandomValue(rng);
}

void ExpectWellFormed(const std::string& out, const std::string& input) {
  json r = json::parse(out, nullptr, false);
  ASSERT_FALSE(r.is_discarded()) << input;
  ASSERT_TRUE(r.contains("ok")) << input;
  if (!r["ok"].get<bool>()) {
    ASSERT_TRUE(r["errors"].is_array() && !r["errors"].empty()) << input;
    EXPECT_FALSE(r["errors"][0]["message"].get<std::string>().empty());
  } else {
    EXPECT_GE(r["gpu"]["device_total_bytes"].get<int64_t>(), 0) << input;
  }
}

TEST(Fuzz, MutatedScenariosNeverCrash) {
  std::mt19937_64 rng(20261121);
  const std::vector<json> seeds = {
      json::parse(R"({"model":"meta-llama/Llama-3.1-8B","mode":"train","train":{"method":"lora","precision":"amp_bf16","micro_batch_size":4,"seq_len":2048,"lora":{"rank":16,"targets":["q_proj","v_proj"],"modules_to_save":["lm_head"]},"gradient_checkpointing":"selective"},"parallel":{"gpus":2,"zero":2},"gpu":"rtx-4090-24gb"})"),
      json::parse(R"({"model":"deepseek-ai/DeepSeek-V3","mode":"inference","inference":{"batch_size":2,"prompt_len":1000,"new_tokens":10,"weights":"gguf_q4_k_m","engine":"llama_cpp","n_gpu_layers":20},"gpu":{"name":"x","memory_bytes":1000000}})"),
      json::parse(R"({"model":"Qwen/Qwen3-30B-A3B","mode":"train","train":{"method":"qlora","qlora_bits":8,"optimizer":"paged_adamw_8bit","attention":"eager","loss":"fused_linear"},"framework":{"preset":"torch_1_13_hf_4_44","use_cache":true,"keep_outputs":true}})"),
      json::parse(R"({"model":"openai/gpt-oss-20b","mode":"inference","inference":{"engine":"vllm","max_model_len":131072,"kv_cache":"fp8"}})"),
  };
  for (int iter = 0; iter < 4000; ++iter) {
    json scenario = seeds[static_cast<size_t>(iter) % seeds.size()];
    int mutations = 1 + static_cast<int>(rng() % 3);
    for (int m = 0; m < mutations; ++m) Mutate(scenario, rng);
    std::string text = scenario.dump(-1, ' ', false, json::error_handler_t::replace);
    ExpectWellFormed(EstimateJson(text), text);
    if (iter % 10 == 0) {
      std::string truncated = text.substr(0, rng() % (text.size() + 1));
      ExpectWellFormed(EstimateJson(truncated), truncated);
    }
  }
}

TEST(Fuzz, MutatedConfigsNeverCrash) {
  std::mt19937_64 rng(42);
  const auto& presets = Presets();
  ASSERT_FALSE(presets.empty());
  for (int iter = 0; iter < 3000; ++iter) {
    json config = *presets[static_cast<size_t>(iter) % presets.size()].config;
    int mutations = 1 + static_cast<int>(rng() % 4);
    for (int m = 0; m < mutations; ++m) Mutate(config, rng);
    json scenario = {{"model", config}, {"mode", iter % 2 ? "train" : "inference"}};
    std::string text = scenario.dump(-1, ' ', false, json::error_handler_t::replace);
    ExpectWellFormed(EstimateJson(text), text);
    std::string cfg = config.dump(-1, ' ', false, json::error_handler_t::replace);
    json parsed = json::parse(ParseHfConfigJson(cfg), nullptr, false);
    ASSERT_FALSE(parsed.is_discarded()) << cfg;
  }
}

TEST(Fuzz, InvalidUtf8IsRejectedCleanly) {
  std::string text = "{\"model\":\"\xff\xfe\",\"mode\":\"train\"}";
  ExpectWellFormed(EstimateJson(text), "invalid utf-8");
  std::string preset = "{\"model\":\"meta-llama/Llama-3.1-8B\",\"gpu\":{\"name\":\"\xc3\x28\",\"memory_bytes\":1}}";
  ExpectWellFormed(EstimateJson(preset), "invalid utf-8 in gpu name");
}

}  // namespace
}  // namespace vramplan
