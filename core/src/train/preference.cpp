#include "train/preference.h"

#include <algorithm>

#include "format.h"
#include "train/liger_chunked_loss.h"

namespace vramplan {

int64_t RowsPerSample(Objective objective) {
  switch (objective) {
    case Objective::kDpo:
    case Objective::kIpo:
    case Objective::kOrpo:
    case Objective::kSimpo: return 2;
    case Objective::kSft:
    case Objective::kKto:
    case Objective::kGrpo:  // one row per completion (TRL per_device_train_batch_size counts completions)
    case Objective::kPpo: return 1;
  }
  return 1;
}

// `logits[:, :-1, :]` (KTO, ORPO's get_batch_logps) against DPO's `logits[..., :-1, :]`.
static bool WholeRowsSliceRecorded(Objective objective) { return objective == Objective::kKto || objective == Objective::kOrpo; }

bool ReferencePassRuns(const TrainConfig& t) {
  const bool needs = t.objective == Objective::kDpo || t.objective == Objective::kIpo || t.objective == Objective::kKto;
  return needs && !t.precompute_ref_log_probs;
}

bool ReferenceCopyResident(const TrainConfig& t) {
  const bool peft = t.method == TrainMethod::kLora || t.method == TrainMethod::kQlora;
  return ReferencePassRuns(t) && !peft;
}

bool AmpOutputsFp32(const Scenario& sc, bool autocast) {
  // accelerate Accelerator.__init__ (1.x): native_amp for fp16 (on a GPU) and bf16 unless the distributed
  // type is DeepSpeed or Megatron-LM; prepare_model's `if self.native_amp:` branch then wraps forward.
  const bool accelerate_amp = sc.framework.trainer == Trainer::kHf && sc.parallel.zero == 0;
  return sc.framework.amp_outputs_fp32 && autocast && accelerate_amp && !LigerChunkedLossApplies(sc.train);
}

bool SftTermRuns(const TrainConfig& t) { return t.rpo_alpha > 0 && (t.objective == Objective::kDpo || t.objective == Objective::kIpo); }

// trl/trainer/utils.py selective_log_softmax (v1.9). fp32 logits: gather(logits, index) then a
// per-row torch.logsumexp (the loop "to reduce peak mem consumption"); 16-bit logits: a per-row
// F.log_softmax whose output LogSoftmaxBackward0 saves, then gather. Sizes below measured on
// PyTorch 1.13.1 CPU (measured_cpu_dpo.json); R rows, s tokens, V vocabulary, row = (s-1)·V.
PreferenceHead ComputePreferenceHead(const TrainConfig& train, int64_t pairs, int64_t R, int64_t s, int64_t V,
                                     int64_t ld, bool autocast, bool on_cpu, bool explain, int64_t converted_from) {
  PreferenceHead h;
  const int64_t row = (s - 1) * V;
  const bool fp32_path = ld == 4;
  // 16-bit logits under CUDA autocast: log_softmax is on autocast's fp32 list (CPU 1.13: it is not).
  const int64_t lp = fp32_path || (autocast && !on_cpu) ? 4 : ld;
  // The scalar loss: -F.logsigmoid(beta * delta) saves its input and buffer (pairs each) plus 16 B
  // of scalars (measured); the completion-mask comparison `shift_completion_mask == 0` is saved by
  // the in-place index_put_ (R·(s-1) bool).
  h.saved_in_loss_bytes = 2 * lp * pairs + 16;
  // The loss and ones_like's root gradient (measured: 2 + 2 B at K01's backward peak, bf16 with a
  // reference copy; 4 + 4 B at D09's and H06's, 16-bit with precomputed reference log-probs).
  // ORPO: odds_ratio_loss upcasts the log-probs (`policy_chosen_logps.float()`, orpo_trainer.py f2cd577).
  h.loss_scalar_bytes = 2 * (train.precompute_ref_log_probs || train.objective == Objective::kOrpo ? 4 : lp);
  const int64_t mask = R * (s - 1);
  if (fp32_path) {
    // gather and logsumexp save views of the logits (4·R·s·V kept whole) + logsumexp's results.
    h.policy.saved_bytes = 4 * R * s * V + 4 * R * (s - 1) + mask + h.saved_in_loss_bytes;
    // At the last row's logsumexp: exp(x - max) of one row, the gather output, every row's result, the row max.
    const int64_t fwd_peak = 4 * R * s * V + 4 * row + 8 * R * (s - 1) + 4 * (s - 1);
    h.policy.forward_extra_bytes = fwd_peak - h.policy.saved_bytes;
    // Backward: the last LogsumexpBackward0 (the R - 1 row gradients done, and x - result, its exp
    // and the product with the incoming gradient; the per-token gradients of index_put_'s CopySlices
    // and of the subtraction, the root ones_like; the mask, the rows' results done and the scalar
    // loss's per-pair tensors released, 12·pairs + 8 B in all), or UnbindBackward0 stacking the R row gradients into
    // a new (R, s-1, V) tensor, the loss's per-pair tensors (8·pairs) and 8 B of its scalars released
    // (measured: live blocks at both peaks; UnbindBackward0 at 2, 3 and 4 pairs: D08, H03, K02).
    int64_t lse_bwd = 4 * (R + 2) * row + 8 * R * (s - 1) + 4 - mask - 4 * (R - 1) * (s - 1) - (12 * pairs + 8);
    // KTO's loss is one `losses.nanmean()`: at that moment only it and its root gradient remain of the
    // loss's tensors (fp32: 8 B; the float64 scalars alive there are the model's), where the DPO terms
    // above leave 12 - 4·pairs B (measured: T01, T04; was -4 B).
    if (train.objective == Objective::kKto) lse_bwd += 8 - (h.saved_in_loss_bytes - (12 * pairs + 8) + 4);
    const int64_t unbind_bwd = 8 * R * row - mask - 8 * pairs - 8;
    h.policy.backward_extra_bytes = std::max(lse_bwd, unbind_bwd);
    h.alive_at_reference_bytes = h.policy.saved_bytes - h.saved_in_loss_bytes + 4 * R * (s - 1) + 4 * R;
    h.reference_pass_bytes = 4 * R * s * V + 4 * row + 8 * R * (s - 1) + 4 * (s - 1);
  } else {
    h.policy.saved_bytes = lp * R * row + mask + h.saved_in_loss_bytes;
    // At torch.stack: the 16-bit logits (alive in `outputs` until _compute_loss returns), every row's
    // saved log_softmax, the gathered rows and their stack.
    const int64_t fwd_peak = ld * R * s * V + lp * R * row + 2 * lp * R * (s - 1);
    h.policy.forward_extra_bytes = fwd_peak - h.policy.saved_bytes;
    // Backward at SliceBackward0 (logits[..., :-1, :]): the new (R, s, V) gradient beside the
    // (R, s-1, V) one; the saved rows, the mask and the per-pair scalars are released by then (the
    // loss and the root gradient remain).
    const int64_t bwd_peak = ld * R * s * V + ld * R * row + h.loss_scalar_bytes;
    h.policy.backward_extra_bytes = bwd_peak - h.policy.saved_bytes;
    h.alive_at_reference_bytes = h.policy.saved_bytes - h.saved_in_loss_bytes + ld * R * s * V + lp * R * (s - 1) + lp * R;
    if (WholeRowsSliceRecorded(train.objective)) {
      // KTO and ORPO slice `logits[:, :-1, :]` (trl/trainer/kto_trainer.py _compute_loss,
      // trl/experimental/orpo/orpo_trainer.py get_batch_logps; f2cd577): the `:` over the rows is a
      // SliceBackward0 of its own, and its slice_backward zero-fills a second (R, s, V) gradient
      // beside the first (derivatives.yaml slice: slice_backward_wrapper; measured on PyTorch 1.13:
      // three SliceBackward0 nodes at T02's and T05's backward, -8,000 B before this moment).
      h.policy.backward_extra_bytes = std::max(h.policy.backward_extra_bytes, 2 * ld * R * s * V + h.loss_scalar_bytes - h.policy.saved_bytes);
    }
    // No grad: one row's log_softmax beside the previous row's (the loop variable), the gathered rows.
    h.reference_pass_bytes = ld * R * s * V + lp * row * std::min<int64_t>(R, 2) + lp * (s - 1) * (R - 1);
  }
  h.policy.keep_outputs_bytes = 0;
  if (train.objective == Objective::kGrpo || train.objective == Objective::kPpo) {
    // The clipped surrogate on (R, s-1) per-token fp32 tensors (GRPOTrainer._compute_loss: the
    // log-ratio, exp, clamp, both products, their min, the mask product; beta: the k3 KL's exp and
    // terms; PPO adds the value loss's vpred, clamp, squares and max): a few R·(s-1)·4 B each, saved
    // for backward (not measured; small beside the logits).
    const int64_t per_token = 4 * R * (s - 1);
    const int64_t tensors = train.objective == Objective::kPpo ? 12 : train.rollout.beta != 0.0 ? 9 : 6;
    h.policy.saved_bytes += tensors * per_token - h.saved_in_loss_bytes;
    h.saved_in_loss_bytes = tensors * per_token;
    if (train.objective == Objective::kGrpo) {
      // compute_entropy=True, under no_grad: entropy_from_logits reshapes the sliced (non-contiguous)
      // logits to (R·(s-1), V), a copy, then log_softmax / exp / product over 128-row chunks.
      const int64_t alive_logits = fp32_path ? 0 : ld * R * s * V;
      const int64_t chunk_rows = std::min<int64_t>(128, R * (s - 1));
      const int64_t at_entropy = h.policy.saved_bytes + alive_logits + ld * R * row + 3 * chunk_rows * V * ld;
      h.policy.forward_extra_bytes = std::max(h.policy.forward_extra_bytes, at_entropy - h.policy.saved_bytes);
    }
    // Backward of the in-place division by the temperature on the sliced logits (GRPO
    // `logits.div_(self.temperature)`, PPO `logits /= args.temperature + 1e-7`; CopySlices): the
    // gradient of the whole (R, s, V) logits and its copy, the contiguous clone of the slice's
    // gradient and DivBackward's (R, s-1, V) output (torch/csrc/autograd/functions/tensor.cpp
    // CopySlices::apply; measured: the backward peaks of measured_cpu_grpo.json).
    const int64_t copy_slices = ld * (2 * R * s * V + 2 * R * row);
    h.policy.backward_extra_bytes = std::max(h.policy.backward_extra_bytes, copy_slices - h.policy.saved_bytes);
  }
  if (train.objective == Objective::kOrpo) {
    // ORPO adds the NLL (cross-entropy) of the chosen rows (trl/experimental/orpo/orpo_trainer.py
    // concatenated_forward, cross_entropy_loss on the first len_chosen rows; f2cd577): its saved
    // tensors stay alive under the log-prob head's backward, which autograd runs first (the
    // odds-ratio branch was recorded last). TRL calls nn.CrossEntropyLoss on the logits as they are
    // (no upcast, unlike transformers' own loss): without autocast, log_softmax's output, saved, is
    // in the logits' dtype; autocast (CPU and CUDA: cross_entropy on its fp32 list) casts the 16-bit
    // logits to fp32 first. Every moment below was traced from the live blocks at the O rows' peaks
    // (measured_cpu_dpo.json, measure_dpo.py "debug_blocks").
    const int64_t pairs_row = pairs * row;
    const bool upcast = fp32_path || autocast;
    // cross_entropy_loss(all_logits[:len_chosen], labels[:len_chosen]): log_softmax's output (q per
    // logit), nll_loss's target and total_weight. The target is `labels[..., 1:].contiguous()`: a copy
    // for more than one pair; for one pair the slice is contiguous already, a view that keeps the
    // whole `torch.where(attention_mask == 1, labels, -100)` (R, s) int64 tensor (concatenated_forward).
    const int64_t q = upcast ? 4 : ld;
    const int64_t ce_saved = q * pairs_row + (pairs > 1 ? 8 * pairs * (s - 1) : 8 * R * s) + q;
    // get_batch_logps gathers with `torch.where(labels == -100, 0, labels)`: a new (R, s-1) int64
    // index, saved by gather (derivatives.yaml gather: index), where DPO's index is a view of the
    // batch; and a trained embedding saves concatenated_inputs' new (R, s) input ids (embedding:
    // indices; a frozen one under LoRA saves nothing) until the very end of backward.
    const int64_t index = 8 * R * (s - 1);
    const bool embedding_trains = train.method != TrainMethod::kLora && train.method != TrainMethod::kQlora;
    const int64_t ids = embedding_trains ? 8 * R * s : 0;
    const int64_t log_prob_peak = h.policy.saved_bytes + h.policy.backward_extra_bytes + index;
    // concatenated_forward's frame locals through both heads' forward: concatenated_inputs' ids,
    // attention mask and labels (R, s) int64, and `torch.where(attention_mask == 1, labels, -100)`'s
    // (R, s) int64 labels (for one pair the cross-entropy's target keeps it: in ce_saved).
    const int64_t where_labels = 8 * R * s;
    const int64_t locals = 3 * 8 * R * s + (pairs > 1 ? where_labels : 0);
    // get_batch_logps, after the cross-entropy (its output q alive): loss_mask (R, s-1) bool made
    // before selective_log_softmax and the index; at the log-prob head's forward moment (fp32: the last
    // row's logsumexp; 16-bit: after torch.stack, `loss_mask.sum(-1)` casts the bool mask to int64 (a
    // temporary) beside its (R,) int64 output, the per-token log-probs and the product's (R,) sum;
    // the per-row gathered tensors released). Measured: O01's forward peak at logsumexp, O02's at
    // aten::sum > aten::to.
    const int64_t at_mask_sum = fp32_path ? 0 : -lp * R * (s - 1) + lp * R + 8 * R + 8 * R * (s - 1);
    const int64_t log_prob_forward = h.policy.saved_bytes + h.policy.forward_extra_bytes + ce_saved + index + R * (s - 1) + q + locals + at_mask_sum;
    h.policy.saved_bytes += ce_saved + index + ids;
    h.alive_at_reference_bytes += ce_saved + index + ids;
    // The log-prob branch's backward runs first (the odds-ratio term was recorded last), with the
    // cross-entropy's saved tensors alive. Its logits gradient, the (R, s, V) SliceBackward0 output,
    // then waits in the engine's input buffer for `all_logits` until the cross-entropy's branch
    // delivers its own (torch/csrc/autograd/input_buffer.cpp InputBuffer::add): alive through the
    // cross-entropy's backward (LogSoftmaxBackward0: its saved output, nll_loss's gradient and its
    // own, q per logit each), and the two are summed out of place into a third (R, s, V) tensor
    // (measured on PyTorch 1.13: O03's peak at LogSoftmaxBackward0 beside the waiting gradient, O02's
    // at SliceBackward0 > aten::add with three (R, s, V) blocks alive).
    const int64_t waiting = ld * R * s * V;
    const int64_t ce_peak = waiting + 3 * q * pairs_row + h.loss_scalar_bytes;
    const int64_t add_peak = 3 * waiting + h.loss_scalar_bytes;
    h.policy.backward_extra_bytes = std::max({log_prob_peak + ce_saved, ce_peak, add_peak}) + ids - h.policy.saved_bytes;
    // The cross-entropy runs first, on `logits[:len_chosen][..., :-1, :].contiguous()`: a copy for
    // more than one pair (one pair's slice is contiguous, a view), alive in cross_entropy_loss's
    // frame beside the whole logits and log_softmax's output (and autocast's fp32 cast of its
    // input) at nll_loss (measured: the forward peaks of O02-O04, live blocks at aten::nll_loss_forward).
    const int64_t copy = pairs > 1 ? ld * pairs_row : 0;
    // Beside them: the frame locals, nll_loss's target (a copy for more than one pair, the where
    // labels for one), its output and total_weight (q each). Measured: O03's and O04's forward peaks.
    const int64_t target = pairs > 1 ? 8 * pairs * (s - 1) : where_labels;
    const int64_t at_nll = ld * R * s * V + copy + q * pairs_row + (upcast && !fp32_path ? 4 * pairs_row : 0) + locals + target + 2 * q;
    h.policy.forward_extra_bytes = std::max(log_prob_forward, at_nll) - h.policy.saved_bytes;
  }
  if (train.objective == Objective::kKto) {
    // KTOTrainer._compute_loss (TRL f2cd577), R completions: what its locals hold at the entropy
    // metric, beyond the log-prob head's saved tensors: the policy's per-token log-probs (and the
    // reference's), the per-sequence sums (completion and KL batch, the reference's too; with
    // precomputed reference log-probs three fp32 columns instead), labels.sum() and num_rejected
    // (int64), the chosen / rejected indices (nonzero, int64), index_select's per-completion
    // log-probs, the clamped KL, the log-ratios, sigmoid, 1 - sigmoid, rewards and the concatenated
    // losses (in the log-ratios' dtype: the log-probs', fp32 against precomputed columns), and the
    // four Python floats the muls with grad wrap as float64 scalars (beta twice, 1.0 twice), saved
    // for backward. Measured: the T rows' live blocks at the loss window's peak (was -2,156 B fp32,
    // -1,102 B bf16, -620 B precomputed).
    const bool ref = ReferencePassRuns(train);
    const int64_t e = lp, w = ref ? lp : 4;
    const int64_t per_token = e * R * (s - 1) * (ref ? 2 : 1);
    const int64_t sums = ref ? 4 * e * R : 2 * e * R + 4 * (R + R);
    const int64_t smalls = sums + 16 + 8 * R + (ref ? 2 : 1) * e * R + w + 5 * w * R + 32;
    h.kto_loss_window_bytes = per_token + smalls - h.saved_in_loss_bytes;
    // Beneath the reference's main pass: the policy's KL sum and the reference's own (its KL pass
    // ran first), the per-completion log-probs index_select took, labels.sum() and num_rejected, the
    // two index tensors (was -56 B fp32, -44 B bf16).
    if (ref) h.alive_at_reference_bytes += 3 * e * R + 16 + 8 * R;
  }
  if (SftTermRuns(train)) {
    // TRL's "sft" loss term (DPOTrainer._compute_loss, loss_type "sft", after the DPO loss; f2cd577):
    // F.cross_entropy(chosen_logits[chosen_mask.bool()], chosen_labels[chosen_mask.bool()]) on the
    // chosen half of shift_logits. Sized on every chosen position, K = pairs·(s-1) (a one-token
    // prompt: the upper bound; the mask drops the prompt's positions). Older TRL's and ms-swift's
    // rpo_alpha NLL run nn.CrossEntropyLoss on every chosen position (the prompt labelled -100): the
    // same sizes. Measured exact: the P rows of measured_cpu_dpo.json (measure_dpo.py "sft_weight").
    const int64_t K = pairs * (s - 1);
    const int64_t KV = K * V;
    // cross_entropy is on autocast's fp32 list (CPU and CUDA): a 16-bit input is cast first.
    const bool upcast = fp32_path || autocast;
    const int64_t q = upcast ? 4 : ld;
    const int64_t cast = upcast && !fp32_path ? 4 * KV : 0;
    // What _compute_loss holds after the reference pass: ref_outputs' logits, the reference's
    // per-token log-probs and sums (precomputed: the two fp32 log-prob columns); the DPO loss's
    // per-pair tensors (the two log-ratios, delta, beta·delta, logsigmoid's output and buffer) and
    // its scalars (the mean, the loss weight wrapped as a double, the running loss).
    const int64_t e = h.loss_scalar_bytes / 2;
    const int64_t reference_after = ReferencePassRuns(train) ? ld * R * s * V + lp * R * (s - 1) + lp * R : 8 * pairs;
    const int64_t dpo_loss = 6 * pairs * e + 16 + e;
    // At nll_loss: the boolean mask (pairs·(s-1)), the indexed logits copy, autocast's fp32 cast,
    // log_softmax's output (saved), the indexed labels (int64, nll_loss's saved target), its output
    // and total_weight.
    const int64_t term_saved = q * KV + 8 * K + pairs * (s - 1) + q;
    const int64_t term_forward = ld * KV + cast + q * KV + 8 * K + pairs * (s - 1) + 2 * q;
    h.sft_term_bytes = reference_after + dpo_loss + term_forward;
    // Backward: the term was recorded last, so its branch runs first with the log-prob head's saved
    // tensors alive beneath it: LogSoftmaxBackward0 (its saved output, nll_loss's gradient and its
    // own, q per logit), then SplitBackward0 (chunk) cats IndexBackward0's (pairs, s-1, V) gradient
    // with zeros for the rejected half into a new (R, s-1, V) one, which waits in shift_logits' input
    // buffer while the log-prob head's backward runs. fp32: the head's peaks (the last logsumexp,
    // UnbindBackward0) come before the two gradients meet, so it adds to them; 16-bit: the peak at
    // SliceBackward0 comes after the sum (out of place: three (R, s-1, V) tensors at the add, fewer
    // than at the cat, where the head's saved rows are alive), so it does not.
    // 16-bit, before the sum: each row's LogSoftmaxBackward0 (GatherBackward0's zero-filled row
    // gradient and its own output beside the rows' saved outputs and the finished rows' gradients:
    // R + 2 rows) above CopySlices' (R, s-1) gradient, with the term's gradient waiting (the peak
    // for one pair, P10). The loss is in the wider of the two terms' dtypes (the term's is fp32
    // under autocast), the root gradient too, and AddBackward0 casts the DPO branch's gradient to its
    // dtype (alive while the term's branch runs). The DPO loss's saved per-pair tensors are in the
    // log-ratios' dtype (fp32 when the reference log-probs were precomputed).
    const int64_t wide = std::max(e, q);
    const int64_t loss_scalars = 2 * wide + (e != wide ? e : 0);
    const int64_t S = h.policy.saved_bytes - h.saved_in_loss_bytes + 2 * e * pairs + 16;
    const int64_t waiting = ld * R * row;
    const int64_t at_log_softmax = S + pairs * (s - 1) + 3 * q * KV + loss_scalars;
    const int64_t at_split = S + 2 * waiting + 2 * wide;
    // (By then the DPO loss's MulBackward0 nodes have run: their saved float64 scalars, 16 B, are gone.)
    const int64_t at_row = fp32_path ? 0 : S - mask - 2 * e * pairs - 16 + lp * R * (s - 1) + 2 * ld * row + waiting + 2 * wide;
    const int64_t log_prob_head = h.policy.saved_bytes + h.policy.backward_extra_bytes + (fp32_path ? waiting : 0);
    const int64_t backward_peak = std::max({at_log_softmax, at_split, at_row, log_prob_head});
    h.policy.saved_bytes += term_saved;
    h.policy.forward_extra_bytes -= term_saved;
    h.policy.backward_extra_bytes = backward_peak - h.policy.saved_bytes;
  }
  if (converted_from > 0) {
    // accelerate's convert_outputs_to_fp32 (AmpOutputsFp32): the `.float()` copy is made after the
    // wrapped forward returned (its autocast region closed), the 16-bit logits alive beside it until
    // the wrapper returns; in the reference pass the same under no_grad. Backward: ToCopyBackward0
    // casts the logits' fp32 gradient to the 16-bit one beside it. Measured: the W rows of
    // measured_cpu_dpo.json (measure_dpo.py "accelerate_wrap").
    const int64_t copy = (converted_from + 4) * R * s * V;
    h.policy.forward_extra_bytes = std::max(h.policy.forward_extra_bytes, copy - h.policy.saved_bytes);
    h.reference_pass_bytes = std::max(h.reference_pass_bytes, copy);
    h.policy.backward_extra_bytes = std::max(h.policy.backward_extra_bytes, copy + h.loss_scalar_bytes - h.policy.saved_bytes);
    // The DPO loss after the reference pass: `ref_outputs` (a local of _compute_loss) keeps the
    // reference's fp32 logits beside the policy's (kept by the head's saved views), with the
    // reference's per-token log-probs and sums and the loss's per-pair tensors and scalars (with the
    // sft term that moment is sft_term_bytes' own).
    const bool dpo_family = train.objective == Objective::kDpo || train.objective == Objective::kIpo;
    if (dpo_family && ReferencePassRuns(train) && !SftTermRuns(train)) {
      const int64_t e = h.loss_scalar_bytes / 2;
      h.loss_window_bytes = 4 * R * s * V + 4 * R * (s - 1) + 4 * R + 6 * pairs * e + 32 + e;
    }
  }
  if (explain) {
    h.policy.explain = std::string("policy log-probs (TRL selective_log_softmax) over ") + std::to_string(R) + " rows (" +
                       (R == 2 * pairs ? "chosen + rejected concatenated"
                                        : train.objective == Objective::kGrpo || train.objective == Objective::kPpo ? "completions, logits over the last " + std::to_string(s) + " positions"
                                                                                                                : std::string("unpaired")) + "): logits " + std::to_string(ld) +
                       "·rows·s·V" + (fp32_path ? ", kept by gather/logsumexp" : " + saved per-row log_softmax " + std::to_string(lp) + "·rows·(s-1)·V") +
                       (train.objective == Objective::kOrpo ? " + the chosen rows' cross-entropy (ORPO)" : "") +
                       (SftTermRuns(train) ? " + the chosen rows' cross-entropy (TRL's sft term, rpo_alpha)" : "");
  }
  return h;
}

}  // namespace vramplan
