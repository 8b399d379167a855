// KV cache geometry per engine: GQA, MLA (latent vs decompressed), tp replication, dtypes, windows.
#include <gtest/gtest.h>

#include "test_support.h"

#include "inference/kv_cache.h"
#include "model/catalog.h"

namespace vramplan {
namespace kv_cache_test {

const ModelSpec& Preset(const char* id) { return testing_support::PresetSpec(id); }

int64_t PerToken(const char* id, Engine e, KvDtype d = KvDtype::kAuto, int64_t tp = 1) {
  const ModelSpec& m = Preset(id);
  return KvBytesPerToken(KvGroups(m, e, tp), ResolveKvDtype(d, WeightFormat::kBf16, e));
}

// Published per-token sizes: Llama-3-8B 32 layers x 2 x 8 heads x 128 x 2 B = 128 KiB ("KV self size
// = 1024.00 MiB" at n_ctx 8192 in llama.cpp logs); Llama-2-7B (MHA) 512 KiB; Qwen2.5-7B 56 KiB.
TEST(KvCache, GqaAndMhaPerToken) {
  EXPECT_EQ(PerToken("meta-llama/Meta-Llama-3-8B-Instruct", Engine::kTransformers), 131072);
  EXPECT_EQ(PerToken("meta-llama/Llama-2-7b-hf", Engine::kVllm), 524288);
  EXPECT_EQ(PerToken("Qwen/Qwen2.5-7B", Engine::kTransformers), 57344);
  EXPECT_EQ(PerToken("meta-llama/Meta-Llama-3-8B-Instruct", Engine::kLlamaCpp) * 8192, 1024LL << 20);
}

// DeepSeek-V3: vLLM/llama.cpp cache the 512 + 64 latent per layer; transformers caches 128 heads
// x (192 + 128) decompressed K/V.
TEST(KvCache, MlaPerEngine) {
  EXPECT_EQ(PerToken("deepseek-ai/DeepSeek-V3", Engine::kVllm), 61 * 576 * 2);
  EXPECT_EQ(PerToken("deepseek-ai/DeepSeek-V3", Engine::kLlamaCpp), 61 * 576 * 2);
  EXPECT_EQ(PerToken("deepseek-ai/DeepSeek-V3", Engine::kTransformers), 61LL * 128 * (192 + 128) * 2);
  // The latent is replicated, not sharded, across tp ranks.
  EXPECT_EQ(PerToken("deepseek-ai/DeepSeek-V3", Engine::kVllm, KvDtype::kAuto, 8), 61 * 576 * 2);
}

// tp shards kv heads; below one head per rank each rank keeps one (replicated).
TEST(KvCache, TensorParallelReplication) {
  const char* id = "meta-llama/Meta-Llama-3-8B-Instruct";  // 8 kv heads
  EXPECT_EQ(PerToken(id, Engine::kVllm, KvDtype::kAuto, 2), 131072 / 2);
  EXPECT_EQ(PerToken(id, Engine::kVllm, KvDtype::kAuto, 8), 131072 / 8);
  EXPECT_EQ(PerToken(id, Engine::kVllm, KvDtype::kAuto, 16), 131072 / 8);
}

// Cache dtypes: fp8 halves bf16; llama.cpp q8_0 = 34/32 B and q4_0 = 18/32 B per element.
TEST(KvCache, Dtypes) {
  const char* id = "meta-llama/Meta-Llama-3-8B-Instruct";
  EXPECT_EQ(PerToken(id, Engine::kVllm, KvDtype::kFp8), 65536);
  EXPECT_EQ(PerToken(id, Engine::kLlamaCpp, KvDtype::kInt8), 32 * 2 * 1024 / 32 * 34);
  EXPECT_EQ(PerToken(id, Engine::kLlamaCpp, KvDtype::kInt4), 32 * 2 * 1024 / 32 * 18);
  EXPECT_EQ(PerToken(id, Engine::kTransformers, KvDtype::kFp32), 2 * 131072);
}

// Sliding layers stop growing at the window (Gemma 2: every other layer slides over 4096).
TEST(KvCache, SlidingWindowCaps) {
  const ModelSpec& m = Preset("google/gemma-2-9b-it");
  auto groups = KvGroups(m, Engine::kTransformers, 1);
  KvElementSize e = ResolveKvDtype(KvDtype::kAuto, WeightFormat::kBf16, Engine::kTransformers);
  int64_t at4k = KvBytes(groups, e, 4096, 1), at8k = KvBytes(groups, e, 8192, 1);
  EXPECT_EQ(at4k, 4096 * KvBytesPerToken(groups, e));
  EXPECT_EQ(at8k - at4k, at4k / 2);  // only the 21 full-attention layers of 42 keep growing
}

}  // namespace
}  // namespace vramplan
