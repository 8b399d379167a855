// No silent guesses (issue 14, item 4): a config.json whose model_type has no dedicated reader is
// read by the generic readers only when they understand every structural key it has; otherwise it
// is refused with the keys named, unless the scenario asks for model_reading "approximate".
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "vramplan/estimate.h"
#include "model/families/registry.h"
#include "model/hf_config.h"
#include "model/structural_keys.h"
#include "vramplan/model_spec.h"

namespace vramplan {
namespace structural_keys_test {

using nlohmann::json;

// Qwen/Qwen3-Next-80B-A3B-Instruct config.json (values as published on the Hub; layer_types is
// three linear_attention layers then one full_attention layer, 12 times).
json Qwen3NextConfig() {
  json layer_types = json::array();
  for (int i = 0; i < 48; ++i) layer_types.push_back(i % 4 == 3 ? "full_attention" : "linear_attention");
  return json{{"architectures", {"Qwen3NextForCausalLM"}}, {"attention_bias", false}, {"attention_dropout", 0},
              {"bos_token_id", 151643}, {"decoder_sparse_step", 1}, {"eos_token_id", 151645},
              {"full_attention_interval", 4}, {"head_dim", 256}, {"hidden_act", "silu"}, {"hidden_size", 2048},
              {"initializer_range", 0.02}, {"intermediate_size", 5120}, {"layer_types", layer_types},
              {"linear_conv_kernel_dim", 4}, {"linear_key_head_dim", 128}, {"linear_num_key_heads", 16},
              {"linear_num_value_heads", 32}, {"linear_value_head_dim", 128}, {"max_position_embeddings", 262144},
              {"mlp_only_layers", json::array()}, {"model_type", "qwen3_next"}, {"moe_intermediate_size", 512},
              {"norm_topk_prob", true}, {"num_attention_heads", 16}, {"num_experts", 512},
              {"num_experts_per_tok", 10}, {"num_hidden_layers", 48}, {"num_key_value_heads", 2},
              {"output_router_logits", false}, {"partial_rotary_factor", 0.25}, {"rms_norm_eps", 1e-06},
              {"rope_scaling", nullptr}, {"rope_theta", 5000000}, {"router_aux_loss_coef", 0.001},
              {"shared_expert_intermediate_size", 512}, {"tie_word_embeddings", false}, {"use_cache", true},
              {"use_sliding_window", false}, {"vocab_size", 151936}};
}

// The key list itself: null / false / 0 configure nothing, standard MoE and routing keys are read.
TEST(StructuralKeys, NamesOnlyKeysTheGenericReadersIgnore) {
  const json cfg = {{"hidden_size", 64}, {"num_experts", 8}, {"num_experts_per_tok", 2}, {"moe_intermediate_size", 32},
                    {"router_aux_loss_coef", 0.001}, {"num_nextn_predict_layers", 0}, {"vision_config", nullptr},
                    {"use_qk_norm", false}, {"layer_types", {"sliding_attention", "full_attention"}},
                    {"kv_lora_rank", 512}, {"index_topk", 2048}, {"hybrid_override_pattern", "M-M*"}};
  std::vector<std::string> paths;
  for (const UnreadKey& k : UnreadStructuralKeys(cfg, "model")) paths.push_back(k.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"model.hybrid_override_pattern", "model.index_topk", "model.kv_lora_rank"}));
  EXPECT_TRUE(HasStandardMoeKeys(cfg));
  EXPECT_FALSE(HasStandardMoeKeys(json{{"num_experts", 0}}));
}

TEST(UnknownModel, Qwen3NextIsNeverCountedSilentlyAsADenseDecoder) {
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(Qwen3NextConfig(), "model", &warnings);
  if (families::FindModelFamily("qwen3_next") != nullptr) {
    // Its own reader (the hybrid-layer work): about 81 B parameters, not 3.0 B.
    ASSERT_TRUE(spec.ok());
    EXPECT_GT(CountParams(spec.value()).total, int64_t{79'000'000'000});
    return;
  }
  ASSERT_FALSE(spec.ok());
  const Issue& e = spec.errors()[0];
  EXPECT_EQ(e.code, "unsupported_model");
  EXPECT_EQ(e.field_path, "model.model_type");
  for (const char* key : {"model.linear_num_value_heads", "model.linear_conv_kernel_dim", "model.full_attention_interval",
                          "model.layer_types", "linear attention", "model_reading", "llama", "glm4_moe"}) {
    EXPECT_NE(e.message.find(key), std::string::npos) << key << " missing from: " << e.message;
  }
  // The standard MoE keys are understood, so they are not named.
  EXPECT_EQ(e.message.find("model.num_experts"), std::string::npos) << e.message;
}

TEST(UnknownModel, ApproximateReadingListsEveryIgnoredKey) {
  json cfg = Qwen3NextConfig();
  cfg["model_type"] = "brand_new_hybrid";
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings, ModelReading::kApproximate);
  ASSERT_TRUE(spec.ok());
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_EQ(warnings[0].code, "unknown_model_type");
  EXPECT_EQ(warnings[1].code, "approximate");
  for (const char* key : {"model.linear_key_head_dim", "model.linear_num_key_heads", "model.linear_value_head_dim",
                          "model.linear_num_value_heads", "model.linear_conv_kernel_dim", "model.full_attention_interval",
                          "model.layer_types"}) {
    EXPECT_NE(warnings[1].message.find(key), std::string::npos) << key << " missing from: " << warnings[1].message;
  }
  // Read with the generic MoE reader: 512 routed experts of 512 and a shared expert in every layer.
  const ParamCounts c = CountParams(spec.value());
  EXPECT_EQ(spec.value().kinds[0].mlp.num_experts, 512);
  EXPECT_EQ(c.shared_experts, 48 * 3 * 2048 * 512);
}

TEST(UnknownModel, TheScenarioFieldSelectsTheReading) {
  json cfg = Qwen3NextConfig();
  cfg["model_type"] = "brand_new_hybrid";
  json scenario = {{"model", cfg}, {"mode", "inference"}};
  json refused = json::parse(EstimateJson(scenario.dump()));
  EXPECT_FALSE(refused["ok"].get<bool>()) << refused.dump();
  EXPECT_EQ(refused["errors"][0]["code"], "unsupported_model") << refused.dump();
  scenario["model_reading"] = "approximate";
  json read = json::parse(EstimateJson(scenario.dump()));
  ASSERT_TRUE(read["ok"].get<bool>()) << read.dump().substr(0, 2000);
  EXPECT_EQ(read["scenario"]["model_reading"], "approximate");
  bool approximate = false;
  for (const auto& w : read["warnings"]) approximate = approximate || w["code"] == "approximate";
  EXPECT_TRUE(approximate);
}

// An unknown MoE decoder with only the standard keys: read by the generic MoE reader, exactly.
TEST(UnknownModel, StandardMoeKeysAreReadByTheGenericMoeReader) {
  json cfg = {{"model_type", "brand_new_moe"}, {"hidden_size", 64}, {"num_hidden_layers", 3},
              {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"vocab_size", 100},
              {"intermediate_size", 256}, {"n_routed_experts", 8}, {"num_experts_per_tok", 2},
              {"moe_intermediate_size", 32}, {"n_shared_experts", 2}, {"first_k_dense_replace", 1}};
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(spec.ok()) << spec.errors()[0].message;
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].code, "unknown_model_type");
  const int64_t attention = 64 * 64 + 2 * 64 * 32 + 64 * 64, norms = 2 * 64;
  const int64_t dense = attention + norms + 3 * 64 * 256;
  const int64_t moe = attention + norms + 8 * 64 + 8 * 3 * 64 * 32 + 3 * 64 * 64;  // router, experts, 2 shared of 32
  const ParamCounts c = CountParams(spec.value());
  EXPECT_EQ(c.total, 2 * 100 * 64 + 64 + dense + 2 * moe);
  EXPECT_EQ(c.active_per_token, 2 * 100 * 64 + 64 + dense + 2 * (moe - 6 * 3 * 64 * 32));
}

TEST(UnknownModel, VisionWrapperWithUnknownDecoderIsRefused) {
  json cfg = {{"model_type", "brand_new_vl"},
              {"vision_config", {{"hidden_size", 1152}, {"depth", 27}}},
              {"hidden_size", 64}, {"num_hidden_layers", 2}, {"num_attention_heads", 4}, {"vocab_size", 100},
              {"intermediate_size", 128}};
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.errors()[0].message.find("model.vision_config (a vision tower)"), std::string::npos) << spec.errors()[0].message;
}

}  // namespace
}  // namespace vramplan
