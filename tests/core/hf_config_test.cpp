// The config.json reader: per-family key names and defaults, layer patterns (sliding windows, dense
// layers in MoE models), multimodal text configs, and errors naming the missing key.
#include <algorithm>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/hf_config.h"
#include "test_support.h"

namespace vramplan {
namespace {

using nlohmann::json;

int64_t CountLayers(const ModelSpec& m, bool (*pred)(const LayerKind&)) {
  return std::count_if(m.layer_kind.begin(), m.layer_kind.end(), [&](uint8_t k) { return pred(m.kinds[k]); });
}

TEST(HfConfig, SlidingWindowPatterns) {
  const ModelSpec& gemma3 = testing_support::PresetSpec("google/gemma-3-1b-it");  // 26 layers, 5 local : 1 global
  EXPECT_EQ(CountLayers(gemma3, [](const LayerKind& k) { return k.attention.sliding_window == 0; }), 4);
  const ModelSpec& gemma2 = testing_support::PresetSpec("google/gemma-2-9b-it");  // alternating
  EXPECT_EQ(CountLayers(gemma2, [](const LayerKind& k) { return k.attention.sliding_window > 0; }), gemma2.num_layers / 2);
  const ModelSpec& oss = testing_support::PresetSpec("openai/gpt-oss-20b");
  EXPECT_EQ(CountLayers(oss, [](const LayerKind& k) { return k.attention.sliding_window == 128; }), 12);
}

TEST(HfConfig, MoeLayoutsAndDenseLayers) {
  const ModelSpec& ds = testing_support::PresetSpec("deepseek-ai/DeepSeek-V3");
  EXPECT_EQ(CountLayers(ds, [](const LayerKind& k) { return k.mlp.num_experts == 0; }), 3);  // first_k_dense_replace
  EXPECT_TRUE(ds.kinds[0].attention.mla);
  json cfg = *FindPreset("Qwen/Qwen1.5-MoE-A2.7B")->config;
  cfg["mlp_only_layers"] = json::array({0, 5});
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(CountLayers(spec.value(), [](const LayerKind& k) { return k.mlp.num_experts == 0; }), 2);
}

TEST(HfConfig, FamilyDefaults) {
  EXPECT_TRUE(testing_support::PresetSpec("google/gemma-2b").tied_embeddings);  // Gemma ties by default
  EXPECT_FALSE(testing_support::PresetSpec("meta-llama/Llama-2-7b-hf").tied_embeddings);
  EXPECT_TRUE(testing_support::PresetSpec("microsoft/phi-2").lm_head_bias);
  EXPECT_EQ(testing_support::PresetSpec("openai-community/gpt2").position_embedding_rows, 1024);
  EXPECT_EQ(testing_support::PresetSpec("Qwen/Qwen3-8B").kinds[0].attention.head_dim, 128);
}

// Qwen1 remote code (modeling_qwen.py): fused c_attn with bias, two MLP inputs of
// intermediate_size / 2 (a1 * silu(a2)), c_proj in both attention and MLP, loss without .float().
TEST(HfConfig, Qwen1RemoteCodeLayout) {
  const json cfg = {{"model_type", "qwen"}, {"hidden_size", 4096}, {"intermediate_size", 22016}, {"kv_channels", 128},
                    {"num_attention_heads", 32}, {"num_hidden_layers", 32}, {"no_bias", true}, {"rotary_pct", 1.0},
                    {"tie_word_embeddings", false}, {"vocab_size", 151936}};
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(spec.ok());
  EXPECT_TRUE(warnings.empty());  // a dedicated reader, not the generic fallback
  const LayerKind& k = spec.value().kinds[0];
  ASSERT_EQ(k.linears.size(), 5u);
  EXPECT_EQ(k.linears[0].name, "c_attn");
  EXPECT_EQ(k.linears[0].out_features, 3 * 4096);
  EXPECT_TRUE(k.linears[0].bias);
  EXPECT_TRUE(IsAttentionOutputProjection(k.linears[1]));
  EXPECT_FALSE(IsMlpDownProjection(k.linears[3]));  // Qwen1's w2 feeds silu; Mixtral's expert w2 is the down projection
  EXPECT_TRUE(IsMlpDownProjection(k.linears[4]));
  EXPECT_EQ(k.mlp.intermediate, 11008);
  EXPECT_FALSE(spec.value().loss_upcasts_logits);
}

TEST(HfConfig, MultimodalUsesTextConfigWithWarning) {
  json cfg = {{"model_type", "gemma3"},
              {"text_config", {{"model_type", "gemma3_text"}, {"hidden_size", 256}, {"intermediate_size", 512},
                               {"num_hidden_layers", 2}, {"num_attention_heads", 4}, {"num_key_value_heads", 1},
                               {"head_dim", 64}, {"vocab_size", 1000}}}};
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(spec.ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].code, "text_model_only");
  EXPECT_EQ(spec.value().model_type, "gemma3_text");
}

TEST(HfConfig, MissingKeyIsNamed) {
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(json{{"model_type", "mistral"}, {"hidden_size", 64}, {"num_hidden_layers", 2},
                                         {"vocab_size", 100}, {"intermediate_size", 128}},
                                    "model", &warnings);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.errors()[0].code, "missing_key");
  EXPECT_EQ(spec.errors()[0].field_path, "model.num_attention_heads");
}

TEST(HfConfig, UnknownTypeReadsAsLlamaWithWarning) {
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(json{{"model_type", "brand_new"}, {"hidden_size", 64}, {"num_hidden_layers", 2},
                                         {"num_attention_heads", 4}, {"vocab_size", 100}, {"intermediate_size", 128}},
                                    "model", &warnings);
  ASSERT_TRUE(spec.ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].code, "generic_model_type");
  // 2 x (4 x 64^2 + 3 x 64 x 128 + 2 x 64) + 64 + 2 x 100 x 64
  EXPECT_EQ(CountParams(spec.value()).total, 2 * (4 * 64 * 64 + 3 * 64 * 128 + 2 * 64) + 64 + 2 * 100 * 64);
}

}  // namespace
}  // namespace vramplan
