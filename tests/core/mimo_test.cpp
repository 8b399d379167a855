// The MiMo-V2-Flash reader (core/src/model/families/mimo.cpp) on the Hub config of
// tests/fixtures/param_counts.json: per-layer attention geometry, the MTP blocks and FP8 scales of
// the checkpoint, the KV cache per engine, transformers' native spelling, and the refusals.
// Everything below is worked by hand from vLLM's vllm/model_executor/models/mimo_v2_flash.py
// (MiMoV2Attention, MiMoV2MoE, MiMoV2MLP) and the public header dump of the MTP shard.
//
// h 4096, vocab 152,576, 48 layers: 9 full-attention (0, 5, 11, ..., 47: hybrid_layer_pattern 0)
// with 64 heads, 4 KV heads, q/k head_dim 192, v_head_dim 128; 39 sliding (window 128) with 64
// heads, 8 KV heads, the same head dims and an attention_sink_bias of 64; layer 0 a dense SwiGLU of
// 16,384, layers 1-47 a router of 256 experts (+ correction bias) and 256 experts of 2,048, top 8.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_support.h"

#include "inference/kv_cache.h"
#include "inference/vllm_kv_groups.h"
#include "model/hf_config.h"
#include "vramplan/estimate.h"
#include "vramplan/model_spec.h"

namespace vramplan {
namespace mimo_test {

using nlohmann::json;

json FlashConfig() {
  const json table = testing_support::LoadFixture("param_counts.json");
  for (const auto& row : table["models"]) {
    if (row["id"] == "XiaomiMiMo/MiMo-V2-Flash") return row["config"];
  }
  ADD_FAILURE() << "XiaomiMiMo/MiMo-V2-Flash is not in tests/fixtures/param_counts.json";
  return json::object();
}

ModelSpec Spec(const json& cfg) {
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  EXPECT_TRUE(spec.ok()) << (spec.ok() ? "" : spec.errors()[0].message);
  EXPECT_TRUE(warnings.empty()) << (warnings.empty() ? "" : warnings[0].message);
  return spec.ok() ? spec.value() : ModelSpec{};
}

// Attention: q 4096 x 12,288 = 50,331,648, o 8,192 x 4,096 = 33,554,432; full k 4096 x 768 =
// 3,145,728, v 4096 x 512 = 2,097,152; sliding k 4096 x 1,536 = 6,291,456, v 4096 x 1,024 =
// 4,194,304, + 64 sinks.
constexpr int64_t kFullAttention = 50331648 + 3145728 + 2097152 + 33554432;           // 89,128,960
constexpr int64_t kSlidingAttention = 50331648 + 6291456 + 4194304 + 33554432 + 64;   // 94,371,904
constexpr int64_t kDense = 3LL * 4096 * 16384;                                         // 201,326,592
constexpr int64_t kMoe = 256LL * 4096 + 256 + 256LL * 3 * 4096 * 2048;                  // 6,443,499,776
constexpr int64_t kNorms = 2 * 4096;

TEST(MiMoV2Flash, LayersFollowTheHybridPattern) {
  const ModelSpec m = Spec(FlashConfig());
  ASSERT_EQ(m.num_layers, 48);
  int full = 0, sliding = 0, moe = 0;
  for (int64_t i = 0; i < 48; ++i) {
    const LayerKind& k = m.kinds[m.layer_kind[static_cast<size_t>(i)]];
    const bool is_full = i == 0 || (i + 1) % 6 == 0;
    EXPECT_EQ(k.attention.sliding_window, is_full ? 0 : 128) << i;
    EXPECT_EQ(k.attention.num_heads, 64) << i;
    EXPECT_EQ(k.attention.num_kv_heads, is_full ? 4 : 8) << i;
    EXPECT_EQ(k.attention.head_dim, 192) << i;
    EXPECT_EQ(k.attention.v_head_dim, 128) << i;
    EXPECT_EQ(k.extra_attention_params, is_full ? 0 : 64) << i;  // attention_sink_bias on sliding layers
    EXPECT_EQ(k.mlp.num_experts, i == 0 ? 0 : 256) << i;
    full += is_full;
    sliding += !is_full;
    moe += k.mlp.num_experts > 0;
  }
  EXPECT_EQ(full, 9);
  EXPECT_EQ(sliding, 39);
  EXPECT_EQ(moe, 47);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_DOUBLE_EQ(m.rope_fraction, 0.334);
}

TEST(MiMoV2Flash, CountsByHand) {
  const ModelSpec m = Spec(FlashConfig());
  const ParamCounts c = CountParams(m);
  const int64_t embed = 152576LL * 4096;  // 624,951,296, and as much for the untied lm_head
  const int64_t layer0 = kFullAttention + kDense + kNorms;
  const int64_t full_moe = kFullAttention + kMoe + kNorms;
  const int64_t sliding_moe = kSlidingAttention + kMoe + kNorms;
  EXPECT_EQ(c.total, 2 * embed + 4096 + layer0 + 8 * full_moe + 39 * sliding_moe);
  EXPECT_EQ(c.total, 308778780864);
  // Active: 8 of 256 experts (8 x 3 x 4096 x 2048 = 201,326,592) in place of the 256.
  const int64_t moe_active = 256LL * 4096 + 256 + 8LL * 3 * 4096 * 2048;
  EXPECT_EQ(c.active_per_token, 2 * embed + 4096 + layer0 + 8 * (kFullAttention + moe_active + kNorms) +
                                    39 * (kSlidingAttention + moe_active + kNorms));
  // MTP (model.mtp.layers.0-2): a sliding-attention layer with a dense MLP and two norms, enorm +
  // hnorm + final_layernorm, eh_proj 8,192 x 4,096; 329,273,408 each.
  const int64_t mtp_block = kSlidingAttention + kDense + kNorms + 3 * 4096 + 8192LL * 4096;
  EXPECT_EQ(mtp_block, 329273408);
  EXPECT_EQ(m.checkpoint.mtp_layers, 3);
  EXPECT_EQ(c.mtp, 3 * mtp_block);
  // FP8 weight_scale_inv, 128 x 128 blocks, none on o_proj (bf16), the router or the embeddings:
  // q 96 x 32; full k 6 x 32, v 4 x 32; sliding k 12 x 32, v 8 x 32 (the MTP header's [12, 32] and
  // [8, 32]); dense gate / up 128 x 32, down 32 x 128; expert gate / up 16 x 32, down 32 x 16.
  const int64_t full_attn_scales = 96 * 32 + 6 * 32 + 4 * 32;      // 3,392
  const int64_t sliding_attn_scales = 96 * 32 + 12 * 32 + 8 * 32;  // 3,712
  const int64_t dense_scales = 3 * 4096;
  const int64_t expert_scales = 256 * 3 * 512;  // 393,216
  EXPECT_EQ(c.quantization_scales, (full_attn_scales + dense_scales) + 8 * (full_attn_scales + expert_scales) +
                                       39 * (sliding_attn_scales + expert_scales) + 3 * (sliding_attn_scales + dense_scales));
  EXPECT_EQ(c.quantization_scales, 18716736);
  EXPECT_EQ(c.checkpoint_total, c.total + c.mtp + c.quantization_scales);
}

// One token of one layer: K 192 + V 128 elements per KV head, in bf16 4 x 320 x 2 B = 2,560 B on a
// full layer and 8 x 320 x 2 B = 5,120 B on a sliding one. All 48 layers: 9 x 2,560 + 39 x 5,120 =
// 222,720 B per token, in vLLM and llama.cpp (n_embd_k_gqa = kv x 192, n_embd_v_gqa = kv x 128) alike.
TEST(MiMoV2Flash, KvBytesPerTokenFollowTheGeometry) {
  const ModelSpec m = Spec(FlashConfig());
  for (Engine engine : {Engine::kVllm, Engine::kLlamaCpp, Engine::kTransformers}) {
    const KvElementSize e = ResolveKvDtype(KvDtype::kAuto, WeightFormat::kBf16, engine);
    EXPECT_EQ(KvBytesPerToken(KvGroups(m, engine, 1), e), 9 * 2560 + 39 * 5120) << static_cast<int>(engine);
  }
  // tp 8: the 4 full-attention KV heads are replicated (one per rank), the 8 sliding ones split:
  // 48 layers x 1 x 320 x 2 B.
  const KvElementSize bf16 = ResolveKvDtype(KvDtype::kAuto, WeightFormat::kBf16, Engine::kVllm);
  EXPECT_EQ(KvBytesPerToken(KvGroups(m, Engine::kVllm, 8), bf16), 48 * 640);
  // 32k tokens, one sequence, sliding layers capped at the window: 9 x 2,560 x 32,768 + 39 x 5,120 x 128.
  EXPECT_EQ(KvBytes(KvGroups(m, Engine::kVllm, 1), bf16, 32768, 1), 9LL * 2560 * 32768 + 39LL * 5120 * 128);
}

// vLLM's pool (vllm_kv_groups.h): pages of block 16 are 16 x 4 x 320 x 2 = 40,960 B (full) and
// 16 x 8 x 320 x 2 = 81,920 B (sliding); the hybrid allocator raises the full block to 32 tokens
// (81,920 B), group_size = 9 (39 >= 1.25 x 9), 1 full + cdiv(39, 9) = 5 sliding groups. One request
// of 131,072 tokens, max_num_batched_tokens 8,192: 9 x 81,920 x (131,072 / 32 + 5 x (cdiv(127 + 8,192,
// 16) + 1)) = 9 x 81,920 x (4,096 + 5 x 521). Pool of 40 GiB: 42,949,672,960 // 81,920 // 9 = 58,254
// pages per tensor; "GPU KV cache size" 58,254 // 6 x 16 = 155,344 tokens.
TEST(MiMoV2Flash, VllmHybridPaging) {
  const ModelSpec m = Spec(FlashConfig());
  const KvElementSize e = ResolveKvDtype(KvDtype::kAuto, WeightFormat::kBf16, Engine::kVllm);
  const VllmKvPaging p = PageVllmAttention(KvGroups(m, Engine::kVllm, 1), e, 16, 8192, 40LL << 30, true);
  EXPECT_FALSE(p.page_mismatch);
  EXPECT_EQ(p.group_size, 9);
  EXPECT_EQ(p.groups, 6);
  EXPECT_EQ(p.page, 81920);
  EXPECT_EQ(p.RequestBytes(131072), 9LL * 81920 * (4096 + 5 * 521));
  EXPECT_EQ(p.num_blocks, 58254);
  EXPECT_EQ(p.token_capacity, 155344);
}

// transformers' native port (convert_mimo_v2_flash_weights_to_hf.py): layer_types and
// mlp_layer_types; a sliding layer has num_key_value_heads x 2 KV heads and sinks. The same weights.
TEST(MiMoV2Flash, NativeSpellingReadsTheSameModel) {
  const json hub = FlashConfig();
  json native = hub;
  for (const char* k : {"hybrid_layer_pattern", "moe_layer_freq", "sliding_window_size", "swa_num_attention_heads",
                        "swa_num_key_value_heads", "swa_head_dim", "swa_v_head_dim", "add_swa_attention_sink_bias",
                        "add_full_attention_sink_bias"}) {
    native.erase(k);
  }
  json types = json::array(), mlp = json::array();
  for (int i = 0; i < 48; ++i) {
    types.push_back(hub["hybrid_layer_pattern"][i] == 1 ? "sliding_attention" : "full_attention");
    mlp.push_back(hub["moe_layer_freq"][i] == 1 ? "sparse" : "dense");
  }
  native["layer_types"] = types;
  native["mlp_layer_types"] = mlp;
  EXPECT_EQ(CountParams(Spec(native)).checkpoint_total, CountParams(Spec(hub)).checkpoint_total);
  // Without the lists: layer 0 and every sixth layer full, layer 0 dense (MiMoV2FlashConfig).
  native.erase("layer_types");
  native.erase("mlp_layer_types");
  EXPECT_EQ(CountParams(Spec(native)).total, 308778780864);
}

TEST(MiMoV2Flash, Refusals) {
  Issues warnings;
  json cfg = FlashConfig();
  cfg["moe_layer_freq"] = 1;  // vLLM indexes the list by layer
  EXPECT_FALSE(ModelSpecFromHfConfig(cfg, "model", &warnings).ok());
  cfg = FlashConfig();
  cfg["add_full_attention_sink_bias"] = true;
  EXPECT_FALSE(ModelSpecFromHfConfig(cfg, "model", &warnings).ok());
  // vLLM's MiMo MTP drafter is not modelled: speculative "mtp" is refused for the model.
  const json sc = {{"model", FlashConfig()},
                   {"mode", "inference"},
                   {"gpu", "h200-sxm-141gb"},
                   {"parallel", {{"gpus", 8}, {"tp", 8}}},
                   {"inference", {{"engine", "vllm"}, {"speculative", {{"method", "mtp"}}}}}};
  auto s = ParseScenario(sc.dump());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.errors()[0].field_path, "inference.speculative.method");
  EXPECT_NE(s.errors()[0].message.find("MiMo-V2-Flash"), std::string::npos) << s.errors()[0].message;
}

}  // namespace
}  // namespace vramplan
