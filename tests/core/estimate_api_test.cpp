// The serialized API: the summary call returns the same totals as the full result; the version
// carries a build id.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "vramplan/estimate.h"

namespace vramplan {
namespace estimate_api_test {

TEST(EstimateApi, SummaryMatchesFullResult) {
  const char* scenarios[] = {
      R"({"model":"meta-llama/Llama-3.1-8B","train":{"method":"qlora","micro_batch_size":2}})",
      R"({"model":"Qwen/Qwen3-30B-A3B","train":{"method":"full","precision":"amp_bf16"},"gpu":"a100-sxm-80gb"})",
      R"({"model":"openai/gpt-oss-20b","mode":"inference","inference":{"engine":"vllm","max_model_len":65536}})",
      R"({"model":"google/gemma-2-9b-it","mode":"inference","inference":{"engine":"llama_cpp","weights":"gguf_q4_k_m","n_gpu_layers":20},"gpu":"rtx-3060-12gb"})",
  };
  for (const char* s : scenarios) {
    nlohmann::json full = nlohmann::json::parse(EstimateJson(s), nullptr, false);
    nlohmann::json sum = nlohmann::json::parse(EstimateSummaryJson(s), nullptr, false);
    ASSERT_TRUE(full.value("ok", false)) << s;
    ASSERT_TRUE(sum.value("ok", false)) << s;
    for (const char* key : {"peak_allocated_bytes", "reserved_bytes", "device_total_bytes", "headroom_bytes", "fits"}) {
      EXPECT_EQ(sum[key], full["gpu"][key]) << s << " " << key;
    }
    EXPECT_EQ(sum["params_total"], full["params"]["total"]) << s;
    EXPECT_EQ(sum["peak_phase"], full["peak_phase"]) << s;
  }
}

TEST(EstimateApi, SummaryReportsErrorsAsValues) {
  nlohmann::json r = nlohmann::json::parse(EstimateSummaryJson(R"({"model":"x/y"})"), nullptr, false);
  EXPECT_FALSE(r.value("ok", true));
  EXPECT_EQ(r["errors"][0]["field_path"], "model");
}

TEST(EstimateApi, VersionHasBuildId) {
  const std::string v = VersionString();
  ASSERT_EQ(v.rfind("0.1.0+", 0), 0u) << v;
  EXPECT_EQ(v.size(), std::string("0.1.0+").size() + 12);
}

}  // namespace
}  // namespace vramplan
