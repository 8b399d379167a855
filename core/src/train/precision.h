// Bytes per element of every tensor class, by precision mode (docs/training.md, "Precision modes").
//   fp32        fp32 weights, grads, states.
//   bf16/fp16   "pure" 16-bit: weights, grads and optimizer states in 16-bit (torchtune,
//               torch_dtype=bfloat16 + HF Trainer without autocast).
//   amp_*       fp32 weights/grads/states + torch.autocast around the forward (HF Trainer bf16=True
//               on an fp32 model): matmuls run in 16-bit, the residual stream stays fp32, and the
//               16-bit casts of trainable weights are cached (and saved by mm) through backward.
//   mixed_*     DeepSpeed/Megatron: 16-bit weights and grads, fp32 master weights + states.
// Residual/matmul/rope dtypes follow shared/measure/analysis.md section 1 (measured).
#pragma once

#include <cstdint>

#include "vramplan/scenario.h"

namespace vramplan {

struct PrecisionModel {
  int64_t weight = 4;      // parameter storage
  int64_t grad = 4;        // .grad storage
  int64_t master = 0;      // fp32 master copy (mixed_*)
  int64_t state = 4;       // optimizer state element (AdamW m, v)
  int64_t residual = 4;    // residual stream, RMSNorm input/output
  int64_t matmul = 4;      // matmul outputs and the inputs bmm/SDPA save
  int64_t rope = 4;        // cos/sin and the causal mask (embedding dtype)
  int64_t q_after_rope = 4;  // q/k after RoPE (fp32 under amp: fp32 cos/sin x bf16 q)
  bool autocast = false;   // fp32 weights cast per matmul (amp_*)
  bool autocast16 = false; // 16-bit weights under autocast (train.autocast): fp32 adapters and losses are cast
  bool half = false;       // any 16-bit compute
  const char* name = "fp32";
};

PrecisionModel PrecisionFor(Precision p, bool autocast16 = false);

// Bytes per element of the q and k that reach the attention core: after RoPE (fp32 under amp), or,
// on a NoPE layer (Llama 4's and SmolLM3's no_rope layers: apply_rotary_pos_emb runs only
// `if self.use_rope`, modeling_llama4.py / modeling_smollm3.py), the projections' outputs as they
// are (the matmul dtype).
inline int64_t QkBytes(const PrecisionModel& p, bool no_rope) { return no_rope ? p.matmul : p.q_after_rope; }

}  // namespace vramplan
