#include "train/liger_chunked_loss.h"

#include <algorithm>

#include "format.h"

namespace vramplan {

bool LigerChunkedLossApplies(const TrainConfig& t) {
  return t.loss == LossImpl::kFusedLinear && (t.objective == Objective::kDpo || t.objective == Objective::kGrpo);
}

LigerChunkedHead ComputeLigerChunkedHead(const TrainConfig& train, int64_t rows, int64_t tokens_per_row, int64_t seq, int64_t V, int64_t H,
                                         int64_t act, int64_t w, int64_t ld, bool autocast, bool explain) {
  LigerChunkedHead out;
  const bool dpo = train.objective == Objective::kDpo;
  // chunk_size=1 (the default TRL keeps): one pair (chosen + rejected) or one completion per chunk.
  const int64_t chunk_rows = std::min<int64_t>(rows, dpo ? 2 : 1);
  const int64_t n = rows * tokens_per_row;         // tokens the loss sees
  const int64_t nc = chunk_rows * tokens_per_row;  // tokens of one chunk
  const int64_t weight_grad = w * V * H;           // grad_weight = torch.zeros_like(weight), and each chunk's
  const int64_t input_grad = act * n * H;          // grad_inputs (one chunk's each), torch.cat at the end
  // One chunk's tensors at its peak, as chunk_forward's eager ops size them (the default compiled=True
  // fuses the element-wise chain, so this is an upper bound): `F.log_softmax(logits.float())` saved
  // for backward, the incoming gradient of the gather and LogSoftmaxBackward's output, 3 fp32
  // (nc, V) tensors; then the cast back to the logits' dtype beside the fp32 gradient while the
  // matmul's backward writes the chunk's weight gradient (V x H, the weight's dtype). The
  // preference chunk keeps its 16-bit logits for the logits-mean metrics (chosen_logits.sum()).
  const int64_t kept_logits = dpo ? ld * nc * V : 0;
  const int64_t weight_cast = autocast ? 2 * V * H : 0;
  const int64_t chunk = kept_logits + weight_cast + std::max(3 * 4 * nc * V, (4 + ld) * nc * V + weight_grad);
  // The last chunk runs with the accumulator and the other chunks' input gradients alive; at the
  // end of forward torch.cat(grad_inputs) copies the list while it is alive.
  const int64_t at_last_chunk = weight_grad + act * (n - nc) * H + chunk;
  const int64_t at_cat = weight_grad + 2 * input_grad;
  const int64_t saved = weight_grad + input_grad;
  out.policy.saved_bytes = saved;
  // The backbone outputs (and DPO's contiguous copies, arguments of liger_loss) are alive under the loss.
  const int64_t backbone_out = act * rows * seq * H;
  out.policy_hidden_bytes = backbone_out + (dpo ? act * n * H : 0);
  out.reference_hidden_bytes = dpo ? backbone_out + act * n * H : 0;
  out.policy.forward_extra_bytes = std::max(at_last_chunk, at_cat) - saved + out.policy_hidden_bytes + out.reference_hidden_bytes;
  // backward: `if grad_output != 1.0` both saved gradients are multiplied into new tensors; the
  // loss is divided by the accumulation steps (GRPO compute_liger_loss; the Trainer for DPO), so
  // with accumulation the gradient is not 1.
  out.policy.backward_extra_bytes = train.grad_accum_steps > 1 ? saved : 0;
  out.policy.keep_outputs_bytes = 0;
  if (explain) {
    out.policy.explain = std::string("Liger chunked ") + (dpo ? "DPO" : "GRPO") + " loss (TRL use_liger_kernel): no full logits; chunks of " +
                         std::to_string(chunk_rows) + " row(s) x " + WithCommas(tokens_per_row) +
                         " tokens; keeps grad_input rows·t·h and grad_W V·h (also for a frozen lm_head) from forward to backward";
  }
  return out;
}

}  // namespace vramplan
