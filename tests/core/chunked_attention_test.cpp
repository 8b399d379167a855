// Chunked local attention (Llama 4) and NoPE layers (Llama 4, SmolLM3): the layers as read, the KV
// cache as llama.cpp allocates it, worked by hand from its code, and what a NoPE layer changes in the
// training activation walk (vLLM's paging: vllm_kv_groups_test.cpp).
//
// Llama-4-Scout-17B-16E: 48 layers, 8 KV heads x head_dim 128, attention_chunk_size 8192, every 4th
// layer (3, 7, ..., 47) a global NoPE layer: 12 full + 36 chunked layers. One token of one layer in
// bf16 / f16: 2 (K, V) x 8 x 128 x 2 B = 4,096 B; a vLLM page (block_size 16) 16 x 4,096 = 65,536 B.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_support.h"

#include "inference/kv_cache.h"
#include "model/hf_config.h"
#include "train/activations.h"
#include "train/precision.h"

namespace vramplan {
namespace chunked_attention_test {

using nlohmann::json;
using testing_support::GpuTerm;

constexpr const char* kScout = "meta-llama/Llama-4-Scout-17B-16E-Instruct";

TEST(ChunkedAttention, ScoutLayersAreTwelveFullThirtySixChunked) {
  const ModelSpec& m = testing_support::PresetSpec(kScout);
  ASSERT_EQ(m.layer_kind.size(), 48u);
  for (size_t i = 0; i < 48; ++i) {
    const AttentionGeometry& a = m.kinds[m.layer_kind[i]].attention;
    const bool nope = (i + 1) % 4 == 0;
    EXPECT_EQ(a.no_rope, nope) << i;
    EXPECT_EQ(a.chunked, !nope) << i;
    EXPECT_EQ(a.sliding_window, nope ? 0 : 8192) << i;
  }
  const auto groups = KvGroups(m, Engine::kVllm, 1);
  const KvElementSize e = ResolveKvDtype(KvDtype::kAuto, WeightFormat::kBf16, Engine::kVllm);
  EXPECT_EQ(KvBytesPerToken(groups, e), 48 * 4096);
}

// llama.cpp: Llama 4's chunked layers are the iSWA cache's SWA layers with n_swa = 8192
// (src/llama-model.cpp, LLM_ARCH_LLAMA4), size_swa = pad(min(n_ctx, n_swa x n_seq + n_ubatch), 256)
// = pad(8,192 + 512, 256) = 8,704 cells (src/llama-kv-cache-iswa.cpp); the 12 full layers n_ctx
// cells; f16 rows of 4,096 B per cell.
TEST(ChunkedAttention, LlamaCppKvBufferPerContext) {
  struct Row {
    int64_t n_ctx;
    int64_t bytes;
  };
  const Row rows[] = {
      {4096, 48LL * 4096 * 4096},                                // 805,306,368: n_ctx < 8,704
      {32768, 12LL * 32768 * 4096 + 36LL * 8704 * 4096},         // 1,610,612,736 + 1,283,457,024
      {131072, 12LL * 131072 * 4096 + 36LL * 8704 * 4096},       // 6,442,450,944 + 1,283,457,024
  };
  for (const auto& r : rows) {
    const json sc = {{"model", kScout},
                     {"mode", "inference"},
                     {"gpu", "h200-sxm-141gb"},
                     {"inference", {{"engine", "llama_cpp"}, {"weights", "gguf_q4_k_m"}, {"n_ctx", r.n_ctx}, {"batch_size", 1}}}};
    const Result res = testing_support::EstimateText(sc.dump());
    EXPECT_EQ(GpuTerm(res, "kv_cache"), r.bytes) << r.n_ctx;
  }
  EXPECT_EQ(12LL * 32768 * 4096 + 36LL * 8704 * 4096, 2894069760);
  EXPECT_EQ(12LL * 131072 * 4096 + 36LL * 8704 * 4096, 7725907968);
}

// SmolLM3: SmolLM3Config's default no_rope_layers (interval 4) makes layers 3, 7, ... NoPE; an
// explicit list is read as given (1 = RoPE, 0 = NoPE).
TEST(ChunkedAttention, SmolLm3NoRopeLayers) {
  json cfg = {{"model_type", "smollm3"}, {"hidden_size", 256}, {"intermediate_size", 512}, {"num_hidden_layers", 8},
              {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"vocab_size", 1000}};
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(spec.ok());
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(spec.value().kinds[spec.value().layer_kind[i]].attention.no_rope, (i + 1) % 4 == 0) << i;
  cfg["no_rope_layers"] = {1, 0, 1, 1, 1, 1, 1, 1};
  auto listed = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(listed.ok());
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(listed.value().kinds[listed.value().layer_kind[i]].attention.no_rope, i == 1) << i;
}

// A NoPE layer in training (worked by hand from modeling_smollm3.py / modeling_llama4.py): RoPE's
// mul(q, cos) and mul(rotate_half(q), sin) save only cos and sin (the model's shared tensors, which
// a NoPE layer still receives), so the saved set of a layer is the same with or without RoPE, under
// SDPA and eager alike. What changes is the dtype of q and k after it: under amp, bf16 q x fp32
// cos makes an fp32 q_embed, while a NoPE layer keeps q_proj's bf16 output. Selective
// recomputation keeps the core's inputs q, k, v: for SmolLM3-3B's shape (16 heads, 4 KV heads,
// head_dim 128) at 1 x 512 tokens, (4 - 2) x 512 x (16 + 4) x 128 = 2,621,440 B less per NoPE layer.
TEST(ChunkedAttention, NoPeLayerChangesOnlyTheQkDtype) {
  const json cfg = {{"model_type", "smollm3"}, {"hidden_size", 2048}, {"intermediate_size", 11008}, {"num_hidden_layers", 4},
                    {"num_attention_heads", 16}, {"num_key_value_heads", 4}, {"vocab_size", 128256}};
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(spec.ok());
  const ModelSpec& m = spec.value();
  const LayerKind& rope = m.kinds[m.layer_kind[0]];
  const LayerKind& nope = m.kinds[m.layer_kind[3]];
  ASSERT_FALSE(rope.attention.no_rope);
  ASSERT_TRUE(nope.attention.no_rope);
  const LayerPlan full{true, true, false};
  for (AttentionImpl impl : {AttentionImpl::kEager, AttentionImpl::kSdpa}) {
    ActivationContext ctx;
    ctx.batch = 1;
    ctx.seq = 512;
    ctx.prec = PrecisionFor(Precision::kAmpBf16);
    ctx.attention = impl;
    const LayerSaved r = ComputeLayerSaved(rope, full, ctx), n = ComputeLayerSaved(nope, full, ctx);
    EXPECT_EQ(r.total_bytes, n.total_bytes);
    if (impl == AttentionImpl::kEager) {
      EXPECT_EQ(r.core_input_bytes - n.core_input_bytes, 2621440);
      EXPECT_EQ(2LL * 512 * (16 + 4) * 128, 2621440);
    }
  }
  // Without autocast the q / k dtype is the same either way: nothing changes.
  ActivationContext fp32;
  fp32.seq = 512;
  fp32.attention = AttentionImpl::kEager;
  EXPECT_EQ(ComputeLayerSaved(rope, full, fp32).core_input_bytes, ComputeLayerSaved(nope, full, fp32).core_input_bytes);
}

}  // namespace
}  // namespace vramplan
