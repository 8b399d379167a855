// KV cache bytes, exact per layer:
//   standard / GQA / MQA attention: 2 x kv_heads x head_dim x tokens x bytes (K and V; v_head_dim may differ)
//   MLA (DeepSeek-V2/V3) as vLLM and llama.cpp store it: (kv_lora_rank + qk_rope_head_dim) x tokens x bytes,
//     one latent "head" replicated on every tensor-parallel rank
//     (vllm/v1/kv_cache_interface.py MLAAttentionSpec; llama.cpp src/llama-kv-cache.cpp, K only, V is a view);
//   MLA as transformers stores it: the decompressed per-head K (qk_nope+qk_rope) and V (v_head_dim)
//     (models/deepseek_v3/modeling_deepseek_v3.py, DeepseekV3Attention.forward -> past_key_values.update).
// DeepSeek sparse attention (DeepSeek-V3.2, GLM-5) adds the lightning indexer's key cache, one
// index_head_dim key per token per layer, stored differently by each engine:
//   vLLM (vllm/model_executor/models/deepseek_v2.py Indexer -> DeepseekV32IndexerCache, an
//     MLAAttentionSpec of one head of index_head_dim + index_head_dim / 128 x 4 bytes, uint8: fp8
//     values and an fp32 scale per quant_block_size = 128) whatever kv_cache_dtype is; with an fp8
//     cache the sparse latent is stored as "fp8_ds_mla", 656 B per token (512 fp8 NoPE values, 4
//     fp32 scales, 64 bf16 RoPE values; vllm/v1/kv_cache_interface.py MLAAttentionSpec
//     real_page_size_bytes, vllm/v1/attention/backends/mla/flashmla_sparse.py);
//   llama.cpp (src/llama-kv-cache-dsa.cpp llama_kv_cache_dsa, PR #23346): a second llama_kv_cache of
//     one K head of indexer_head_size per cell, in type_k, no V;
//   transformers (models/glm_moe_dsa/modeling_glm_moe_dsa.py GlmMoeDsaIndexer._cached_keys): the
//     indexer's own [batch, tokens, index_head_dim] key tensor in the model dtype, outside the
//     (possibly quantized) DynamicCache.
// Sliding-window layers keep at most `window` tokens; how many exactly is engine-specific and is
// decided by the engines (KvGroup.window_tokens says which layers slide).
// Tensor parallel: kv heads are split over tp; when kv_heads < tp each rank keeps one head
// (replicated, vllm/config ModelConfig.get_num_kv_heads: max(1, total_num_kv_heads // tp)).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vramplan/model_spec.h"
#include "vramplan/scenario.h"

namespace vramplan {

// Bytes per cached element as an exact fraction: `bytes` B per `elements` elements (q8_0: 34 B per
// 32, q4_0: 18 B per 32).
struct KvElementSize {
  std::string name;  // "bf16", "fp8", "q8_0", ...
  int64_t bytes = 2;
  int64_t elements = 1;
  int64_t block_elements = 1;  // ggml block (rows must be multiples), 1 otherwise
};

// Resolves `auto` to the compute dtype of the weights (fp32 -> fp32, GGUF/llama.cpp -> f16,
// everything else bf16/fp16) and maps int8/int4 per engine: llama.cpp q8_0/q4_0 (ggml blocks),
// transformers QuantizedCache (quanto, q_group_size 64: 1 or 0.5 B + a 2-byte scale and zero-point
// per 64 elements; cache_utils.py QuantizedCacheConfig), vLLM fp8 only.
KvElementSize ResolveKvDtype(KvDtype kv, WeightFormat weights, Engine engine);

struct KvGroup {
  int64_t layers = 0;           // decoder layers of this shape
  int64_t k_elems = 0;          // K elements per token per layer on one GPU
  int64_t v_elems = 0;          // V elements per token per layer on one GPU (0: MLA latent, V is a view of K)
  int64_t window_tokens = 0;    // sliding window (0 = full attention)
  bool chunked = false;         // chunked local attention: window_tokens is the chunk (Llama 4)
  // DeepSeek sparse attention's indexer keys per token per layer (see the header comment):
  // index_k_elems in the K cache's element type (llama.cpp), or index_bytes in a format of their
  // own whatever the cache dtype (vLLM, transformers).
  int64_t index_k_elems = 0;
  int64_t index_bytes = 0;
  // Bytes per token of the latent when the cache dtype is fp8 and the engine stores it in vLLM's
  // sparse "fp8_ds_mla" format (0: elements x dtype).
  int64_t fp8_latent_bytes = 0;
};

// Per-GPU KV geometry grouped by identical layers; layers without softmax attention (hybrid
// models' recurrent and MLP-only layers) have no K/V and are left out (inference/recurrent_state.h).
// `model_dtype_bytes`: the compute dtype, which transformers' indexer key cache is kept in.
std::vector<KvGroup> KvGroups(const ModelSpec& spec, Engine engine, int64_t tp, int64_t model_dtype_bytes = 2);

// Whether the model has DeepSeek sparse attention (a lightning indexer) on any layer.
bool HasSparseIndexer(const ModelSpec& spec);

// vLLM's sparse-MLA block size: CudaPlatformBase.check_and_update_config (vllm/platforms/cuda.py)
// sets block_size = 64 for any model whose config has index_topk, whatever --block-size says
// ("Forcing kv cache block size to 64 for FlashMLASparse backend"; FlashMLASparseBackend
// get_supported_kernel_block_sizes = [64]).
inline constexpr int64_t kVllmSparseMlaBlockTokens = 64;

// The block size vLLM pages this model's attention cache with: 64 with a sparse indexer, else the
// scenario's block_size (hybrid models raise it further: engine_vllm.cpp HybridPaging).
int64_t VllmBlockTokens(const ModelSpec& spec, int64_t block_size);

// Bytes of one layer's K+V row for one token, rounded as the engine stores it (exact fraction).
int64_t KvLayerBytes(const KvGroup& g, const KvElementSize& e, int64_t tokens);

// Bytes per token over all layers, counting sliding layers too (what one more token costs while
// the context is below every window).
int64_t KvBytesPerToken(const std::vector<KvGroup>& groups, const KvElementSize& e);

// Bytes for `seqs` sequences of `tokens` tokens, sliding layers capped at min(window, tokens).
int64_t KvBytes(const std::vector<KvGroup>& groups, const KvElementSize& e, int64_t tokens, int64_t seqs);

// "28 layers x 2 x 4 heads x 128 x 2 B" style description of the per-token cost.
std::string KvExplainPerToken(const std::vector<KvGroup>& groups, const KvElementSize& e);

}  // namespace vramplan
