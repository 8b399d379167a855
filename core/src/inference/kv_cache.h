// KV cache bytes, exact per layer:
//   standard / GQA / MQA attention: 2 x kv_heads x head_dim x tokens x bytes (K and V; v_head_dim may differ)
//   MLA (DeepSeek-V2/V3) as vLLM and llama.cpp store it: (kv_lora_rank + qk_rope_head_dim) x tokens x bytes,
//     one latent "head" replicated on every tensor-parallel rank
//     (vllm/v1/kv_cache_interface.py MLAAttentionSpec; llama.cpp src/llama-kv-cache.cpp, K only, V is a view);
//   MLA as transformers stores it: the decompressed per-head K (qk_nope+qk_rope) and V (v_head_dim)
//     (models/deepseek_v3/modeling_deepseek_v3.py, DeepseekV3Attention.forward -> past_key_values.update).
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
};

// Per-GPU KV geometry grouped by identical layers; layers without softmax attention (hybrid
// models' recurrent and MLP-only layers) have no K/V and are left out (inference/recurrent_state.h).
std::vector<KvGroup> KvGroups(const ModelSpec& spec, Engine engine, int64_t tp);

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
