#include "train/flash_attention_backward.h"

#include "util/checked_math.h"

namespace vramplan {

namespace {
int64_t RoundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }
}  // namespace

int64_t FlashAttention2BackwardExtraBytes(int64_t batch, int64_t seq_len, int64_t heads, int64_t kv_heads, int64_t head_dim,
                                          int64_t v_head_dim, int64_t input_bytes) {
  const int64_t seq_rounded = RoundUp(seq_len, 128);
  // head_size_rounded: a multiple of 32 up to 192, else 256 (mha_bwd's round_multiple).
  const int64_t head_rounded = head_dim <= 192 ? RoundUp(head_dim, 32) : 256;
  const int64_t dq_accum = checked::Mul(4, batch, seq_rounded, heads, head_rounded);
  const int64_t counted = checked::Mul(4, batch, seq_len, heads, head_dim);
  const int64_t softmax_d = checked::Mul(4, batch, heads, seq_rounded);
  const int64_t expanded = kv_heads < heads ? checked::Mul(input_bytes, batch, seq_len, heads, head_dim + v_head_dim) : 0;
  return dq_accum - counted + softmax_d + expanded;
}

}  // namespace vramplan
