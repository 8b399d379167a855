// Modules a quantized checkpoint keeps in 16-bit (model/unquantized_modules.cpp) and their bytes
// (inference/weight_formats.cpp).
#include "model/unquantized_modules.h"

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "inference/weight_formats.h"
#include "model/catalog.h"
#include "model/hf_config.h"

namespace vramplan {
namespace unquantized_modules_test {

using nlohmann::json;

TEST(UnquantizedModules, ReadFromEachQuantizersKey) {
  const json cfg = json::parse(R"({"quantization_config":{"quant_method":"fp8",
      "modules_to_not_convert":["lm_head","model.layers.0.mlp.down_proj"],
      "ignored_layers":["model.layers.1.self_attn"],
      "ignore":["re:.*mlp.gate$","model.layers.2.mlp"]}})");
  EXPECT_EQ(UnquantizedModulesFromConfig(cfg),
            (std::vector<std::string>{"lm_head", "model.layers.0.mlp.down_proj", "model.layers.1.self_attn", "model.layers.2.mlp"}));
  EXPECT_TRUE(UnquantizedModulesFromConfig(json::parse(R"({"hidden_size":8})")).empty());
  EXPECT_EQ(QuantizationMethodFromConfig(cfg), "fp8");
  // A list belongs to its own method: gpt-oss's MXFP4 list does not describe an fp8 re-quantization.
  EXPECT_TRUE(ListDescribesFormat("fbgemm_fp8", WeightFormat::kFp8));
  EXPECT_FALSE(ListDescribesFormat("mxfp4", WeightFormat::kFp8));
  EXPECT_TRUE(ListDescribesFormat("mxfp4", WeightFormat::kMxfp4));
  EXPECT_TRUE(ListDescribesFormat("", WeightFormat::kAwq4));
}

TEST(UnquantizedModules, MatchLikeTransformers) {
  // Substring entries (fbgemm_fp8's full module names) and gpt-oss's "*" patterns.
  const std::vector<std::string> meta = {"model.layers.0.mlp.down_proj", "model.layers.1.self_attn.q_proj"};
  EXPECT_TRUE(KeptUnquantized(meta, "model.layers.0.mlp.down_proj"));
  EXPECT_FALSE(KeptUnquantized(meta, "model.layers.0.mlp.up_proj"));
  EXPECT_FALSE(KeptUnquantized(meta, "model.layers.10.self_attn.q_proj"));
  const std::vector<std::string> oss = {"model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"};
  EXPECT_TRUE(KeptUnquantized(oss, "model.layers.7.self_attn.q_proj"));
  EXPECT_TRUE(KeptUnquantized(oss, "model.layers.23.mlp.router"));
  EXPECT_FALSE(KeptUnquantized(oss, "model.layers.7.mlp.experts.gate_up_proj"));
  LinearSpec q{"q_proj", 8, 8, false, 1, ModuleRole::kAttention, true, LinearSlot::kQ, ParallelStyle::kColumn};
  EXPECT_EQ(LinearModulePath(3, q), "model.layers.3.self_attn.q_proj");
}

// Meta's FP8 Llama 3.1 405B (quant_method fbgemm_fp8) keeps self-attention and the first and last
// layers in bf16 (Llama 3 paper, section 6.2: no quantization "in the self-attention layers" nor
// "the first and last Transformer layers"). Counting every linear in fp8 left out 77.1 GB:
// 126 layers x the attention projections (570,425,344 params) and 2 MLPs (2,617,245,696 params)
// at 2 B instead of 1 B.
TEST(UnquantizedModules, Fp8Llama405bKeepsAttentionAndEdgeLayersIn16Bit) {
  const PresetEntry* preset = FindPreset("meta-llama/Llama-3.1-405B");
  ASSERT_NE(preset, nullptr);
  json cfg = *preset->config;
  json skip = json::array();
  for (int i = 0; i < 126; ++i) {
    for (const char* p : {"q_proj", "k_proj", "v_proj", "o_proj"}) skip.push_back("model.layers." + std::to_string(i) + ".self_attn." + p);
  }
  for (int i : {0, 125}) {
    for (const char* p : {"gate_proj", "up_proj", "down_proj"}) skip.push_back("model.layers." + std::to_string(i) + ".mlp." + p);
  }
  skip.push_back("lm_head");
  cfg["quantization_config"] = {{"quant_method", "fbgemm_fp8"}, {"activation_scale_ub", 1200.0}, {"modules_to_not_convert", skip}};
  Issues warnings;
  Expected<ModelSpec> spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(spec.ok());
  const WeightBytes kept = ComputeWeightBytes(spec.value(), WeightFormat::kFp8);
  const WeightBytes all = ComputeWeightBytes(preset->spec, WeightFormat::kFp8);
  const int64_t attention = 2LL * 16384 * 16384 + 2LL * 16384 * 1024, mlp = 3LL * 16384 * 53248;
  // The preset's fp8 stores n + two fp32 per-tensor scales; bf16 stores 2n. fbgemm_fp8 keeps one fp32
  // weight_scale per output row (FbgemmFp8Linear) in the 124 MLPs it quantizes (gate, up: 53,248 rows; down: 16,384).
  const int64_t fbgemm_scales = 124 * ((53248 + 53248 + 16384) * 4 - 3 * 8);
  EXPECT_EQ(kept.total_bytes - all.total_bytes, 126 * (attention - 4 * 8) + 2 * (mlp - 3 * 8) + fbgemm_scales);
  EXPECT_EQ(kept.unquantized_params - all.unquantized_params, 126 * attention + 2 * mlp);
  EXPECT_NE(kept.explain.find("modules_to_not_convert"), std::string::npos) << kept.explain;
  // A 16-bit format is unaffected.
  EXPECT_EQ(ComputeWeightBytes(spec.value(), WeightFormat::kBf16).total_bytes, ComputeWeightBytes(preset->spec, WeightFormat::kBf16).total_bytes);
}

}  // namespace
}  // namespace vramplan
