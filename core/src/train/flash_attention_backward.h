#pragma once

#include <cstdint>

namespace vramplan {

// What FlashAttention-2's backward (flash-attn's mha_bwd, the `flash_attention_2` kernel that
// transformers and unsloth call) allocates beyond dq, dk, dv and an unrounded fp32 dq accumulator
// (4·T·a·d), which the attention-backward moment already counts:
//   - dq_accum is fp32 (b, round128(s), a, head_size_rounded): the rounding's excess;
//   - softmax_d, fp32 (b, a, round128(s));
//   - with grouped-query attention (kv_heads < heads) the kernel writes dk and dv per query head,
//     dk_expanded / dv_expanded (b, s, a, d) in the inputs' dtype, then sums each group into dk, dv.
// Source: Dao-AILab/flash-attention csrc/flash_attn/flash_api.cpp, mha_bwd (v2.x; `loop` is always
// true there, so dq_accum always exists).
int64_t FlashAttention2BackwardExtraBytes(int64_t batch, int64_t seq_len, int64_t heads, int64_t kv_heads, int64_t head_dim,
                                          int64_t v_head_dim, int64_t input_bytes);

}  // namespace vramplan
