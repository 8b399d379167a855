// Tensors autograd saves for backward, op by op, per decoder layer (docs/training.md has the
// op -> saved tensors -> bytes table). Derived from the autograd graph of HF Llama and checked to
// the byte against the measured fixtures (tests/fixtures/training): a saved tensor is counted when
// the op that saves it needs it for a gradient that is actually required (frozen linears save no
// input; an input that needs no grad is not multiplied back), each storage once.
#pragma once

#include <algorithm>
#include <cstdint>

#include "train/precision.h"
#include "util/checked_math.h"
#include "train/train_plan.h"
#include "vramplan/model_spec.h"
#include "vramplan/scenario.h"

namespace vramplan {

struct ActivationContext {
  int64_t batch = 1;
  int64_t seq = 1;
  PrecisionModel prec;
  AttentionImpl attention = AttentionImpl::kSdpa;
  bool norm_saves_squared = false;  // PyTorch <= 2.1: mean.dim saves its input (x^2, fp32)
  bool quantized_base = false;      // QLoRA: frozen base linears are bnb 4/8-bit
  int qlora_bits = 4;
  bool gptq = false;                // the quantized base is a GPTQ QuantLinear (dequantizes in torch)
  bool torchao = false;             // ... a torchao NF4Tensor (dequantizes in torch, get_original_weight)
  bool torchao_compiled = false;    // ... under torch.compile: inductor fuses the dequantization into one kernel
  bool quantize_targets_only = false;  // torchtune 0.1: only LoRA-wrapped linears are NF4, the rest bf16
  const LoraConfig* lora = nullptr;
  int64_t adapter_bytes = 4;
  double attention_dropout = 0.0;
  bool softmax_fp32 = true;
  bool scale_is_tensor = false;
  bool cpu = false;
  double hidden_dropout = 0.0;
  NormKind norm_kind = NormKind::kRmsNorm;  // the layers' pre-attention / pre-MLP norms (ModelSpec::norm_kind)
  bool attention_mask = true;  // framework.attention_mask: a 2-D mask reaches the layers (MiniMax's Lightning layers mask v with it)
  // SDPA receives a padding mask: an unpacked batch of b > 1 rows padded to the longest, with the 2-D
  // attention_mask passed (transformers then builds a 4-D mask instead of running is_causal).
  bool padded_sdpa_mask = false;
  LayerKernels kernels = LayerKernels::kPytorch;  // train.kernels: unsloth's / Liger's autograd Functions
  // unsloth Fast_RMS_Layernorm / Liger LigerRMSNormFunction: save the input itself and an fp32 rstd
  // per row, and write the input gradient into the output gradient in place.
  bool FastRmsNorm() const { return kernels != LayerKernels::kPytorch && norm_kind == NormKind::kRmsNorm; }
  int64_t Tokens() const { return batch * seq; }
};

// Whether transformers hands this layer's SDPA a mask of its own for its sliding window or attention
// chunk: masking_utils' _ignore_causal_mask_sdpa skips it only while kv_length < the local size
// (activations.cpp keeps the layer's converted copy; train_step.cpp the shared bool mask).
inline bool SdpaLocalMaskBuilt(const AttentionGeometry& g, int64_t seq) { return g.sliding_window > 0 && seq >= g.sliding_window; }

// gpt-oss's eager core with attention sinks (transformers modeling_gpt_oss.py eager_attention_forward,
// v4.55-v4.57): scores = matmul(q, k^T) * scaling + mask, then cat with the per-head sink logit
// ([b, a, s, s + 1]), minus its row max, softmax in that dtype, the sink column sliced off.
// Measured op by op on CPU (tests/fixtures/training/gpt_oss_eager_saved.py, six cases: saved
// bytes, forward and backward peaks exact; tests/core/gpt_oss_attention_test.cpp).
// The concatenated logits' element size: the 16-bit scores promote to fp32 under autocast, where the
// eager mask (built in the embeddings' dtype) and the sinks parameter are fp32.
inline int64_t SinkLogitsBytes(const PrecisionModel& p) { return p.autocast ? 4 : p.matmul; }
// The core's forward peak beyond its saved inputs (q', k', v'), the higher of two instants. At the
// softmax: the masked scores [b, a, s, s], the max-subtracted logits and the softmax result
// [b, a, s, s + 1] (the result is what softmax saves), the row max's values and int64 indices. At
// the core's end, the logits and the result still held, the indices, autocast's 16-bit cast of the
// probabilities and the output twice (matmul's, then its transpose made contiguous); it is the
// higher one only for short sequences (s < 2·v_head_dim) under autocast.
inline int64_t SinkScoresForwardBytes(const PrecisionModel& p, int64_t b, int64_t a, int64_t s, int64_t v_head_dim) {
  const int64_t e = SinkLogitsBytes(p);
  const int64_t held = checked::Add(checked::Mul(2 * e, b, a, s, s + 1), checked::Mul(8, b, a, s));
  const int64_t at_softmax = checked::Add(checked::Mul(e, b, a, s, s), checked::Mul(e, b, a, s));
  const int64_t at_end = checked::Add(p.autocast ? checked::Mul(p.matmul, b, a, s, s) : 0, checked::Mul(2 * p.matmul, b, s, a, v_head_dim));
  return checked::Add(held, std::max(at_softmax, at_end));
}
// The core's backward beyond what it saved: the probabilities' gradient back in the logits' dtype
// [b, a, s, s], the sliced-off gradient padded to [b, a, s, s + 1] and softmax's backward output,
// the row max's gradient, and v's gradient at the query heads' width (dv before repeat_kv's sum).
inline int64_t SinkScoresBackwardBytes(const PrecisionModel& p, int64_t b, int64_t a, int64_t s, int64_t v_head_dim) {
  const int64_t e = SinkLogitsBytes(p);
  return checked::Add(checked::Add(checked::Mul(e, b, a, s, checked::Add(s, 2 * (s + 1))), checked::Mul(e, b, a, s)),
                      checked::Mul(p.matmul, b, s, a, v_head_dim));
}

// Whether any layer has attention sinks (AttentionGeometry::sinks).
inline bool HasAttentionSinks(const ModelSpec& model) {
  for (const auto& k : model.kinds) {
    if (k.attention.sinks) return true;
  }
  return false;
}

struct LayerSaved {
  int64_t total_bytes = 0;              // bytes saved by this layer during the forward pass
  int64_t before_scores_bytes = 0;      // ... up to q', k' (eager: before the score matrix exists)
  int64_t through_attention_bytes = 0;  // ... up to and including the attention probabilities / kernel
  int64_t weight_cast_bytes = 0;        // amp: 16-bit weight copies saved as mm's mat2 (inside total)
  int64_t attention_core_bytes = 0;     // eager core's own saves (q', k', scalar, softmax, probs, v'): dropped by selective
  int64_t core_input_bytes = 0;         // what a checkpointed core keeps instead: q_embed, k_embed, v
  int64_t scores_operands_bytes = 0;    // eager: q' and k' as matmul(q, k^T) saves them (within before_scores_bytes)
  bool output_requires_grad = false;
  bool qk_require_grad = false;   // uses the shared cos/sin
  int64_t attention_transient_bytes = 0;  // forward scratch inside the attention core beyond what it saves
  // DeepSeek sparse attention (DeepSeek-V3.2, GLM-5): the lightning indexer's forward scratch, two fp32
  // [b, s, index heads, s] score tensors at once (it runs under torch.no_grad and saves nothing).
  int64_t indexer_transient_bytes = 0;
  int64_t max_dequant_bytes = 0;          // QLoRA: largest dequantized weight materialized per matmul
  // Saved by the MLP's down projection (its input, an autocast weight cast, its adapters' tensors):
  // released when its MmBackward0 nodes have run, before the MLP's element-wise backward peaks.
  int64_t down_saved_bytes = 0;
  // Saved before the pre-MLP RMSNorm (the attention block and o_proj): what is left, with the norm's
  // own fp32 input, when that norm's backward runs (-1: no separate pre-MLP RMSNorm).
  int64_t before_mlp_norm_bytes = -1;
  // Full fine-tuning: saved by the pre-attention norm, and what the q/k/v projection that runs last
  // in backward (q_proj: created first) still holds of its own saves (-1: not a plain q/k/v layer).
  int64_t pre_attn_norm_bytes = 0;
  int64_t last_qkv_saved_bytes = -1;
  // Autocast: the 16-bit casts of trainable LoRA adapters, cached for the whole autocast region, and
  // of those the ones no op saves (lora_A's cast when its input needs no gradient).
  int64_t adapter_cast_bytes = 0;
  int64_t adapter_cast_unsaved_bytes = 0;
  // train.kernels: unsloth's LoRA_MLP Function holds the MLP (saves X, e, g; nothing released before
  // its backward, which needs one intermediate-width buffer) / Liger's SiLUMul (saves a, b; its
  // backward writes into them in place).
  bool unsloth_mlp = false;
  bool liger_swiglu = false;
  // Element bytes of the MLP's intermediate tensors (gate / up outputs, act(gate), their product):
  // the matmul dtype, or the input's dtype where bitsandbytes' Linear4bit returns out.to(inp_dtype)
  // on an fp32 input under autocast (Bnb4FollowsInput).
  int64_t mlp_act_bytes = 0;
  // Routed experts (transformers' MixtralSparseMoeBlock loop, balanced routing): the rows of one
  // expert (ceil(T·k/E)) and what the first expert in backward has released by its element-wise
  // backward (its index_add_ source, its expert output and weight column, its w2's saves).
  int64_t expert_rows = 0;
  int64_t expert_released_bytes = 0;
  // The gradient of routing_weights (hidden dtype, T·k): `routing_weights[top_x, idx, None]`'s
  // IndexBackward0 scatters into a zero (T, k) tensor that waits for every expert's share.
  int64_t routing_grad_bytes = 0;
  // ... one expert's saves of its weighted output (expert output, weight column, index_add_ source);
  // whether the MoE input (the gate's) and the gathered expert rows (w1's / w3's) are saved storages.
  int64_t expert_output_saved_bytes = 0;
  bool moe_input_saved = false;
  bool moe_input_requires_grad = false;  // the gathered rows' IndexBackward0 runs (per expert)
  int64_t expert_saved_bytes = 0;        // one expert's whole share of the saved set
  bool mlp_input_saved = false;     // the last mlp() group's input
  bool expert_input_saved = false;  // the routed experts' gathered rows
  // Qwen2-MoE's gated shared expert (0 when the layer has none): its width and what its backward
  // has released by its element-wise backward (the product's saved shared output, the sigmoid's
  // result, down_proj's saves).
  int64_t shared_width = 0;
  int64_t shared_released_bytes = 0;
};

// bitsandbytes 4-bit QLoRA under autocast with fp32 inputs (kbit-prepared fp32 norms):
// Linear4bit.forward casts x to its 16-bit compute dtype and returns out.to(inp_dtype), so its
// output is fp32 and MatMul4Bit keeps the 16-bit cast of its input (bitsandbytes/nn/modules.py,
// autograd/_functions.py, 0.39 through 0.43). Not for GPTQ / torchao bases or 8-bit.
bool Bnb4FollowsInput(const ActivationContext& ctx, int64_t input_bytes);

LayerSaved ComputeLayerSaved(const LayerKind& kind, const LayerPlan& plan, const ActivationContext& ctx);

// What one checkpointed layer keeps: its input hidden state.
int64_t CheckpointInputBytes(const ModelSpec& model, const ActivationContext& ctx);

// Saved by the final norm (+ whether its output needs grad). `input_bytes`: the element size of
// the norm's input when it is not the hidden (residual) dtype: q / k norms read a projection's
// output, in the matmul dtype (bf16 under autocast).
int64_t NormSavedBytes(const NormSpec& norm, NormKind kind, bool input_requires_grad, bool weight_trainable,
                       int64_t rows, const ActivationContext& ctx, int64_t input_bytes = -1);

// What a MiniMax Lightning attention layer (MixerKind::kLightning) saves beyond its linears' inputs
// in transformers' eager training forward: the silu input, the block loop's q / k / v operands and
// decayed copies, each block's decayed scores and K^T V state, its RMSNorm, the sigmoid gate and
// the normed output. `dt`: the activation dtype bytes.
int64_t LightningSavedBytes(const RecurrentGeometry& r, int64_t dt, bool weight_trainable, const ActivationContext& ctx);

}  // namespace vramplan
