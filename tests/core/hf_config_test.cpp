// The config.json reader: per-family key names and defaults, layer patterns (sliding windows, dense
// layers in MoE models), multimodal text configs, and errors naming the missing key.
#include <algorithm>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/hf_config.h"
#include "test_support.h"

namespace vramplan {
namespace hf_config_test {

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
  EXPECT_EQ(k.linears[1].slot, LinearSlot::kO);     // attention c_proj
  EXPECT_EQ(k.linears[3].slot, LinearSlot::kGate);  // Qwen1's w2 feeds silu; Mixtral's expert w2 is the down projection
  EXPECT_EQ(k.linears[4].slot, LinearSlot::kDown);  // MLP c_proj
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
  EXPECT_EQ(warnings[0].code, "unknown_model_type");
  // 2 x (4 x 64^2 + 3 x 64 x 128 + 2 x 64) + 64 + 2 x 100 x 64
  EXPECT_EQ(CountParams(spec.value()).total, 2 * (4 * 64 * 64 + 3 * 64 * 128 + 2 * 64) + 64 + 2 * 100 * 64);
}

// Every value the readers use has a range, and a value outside it is refused with its key path
// (issue 11: +-1e300 rope fractions gave weights of -9.2e18 bytes, top-k above the expert count
// gave active parameters above the total, gpt-oss accepted 0 experts per token).
struct BadConfigValue {
  const char* preset;  // the config it starts from
  const char* key;     // set to `value` (or erased, when value is discarded)
  json value;
  const char* code;
  const char* field_path;
};

json MutatedPreset(const BadConfigValue& c) {
  const PresetEntry* p = FindPreset(c.preset);
  EXPECT_NE(p, nullptr) << c.preset;
  json cfg = p ? *p->config : json::object();
  cfg[c.key] = c.value;
  return cfg;
}

TEST(HfConfigRanges, OutOfRangeValuesAreRefusedWithTheirKeyPath) {
  const uint64_t u64_max = ~uint64_t{0};
  const BadConfigValue cases[] = {
      // Rotary fractions: (0, 1].
      {"microsoft/phi-2", "partial_rotary_factor", 1e300, "out_of_range", "model.partial_rotary_factor"},
      {"microsoft/phi-2", "partial_rotary_factor", -1e300, "out_of_range", "model.partial_rotary_factor"},
      {"microsoft/phi-2", "partial_rotary_factor", -1e6, "out_of_range", "model.partial_rotary_factor"},
      {"microsoft/phi-2", "partial_rotary_factor", 0, "out_of_range", "model.partial_rotary_factor"},
      {"microsoft/phi-2", "partial_rotary_factor", 1.0000001, "out_of_range", "model.partial_rotary_factor"},
      {"microsoft/phi-2", "partial_rotary_factor", "0.4", "wrong_type", "model.partial_rotary_factor"},
      {"microsoft/Phi-3-mini-4k-instruct", "partial_rotary_factor", 2, "out_of_range", "model.partial_rotary_factor"},
      {"EleutherAI/pythia-70m", "rotary_pct", 1e300, "out_of_range", "model.rotary_pct"},
      {"EleutherAI/pythia-70m", "rotary_pct", -0.25, "out_of_range", "model.rotary_pct"},
      // Dropout probabilities: [0, 1].
      {"meta-llama/Llama-3.1-8B", "attention_dropout", 1.5, "out_of_range", "model.attention_dropout"},
      {"meta-llama/Llama-3.1-8B", "attention_dropout", -0.1, "out_of_range", "model.attention_dropout"},
      {"openai-community/gpt2", "resid_pdrop", 2, "out_of_range", "model.resid_pdrop"},
      {"microsoft/phi-2", "embd_pdrop", -1, "out_of_range", "model.embd_pdrop"},
      {"EleutherAI/pythia-70m", "hidden_dropout", 7, "out_of_range", "model.hidden_dropout"},
      // Experts per token: [1, routed experts].
      {"mistralai/Mixtral-8x7B-v0.1", "num_experts_per_tok", 9, "out_of_range", "model.num_experts_per_tok"},
      {"mistralai/Mixtral-8x7B-v0.1", "num_experts_per_tok", 0, "out_of_range", "model.num_experts_per_tok"},
      {"mistralai/Mixtral-8x7B-v0.1", "num_experts_per_tok", 1 << 24, "out_of_range", "model.num_experts_per_tok"},
      {"mistralai/Mixtral-8x7B-v0.1", "num_experts_per_tok", u64_max, "out_of_range", "model.num_experts_per_tok"},
      {"Qwen/Qwen3-30B-A3B", "num_experts_per_tok", 129, "out_of_range", "model.num_experts_per_tok"},
      {"deepseek-ai/DeepSeek-V3", "num_experts_per_tok", 257, "out_of_range", "model.num_experts_per_tok"},
      {"openai/gpt-oss-20b", "num_experts_per_tok", 0, "out_of_range", "model.num_experts_per_tok"},
      {"openai/gpt-oss-20b", "num_experts_per_tok", 33, "out_of_range", "model.num_experts_per_tok"},
      // Expert counts, head counts and dims, MLA ranks: at most 65536.
      {"deepseek-ai/DeepSeek-V3", "n_routed_experts", 1 << 24, "out_of_range", "model.n_routed_experts"},
      {"openai/gpt-oss-20b", "num_local_experts", 1 << 20, "out_of_range", "model.num_local_experts"},
      {"deepseek-ai/DeepSeek-V3", "qk_rope_head_dim", 1 << 20, "out_of_range", "model.qk_rope_head_dim"},
      {"deepseek-ai/DeepSeek-V3", "kv_lora_rank", 0, "out_of_range", "model.kv_lora_rank"},
      {"deepseek-ai/DeepSeek-V3", "q_lora_rank", -1, "out_of_range", "model.q_lora_rank"},
      {"deepseek-ai/DeepSeek-V3", "n_shared_experts", 1 << 20, "out_of_range", "model.n_shared_experts"},
      {"meta-llama/Llama-3.1-8B", "num_attention_heads", 0, "out_of_range", "model.num_attention_heads"},
      {"meta-llama/Llama-3.1-8B", "num_attention_heads", 1 << 20, "out_of_range", "model.num_attention_heads"},
      {"meta-llama/Llama-3.1-8B", "num_key_value_heads", 3, "invalid_value", "model.num_key_value_heads"},  // 32 % 3
      {"meta-llama/Llama-3.1-8B", "num_key_value_heads", 0, "out_of_range", "model.num_key_value_heads"},
      {"Qwen/Qwen3-8B", "head_dim", 0, "out_of_range", "model.head_dim"},
      // Widths, vocab, layers, windows: positive (windows: 0 = none) and at most 2^24 (layers 4096).
      {"meta-llama/Llama-3.1-8B", "hidden_size", int64_t{1} << 25, "out_of_range", "model.hidden_size"},
      {"meta-llama/Llama-3.1-8B", "hidden_size", -4096, "out_of_range", "model.hidden_size"},
      {"meta-llama/Llama-3.1-8B", "vocab_size", 0, "out_of_range", "model.vocab_size"},
      {"meta-llama/Llama-3.1-8B", "num_hidden_layers", 5000, "out_of_range", "model.num_hidden_layers"},
      {"meta-llama/Llama-3.1-8B", "intermediate_size", -1, "out_of_range", "model.intermediate_size"},
      {"meta-llama/Llama-3.1-8B", "intermediate_size", 1e30, "out_of_range", "model.intermediate_size"},
      {"mistralai/Mistral-7B-v0.1", "sliding_window", -1, "out_of_range", "model.sliding_window"},
      {"openai-community/gpt2", "n_positions", 0, "out_of_range", "model.n_positions"},
      {"openai-community/gpt2", "n_positions", 1 << 21, "out_of_range", "model.n_positions"},
      // Layer indices: [0, num_hidden_layers).
      {"Qwen/Qwen1.5-MoE-A2.7B", "mlp_only_layers", json::array({0, 24}), "out_of_range", "model.mlp_only_layers[1]"},
      {"Qwen/Qwen1.5-MoE-A2.7B", "mlp_only_layers", json::array({-1}), "out_of_range", "model.mlp_only_layers[0]"},
      {"Qwen/Qwen1.5-MoE-A2.7B", "mlp_only_layers", json::array({u64_max}), "out_of_range", "model.mlp_only_layers[0]"},
  };
  for (const auto& c : cases) {
    Issues warnings;
    auto spec = ModelSpecFromHfConfig(MutatedPreset(c), "model", &warnings);
    const std::string what = std::string(c.preset) + " " + c.key + "=" + c.value.dump();
    ASSERT_FALSE(spec.ok()) << what;
    EXPECT_EQ(spec.errors()[0].code, c.code) << what << ": " << spec.errors()[0].message;
    EXPECT_EQ(spec.errors()[0].field_path, c.field_path) << what << ": " << spec.errors()[0].message;
  }
}

TEST(HfConfigRanges, MessagesSayTheRangeAndTheValue) {
  json cfg = *FindPreset("microsoft/phi-2")->config;
  cfg["partial_rotary_factor"] = 1e300;
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.errors()[0].message, "model.partial_rotary_factor must be a number in (0, 1], got 1e+300");
  cfg = *FindPreset("mistralai/Mixtral-8x7B-v0.1")->config;
  cfg["num_experts_per_tok"] = 9;
  spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.errors()[0].message, "model.num_experts_per_tok must be an integer from 1 to the number of routed experts (8), got 9");
}

// The bounds themselves are accepted: a rotary fraction of 1, dropout 0 and 1, top-k equal to the
// expert count, gpt-oss's documented default of 4 experts per token when the key is absent.
TEST(HfConfigRanges, BoundsAreAccepted) {
  Issues warnings;
  json phi = *FindPreset("microsoft/phi-2")->config;
  phi["partial_rotary_factor"] = 1;
  phi["resid_pdrop"] = 1;
  phi["embd_pdrop"] = 0;
  auto spec = ModelSpecFromHfConfig(phi, "model", &warnings);
  ASSERT_TRUE(spec.ok()) << spec.errors()[0].message;
  EXPECT_EQ(spec.value().rope_fraction, 1.0);
  json mixtral = *FindPreset("mistralai/Mixtral-8x7B-v0.1")->config;
  mixtral["num_experts_per_tok"] = 8;
  spec = ModelSpecFromHfConfig(mixtral, "model", &warnings);
  ASSERT_TRUE(spec.ok()) << spec.errors()[0].message;
  EXPECT_EQ(CountParams(spec.value()).active_per_token, CountParams(spec.value()).total);  // every expert active
  json oss = *FindPreset("openai/gpt-oss-20b")->config;
  oss.erase("num_experts_per_tok");
  oss.erase("experts_per_token");
  spec = ModelSpecFromHfConfig(oss, "model", &warnings);
  ASSERT_TRUE(spec.ok()) << spec.errors()[0].message;
  json oss_alias = *FindPreset("openai/gpt-oss-20b")->config;
  oss_alias.erase("num_experts_per_tok");
  oss_alias["experts_per_token"] = 0;
  spec = ModelSpecFromHfConfig(oss_alias, "model", &warnings);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.errors()[0].field_path, "model.experts_per_token");
}

// A MoE model whose dense layers (mlp_only_layers) have no intermediate_size is refused, not
// built with zero-width MLPs.
TEST(HfConfigRanges, DenseLayersOfAMoeNeedIntermediateSize) {
  json cfg = *FindPreset("Qwen/Qwen3-30B-A3B")->config;
  cfg.erase("intermediate_size");
  Issues warnings;
  ASSERT_TRUE(ModelSpecFromHfConfig(cfg, "model", &warnings).ok());  // every layer is MoE: not needed
  cfg["mlp_only_layers"] = json::array({3});
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.errors()[0].field_path, "model.intermediate_size");
}

// User strings in warnings are escaped: a model_type cannot add a line to the CLI's output.
TEST(HfConfigRanges, ModelTypeInWarningsIsEscaped) {
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(json{{"model_type", "x\nerror: forged\x1b[31m"}, {"hidden_size", 64}, {"num_hidden_layers", 2},
                                         {"num_attention_heads", 4}, {"vocab_size", 100}, {"intermediate_size", 128}},
                                    "model", &warnings);
  ASSERT_TRUE(spec.ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].message.find('\n'), std::string::npos);
  EXPECT_EQ(warnings[0].message.find('\x1b'), std::string::npos);
  EXPECT_NE(warnings[0].message.find("\\nerror: forged\\u001B[31m"), std::string::npos) << warnings[0].message;
}

}  // namespace
}  // namespace vramplan
