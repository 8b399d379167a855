// vLLM's KV-cache groups for full and chunked local attention layers (inference/vllm_kv_groups.h),
// worked by hand from kv_cache_utils.py / kv_cache_interface.py for Llama-4-Scout.
//
// Llama-4-Scout-17B-16E: 48 layers, 8 KV heads x head_dim 128, attention_chunk_size 8192, every 4th
// layer (3, 7, ..., 47) a global NoPE layer: 12 full + 36 chunked layers. One token of one layer in
// bf16 / f16: 2 (K, V) x 8 x 128 x 2 B = 4,096 B; a vLLM page (block_size 16) 16 x 4,096 = 65,536 B.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_support.h"

#include "inference/kv_cache.h"
#include "inference/vllm_kv_groups.h"

namespace vramplan {
namespace vllm_kv_groups_test {

using nlohmann::json;
using testing_support::GpuTerm;

constexpr const char* kScout = "meta-llama/Llama-4-Scout-17B-16E-Instruct";

// vLLM's start-up check (kv_cache_utils.py _max_memory_usage_bytes_from_groups) for one request of
// max_model_len L, max_num_batched_tokens 8,192, block 16. Hybrid manager: 12 full + 36 chunked
// layers -> group_size min(12, 36) = 12 (36 >= 1.25 x 12), 1 full + 3 chunked groups; bytes =
// 12 x 65,536 x (cdiv(L, 16) + 3 x cdiv(min(8192 + 8192, L), 16)). Disabled: 48 layers x
// cdiv(L, 16) x 65,536.
struct VllmRow {
  int64_t len;
  int64_t hybrid_bytes;
  int64_t hybrid_blocks;
  int64_t full_bytes;
};

TEST(VllmKvGroups, VllmRequestBytesPerContext) {
  const ModelSpec& m = testing_support::PresetSpec(kScout);
  const auto groups = KvGroups(m, Engine::kVllm, 1);
  const KvElementSize e = ResolveKvDtype(KvDtype::kAuto, WeightFormat::kBf16, Engine::kVllm);
  const int64_t available = 40LL << 30;  // 42,949,672,960 B
  const VllmKvPaging hybrid = PageVllmAttention(groups, e, 16, 8192, available, true);
  const VllmKvPaging off = PageVllmAttention(groups, e, 16, 8192, available, false);
  const VllmRow rows[] = {
      // 4k: below the chunk every layer holds every token: 12 x 65,536 x (256 + 3 x 256).
      {4096, 12LL * 65536 * (256 + 3 * 256), 256 + 3 * 256, 48LL * 256 * 65536},
      // 32k: chunked layers hold min(16,384, 32,768) = 16,384 tokens = 1,024 blocks.
      {32768, 12LL * 65536 * (2048 + 3 * 1024), 2048 + 3 * 1024, 48LL * 2048 * 65536},
      // 128k: 8,192 full blocks + 3 x 1,024.
      {131072, 12LL * 65536 * (8192 + 3 * 1024), 8192 + 3 * 1024, 48LL * 8192 * 65536},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(hybrid.RequestBytes(r.len), r.hybrid_bytes) << r.len;
    EXPECT_EQ(hybrid.RequestBlocks(r.len), r.hybrid_blocks) << r.len;
    EXPECT_EQ(off.RequestBytes(r.len), r.full_bytes) << r.len;
    EXPECT_EQ(off.RequestBlocks(r.len), r.full_bytes / (48 * 65536)) << r.len;
  }
  EXPECT_EQ(hybrid.RequestBytes(4096), 805306368);
  EXPECT_EQ(hybrid.RequestBytes(32768), 4026531840);
  EXPECT_EQ(hybrid.RequestBytes(131072), 8858370048);
  EXPECT_EQ(off.RequestBytes(131072), 25769803776);
  // The pool: hybrid, 12 tensors of available // 65,536 // 12 = 655,360 // 12 = 54,613 pages;
  // "GPU KV cache size" 54,613 // 4 groups x 16 = 13,653 x 16 = 218,448 tokens. Disabled: 48
  // layers of 655,360 // 48 = 13,653 pages, 13,653 x 16 = 218,448 tokens (the same count).
  EXPECT_EQ(hybrid.group_size, 12);
  EXPECT_EQ(hybrid.groups, 4);
  EXPECT_EQ(hybrid.num_blocks, 54613);
  EXPECT_EQ(hybrid.pool_bytes, 54613LL * 12 * 65536);
  EXPECT_EQ(hybrid.token_capacity, 218448);
  EXPECT_EQ(off.num_blocks, 13653);
  EXPECT_EQ(off.token_capacity, 218448);
  // "Maximum concurrency for 131,072 tokens": 54,613 / 11,264 = 4.85 vs 13,653 / 8,192 = 1.67.
  EXPECT_EQ(hybrid.num_blocks / hybrid.RequestBlocks(131072), 4);
  EXPECT_EQ(off.num_blocks / off.RequestBlocks(131072), 1);
}

// The engine: vLLM 0.21+ pages the chunked layers apart; 0.8-0.20 counts the hybrid manager off for
// Llama 4 (VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=0 from 0.10.1), so every layer holds
// every token. tp 4: 2 KV heads per rank, a page 16 x 2 x 2 x 128 x 2 = 16,384 B per layer.
TEST(VllmKvGroups, VllmEngineConcurrencyFollowsTheManager) {
  auto run = [](const char* version) {
    const json sc = {{"model", kScout},
                     {"mode", "inference"},
                     {"gpu", "h100-sxm-80gb"},
                     {"parallel", {{"gpus", 4}, {"tp", 4}}},
                     {"inference",
                      {{"engine", "vllm"}, {"vllm_version", version}, {"max_model_len", 131072}, {"max_num_batched_tokens", 8192}}}};
    return testing_support::EstimateText(sc.dump());
  };
  const Result on = run("0.21+");
  const Result off = run("0.8-0.20");
  const int64_t on_blocks = GpuTerm(on, "kv_cache") / (12 * 16384);
  ASSERT_GT(on_blocks, 0);
  EXPECT_EQ(GpuTerm(on, "kv_cache") % (12 * 16384), 0);
  EXPECT_EQ(on.inference.kv_token_capacity, on_blocks / 4 * 16);
  EXPECT_EQ(on.inference.max_concurrency, std::min<int64_t>(256, on_blocks / (8192 + 3 * 1024)));
  const int64_t off_blocks = GpuTerm(off, "kv_cache") / (48 * 16384);
  ASSERT_GT(off_blocks, 0);
  EXPECT_EQ(off.inference.kv_token_capacity, off_blocks * 16);
  EXPECT_EQ(off.inference.max_concurrency, std::min<int64_t>(256, off_blocks / 8192));
  EXPECT_TRUE(testing_support::HasWarning(off, "approximate", "inference.vllm_version"));
}


}  // namespace
}  // namespace vramplan
