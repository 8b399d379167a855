// Preference objectives (TRL's DPOTrainer, KTOTrainer and the experimental ORPO/CPO trainers):
// which rows the policy forwards, whether a reference model is resident and runs, and the log-prob
// head that replaces the cross-entropy head. Measured exact on CPU (tests/fixtures/training/
// measured_cpu_dpo.json, docs/post_training.md); the rules cite TRL v1.9.
#pragma once

#include <cstdint>
#include <string>

#include "train/logits_loss.h"
#include "vramplan/scenario.h"

namespace vramplan {

// Rows of the policy forward per sample: DPOTrainer._compute_loss forwards chosen and rejected
// completions concatenated ([chosen, rejected], one forward); KTO's rows are unpaired.
int64_t RowsPerSample(Objective objective);

// A reference model forward runs in the step: DPO/IPO/KTO unless precompute_ref_log_probs.
bool ReferencePassRuns(const TrainConfig& train);
// ... and a frozen reference copy is resident: TRL creates one (create_model_from_path with the
// policy's model_init_kwargs: its dtype) unless the policy is a PEFT model, whose reference is the
// base with its adapters disabled (DPOTrainer.__init__: `if is_peft_model(self.model) or
// args.precompute_ref_log_probs: self.ref_model = None`).
bool ReferenceCopyResident(const TrainConfig& train);

// TRL's "sft" loss term runs in the step: train.rpo_alpha > 0 with a DPOTrainer objective (DPO, IPO).
bool SftTermRuns(const TrainConfig& train);

// The logits reach the head as fp32 copies of the lm_head's 16-bit output (framework.amp_outputs_fp32):
// accelerate's Accelerator.prepare_model, when native_amp is set (Accelerator.__init__: mixed_precision
// fp16 on a GPU or bf16, unless the distributed type is DeepSpeed or Megatron-LM; FSDP and DDP get it), wraps model.forward in autocast and
// convert_outputs_to_fp32 (accelerate/utils/operations.py convert_to_fp32: `.float()` on every
// fp16 / bf16 tensor of the outputs). The HF Trainer prepares the policy and TRL's reference copy
// that way, so DPO / IPO / ORPO / SimPO / KTO / GRPO / PPO see fp32 logits under autocast. Not under
// DeepSpeed ZeRO (DeepSpeed runs the 16-bit model itself), Megatron or torchtitan, nor with Liger's
// chunked loss (no logits).
bool AmpOutputsFp32(const Scenario& sc, bool autocast);

struct PreferenceHead {
  // The policy's log-prob head in the cross-entropy head's form (saved; at the policy log-probs'
  // peak and at the head's backward peak beyond the saved part).
  LossHead policy;
  int64_t saved_in_loss_bytes = 0;     // of policy.saved_bytes, saved only after the reference pass (the scalar loss)
  int64_t alive_at_reference_bytes = 0;  // the policy head's tensors alive while the reference runs
  int64_t reference_pass_bytes = 0;    // the reference forward's logits and log-prob buffers at its peak
  // The scalar loss and the root gradient backward makes with ones_like, alive until backward
  // returns: in the dtype the log-ratios promote to (the policy's log-probs; fp32 when the reference
  // log-probs were precomputed, which come as fp32 columns).
  int64_t loss_scalar_bytes = 8;
  // TRL's "sft" loss term (train.rpo_alpha > 0, DPO / IPO): what is alive at its cross-entropy's
  // nll_loss, after the reference pass, beyond alive_at_reference_bytes (the reference's logits and
  // log-probs, which _compute_loss keeps, the DPO loss's per-pair tensors and the term's own
  // tensors); 0 without the term.
  int64_t sft_term_bytes = 0;
  // DPO / IPO with a reference pass and fp32 copies of the logits (AmpOutputsFp32): what is alive in
  // the loss after the reference pass beyond alive_at_reference_bytes (the reference's fp32 logits
  // in `ref_outputs` and its log-probs, the DPO loss's tensors); 0 otherwise.
  int64_t loss_window_bytes = 0;
  // KTO: the loss's and metrics' small tensors alive at the entropy metric after the loss (the
  // per-token log-probs, per-sequence sums, indices and per-completion loss terms; replacing the
  // DPO loss's saved_in_loss_bytes), and those alive beneath the reference pass.
  int64_t kto_loss_window_bytes = 0;
  int64_t kto_reference_extra_bytes = 0;
};

// `pairs`: the micro-batch in samples (pairs for DPO); `rows` = pairs x RowsPerSample. `logits`:
// bytes per logit of the lm_head output (no upcast: TRL passes no labels); `on_cpu`: CPU autocast
// runs log_softmax in bf16, CUDA autocast in fp32. `converted_from`: with AmpOutputsFp32, the
// bytes per logit of the 16-bit output the fp32 `logits` were copied from (both alive at the copy,
// in the policy's forward and the reference's, and at ToCopyBackward0); 0 without the copy.
PreferenceHead ComputePreferenceHead(const TrainConfig& train, int64_t pairs, int64_t rows, int64_t seq,
                                     int64_t vocab, int64_t logits, bool autocast, bool on_cpu, bool explain,
                                     int64_t converted_from = 0);

}  // namespace vramplan
