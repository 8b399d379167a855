// framework.rope_cache_per_layer (core/src/train/rope_cache.h): transformers <= 4.41 Mistral /
// Mixtral hold a cos/sin cache of max_position_embeddings x head_dim per attention layer in the load
// dtype. Checked against fms-acceleration's A100 reference runs (docs/accuracy.md section 2c): their
// allocated memory after training (torch_mem_alloc_in_bytes) is 0.55e9 B above weights + states on
// every row, full, LoRA and QLoRA, Mistral-7B and Mixtral-8x7B alike.
#include <cstdint>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "vramplan/estimate.h"

namespace vramplan {
namespace rope_cache_test {

double WeightBytes(const std::string& model, const std::string& method, const std::string& precision, bool cache,
                   int gpus = 1) {
  nlohmann::json sc = {{"model", model},
                       {"gpu", "a100-sxm-80gb"},
                       {"train", {{"method", method}, {"precision", precision}, {"seq_len", 1024}}},
                       {"framework", {{"rope_cache_per_layer", cache}}}};
  if (gpus > 1) sc["parallel"] = {{"gpus", gpus}, {"zero", 3}};
  const nlohmann::json r = nlohmann::json::parse(EstimateJson(sc.dump()));
  EXPECT_TRUE(r.value("ok", false)) << r.dump().substr(0, 400);
  return r["gpu"]["breakdown"]["weights"].get<double>();
}

// 32 layers x (cos + sin) x 32,768 positions x 128 x 2 B.
constexpr double kMistral16Bit = 32.0 * 2 * 32768 * 128 * 2;

TEST(RopeCache, SixteenBitLoadsAndQloraHoldTheCachesInSixteenBits) {
  const std::string m = "mistralai/Mistral-7B-v0.1";
  EXPECT_EQ(WeightBytes(m, "full", "bf16", true) - WeightBytes(m, "full", "bf16", false), kMistral16Bit);
  EXPECT_EQ(WeightBytes(m, "lora", "fp16", true) - WeightBytes(m, "lora", "fp16", false), kMistral16Bit);
  // QLoRA: loaded in 16-bit; prepare_model_for_kbit_training upcasts parameters, not buffers.
  EXPECT_EQ(WeightBytes(m, "qlora", "amp_fp16", true) - WeightBytes(m, "qlora", "amp_fp16", false), kMistral16Bit);
  // An fp32 load (fp32, or amp_* on an fp32 model) builds them in fp32.
  EXPECT_EQ(WeightBytes(m, "lora", "amp_bf16", true) - WeightBytes(m, "lora", "amp_bf16", false), 2 * kMistral16Bit);
}

TEST(RopeCache, BuffersStayWholeOnEveryZero3Rank) {
  const std::string m = "mistralai/Mistral-7B-v0.1";
  EXPECT_EQ(WeightBytes(m, "full", "mixed_bf16", true, 4) - WeightBytes(m, "full", "mixed_bf16", false, 4), kMistral16Bit);
}

TEST(RopeCache, OffByDefault) {
  const nlohmann::json r = nlohmann::json::parse(EstimateJson(R"({"model": "mistralai/Mistral-7B-v0.1"})"));
  ASSERT_TRUE(r.value("ok", false));
  EXPECT_FALSE(r["scenario"]["framework"]["rope_cache_per_layer"].get<bool>());
}

}  // namespace
}  // namespace vramplan
