// Exact parameter counts of the hybrid families (Gated DeltaNet and Mamba mixers) from real
// config.json files, against the Hub's safetensors totals: tests/fixtures/param_counts_hybrid.json.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/hf_config.h"
#include "test_support.h"
#include "vramplan/model_spec.h"

namespace vramplan {
namespace {

using testing_support::LoadFixture;

TEST(HybridParamCount, PublishedTotalsAreExact) {
  nlohmann::json table = LoadFixture("param_counts_hybrid.json");
  ASSERT_TRUE(table.is_object()) << "tests/fixtures/param_counts_hybrid.json missing or invalid";
  const auto& rows = table["models"];
  ASSERT_GE(rows.size(), 6u);
  for (const auto& row : rows) {
    const std::string id = row["id"].get<std::string>();
    Issues warnings;
    auto spec = ModelSpecFromHfConfig(row["config"], "model", &warnings);
    ASSERT_TRUE(spec.ok()) << id << ": " << (spec.ok() ? "" : spec.errors()[0].message);
    const int64_t not_loaded = row.value("not_loaded_params", int64_t{0});
    const ParamCounts counts = CountParams(spec.value());
    EXPECT_EQ(counts.total + not_loaded, row["params"].get<int64_t>())
        << id << " (source: " << row["params_source"].get<std::string>() << ")";
    // What the checkpoint stores (the MTP layer included) is the Hub's total.
    EXPECT_EQ(counts.mtp, not_loaded) << id;
    EXPECT_EQ(counts.checkpoint_total, row["params"].get<int64_t>()) << id;
    EXPECT_TRUE(warnings.empty()) << id << ": " << (warnings.empty() ? "" : warnings[0].message);
  }
}

// Which layers get which mixer, and the state geometry the inference terms read.
TEST(HybridParamCount, LayerMixersFollowTheConfig) {
  nlohmann::json table = LoadFixture("param_counts_hybrid.json");
  for (const auto& row : table["models"]) {
    const std::string id = row["id"].get<std::string>();
    Issues warnings;
    auto spec = ModelSpecFromHfConfig(row["config"], "model", &warnings);
    ASSERT_TRUE(spec.ok()) << id;
    int64_t attention = 0, recurrent = 0;
    for (uint8_t k : spec.value().layer_kind) {
      const LayerKind& kind = spec.value().kinds[k];
      if (kind.attention.num_heads > 0) ++attention;
      if (kind.recurrent.kind != MixerKind::kNone) ++recurrent;
    }
    if (id == "Qwen/Qwen3-Next-80B-A3B-Instruct") {
      EXPECT_EQ(attention, 12);
      EXPECT_EQ(recurrent, 36);
    } else if (id == "nvidia/Nemotron-H-8B-Base-8K") {
      EXPECT_EQ(attention, 4);
      EXPECT_EQ(recurrent, 24);
    } else if (id == "ibm-granite/granite-4.0-h-small") {
      EXPECT_EQ(attention, 4);
      EXPECT_EQ(recurrent, 36);
    } else if (id == "tiiuae/Falcon-H1-1.5B") {
      EXPECT_EQ(attention, 24);  // attention and Mamba-2 side by side in every layer
      EXPECT_EQ(recurrent, 24);
    } else if (id == "ai21labs/Jamba-v0.1" || id == "ai21labs/AI21-Jamba-1.5-Mini") {
      EXPECT_EQ(attention, 4);
      EXPECT_EQ(recurrent, 28);
    }
  }
}

// Qwen3.5's text decoders: the Qwen3-Next mixers with Gated DeltaNet's input projection split in
// four (in_proj_qkv / in_proj_z / in_proj_b / in_proj_a, the same widths), so a Qwen3-Next config
// read as qwen3_5_moe_text counts the same. The released checkpoints (multimodal wrappers, vision
// tower and MTP layer included) are rows of tests/fixtures/param_counts.json, checked against the
// Hub totals by ParamCount.PublishedTotalsAreExact; Qwen35WrappersInterleaveMixers below.
TEST(HybridParamCount, Qwen35TextDecoders) {
  nlohmann::json table = LoadFixture("param_counts_hybrid.json");
  nlohmann::json next = table["models"][0]["config"];
  ASSERT_EQ(next["model_type"], "qwen3_next");
  Issues warnings;
  auto a = ModelSpecFromHfConfig(next, "model", &warnings);
  nlohmann::json moe35 = next;
  moe35["model_type"] = "qwen3_5_moe_text";
  auto b = ModelSpecFromHfConfig(moe35, "model", &warnings);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(CountParams(a.value()).total, CountParams(b.value()).total);
  // Qwen3.5-27B's text_config (dense): 64 layers, every 4th full attention.
  nlohmann::json dense = {{"model_type", "qwen3_5_text"}, {"hidden_size", 5120}, {"num_hidden_layers", 64},
                          {"num_attention_heads", 24}, {"num_key_value_heads", 4}, {"head_dim", 256},
                          {"intermediate_size", 17408}, {"vocab_size", 248320}, {"full_attention_interval", 4},
                          {"linear_num_key_heads", 16}, {"linear_num_value_heads", 48}, {"linear_key_head_dim", 128},
                          {"linear_value_head_dim", 128}, {"linear_conv_kernel_dim", 4}, {"tie_word_embeddings", false}};
  auto c = ModelSpecFromHfConfig(dense, "model", &warnings);
  ASSERT_TRUE(c.ok()) << c.errors()[0].message;
  int64_t attention = 0, gdn = 0;
  for (uint8_t k : c.value().layer_kind) {
    attention += c.value().kinds[k].attention.num_heads > 0;
    gdn += c.value().kinds[k].recurrent.kind == MixerKind::kGatedDeltaNet;
  }
  EXPECT_EQ(attention, 16);
  EXPECT_EQ(gdn, 48);
  // Per GDN layer: in_proj_qkv 5120 x (2 x 2048 + 6144) + in_proj_z 5120 x 6144 + in_proj_b/a
  // 5120 x 48 each + out_proj 6144 x 5120 + conv1d 10240 x 4 + dt_bias, A_log 48 each + norm 128.
  const int64_t h = 5120, key = 16 * 128, value = 48 * 128;
  const int64_t gdn_layer = h * (2 * key + value) + h * value + 2 * h * 48 + value * h + (2 * key + value) * 4 + 2 * 48 + 128;
  const int64_t attention_layer = h * 2 * 24 * 256 + 2 * h * 4 * 256 + 24 * 256 * h + 2 * 256;
  const int64_t mlp_and_norms = 3 * h * 17408 + 2 * h;
  EXPECT_EQ(CountParams(c.value()).total, 2 * 248320 * h + h + 48 * gdn_layer + 16 * attention_layer + 64 * mlp_and_norms);
}

// The Qwen3.5 / 3.6 rows of param_counts.json: every fourth layer gated full attention, the rest
// Gated DeltaNet; the MoE decoders route through experts and a gated shared expert in every layer;
// the checkpoint's MTP layer (mtp_num_hidden_layers 1) counted in by_module.mtp.
TEST(HybridParamCount, Qwen35WrappersInterleaveMixers) {
  int seen = 0;
  const nlohmann::json table = LoadFixture("param_counts.json");
  for (const auto& row : table["models"]) {
    const std::string id = row["id"].get<std::string>();
    if (id.rfind("Qwen/Qwen3.5-", 0) != 0 && id.rfind("Qwen/Qwen3.6-", 0) != 0) continue;
    ++seen;
    Issues warnings;
    auto spec = ModelSpecFromHfConfig(row["config"], "model", &warnings);
    ASSERT_TRUE(spec.ok()) << id;
    const ModelSpec& m = spec.value();
    int64_t attention = 0, gdn = 0, moe = 0;
    for (uint8_t k : m.layer_kind) {
      attention += m.kinds[k].attention.num_heads > 0;
      gdn += m.kinds[k].recurrent.kind == MixerKind::kGatedDeltaNet;
      moe += m.kinds[k].mlp.num_experts > 0;
    }
    const int64_t layers = row["config"]["text_config"]["num_hidden_layers"].get<int64_t>();
    EXPECT_EQ(attention, layers / 4) << id;
    EXPECT_EQ(gdn, layers - layers / 4) << id;
    EXPECT_EQ(moe, row["config"]["model_type"] == "qwen3_5_moe" ? layers : 0) << id;
    EXPECT_EQ(m.checkpoint.mtp_layers, 1) << id;
    EXPECT_GT(CountParams(m).mtp, 0) << id;
  }
  EXPECT_GE(seen, 8);
}

}  // namespace
}  // namespace vramplan
