// FlashAttention-2's backward buffers beyond dq, dk, dv (train/flash_attention_backward.h), worked by
// hand from flash-attn's csrc/flash_attn/flash_api.cpp mha_bwd: dq_accum fp32 (b, round128(s), a,
// head_size_rounded), softmax_d fp32 (b, a, round128(s)), and under GQA dk_expanded / dv_expanded
// (b, s, a, d) in the inputs' dtype. The attention-backward moment already counts 4·b·s·a·d of the
// accumulator, so the function returns the rest.
#include <gtest/gtest.h>

#include <cstdint>

#include "train/flash_attention_backward.h"

namespace vramplan {
namespace flash_attention_backward_test {

struct FlashBackwardCase {
  const char* name;
  int64_t b, s, heads, kv_heads, d, v_d, input_bytes, expected;
};

TEST(FlashAttention2Backward, MatchesMhaBwdAllocationsWorkedByHand) {
  const FlashBackwardCase cases[] = {
      // Llama-3.1-8B, 1 x 1000 tokens, bf16: dq_accum 4·1·1024·32·128 = 16,777,216 less the counted
      // 4·1000·32·128 = 16,384,000 -> 393,216; softmax_d 4·32·1024 = 131,072; expanded dk + dv
      // 2·1000·32·(128 + 128) = 16,384,000. Sum 16,908,288.
      {"llama31_8b_gqa_s1000", 1, 1000, 32, 8, 128, 128, 2, 16908288},
      // The same at s = 4096 (a multiple of 128): no rounding excess; softmax_d 4·32·4096 = 524,288;
      // expanded 2·4096·32·256 = 67,108,864. Sum 67,633,152.
      {"llama31_8b_gqa_s4096", 1, 4096, 32, 8, 128, 128, 2, 67633152},
      // MHA (Llama-2-7B), b = 2, s = 4096: no expanded copies; softmax_d 4·2·32·4096 = 1,048,576.
      {"llama2_7b_mha_b2", 2, 4096, 32, 32, 128, 128, 2, 1048576},
      // head_dim 80 (Phi-2: 32 heads, MHA) rounds up to 96: dq_accum 4·1·2048·32·96 = 25,165,824 less
      // 4·2048·32·80 = 20,971,520 -> 4,194,304; softmax_d 4·32·2048 = 262,144. Sum 4,456,448.
      {"phi2_head80", 1, 2048, 32, 32, 80, 80, 2, 4456448},
      // head_dim 256 (Gemma 7B: 16 heads, MHA) stays 256: softmax_d 4·16·128 = 8,192 at s = 100
      // rounded to 128, dq_accum 4·128·16·256 = 2,097,152 less 4·100·16·256 = 1,638,400 -> 458,752.
      {"gemma7b_head256_s100", 1, 100, 16, 16, 256, 256, 2, 466944},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(FlashAttention2BackwardExtraBytes(c.b, c.s, c.heads, c.kv_heads, c.d, c.v_d, c.input_bytes), c.expected);
  }
}

}  // namespace
}  // namespace vramplan
