// The loss head: logits (b*s*V), HF's fp32 upcast, cross-entropy's saved log-probabilities and
// the gradient of the logits at the start of backward. Often the step's peak for large vocabularies.
//   transformers <= 4.45 (measured): logits.float(); shift_logits = logits[..., :-1, :].contiguous()
//   transformers >= 4.49 ForCausalLMLoss (loss/loss_utils.py): logits stay in the output in the compute
//     dtype, .float() copy, labels padded (no logits copy), cross_entropy(reduction="sum"); 4.46-4.48
//     (framework.loss_function_shift_copy): the same, then the shifted fp32 logits copied (b > 1).
//   chunked (torchtune CEWithChunkedOutputLoss, 8 chunks): fp32 upcast per chunk; log-probs still saved.
//   fused_linear (Liger LigerFusedLinearCrossEntropyLoss): logits never materialized; the input and
//     lm_head gradients are computed in the forward, chunk by chunk.
//   outputs_fp32 (accelerate's convert_outputs_to_fp32, train/preference.h AmpOutputsFp32): when the
//     model returns 16-bit logits, the wrapper adds an fp32 copy of them after the forward (and its
//     loss) returned, beside what the loss saved; a caller that keeps the output keeps that copy.
#pragma once

#include <cstdint>
#include <string>

#include "train/precision.h"
#include "vramplan/scenario.h"

namespace vramplan {

struct LossHead {
  int64_t saved_bytes = 0;           // kept for backward (log-probs, target copy, scalars)
  int64_t forward_extra_bytes = 0;   // alive at the loss op beyond `saved` (logits, fp32 copy, loss)
  int64_t backward_extra_bytes = 0;  // alive at the head's backward beyond `saved`
  int64_t keep_outputs_bytes = 0;    // held through backward when the caller keeps the output
  // Alive beyond `saved` after the model's forward returned, when that is a moment of its own (the
  // forward's locals, such as the final norm's output, are gone): accelerate's fp32 copy of the
  // returned 16-bit logits and the loss scalar (kUnsloth under outputs_fp32); 0: no such moment.
  int64_t after_forward_bytes = 0;
  std::string explain;
};

LossHead ComputeLossHead(const TrainConfig& train, const FrameworkConfig& fw, const PrecisionModel& prec,
                         int64_t vocab, int64_t hidden, bool lm_head_trainable, bool upcast = true, bool explain = true,
                         bool outputs_fp32 = false);

}  // namespace vramplan
