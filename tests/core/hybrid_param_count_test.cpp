// Exact parameter counts of the hybrid families (Gated DeltaNet and Mamba mixers) from real
// config.json files, against the Hub's safetensors totals: tests/fixtures/param_counts_hybrid.json.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/hf_config.h"
#include "test_support.h"
#include "train/activations.h"
#include "train/precision.h"
#include "vramplan/model_spec.h"

namespace vramplan {
namespace hybrid_param_count_test {

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
    } else if (id == "ibm-ai-platform/Bamba-9B") {
      EXPECT_EQ(attention, 3);  // attn_layer_indices 9, 18, 27
      EXPECT_EQ(recurrent, 29);
      EXPECT_EQ(spec.value().kinds[spec.value().layer_kind[9]].attention.num_kv_heads, 8);
      EXPECT_EQ(spec.value().kinds[spec.value().layer_kind[0]].recurrent.kind, MixerKind::kMamba2);
    } else if (id == "moonshotai/Kimi-Linear-48B-A3B-Instruct") {
      EXPECT_EQ(attention, 7);  // full_attn_layers 4, 8, ..., 24, 27 (1-based)
      EXPECT_EQ(recurrent, 20);
      EXPECT_TRUE(spec.value().kinds[spec.value().layer_kind[3]].attention.mla);
      EXPECT_EQ(spec.value().kinds[spec.value().layer_kind[0]].recurrent.kind, MixerKind::kKimiDelta);
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

// Kimi Linear's layers against the checkpoint's tensor shapes (the Hub safetensors headers of
// moonshotai/Kimi-Linear-48B-A3B-Instruct): a KDA layer's q/k/v_proj [4096, 2304], f_a_proj and
// g_a_proj [128, 2304], f_b_proj and g_b_proj [4096, 128], b_proj [32, 2304], o_proj [2304, 4096],
// q/k/v_conv1d [4096, 1, 4], dt_bias [4096], A_log [1, 1, 32, 1], o_norm [128]; an MLA layer's
// q_proj [6144, 2304], kv_a_proj_with_mqa [576, 2304], kv_a_layernorm [512], kv_b_proj [8192, 512],
// o_proj [2304, 4096]. A config missing its layer lists, or with Kimi K3's extensions, is refused.
TEST(HybridParamCount, KimiLinearLayersAndRefusals) {
  nlohmann::json cfg;
  const nlohmann::json table = LoadFixture("param_counts_hybrid.json");
  for (const auto& row : table["models"]) {
    if (row["id"] == "moonshotai/Kimi-Linear-48B-A3B-Instruct") cfg = row["config"];
  }
  ASSERT_TRUE(cfg.is_object());
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(spec.ok());
  const ModelSpec& m = spec.value();
  const auto attention_params = [](const LayerKind& k) {
    int64_t n = k.extra_attention_params;
    for (const auto& l : k.linears) n += l.role == ModuleRole::kAttention ? l.Params() : 0;
    for (const auto& n2 : k.norms) n += n2.slot == NormSlot::kMlaKvA ? n2.dim : 0;
    return n;
  };
  const int64_t kda = 3 * 4096 * 2304 + 2 * 128 * 2304 + 2 * 4096 * 128 + 32 * 2304 + 2304 * 4096 + 3 * 4096 * 4 + 4096 + 32 + 128;
  const int64_t mla = 6144 * 2304 + 576 * 2304 + 512 + 8192 * 512 + 2304 * 4096;
  EXPECT_EQ(attention_params(m.kinds[m.layer_kind[0]]), kda);
  EXPECT_EQ(attention_params(m.kinds[m.layer_kind[3]]), mla);
  EXPECT_EQ(attention_params(m.kinds[m.layer_kind[26]]), mla);
  EXPECT_EQ(m.kinds[m.layer_kind[0]].mlp.num_experts, 0);  // first_k_dense_replace 1
  EXPECT_EQ(m.kinds[m.layer_kind[1]].mlp.num_experts, 256);
  EXPECT_EQ(m.kinds[m.layer_kind[1]].extra_router_params, 256);  // gate.e_score_correction_bias

  nlohmann::json no_lists = cfg;
  no_lists["linear_attn_config"].erase("kda_layers");
  no_lists["linear_attn_config"].erase("full_attn_layers");
  auto a = ModelSpecFromHfConfig(no_lists, "model", &warnings);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.errors()[0].code, "missing_key");
  nlohmann::json gap = cfg;
  gap["linear_attn_config"]["kda_layers"].erase(0);
  EXPECT_FALSE(ModelSpecFromHfConfig(gap, "model", &warnings).ok());
  nlohmann::json k3 = cfg;
  k3["mla_use_output_gate"] = true;
  auto b = ModelSpecFromHfConfig(k3, "model", &warnings);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.errors()[0].code, "unsupported_model");
}

// A KDA layer's saves beyond its linears' inputs, bf16, per token, from what the remote
// modeling_kimi.py KimiDeltaAttention.forward runs in training and fla saves for backward (worked by
// hand for 32 heads x 128): the three ShortConvolutions' inputs 3 x 4,096 x 2 = 24,576; f_b_proj /
// g_b_proj's inputs 2 x 128 x 2 = 512; fused_kda_gate's input 4,096 x 2 = 8,192; beta (fp32 sigmoid
// output) 32 x 4 = 128; ChunkKDAFunction.forward's q, k, v 3 x 4,096 x 2 = 24,576, q_rstd / k_rstd
// 2 x 32 x 4 = 256, g_cumsum and the fp32 gate 2 x 4,096 x 4 = 32,768, Aqk / Akk 2 x 32 x 64 x 2 =
// 8,192; FusedRMSNormGated's input and gate 2 x 4,096 x 2 = 16,384 and rstd 32 x 4 = 128. Total
// 115,712 B.
TEST(HybridParamCount, KimiDeltaSavesFollowFlaChunkKda) {
  nlohmann::json cfg;
  const nlohmann::json table = LoadFixture("param_counts_hybrid.json");
  for (const auto& row : table["models"]) {
    if (row["id"] == "moonshotai/Kimi-Linear-48B-A3B-Instruct") cfg = row["config"];
  }
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(spec.ok());
  const LayerKind& kda = spec.value().kinds[spec.value().layer_kind[0]];
  LayerKind plain = kda;
  plain.recurrent.kind = MixerKind::kNone;
  ActivationContext ctx;
  ctx.batch = 2;
  ctx.seq = 1024;
  ctx.prec = PrecisionFor(Precision::kBf16);
  const LayerPlan full{true, true, false};
  EXPECT_EQ(ComputeLayerSaved(kda, full, ctx).total_bytes - ComputeLayerSaved(plain, full, ctx).total_bytes, 2 * 1024 * 115712);
}

}  // namespace
}  // namespace vramplan
