#include "train/logits_loss.h"

#include <algorithm>

#include "format.h"
#include "util/checked_math.h"
#include "units.h"

namespace vramplan {

LossHead ComputeLossHead(const TrainConfig& train, const FrameworkConfig& fw, const PrecisionModel& prec,
                         int64_t V, int64_t h, bool lm_head_trainable, bool upcast, bool explain, bool outputs_fp32) {
  LossHead head;
  const int64_t b = train.micro_batch_size, s = train.seq_len, T = b * s;
  // accelerate's convert_outputs_to_fp32 (accelerate/utils/operations.py convert_to_fp32: `.float()`
  // on every fp16 / bf16 tensor of the returned outputs) when the model returns 16-bit logits: the
  // copy is made after the wrapped forward (and the loss inside it) returned, so the loss's own
  // transients are gone and what it saved is alive, with `alive_bytes` beyond that (the returned
  // logits when the loss did not save them, the loss scalar). The copy is not on the loss's autograd
  // path; it is dropped with the outputs unless the caller keeps them, then it is what is kept.
  auto convert_outputs = [&](int64_t alive_bytes) {
    const int64_t copy = checked::Mul(4, T, V);
    head.keep_outputs_bytes = copy;
    if (copy + alive_bytes <= head.forward_extra_bytes) return;  // the loss's own moment is higher
    head.forward_extra_bytes = copy + alive_bytes;
    if (explain) head.explain += " + accelerate's fp32 copy of the returned logits 4·b·s·V after the forward (convert_outputs_to_fp32)";
  };
  const int64_t logits_bytes = prec.matmul * T * V;  // lm_head output dtype
  // transformers >= 4.46: the Trainer passes num_items_in_batch (Trainer.get_batch_samples: a 0-dim
  // int64 tensor, the step's label tokens) and fixed_cross_entropy divides the summed loss by it:
  // DivBackward0 saves the divisor; the quotient is one more fp32 scalar, and on CPU TensorIterator
  // also casts the int64 divisor to fp32 (a CUDA kernel casts on the fly).
  constexpr int64_t kItemsDivisorBytes = 8;
  const int64_t division_bytes = fw.device == Device::kCpu ? 8 : 4;
  const bool logits_fp32 = prec.matmul == 4;
  switch (train.loss) {
    case LossImpl::kStandard: {
      if (!upcast) {
        // No .float() (transformers <= 4.45 GPT-2; remote-code models such as Qwen1): the shifted
        // copy and the log-probs stay in the logits dtype (autocast runs cross_entropy in fp32: an
        // fp32 cast of the shifted logits). Without the shift copy the labels are shifted instead.
        const bool copy = fw.loss_shift_logits_copy;
        const int64_t shifted = copy ? b * (s - 1) * V : T * V;
        const int64_t lg = prec.matmul;
        const bool cast = prec.autocast || prec.autocast16;  // cross_entropy is on autocast's fp32 list
        const int64_t q = cast ? 4 : lg;
        const int64_t target = copy ? (b > 1 ? 8 * b * (s - 1) : 0) : 8 * T;
        head.saved_bytes = q * shifted + target + q;
        head.forward_extra_bytes = lg * T * V + (copy && b > 1 ? lg * shifted : 0) + (cast ? 4 * shifted : 0) + q;
        head.backward_extra_bytes = 2 * q * shifted - target + q;
        head.keep_outputs_bytes = lg * T * V;
        if (explain) head.explain = std::string("logits in the compute dtype") + (copy ? " + shifted copy" : "") + " + log-probs in " + (q == 4 ? "fp32 (autocast)" : "the logits dtype") + " (no .float() upcast: GPT-2 <= 4.45, remote-code models)";
        // The output holds the 16-bit logits; the shifted copy and cross_entropy's fp32 cast are gone.
        if (outputs_fp32 && lg != 4) convert_outputs(lg * T * V);
      } else if (fw.loss_shift_logits_copy) {
        // transformers 4.44: fp32 logits (the 16-bit output is dropped), a contiguous copy of the
        // shifted logits when b > 1, log_softmax output (saved), target copy when b > 1.
        const int64_t shifted = b * (s - 1) * V;
        head.saved_bytes = 4 * shifted + (b > 1 ? 8 * b * (s - 1) : 0) + 4;
        head.forward_extra_bytes = 4 * T * V + (b > 1 ? 4 * shifted : 0) + 4;
        head.backward_extra_bytes = 8 * shifted - (b > 1 ? 8 * b * (s - 1) : 0) + 4;
        head.keep_outputs_bytes = 4 * T * V;
        if (explain) head.explain = "fp32 logits 4·b·s·V + shifted copy 4·b·(s-1)·V + log-probs 4·b·(s-1)·V (transformers <= 4.45)";
        // The returned logits are fp32 already: accelerate's convert_outputs_to_fp32 copies nothing.
      } else if (fw.loss_function_shift_copy) {
        // transformers 4.46-4.48 ForCausalLMLoss (loss/loss_utils.py before PR #35646): the output
        // keeps the 16-bit logits, the loss upcasts them (.float(), alive until it returns), copies
        // the shifted fp32 logits (.contiguous(): a copy when b > 1; for b = 1 the slice is already
        // contiguous) and the shifted labels (b > 1), and saves the log-probs over b·(s-1) rows
        // (measured: HL05-HL09 of measured_cpu_hf_loss.json).
        const int64_t shifted = b * (s - 1) * V;
        const int64_t target = b > 1 ? 8 * b * (s - 1) : 0;
        head.saved_bytes = 4 * shifted + target + 4 + kItemsDivisorBytes;
        head.forward_extra_bytes = logits_bytes + (logits_fp32 ? 0 : 4 * T * V) + (b > 1 ? 4 * shifted : 0) + 4 + division_bytes;
        // At the log-softmax's backward: the log-probs and two fp32 gradients of their size, the
        // loss's scalars; the labels and the divisor are released.
        head.backward_extra_bytes = 12 * shifted + 8 - head.saved_bytes;
        head.keep_outputs_bytes = logits_bytes;
        if (explain) head.explain = std::string("logits ") + (logits_fp32 ? "fp32 4" : "16-bit 2") + "·b·s·V" +
                       (logits_fp32 ? "" : " + fp32 upcast 4·b·s·V") + (b > 1 ? " + shifted copy 4·b·(s-1)·V" : "") +
                       " + log-probs 4·b·(s-1)·V (ForCausalLMLoss, transformers 4.46-4.48)";
        if (outputs_fp32 && !logits_fp32) convert_outputs(logits_bytes);
      } else {
        // ForCausalLMLoss (>= 4.49): output logits (compute dtype) + fp32 copy + saved log-probs; the
        // labels padded by one column, their shifted slice made contiguous: a copy (saved) when b > 1,
        // for b = 1 a view of the padded labels, which are then what is saved (measured: HL01-HL04).
        const int64_t target = b > 1 ? 8 * T : 8 * (T + 1);
        head.saved_bytes = 4 * T * V + target + 4 + kItemsDivisorBytes;
        head.forward_extra_bytes = logits_bytes + (logits_fp32 ? 0 : 4 * T * V) + (b > 1 ? 8 * b * (s + 1) : 0) + 4 + division_bytes;
        head.backward_extra_bytes = 12 * T * V + 8 - head.saved_bytes;
        head.keep_outputs_bytes = logits_bytes;
        if (explain) head.explain = std::string("logits ") + (logits_fp32 ? "fp32 4" : "16-bit 2") + "·b·s·V" +
                       (logits_fp32 ? "" : " + fp32 upcast 4·b·s·V") + " + log-probs 4·b·s·V (ForCausalLMLoss)";
        // The output holds the 16-bit logits beside the saved log-probs; the upcast and the padded
        // labels are gone.
        if (outputs_fp32 && !logits_fp32) convert_outputs(logits_bytes);
      }
      break;
    }
    case LossImpl::kChunked: {
      // torchtune CEWithChunkedOutputLoss (8 chunks), compiled as in the recipes: each chunk's
      // cross-entropy keeps its 16-bit logits and recomputes the fp32 log-softmax in backward.
      const int64_t chunk = (T * V + 7) / 8;
      head.saved_bytes = logits_bytes + 8 * T + 4;
      head.forward_extra_bytes = 2 * 4 * chunk + 4;
      head.backward_extra_bytes = 3 * 4 * chunk;
      head.keep_outputs_bytes = 0;
      if (explain) head.explain = "chunked CE (8 chunks, compiled): 16-bit logits kept + one chunk's fp32 upcast and log-softmax";
      break;
    }
    case LossImpl::kUnsloth: {
      // unsloth (unslothai/unsloth c069555): models/llama.py CausalLM_fast_forward keeps the logits in
      // the lm_head's dtype (logits.to(config.torch_dtype), no .float()) and builds shift_labels =
      // torch.hstack((labels[..., 1:], extra_ignored_labels[:b])), a new int64 b·s;
      // kernels/cross_entropy_loss.py fast_cross_entropy_loss runs Fast_CrossEntropyLoss.apply(
      // logits.view(b*s, V), labels.view(-1)), then n_items = torch.count_nonzero(labels != -100) and
      // loss.sum() / n_items. Fast_CrossEntropyLoss.forward allocates fp32 losses and logsumexp per row
      // (vocabularies > 65536: one logsumexp per 65536-wide chunk, reduced by torch.logsumexp) and
      // saves (logits, logsumexp, labels); DivBackward0 saves n_items (int64, 8 B). Measured: the UL
      // rows of measured_cpu_unsloth_loss.json (measure_unsloth_loss.py).
      const int64_t chunks = std::max<int64_t>(1, CeilDiv(V, 65536));
      head.saved_bytes = logits_bytes + 4 * T + 8 * T + 8;
      // The loss's moment is `labels != -100` (a bool per token) beside the fp32 losses, after the
      // Function returned and before count_nonzero makes n_items (counted in `saved`, not alive yet);
      // on the CPU the Python scalar -100 is wrapped into an 8-B int64 tensor (on CUDA it stays on
      // the host). With vocabulary chunks, the per-chunk logsumexp and its reduction.
      const bool on_cpu = fw.device == Device::kCpu;
      head.forward_extra_bytes = std::max(4 * T + T + (on_cpu ? 8 : 0), chunks > 1 ? 4 * T + 4 * T * chunks : 0) - 8;
      // Backward: _cross_entropy_backward writes dloss·(softmax - onehot) into the saved logits and
      // returns them (dlosses is loss.sum()'s gradient expanded: a view, no memory). The head's backward
      // moment is then the lm_head's MmBackward0 on those logits: the input gradient (b·s·h in the
      // matmul dtype), and, when the lm_head trains, its weight gradient (summed into the gradient
      // counted with the gradients); the loss's logsumexp, labels and n_items are released by then.
      // On the CPU the loss and the root gradient (ones_like, 4 B each) are alive beside it.
      head.backward_extra_bytes = prec.matmul * T * h - (4 * T + 8 * T + 8) + (on_cpu ? 8 : 0) +
                                  (lm_head_trainable ? prec.matmul * V * h : 0);  // mm's dW, then the .grad
      head.keep_outputs_bytes = 0;  // the output's logits are the saved logits
      if (explain) head.explain = std::string("unsloth fast cross-entropy: ") + (logits_fp32 ? "fp32" : "16-bit") +
                     " logits kept, fp32 losses + logsumexp per token" + (chunks > 1 ? " (" + std::to_string(chunks) + " vocabulary chunks)" : "") +
                     ", gradient written into the logits";
      // accelerate's wrapper copies the returned logits after the forward returned: the saved set
      // (logits included) and the loss scalar are alive; the final norm's output, a local of the
      // forward, is gone (train_step.cpp pushes this as its own moment: convert_moment_bytes).
      if (outputs_fp32 && !logits_fp32) {
        head.keep_outputs_bytes = checked::Mul(4, T, V);
        head.after_forward_bytes = checked::Mul(4, T, V) + 4;
        if (explain) head.explain += " + accelerate's fp32 copy of the returned logits 4·b·s·V after the forward (convert_outputs_to_fp32)";
      }
      break;
    }
    case LossImpl::kFusedLinear: {
      // Liger LigerFusedLinearCrossEntropyFunction (linkedin/Liger-Kernel ead96b6,
      // src/liger_kernel/ops/fused_linear_cross_entropy.py, fused_linear_cross_entropy_forward;
      // reduction "mean", accum_dtype None), reached through LigerForCausalLMLoss
      // (transformers/model/loss_utils.py): labels padded with ignore_index (int64 b·(s+1)) and
      // shifted (.contiguous(), int64 b·s); grad_input = zeros_like(input), grad_weight =
      // zeros_like(weight) when the lm_head trains, loss_1d (fp32 per token), target != ignore_index
      // (bool per token). Per chunk of next_pow2(ceil(T / ceil(V / h))) rows: the logits in the
      // matmul dtype, the loss kernel writes their gradient in place, grad_input[rows] = grad @ W
      // (a chunk·h product, copied), grad_weight += mm(grad^T, x).float(). It saves grad_input and
      // grad_weight for backward, nothing else (no logits, no labels). Measured: the LG rows of
      // measured_cpu_kernels.json (the Triton kernels emulated by measure_liger.py).
      const int64_t inc = std::max<int64_t>(1, CeilDiv(V, h));
      int64_t rows = std::max<int64_t>(1, CeilDiv(T, inc));
      int64_t pow2 = 1;
      while (pow2 < rows) pow2 *= 2;
      rows = std::min(pow2, T);
      const int64_t grad_weight = lm_head_trainable ? prec.weight * V * h : 0;
      head.saved_bytes = prec.residual * T * h + grad_weight;
      // labels[..., 1:] of one row is contiguous already: .contiguous() copies only when b > 1 (LG05).
      const int64_t labels = 8 * b * (s + 1) + (b > 1 ? 8 * T : 0), per_token = 4 * T + T;
      int64_t chunk = prec.matmul * rows * h;  // grad_input's chunk product
      if (lm_head_trainable) {
        const int64_t upcast_copy = prec.matmul == 4 ? 0 : 4 * V * h;  // .float() of the mm (the same tensor in fp32)
        chunk = std::max(chunk, prec.matmul * V * h + upcast_copy);
        // `grad_weight +=` an fp32 product into a 16-bit gradient: on the CPU TensorIterator casts
        // the 16-bit operand to fp32 and computes into an fp32 temporary (cast_common_dtype_to_outputs,
        // CPU only); CUDA's kernels read and write mixed dtypes (measured: LG03, add_ > aten::to).
        if (fw.device == Device::kCpu && upcast_copy > 0) chunk = std::max(chunk, upcast_copy + 8 * V * h);
      }
      head.forward_extra_bytes = labels + per_token + prec.matmul * rows * V + chunk;
      head.backward_extra_bytes = 0;
      if (explain) head.explain = "fused linear cross-entropy (Liger): chunks of " + WithCommas(rows) +
                     " tokens; keeps grad_input b·s·h" + (lm_head_trainable ? " and grad_W V·h" : "") + " from forward to backward";
      break;
    }
    case LossImpl::kCce: {
      // Apple's Cut Cross Entropy as unsloth 2024.12 calls it (unslothai/unsloth e0908e0
      // models/llama.py CausalLM_fast_forward -> unslothai/unsloth-zoo 3dcbc419 loss_utils.py
      // fused_linear_cross_entropy: linear_cross_entropy(hidden_states, lm_head.weight, labels,
      // shift=True, filter_eps="auto", reduction "sum"), then loss / num_items_in_batch), read in
      // apple/ml-cross-entropy 1f3ebdb (2024-12-09). No logits, no lm_head module: the Function takes
      // the final norm's output e (b·s·h, saved as is: contiguous already) and the weight c.
      //   forward, cce.py cce_linear_cross_entropy: utils.py _build_flat_valids ((labels[..., 1:] !=
      //   -100).nonzero() int64 N×2, .to(int32) N×2, .sum(1) -> int64 N; N = b·(s-1) valid tokens);
      //   cce_lse_forward.py cce_lse_forward_kernel: lse fp32 N, locks uint32 cdiv(N,128), logit_avg
      //   fp32 V (a gradient is needed and filter_eps is set); indexed_dot.py
      //   indexed_neg_dot_forward_kernel: fp32 N, nll = neg_dot.add_(lse), nll.sum();
      //   save_for_backward(e, c, lse, targets (a view of the labels), valids, logit_avg).
      //   backward: vocab_ordering = argsort(logit_avg).to(int32) (4·V); cce_backward.py
      //   cce_backward_kernel: de = zeros_like(e) (b·s·h, every row), dc = zeros_like(c) (V·h, also
      //   when the lm_head is frozen: the engine drops it), de_locks / dc_locks int32 (cdiv(N,nd)·nd,
      //   cdiv(V,nd)·nd; nd = cdiv(h,64)). Later versions (24fbe4b, 2025-03; d42911f) allocate de / dc
      //   only when e / c need a gradient; accum_e_fp32 / accum_c_fp32 (off by default) make them fp32
      //   (Triton >= 3.2) or add 16-bit Kahan compensation buffers dec / dcc (older Triton): not modeled.
      // Every label is taken as valid. Measured: measured_cpu_cce.json (measure_cce.py).
      const int64_t N = b * (s - 1), nd = std::max<int64_t>(1, CeilDiv(h, 64));
      const int64_t e_bytes = prec.residual * T * h;  // the norm's output, kept by the Function
      const int64_t small_saved = 4 * N + 8 * N + 4 * V;  // lse, valids, logit_avg
      // loss / num_items_in_batch with a Python int: on the CPU the wrapped int64 scalar is a tensor that
      // DivBackward0 saves (8 B); on CUDA it stays a CPU scalar.
      head.saved_bytes = e_bytes + small_saved + (fw.device == Device::kCpu ? 8 : 0);
      // Forward moments beyond the saved set: nonzero's int64 N×2 and its int32 copy (24·N, before
      // lse, valids and logit_avg exist); the lse kernel's locks; the neg-dot output (fp32 N) and the sum.
      head.forward_extra_bytes = std::max({24 * N - small_saved, 4 * CeilDiv(N, 128), 4 * N + 4});
      // Backward: the incoming gradient (grad_out, 4 B), vocab_ordering, de, dc and the locks beside
      // the saved set (measured: CC01 / CC04, peak at cce_backward_kernel's dc_locks new_zeros).
      head.backward_extra_bytes = 4 + 4 * V + e_bytes + prec.weight * V * h + 4 * CeilDiv(N, nd) * nd + 4 * CeilDiv(V, nd) * nd;
      head.keep_outputs_bytes = 0;  // EMPTY_LOGITS
      if (explain) head.explain = "Cut Cross Entropy (Apple, as unsloth 2024.12 calls it): logsumexp per token in the forward, "
                                  "keeps the hidden states b·s·h; backward recomputes the logits and allocates de b·s·h and dc V·h";
      break;
    }
  }
  return head;
}

}  // namespace vramplan
