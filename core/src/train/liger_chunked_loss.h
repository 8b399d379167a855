// TRL's `use_liger_kernel` for DPO and GRPO: the loss is computed by liger_kernel's chunked losses
// (LigerFusedLinearDPOLoss, LigerFusedLinearGRPOLoss), which take the last hidden state and the
// lm_head weight instead of the logits. The full (rows, tokens, V) logits never exist: each chunk
// (one pair for DPO, one completion for GRPO: `chunk_size=1`) runs its lm_head, log-softmax, loss
// and their gradients inside the forward (torch.func.grad_and_value), and the input and weight
// gradients are accumulated and saved for backward.
//   liger_kernel/chunked_loss/fused_linear_ppo.py LigerFusedLinearPPOBase.forward / chunk_forward
//   (Liger-Kernel v0.6.4, 0a627007, 2025-11-21: the release the TRL GRPO notebook of Dec 2025 installed);
//   liger_kernel/chunked_loss/fused_linear_preference.py LigerFusedLinearPreferenceBase.forward /
//   chunk_forward (unchanged since 740de2b4, 2025-02-28; read at ead96b6).
//   trl/trainer/grpo_trainer.py GRPOTrainer.compute_liger_loss / _get_last_hidden_state (c9a9e25);
//   trl/trainer/dpo_trainer.py DPOTrainer._compute_loss_liger (f2cd577).
#pragma once

#include <cstdint>
#include <string>

#include "train/logits_loss.h"
#include "vramplan/scenario.h"

namespace vramplan {

// TRL routes the loss through Liger's chunked losses: `train.loss` fused_linear (use_liger_kernel)
// with objective dpo or grpo (TRL has no Liger path for its other trainers read here).
bool LigerChunkedLossApplies(const TrainConfig& train);

struct LigerChunkedHead {
  // In the cross-entropy head's form: saved = the accumulated input gradient and weight gradient
  // (ctx.save_for_backward(grad_input, grad_weight)); forward_extra = the rest at the loss's peak.
  LossHead policy;
  // The policy backbone's last hidden state and, for DPO, its `last_hidden_state[:, :-1].contiguous()`
  // fed to the loss (GRPO slices a view); alive while the reference backbone runs (DPO runs the
  // reference before the loss in this path).
  int64_t policy_hidden_bytes = 0;
  // DPO: the reference backbone's last hidden state and its contiguous copy (no grad), alive until
  // the loss returns; no reference logits exist (the reference chunk's lm_head runs inside Liger).
  int64_t reference_hidden_bytes = 0;
};

// rows: the policy's rows (2 x pairs for DPO, completions for GRPO); tokens_per_row: the positions
// the loss sees (DPO seq_len - 1; GRPO the completion); act: bytes per element of the hidden state;
// weight: of the lm_head weight (grad_weight is zeros_like(weight), computed even for a frozen
// lm_head: argnums (0, 1)); logits: of the chunk's lm_head output.
// seq: the backbone's positions per row (its last_hidden_state, held by the trainer's local
// `outputs` until the loss returns: the lm_head never runs, so nothing else keeps it); autocast:
// each chunk's matmul casts the weight to 16 bits.
LigerChunkedHead ComputeLigerChunkedHead(const TrainConfig& train, int64_t rows, int64_t tokens_per_row, int64_t seq, int64_t vocab,
                                         int64_t hidden, int64_t act, int64_t weight, int64_t logits, bool autocast, bool explain);

}  // namespace vramplan
