// DeepSeek sparse attention (DeepSeek-V3.2, GLM-5): the MLA latent plus the lightning indexer's
// key cache, per token and per vLLM block, worked by hand from each engine's code
// (inference/kv_cache.h cites the files). DeepSeek-V3.2's geometry is DeepSeek-V3.2-Exp's:
// 61 layers, kv_lora_rank 512, qk_rope_head_dim 64, index_head_dim 128, index_n_heads 64,
// index_topk 2048; GLM-5 / GLM-5.1: 78 layers, the same latent and indexer key sizes (32 indexer
// heads), 64 attention heads of qk 192 + 64 and v 256.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_support.h"

#include "inference/kv_cache.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace sparse_attention_kv_test {

using nlohmann::json;
using testing_support::GpuTerm;

constexpr const char* kV32 = "deepseek-ai/DeepSeek-V3.2";
constexpr const char* kGlm5 = "zai-org/GLM-5";

// vLLM's indexer key: DeepseekV32IndexerCache head_size = index_head_dim + index_head_dim //
// quant_block_size (128) x 4 = 128 + 4 = 132, dtype uint8 (1 B), one head, whatever the cache dtype.
constexpr int64_t kIndexer = 128 + 128 / 128 * 4;
// vLLM's latent: MLAAttentionSpec, one head of kv_lora_rank + rope = 576 in the cache dtype
// (bf16: 1,152 B); with fp8 the FlashMLA-sparse "fp8_ds_mla" row: 512 fp8 + 4 fp32 scales + 64 bf16.
constexpr int64_t kLatentBf16 = (512 + 64) * 2;
constexpr int64_t kLatentFp8 = 512 + 4 * 4 + 64 * 2;

struct Row {
  const char* model;
  Engine engine;
  KvDtype dtype;
  int64_t per_token;  // bytes per token over all layers, one GPU
  const char* why;
};

class SparseAttentionKv : public ::testing::TestWithParam<Row> {};

TEST_P(SparseAttentionKv, PerTokenBytes) {
  const Row& row = GetParam();
  const ModelSpec& m = testing_support::PresetSpec(row.model);
  const KvElementSize e = ResolveKvDtype(row.dtype, WeightFormat::kBf16, row.engine);
  EXPECT_EQ(KvBytesPerToken(KvGroups(m, row.engine, 1, 2), e), row.per_token) << row.why;
}

INSTANTIATE_TEST_SUITE_P(
    ByEngine, SparseAttentionKv,
    ::testing::Values(
        Row{kV32, Engine::kVllm, KvDtype::kAuto, 61 * (kLatentBf16 + kIndexer), "61 x (1,152 + 132) = 78,324"},
        Row{kV32, Engine::kVllm, KvDtype::kFp8, 61 * (kLatentFp8 + kIndexer), "61 x (656 + 132) = 48,068"},
        // The latent is replicated on every tensor-parallel rank; so is the indexer (ReplicatedLinear wk).
        Row{kGlm5, Engine::kVllm, KvDtype::kAuto, 78 * (kLatentBf16 + kIndexer), "78 x 1,284 = 100,152"},
        Row{kGlm5, Engine::kVllm, KvDtype::kFp8, 78 * (kLatentFp8 + kIndexer), "78 x 788 = 61,464"},
        // llama.cpp llama_kv_cache_dsa: the 576 latent and a 128-wide indexer K row, both in type_k.
        Row{kV32, Engine::kLlamaCpp, KvDtype::kAuto, 61 * (576 + 128) * 2, "f16: 61 x 704 x 2 = 85,888"},
        Row{kV32, Engine::kLlamaCpp, KvDtype::kInt8, 61 * (576 / 32 * 34 + 128 / 32 * 34), "q8_0: 61 x (612 + 136) = 45,628"},
        Row{kGlm5, Engine::kLlamaCpp, KvDtype::kAuto, 78 * (576 + 128) * 2, "f16: 78 x 1,408 = 109,824"},
        // transformers: decompressed per-head K and V in the DynamicCache plus the indexer's own
        // [batch, tokens, 128] keys in the model dtype (bf16), outside the (quantized) cache.
        Row{kV32, Engine::kTransformers, KvDtype::kAuto, 61LL * (128 * (192 + 128) * 2 + 128 * 2), "61 x (81,920 + 256) = 5,012,736"},
        Row{kV32, Engine::kTransformers, KvDtype::kInt8, 61LL * (128 * 320 / 64 * 68 + 128 * 2), "quanto int8: 61 x (43,520 + 256)"},
        Row{kGlm5, Engine::kTransformers, KvDtype::kAuto, 78LL * (64 * (256 + 256) * 2 + 128 * 2), "78 x (65,536 + 256) = 5,131,776"}));

// One vLLM block: 64 tokens (forced for FlashMLA sparse) x every layer's latent page + indexer page,
// all layers in one UniformTypeKVCacheSpecs group.
TEST(SparseAttentionKvVllm, BlockBytes) {
  const ModelSpec& m = testing_support::PresetSpec(kV32);
  EXPECT_EQ(VllmBlockTokens(m, 16), 64);
  EXPECT_EQ(VllmBlockTokens(m, 128), 64);
  EXPECT_EQ(VllmBlockTokens(testing_support::PresetSpec("deepseek-ai/DeepSeek-V3"), 16), 16);
  const auto groups = KvGroups(m, Engine::kVllm, 8);
  int64_t page_bf16 = 0, page_fp8 = 0;
  for (const auto& g : groups) {
    page_bf16 += g.layers * KvLayerBytes(g, ResolveKvDtype(KvDtype::kAuto, WeightFormat::kFp8, Engine::kVllm), 64);
    page_fp8 += g.layers * KvLayerBytes(g, ResolveKvDtype(KvDtype::kFp8, WeightFormat::kFp8, Engine::kVllm), 64);
  }
  // 61 x (64 x 1,152 = 73,728 + 64 x 132 = 8,448) = 61 x 82,176.
  EXPECT_EQ(page_bf16, 61 * (73728 + 8448));
  EXPECT_EQ(page_bf16, 5012736);
  // 61 x (64 x 656 = 41,984 + 8,448) = 61 x 50,432.
  EXPECT_EQ(page_fp8, 61 * (41984 + 8448));
  EXPECT_EQ(page_fp8, 3076352);
}

// The pool as the engine pages it: num_blocks = available // the block above, the pool holds
// num_blocks x 64 tokens, and one max_model_len request needs cdiv(len, 64) blocks.
TEST(SparseAttentionKvVllm, PoolTokensFollowTheBlock) {
  json sc = {{"model", kV32},
             {"mode", "inference"},
             {"gpu", "h200-sxm-141gb"},
             {"parallel", {{"tp", 8}, {"gpus", 8}}},
             {"inference", {{"engine", "vllm"}, {"weights", "fp8"}, {"kv_cache", "fp8"}, {"max_model_len", 32768}, {"block_size", 16}}}};
  Result r = testing_support::EstimateText(sc.dump());
  const int64_t page = 3076352;
  EXPECT_EQ(r.inference.kv_bytes_per_token, 48068);
  ASSERT_GT(r.inference.kv_token_capacity, 0);
  EXPECT_EQ(GpuTerm(r, "kv_cache") % page, 0);
  const int64_t num_blocks = GpuTerm(r, "kv_cache") / page;
  EXPECT_EQ(r.inference.kv_token_capacity, num_blocks * 64);
  EXPECT_EQ(r.inference.max_concurrency, std::min<int64_t>(256, num_blocks / (32768 / 64)));
  bool block_warned = false;
  for (const auto& w : r.warnings) block_warned = block_warned || w.field_path == "inference.block_size";
  EXPECT_TRUE(block_warned);
}

// llama.cpp: the indexer cache has n_ctx cells like the latent cache (llama_kv_cache_dsa builds
// both with the same kv_size).
TEST(SparseAttentionKvLlamaCpp, CellsTimesBothRows) {
  json sc = {{"model", kGlm5},
             {"mode", "inference"},
             {"gpu", "h200-sxm-141gb"},
             {"inference", {{"engine", "llama_cpp"}, {"weights", "gguf_q4_k_m"}, {"prompt_len", 4000}, {"new_tokens", 96}, {"n_gpu_layers", 0}}}};
  Result r = testing_support::EstimateText(sc.dump());
  EXPECT_EQ(r.inference.kv_bytes_per_token, 78 * 1408);
  // n_ctx 4,096 (already a multiple of 256); all layers on the CPU with n_gpu_layers 0.
  int64_t cpu_kv = 0;
  for (const auto& t : r.cpu.breakdown) {
    if (t.key == "kv_cache") cpu_kv = t.bytes;
  }
  EXPECT_EQ(cpu_kv, 4096LL * 78 * 1408);
}

// transformers' prefill peak is the indexer's scoring (GlmMoeDsaIndexer.forward: the einsum's fp32
// [b, s, 64, s] result and `* softmax_scale`, then `F.relu`: two such tensors at once) on top of the
// layer's tensors of the dense-MLA prefill walk (engine_transformers.cpp PrefillLayerPeak: four
// hidden-size tensors, q / k / v, the rotary copies of q and k, the attention output).
TEST(SparseAttentionKvTransformers, PrefillPeakIsTheIndexerScores) {
  json sc = {{"model", kV32},
             {"mode", "inference"},
             {"gpu", "h200-sxm-141gb"},
             {"inference", {{"engine", "transformers"}, {"prompt_len", 4096}, {"new_tokens", 16}}}};
  Result r = testing_support::EstimateText(sc.dump());
  const int64_t T = 4096, h = 7168, heads = 128, d = 192, vd = 128;
  const int64_t layer = 4 * T * h * 2 + T * (heads * d + heads * (d + vd)) * 2 + T * 2 * heads * d * 2 + T * heads * vd * 2;
  EXPECT_EQ(layer, 1308622848);
  const int64_t scores = 2LL * 4096 * 64 * 4096 * 4;  // 8 GiB
  EXPECT_EQ(GpuTerm(r, "activations"), layer + scores);
  // The KV term: 61 x (128 x 320 x 2 + 128 x 2) B per prompt token.
  EXPECT_EQ(GpuTerm(r, "kv_cache"), 5012736LL * 4096);
}

}  // namespace
}  // namespace vramplan
