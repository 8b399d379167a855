// vLLM V1's KV-cache pool for a model whose layers all hold per-token K/V (no Mamba state: that
// case is PageHybrid in engine_vllm.cpp), with full, sliding-window and chunked-local layers:
//  * each layer gets a spec (vllm/v1/kv_cache_interface.py): FullAttentionSpec, SlidingWindowSpec,
//    ChunkedLocalAttentionSpec; page_size_bytes = block_size x kv_heads x (head + head_v) x dtype
//    for all three;
//  * vllm/v1/core/kv_cache_utils.py get_kv_cache_groups: with the hybrid allocator disabled,
//    unify_hybrid_kv_cache_specs turns sliding and chunked layers into FullAttentionSpec when the
//    model also has full layers (every layer then holds every token). Then:
//      - one spec for every layer: one group, num_blocks = available // page // layers;
//      - one kind of spec with different page sizes (UniformTypeKVCacheSpecs: all full, or all
//        sliding with one window): one group, num_blocks = available // sum of the layers' pages;
//      - otherwise (the hybrid allocator): unify_kv_cache_spec_page_size raises the block size of
//        the smaller pages to the largest page (it must divide it, else NotImplementedError), and
//        _get_kv_cache_groups_uniform_page_size splits each spec's layers into groups of group_size
//        (the smallest spec's layer count, or the largest's when it is under 1.25 x the smallest;
//        the last group of a spec is padded); get_kv_cache_config_from_groups makes group_size
//        tensors of num_blocks = available // page // group_size pages, each shared by one layer of
//        every group;
//  * "GPU KV cache size": num_blocks // groups x the smallest block size (_report_kv_cache_config);
//  * one request of max_model_len must fit (_check_enough_kv_cache_memory with
//    _max_memory_usage_bytes_from_groups: group_size x page x the sum over groups of
//    cdiv(spec.max_memory_usage_bytes, page)), where max_memory_usage_bytes is, for len =
//    max_model_len and B = max_num_batched_tokens,
//      full:    cdiv(len, block) x page
//      sliding: (cdiv(min(window - 1 + B, len), block) + 1) x page
//      chunked: cdiv(min(chunk + B, len), block) x page
//    (ChunkedLocalAttentionManager frees the blocks of earlier chunks: a request holds at most its
//    current chunk plus the tokens scheduled in one step);
//  * "Maximum concurrency": num_blocks / cdiv(group_size x sum of max_memory_usage_bytes,
//    page x group_size) (get_max_concurrency_for_kv_cache_config).
// Source: vLLM main of 2026 (kv_cache_utils.py with _max_memory_usage_bytes_from_groups); the
// chunked spec since PR #19351 (0.9.2), the sliding one since the hybrid allocator (PR #17996).
// Newer releases take group_size = the largest count below 1.5 x the smallest (for Llama 4's 36
// chunked + 12 full, Gemma 3's 5:1 and gpt-oss's 1:1 both rules agree).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "inference/kv_cache.h"

namespace vramplan {

enum class VllmSpecKind : uint8_t { kFull, kSlidingWindow, kChunkedLocal };

struct VllmKvSpec {
  VllmSpecKind kind = VllmSpecKind::kFull;
  int64_t window = 0;   // sliding window or attention chunk
  int64_t block = 0;    // tokens per block (raised by page unification)
  int64_t page = 0;     // bytes of one block of one layer
  int64_t layers = 0;
  int64_t groups = 0;   // KV-cache groups of this spec (hybrid allocator), 1 otherwise
};

struct VllmKvPaging {
  enum class Layout : uint8_t { kUniformSpec, kUniformType, kHybrid } layout = Layout::kUniformSpec;
  std::vector<VllmKvSpec> specs;
  bool page_mismatch = false;  // pages that do not divide the largest: vLLM refuses to start
  int64_t group_size = 0;      // layers per group = tensors in the pool (hybrid); layers (uniform spec)
  int64_t groups = 1;          // block tables per request
  int64_t page = 0;            // bytes of one block across one tensor (uniform type: all layers)
  int64_t min_block = 0;
  int64_t num_blocks = 0;
  int64_t pool_bytes = 0;
  int64_t token_capacity = 0;  // "GPU KV cache size: N tokens"
  int64_t batched_tokens = 0;  // max_num_batched_tokens, for the sliding / chunked specs

  // _max_memory_usage_bytes_from_groups for one request of `len` tokens.
  int64_t RequestBytes(int64_t len) const;
  // Pool blocks one request of `len` tokens may hold (get_max_concurrency_for_kv_cache_config).
  int64_t RequestBlocks(int64_t len) const;
  std::string Explain() const;
};

// `hybrid_allocator`: false where vLLM disables the hybrid KV-cache manager (then sliding and
// chunked layers hold every token when the model also has full layers).
VllmKvPaging PageVllmAttention(const std::vector<KvGroup>& groups, const KvElementSize& e, int64_t block_size, int64_t max_num_batched_tokens,
                               int64_t available, bool hybrid_allocator);

// Whether vLLM's hybrid KV-cache manager runs for chunked local attention (Llama 4):
// vllm/config VllmConfig.__post_init__ disables it unless VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1,
// whose default was "0" from PR #21761 (0.10.1, a latency regression) until PR #29627 (late 2025)
// made it "1" (vllm/envs.py). The 0.8-0.20 choice counts the "0" default (0.10.1 to #29627's
// release; 0.8-0.9.1 had no hybrid manager at all); 0.21+ the "1".
bool VllmHybridAllocatorForChunked(VllmVersion v);

// The hybrid KV-cache manager's layers per group (kv_cache_utils.py, one page per group member):
// the largest spec's layer count when the smallest is within 1.25x of it (no padding layers beyond
// that), else the smallest's; fewest_layers / most_layers are the layer counts of the specs (or of
// the attention and recurrent-state layers).
int64_t VllmHybridGroupSize(int64_t fewest_layers, int64_t most_layers);

}  // namespace vramplan
