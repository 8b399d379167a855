#include "train/activations.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "util/checked_math.h"

namespace vramplan {
namespace {

int64_t CeilDivBytes(int64_t a, int64_t b) { return (a + b - 1) / b; }

// A layer's modules split by what they read: a few pointers per group, kept inline (ten
// std::vectors here allocated on every layer kind of every estimate, the planner's searches run
// hundreds; docs/planner.md, "Speed"). Past kInline entries it spills to the heap.
template <typename T>
class PtrList {
 public:
  void push_back(const T* p) {
    if (spill_.empty() && size_ < kInline) {
      inline_[size_++] = p;
      return;
    }
    if (spill_.empty()) spill_.assign(inline_.begin(), inline_.begin() + static_cast<std::ptrdiff_t>(size_));
    spill_.push_back(p);
    ++size_;
  }
  const T* const* begin() const { return spill_.empty() ? inline_.data() : spill_.data(); }
  const T* const* end() const { return begin() + size_; }
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  const T* front() const { return *begin(); }
  const T* operator[](size_t i) const { return begin()[i]; }

 private:
  static constexpr size_t kInline = 16;
  std::array<const T*, kInline> inline_{};
  size_t size_ = 0;
  std::vector<const T*> spill_;
};
using LinearGroup = PtrList<LinearSpec>;

// Accumulates the saved bytes of one layer, with per-group dedup of shared input storages.
struct Walker {
  const ActivationContext& ctx;
  const LayerPlan& plan;
  int64_t T;
  LayerSaved out;

  // Checked: a hostile shape's terms arrive saturated (util/checked_math.h) and must not wrap here.
  void Save(int64_t bytes) { out.total_bytes = checked::Add(out.total_bytes, bytes); }

  // RMSNorm (HF LlamaRMSNorm) / LayerNorm on `rows` x `dim`. Returns whether the output needs grad.
  bool Norm(const NormSpec& n, NormKind kind, bool x_req, int64_t rows) {
    out.total_bytes = checked::Add(out.total_bytes, NormSavedBytes(n, kind, x_req, plan.weights_trainable, rows, ctx));
    return x_req || (plan.weights_trainable && n.has_weight);
  }

  // A group of linears that read the same input X (elements per token `in`, element bytes xb).
  // Returns whether any output needs grad.
  // `fused`: unsloth's LoRA_QKV / LoRA_W / LoRA_MLP run the group inside one autograd.Function
  // (unsloth/kernels/fast_lora.py): it saves the group's input X once and the adapters (parameters)
  // but no lora_A output and no scaling scalar (its backward recomputes X @ A); kFusedNothing: the
  // MLP's down projection, whose input h = f * g the Function does not save (rebuilt from e, g).
  enum class Fused { kNo, kInputOnly, kNothing };
  // `input_saved`: an earlier group already saved this same input storage (the MoE router and a
  // shared expert both read the block's hidden_states).
  bool Linears(const LinearGroup& group, bool x_req, int64_t xb, int64_t tokens_per_copy = -1,
               Fused fused = Fused::kNo, bool input_saved = false) {
    if (group.empty()) return x_req;
    if (fused != Fused::kNo) {
      for (const LinearSpec* l : group) {
        if (ctx.quantized_base) out.max_dequant_bytes = std::max(out.max_dequant_bytes, 2 * l->in_features * l->out_features);
      }
      if (fused == Fused::kInputOnly) Save(xb * T * group.front()->in_features);
      return true;
    }
    const PrecisionModel& p = ctx.prec;
    const int64_t rows = tokens_per_copy < 0 ? T : tokens_per_copy;
    bool shared_input_saved = input_saved;
    bool any_out_req = x_req;
    for (const LinearSpec* l : group) {
      const int64_t in = l->in_features;
      const int64_t copies = tokens_per_copy < 0 ? l->copies : 1;  // routed experts: rows already split
      // ... but each expert keeps its own row-independent tensors (scaling scalar, adapter casts).
      const int64_t fixed_copies = tokens_per_copy < 0 ? 1 : l->copies;
      const bool lora = plan.lora && ctx.lora != nullptr && IsLoraTarget(*l, *ctx.lora);
      const bool trains = plan.weights_trainable;
      // A frozen quantized base weight (QLoRA; under torchtune 0.1 only the LoRA-wrapped linears are
      // NF4, the rest stay 16-bit: weights.h IsQuantizedBase).
      const bool frozen_quantized = ctx.quantized_base && !trains && (!ctx.quantize_targets_only || lora);
      any_out_req = any_out_req || trains || lora;
      // mm saves `self` (its input) to compute the weight gradient.
      if (trains) {
        if (p.autocast && xb != 2) {
          Save(2 * rows * in * copies);  // autocast casts the fp32 input per call (not cached)
        } else if (!shared_input_saved) {
          Save(xb * rows * in);
          shared_input_saved = true;
        }
      }
      // mm saves `mat2` (the weight) to compute the input gradient: new memory only when it is a cast.
      if (x_req) {
        if (p.autocast && !frozen_quantized) {
          int64_t cast = 2 * in * l->out_features * l->copies;
          Save(cast);
          out.weight_cast_bytes += cast;
        }
        if (frozen_quantized && !ctx.gptq && ctx.qlora_bits == 8 && !shared_input_saved) {
          Save(xb * rows * in);  // bnb MatMul8bitLt keeps its input
          shared_input_saved = true;
        }
      }
      if (frozen_quantized && ctx.gptq) {
        // auto-gptq QuantLinear, >= kernel_switch_threshold (128) rows: the weight is dequantized in
        // torch (int32 shifts cast to int8/int16, then scales * (w - zeros) in fp16) and
        // torch.matmul(x, weight) saves that fp16 weight when x needs a gradient
        // (auto_gptq/nn_modules/qlinear/qlinear_cuda_old.py, forward). Below 128 rows the CUDA
        // kernel writes into a fresh tensor: nothing saved.
        const int64_t n = in * l->out_features;
        if (rows >= 128) {
          out.max_dequant_bytes = std::max(out.max_dequant_bytes, (4 + (ctx.qlora_bits == 8 ? 2 : 1)) * n);
          if (x_req) Save(2 * n * copies);
        }
      } else if (frozen_quantized && ctx.torchao) {
        // torchao LinearNF4: F.linear(x, weight.to(x.dtype)) and grad @ weight.to(...) rebuild the
        // weight with get_original_weight: two int64 index tensors (4n B each), two bf16 halves and
        // their scaled copies (n B each), the stacked result (2n B) and the scalers: 14n + n/32 B at
        // the stack (torchao/dtypes/nf4tensor.py, v0.1 through v0.5). Nothing extra is saved.
        // Under torch.compile the chain is one traced graph of element-wise and indexing ops on
        // the NF4Tensor's inner tensors (NF4Tensor is a traceable subclass: __tensor_flatten__), which
        // inductor fuses into one kernel writing the bf16 weight: 2n B (docs/parallel.md, "torchao
        // NF4 under FSDP and torch.compile"). The only effect of torch.compile modeled.
        const int64_t n = in * l->out_features;
        out.max_dequant_bytes = std::max(out.max_dequant_bytes, ctx.torchao_compiled ? 2 * n : 14 * n + n / 32);
      } else if (frozen_quantized) {
        out.max_dequant_bytes = std::max(out.max_dequant_bytes, 2 * in * l->out_features);
        // bnb Linear4bit.forward: x = x.to(self.compute_dtype) (a new 16-bit tensor per linear when
        // x is fp32), then MatMul4Bit.forward keeps it, `ctx.tensors = (A, B)`, whenever A needs a
        // gradient (bitsandbytes/nn/modules.py, autograd/_functions.py, 0.43.1). It is a ctx
        // attribute, not save_for_backward, so nothing dedups it against autocast's cast in lora_A.
        if (x_req && Bnb4FollowsInput(ctx, xb)) Save(2 * rows * in * copies);
      }
      if (lora) {
        const int64_t r = ctx.lora->rank;
        const bool cast_adapters = p.autocast || (p.autocast16 && ctx.adapter_bytes == 4);
        const int64_t ab = cast_adapters ? 2 : ctx.adapter_bytes;  // adapter compute dtype
        const bool dropout = ctx.lora->dropout > 0;
        for (int64_t c = 0; c < copies; ++c) {
          // lora_A saves x.to(adapter dtype): the base input itself when the dtypes match.
          if (dropout) {
            Save(rows * in);            // dropout mask (bool)
            Save(ab * rows * in);       // dropped input, saved by lora_A
          } else if (cast_adapters || ctx.adapter_bytes != xb) {
            Save(ab * rows * in);       // a separate cast per adapter
          } else if (!shared_input_saved) {
            Save(xb * rows * in);
            shared_input_saved = true;
          }
          Save(ab * rows * r);  // lora_A output, saved by lora_B
          Save(8 * fixed_copies);  // `* scaling`: a wrapped float64 scalar
          if (ctx.lora->use_dora) {
            // DoraLinearLayer.forward (peft/tuners/lora/dora.py): (mag_norm_scale - 1) * base_result
            // and mag_norm_scale * lora_result both need the other operand for the magnitude's
            // gradient, so the base output (matmul dtype) and the LoRA output (adapter compute
            // dtype) stay saved. With dropout the base result is recomputed by F.linear on the
            // dropped input (a new output of the same size; a quantized base is dequantized for it
            // and that weight is saved too).
            const int64_t out_f = l->out_features;
            Save(p.matmul * rows * out_f + ab * rows * out_f);
            // The (1, out) factors: magnitude / weight_norm saves weight_norm, the product with
            // lora_result saves mag_norm_scale, and (mag_norm_scale - 1) is saved when the base
            // output needs a gradient (measured: tests/fixtures/training/measured_cpu_dora.json).
            Save(ab * out_f * (x_req ? 3 : 2) * fixed_copies);
            if (dropout && ctx.quantized_base) Save(2 * in * out_f);
            // Transient per adapted linear, in x's dtype after PEFT's cast to the adapter dtype:
            // lora_weight = lora_B(lora_A(eye(in))).T (eye kept by its graph), the base weight cast
            // to that dtype when it differs, then weight + scaling * lora_weight for the norm.
            const int64_t stored = ctx.adapter_bytes;
            const int64_t cast_weight = ab != p.weight ? ab * in * out_f : 0;
            const int64_t dora_transient = stored * in * in + stored * in * out_f + cast_weight + 2 * ab * in * out_f +
                                           (ctx.quantized_base ? 2 * in * out_f : 0);
            out.max_dequant_bytes = std::max(out.max_dequant_bytes, dora_transient);
          }
          if (cast_adapters) {
            int64_t casts = (2 * r * l->out_features + (x_req ? 2 * r * in : 0)) * fixed_copies;
            Save(casts);
            out.weight_cast_bytes += casts;
            out.adapter_cast_bytes += 2 * r * (l->out_features + in) * fixed_copies;
            out.adapter_cast_unsaved_bytes += x_req ? 0 : 2 * r * in * fixed_copies;
          }
        }
      }
    }
    last_input_saved = shared_input_saved;
    return any_out_req;
  }
  bool last_input_saved = false;  // the last Linears() group kept its shared input storage
};

}  // namespace

bool Bnb4FollowsInput(const ActivationContext& ctx, int64_t input_bytes) {
  return ctx.quantized_base && !ctx.gptq && !ctx.torchao && ctx.qlora_bits == 4 && ctx.prec.autocast && input_bytes > 2;
}

int64_t NormSavedBytes(const NormSpec& norm, NormKind kind, bool x_req, bool weight_trainable, int64_t rows,
                       const ActivationContext& ctx, int64_t input_bytes) {
  const int64_t in_bytes = input_bytes > 0 ? input_bytes : ctx.prec.residual;
  const int64_t dim = norm.dim;
  const bool w_trains = weight_trainable && norm.has_weight;
  int64_t saved = 0;
  if (kind == NormKind::kRmsNorm && ctx.kernels != LayerKernels::kPytorch) {
    // unsloth Fast_RMS_Layernorm.forward / Liger LigerRMSNormFunction.forward:
    // ctx.save_for_backward(X, W, r): the input itself (no copy) and one fp32 rstd per row; the
    // weight is a parameter. Saved whenever the Function is recorded (an input needs a gradient).
    if (x_req || w_trains) saved += ctx.prec.residual * rows * dim + 4 * rows;
  } else if (kind == NormKind::kRmsNorm) {
    // hidden.to(float32); var = x32.pow(2).mean(-1); x32 * rsqrt(var + eps); weight * y.to(in_dtype)
    if (x_req) {
      saved += 4 * rows * dim;                                  // x32 (pow self, mul self)
      if (ctx.norm_saves_squared) saved += 4 * rows * dim;      // mean.dim saved x32^2 (PyTorch <= 2.1)
      saved += 4 * rows;                                        // rsqrt result
    }
    if (w_trains) saved += in_bytes * rows * dim;               // y cast to the input dtype (mul other)
  } else {
    // native_layer_norm saves input, mean and rstd when anything needs grad; mean/rstd are fp32 on
    // CUDA (acc type) and in the input dtype on CPU (measured).
    const int64_t stat = ctx.cpu ? ctx.prec.residual : 4;
    if (x_req || w_trains) saved += ctx.prec.residual * rows * dim + 2 * stat * rows;
  }
  return saved;
}

// What the fused kernels of a recurrent mixer save for backward, per token, beyond the inputs of
// the mixer's linears (Walker::Linears counts those). `dt`: the activation dtype bytes.
//   Mamba-2 (transformers NemotronHMamba2Mixer / BambaMixer / FalconH1Mixer cuda_kernels_forward in
//     training: mamba_ssm ops/triton/ssd_combined.py MambaSplitConv1dScanCombinedFn.forward saves
//     zxbcdt (the in_proj output: 2 inner + 2 groups state + heads), out_x (inner) and the gated
//     norm's rstd (fp32, one per group); the conv output is recomputed in backward);
//   Gated DeltaNet (modeling_qwen3_next.py Qwen3NextGatedDeltaNet with fla and causal-conv1d:
//     causal_conv1d_fn saves its input (conv channels); fla ops/gated_delta_rule/chunk.py
//     ChunkGatedDeltaRuleFunction saves q, k (repeated to the value heads), v, g and beta (fp32 per
//     value head) and the chunk's A (fp32, 64 per value head); FusedRMSNormGated saves its input,
//     the gate and rstd);
//   Kimi Delta Attention (remote modeling_kimi.py KimiDeltaAttention with fla, default
//     disable_recompute=False): the three ShortConvolutions save their inputs (3 x heads x
//     head_dim); f_b_proj / g_b_proj their low-rank inputs (head_dim each); fla ops/kda/gate.py's
//     fused gate its input (heads x head_dim) and the sigmoid of b_proj its fp32 output (beta,
//     heads); fla ops/kda/chunk.py ChunkKDAFunction.forward saves the l2-normed q and k, v (heads x
//     head_dim each), q_rstd / k_rstd (fp32, heads each), g_cumsum and the passed fp32 gate (fp32,
//     heads x head_dim each), Aqk and Akk (heads x 64 each, k's dtype: ops/kda/chunk_intra.py
//     chunk_kda_fwd_intra); w, u, qg, kg, v_new and h are recomputed in backward. FusedRMSNormGated
//     saves its input, the gate (heads x head_dim each) and rstd (fp32 per head);
//   Mamba-1 (modeling_jamba.py JambaMambaMixer: causal_conv1d_fn saves x (inner); mamba_ssm
//     selective_scan_fn saves u, delta, z (inner each), B and C (d_state each) and its chunk states,
//     fp32 (2 d_state per inner channel per 2048 tokens), and the dt / B / C RMSNorms their inputs).
static int64_t MixerSavedBytesPerToken(const RecurrentGeometry& r, int64_t dt) {
  switch (r.kind) {
    case MixerKind::kMamba2:
      return dt * (2 * r.inner + 2 * r.groups * r.state_size + r.num_heads) + dt * r.inner + 4 * r.groups;
    case MixerKind::kGatedDeltaNet: {
      const int64_t v = r.num_heads * r.head_dim, qk = 2 * r.num_heads * r.k_head_dim;
      return dt * r.ConvChannels() + dt * (qk + v) + 4 * (2 * r.num_heads + 64 * r.num_heads) + dt * 2 * v + 4 * r.num_heads;
    }
    case MixerKind::kKimiDelta: {
      const int64_t w = r.num_heads * r.head_dim, heads = r.num_heads;
      return dt * (r.ConvChannels() + 2 * r.head_dim + w) + 4 * heads + dt * 3 * w + 4 * (2 * heads + 2 * w) +
             dt * 2 * 64 * heads + dt * 2 * w + 4 * heads;
    }
    case MixerKind::kMamba1:
      return dt * r.inner + dt * (3 * r.inner + 2 * r.state_size) + CeilDivBytes(8 * r.inner * r.state_size, 2048) +
             dt * (r.dt_rank + 2 * r.state_size);
    case MixerKind::kShortConv:
      // Lfm2ShortConv.slow_forward: B * x saves B and x, views of the in_proj output BCx (3 inner:
      // C, a third view, is saved by C * conv_out), nn.Conv1d saves its input Bx (inner), and
      // C * conv_out saves conv_out, a view of the conv's padded output (inner per token plus
      // MixerSavedBytesPerSequence).
      return dt * (3 * r.inner + r.inner + r.inner);
    case MixerKind::kLightning:
      return 0;  // depends on the batch, the block length and the mask: LightningSavedBytes
    case MixerKind::kNone:
      break;
  }
  return 0;
}

// What a recurrent mixer saves once per sequence: Lfm2ShortConv's conv1d(padding = L - 1) output
// is s + L - 1 columns long and conv_out[..., :seqlen] keeps all of it alive.
static int64_t MixerSavedBytesPerSequence(const RecurrentGeometry& r, int64_t dt) {
  return r.kind == MixerKind::kShortConv ? dt * r.inner * (r.conv_kernel - 1) : 0;
}

int64_t LightningSavedBytes(const RecurrentGeometry& r, int64_t dt, bool weight_trainable, const ActivationContext& ctx) {
  // transformers models/minimax/modeling_minimax.py MiniMaxLightningAttention.forward (commit
  // 000c33fd), training path (no cache: the loop over blocks of block_size tokens), eager torch ops.
  // Checked to the byte against a port of that forward that lists every saved storage
  // (tests/fixtures/training/minimax_lightning_saved.py, tests/core/minimax_test.cpp).
  const int64_t b = ctx.batch, s = ctx.seq, T = ctx.Tokens();
  const int64_t heads = r.num_heads, d = r.head_dim, w = heads * d, bs = std::max<int64_t>(1, r.block_size);
  const int64_t blocks = (s + bs - 1) / bs, tail = s % bs, first = std::min(bs, s);
  // silu(qkv_proj(x)) saves its input (3w). The block loop's matmuls save q, k and v: slices of the
  // silu output viewed (b, heads, s, d), which reshape() copies for bmm unless b == 1 (q, k and v
  // once each, v twice: two matmuls); masked_fill (the 2-D attention_mask MiniMaxModel.forward
  // passes to these layers) makes v a contiguous tensor both matmuls view. b == 1: the silu output
  // (3w) stays alive through the views, plus the masked v (w); b > 1: the copies of q and k (2w)
  // and v (w masked, else 2w). Plus q * query_decay and k * key_decay (2w).
  const int64_t loop_widths = 5 + ((b == 1) == ctx.attention_mask ? 1 : 0);
  int64_t per_token = dt * (3 * w + loop_widths * w);
  per_token += dt * 2 * w;                   // sigmoid(output_gate(x)) saves its output; the gate product saves the normed output
  if (ctx.attention_mask) per_token += 1;    // masked_fill's bool mask
  // Per sequence: each block's decayed scores (Q K^T * diagonal_decay, heads x n x n), the K^T V
  // state each block's inter matmul reads (heads x d x d; the first is the zeros it starts from),
  // less block 0's q * query_decay (its matmul's other operand, that zero state, needs no gradient).
  const int64_t per_sequence = dt * (heads * ((s / bs) * bs * bs + tail * tail) + blocks * heads * d * d - heads * d * first);
  // exp(-slope_rate * block length): one (heads, 1, 1) tensor per block after the first, batch-wide.
  const int64_t block_decays = dt * heads * std::max<int64_t>(0, blocks - 1);
  // self.norm (MiniMaxRMSNorm over heads x head_dim) on the concatenated output, plain torch ops.
  ActivationContext torch_ops = ctx;
  torch_ops.kernels = LayerKernels::kPytorch;
  NormSpec norm;
  norm.dim = w;
  const int64_t norm_bytes = NormSavedBytes(norm, NormKind::kRmsNorm, true, weight_trainable, T, torch_ops, dt);
  return checked::Add(checked::Add(checked::Mul(T, per_token), checked::Mul(b, per_sequence)), block_decays + norm_bytes);
}

LayerSaved ComputeLayerSaved(const LayerKind& kind, const LayerPlan& plan, const ActivationContext& ctx) {
  const PrecisionModel& p = ctx.prec;
  const int64_t b = ctx.batch, s = ctx.seq, T = ctx.Tokens();
  Walker w{ctx, plan, T, LayerSaved{}};
  const AttentionGeometry& g = kind.attention;
  const int64_t a = g.num_heads, d = g.head_dim, dv = g.v_head_dim;
  const NormKind nk = ctx.norm_kind;

  // Split the layer's modules by what they read.
  LinearGroup attn_in, attn_second, attn_out, mlp_in, mlp_down, router, experts_in, experts_down,
      shared_in, shared_down, shared_scale;
  for (const auto& l : kind.linears) {
    if (IsNoGradIndexer(l.slot)) continue;  // runs under no_grad: nothing saved (its scratch: indexer_transient_bytes)
    if (l.role == ModuleRole::kAttention) {
      if (IsAttentionOutput(l.slot)) attn_out.push_back(&l);
      else if (IsMlaSecondStage(l.slot)) attn_second.push_back(&l);
      else attn_in.push_back(&l);
    } else if (l.role == ModuleRole::kRouter) {
      router.push_back(&l);
    } else if (l.role == ModuleRole::kExperts) {
      (IsDownProjection(l.slot) ? experts_down : experts_in).push_back(&l);
    } else if (l.role == ModuleRole::kSharedExperts) {
      if (l.slot == LinearSlot::kSharedExpertScale) shared_scale.push_back(&l);
      else (IsDownProjection(l.slot) ? shared_down : shared_in).push_back(&l);
    } else {
      (IsDownProjection(l.slot) ? mlp_down : mlp_in).push_back(&l);
    }
  }
  // Norm roles: pre-attention, pre-MLP, and "sandwich" norms on block outputs (Gemma 2/3, OLMo 2).
  const NormSpec* pre_attn = nullptr;
  const NormSpec* pre_mlp = nullptr;
  PtrList<NormSpec> other_norms, sandwich;
  for (const auto& n : kind.norms) {
    switch (n.slot) {
      case NormSlot::kPreAttention: pre_attn = &n; break;
      case NormSlot::kPreMlp: pre_mlp = &n; break;
      case NormSlot::kPostAttention:
      case NormSlot::kPostMlp: sandwich.push_back(&n); break;
      default: other_norms.push_back(&n); break;
    }
  }

  // unsloth's LoRA Functions (unsloth/kernels/fast_lora.py, patched in by FastLanguageModel.get_peft_model
  // when the layer's q/k/v, o or gate/up/down all carry an adapter, without dropout, bias or DoRA):
  // LoRA_QKV saves X; LoRA_W saves X; LoRA_MLP saves X, e = gate(X), g = up(X).
  auto all_adapted = [&](const LinearGroup& group, std::initializer_list<LinearSlot> slots) {
    if (ctx.kernels != LayerKernels::kUnsloth || !plan.lora || plan.weights_trainable || ctx.lora == nullptr ||
        ctx.lora->dropout > 0 || ctx.lora->use_dora || group.size() != slots.size())
      return false;
    for (LinearSlot slot : slots) {
      bool found = false;
      for (const LinearSpec* l : group) found = found || (l->slot == slot && l->copies == 1 && IsLoraTarget(*l, *ctx.lora));
      if (!found) return false;
    }
    return true;
  };
  using Fused = Walker::Fused;
  const Fused fused_qkv = attn_second.empty() && all_adapted(attn_in, {LinearSlot::kQ, LinearSlot::kK, LinearSlot::kV}) ? Fused::kInputOnly : Fused::kNo;
  const Fused fused_o = all_adapted(attn_out, {LinearSlot::kO}) ? Fused::kInputOnly : Fused::kNo;
  const bool gated_silu = kind.mlp.kind == MlpKind::kGated && kind.mlp.num_experts == 0 && kind.mlp.activation == ActivationFn::kSilu;
  w.out.unsloth_mlp = gated_silu && all_adapted(mlp_in, {LinearSlot::kGate, LinearSlot::kUp}) && all_adapted(mlp_down, {LinearSlot::kDown});
  // Liger's LigerSwiGLUMLP: down_proj(LigerSiLUMulFunction.apply(gate_proj(x), up_proj(x))).
  w.out.liger_swiglu = gated_silu && ctx.kernels == LayerKernels::kLiger;

  // ---- attention block
  bool x_req = plan.input_requires_grad;
  bool n1_req = pre_attn != nullptr ? w.Norm(*pre_attn, nk, x_req, T) : x_req;
  const int64_t xb = p.residual;
  w.out.pre_attn_norm_bytes = w.out.total_bytes;
  bool qkv_req = w.Linears(attn_in, n1_req, xb, -1, fused_qkv);
  if (plan.weights_trainable && !plan.lora && attn_second.empty() && !attn_in.empty() && !ctx.quantized_base) {
    // The shared 16/32-bit input (one storage) or, under autocast, q_proj's own input and weight casts.
    const LinearSpec& q = *attn_in.front();
    w.out.last_qkv_saved_bytes = p.autocast && xb != 2 ? 2 * T * q.in_features + (n1_req ? 2 * q.in_features * q.out_features : 0)
                                                       : xb * T * q.in_features;
  }
  if (!attn_second.empty()) {
    // MLA: q_a / kv_a outputs go through their own RMSNorm before the second-stage projections.
    for (const NormSpec* n : other_norms) {
      if (n->slot == NormSlot::kMlaQA || n->slot == NormSlot::kMlaKvA) w.Save(NormSavedBytes(*n, NormKind::kRmsNorm, qkv_req, plan.weights_trainable, T, ctx));
    }
    qkv_req = w.Linears(attn_second, qkv_req || plan.weights_trainable, p.matmul) || qkv_req;
  }
  for (const NormSpec* n : other_norms) {
    const NormSlot ns = n->slot;
    if (ns == NormSlot::kQPerHead || ns == NormSlot::kKPerHead || ns == NormSlot::kQ || ns == NormSlot::kK) {
      // RMSNorm on q and k: per head (Qwen3, Gemma 3, Phi), or over all heads together (OLMo 2).
      // Their input is q_proj's / k_proj's output, in the matmul dtype: under autocast
      // `self.weight * hidden_states.to(input_dtype)` saves a bf16 y (Qwen3MoeRMSNorm.forward,
      // transformers v4.51; measured: Q3MOE03 in measured_cpu_qwen_moe.json).
      int64_t rows = ns == NormSlot::kQPerHead ? T * a : ns == NormSlot::kKPerHead ? T * g.num_kv_heads : T;
      w.Save(NormSavedBytes(*n, NormKind::kRmsNorm, qkv_req, plan.weights_trainable, rows, ctx, p.matmul));
    }
  }
  // Which of q, k, v need a gradient (layer 0 of a LoRA-on-q,v model: k does not).
  auto out_req = [&](LinearSlot slot) {
    if (!qkv_req) return false;
    if (n1_req || plan.weights_trainable || !attn_second.empty()) return true;
    if (!plan.lora || ctx.lora == nullptr) return false;
    for (const LinearSpec* l : attn_in) {
      if ((l->slot == slot || l->slot == LinearSlot::kQkv) && IsLoraTarget(*l, *ctx.lora)) return true;
    }
    return false;
  };
  const bool q_req = out_req(LinearSlot::kQ);
  const bool k_req = out_req(LinearSlot::kK);
  const bool v_req = out_req(LinearSlot::kV);
  const bool scores_req = q_req || k_req;
  w.out.qk_require_grad = scores_req;
  const int64_t mm = p.matmul;
  const int64_t heads_kv_saved = ctx.attention == AttentionImpl::kFlash ? g.num_kv_heads : a;
  if (qkv_req && a > 0) {  // a > 0: the layer has softmax attention (not a Mamba / MLP-only block)
    switch (ctx.attention) {
      case AttentionImpl::kEager: {
        if (!scores_req && !g.sinks) {
          // Only v needs a gradient: bmm(probs, v) keeps the probabilities (16-bit copy, or the fp32
          // softmax output itself in fp32).
          w.out.before_scores_bytes = w.out.total_bytes;
          w.Save(checked::Mul(ctx.softmax_fp32 || p.autocast ? (p.half ? 2 : 4) : mm, b, a, s, s));
          w.out.through_attention_bytes = w.out.total_bytes;
          break;
        }
        // matmul(q, k^T) saves q' and k' (repeat_kv'd, reshaped copies), the scale a float64 scalar
        // (Llama's core and gpt-oss's alike); the softmax and what follows differ below.
        // MQA at b = 1: the repeated k/v are expand() views of the kv-head tensors; under autocast the
        // fp32 k_embed is cast (materializing all heads) while the 16-bit v stays a view.
        const bool mqa_views = g.num_kv_heads == 1 && b == 1 && !p.autocast;
        const bool mqa_v_view = g.num_kv_heads == 1 && b == 1;
        const int64_t core_start = w.out.total_bytes;
        w.out.core_input_bytes = QkBytes(p, g.no_rope) * T * (a * d + g.num_kv_heads * d) + mm * T * g.num_kv_heads * dv;
        const int64_t operands_start = w.out.total_bytes;
        if (k_req) w.Save(mm * T * a * d);                           // q' (for k's gradient)
        if (q_req) w.Save(mqa_views ? mm * T * d : mm * T * a * d);  // k' (for q's gradient)
        w.out.scores_operands_bytes = w.out.total_bytes - operands_start;
        // The 1/sqrt(d) scale: a python float wraps into a float64 scalar; GPT-2 divides by a 0-dim
        // tensor in the scores dtype.
        if (scores_req) w.Save(ctx.scale_is_tensor ? mm : 8);
        w.out.before_scores_bytes = w.out.total_bytes;
        if (g.sinks) {
          // gpt-oss's core with attention sinks (activations.h, SinkLogitsBytes): the logits need a
          // gradient when q or k do, or when the sinks themselves train.
          const int64_t e = SinkLogitsBytes(p);
          const bool logits_req = scores_req || plan.weights_trainable;
          if (logits_req) {
            w.Save(checked::Mul(8, b, a, s));         // max(dim=-1)'s int64 indices
            w.Save(checked::Mul(e, b, a, s, s + 1));  // softmax's result, the sink column included
          }
          w.out.through_attention_bytes = w.out.total_bytes;
          if (ctx.attention_dropout > 0) {
            // native_dropout saves its bool mask; matmul(probs, v) keeps the dropped (and cast) copy.
            if (logits_req) w.Save(checked::Mul(b, a, s, s));
            if (v_req) w.Save(checked::Mul(mm, b, a, s, s));
          } else if (v_req && e != mm) {
            w.Save(checked::Mul(mm, b, a, s, s));  // autocast's 16-bit cast of the sliced probabilities
          } else if (v_req && !logits_req) {
            w.Save(checked::Mul(e, b, a, s, s + 1));  // the slice is a view: it keeps softmax's whole result
          }
          if (logits_req) w.Save(mqa_v_view ? mm * T * dv : mm * T * a * dv);  // v', repeat_kv's copy
          w.out.attention_core_bytes = w.out.total_bytes - core_start;
          w.out.attention_transient_bytes = SinkScoresForwardBytes(p, b, a, s, dv) - (logits_req ? checked::Mul(e, b, a, s, s + 1) + checked::Mul(8, b, a, s) : 0);
          break;
        }
        // Llama's core: softmax(dtype=float32) its fp32 result, probs.to(dtype) a 16-bit copy (amp:
        // autocast cast), matmul(probs, v) saves probs and v'.
        // Softmax result: fp32 when the model asks for it (Llama family), else the scores dtype
        // (fp32 under autocast: the fp32 mask promotes the sum).
        const int64_t sm = ctx.softmax_fp32 || p.autocast ? 4 : mm;
        w.Save(checked::Mul(sm, b, a, s, s));
        w.out.through_attention_bytes = w.out.total_bytes;
        if (ctx.attention_dropout > 0) {
          // native_dropout saves its bool mask; bmm(probs, v) then keeps the dropped copy.
          w.Save(checked::Mul(b, a, s, s));
          if (v_req) w.Save(checked::Mul(mm, b, a, s, s));
        } else if (sm != mm && v_req) {
          w.Save(checked::Mul(mm, b, a, s, s));  // probs cast to the value dtype for the second bmm
        }
        w.Save(mqa_v_view ? mm * T * dv : mm * T * a * dv);  // v' (the probabilities need a gradient)
        w.out.attention_core_bytes = w.out.total_bytes - core_start;
        // Forward scratch at the score computation: the scores before softmax and their masked sum.
        w.out.attention_transient_bytes = checked::Mul(p.half ? 6 : 4, b, a, s, s);
        break;
      }
      case AttentionImpl::kSdpa:
      case AttentionImpl::kFlash: {
        w.out.before_scores_bytes = w.out.total_bytes;
        // SDPA / FlashAttention-2 save q, k, v, the output and the fp32 log-sum-exp (b, a, s).
        w.Save(mm * T * a * d);
        w.Save(mm * T * heads_kv_saved * d);
        w.Save(mm * T * heads_kv_saved * dv);
        w.Save(mm * T * a * dv);
        w.Save(4 * b * a * s);
        w.Save(16);  // philox seed/offset
        // A layer whose mask is not plain causal hands SDPA a dense [b, 1, s, s] mask of its own:
        //  * DeepSeek sparse attention: the indexer's top-k selection (transformers
        //    modeling_deepseek_v32.py DeepseekV32Attention.forward: a bool `index_mask` folded into
        //    the attention mask; modeling_glm_moe_dsa.py GlmMoeDsaAttention.forward: torch.full(-inf)
        //    + scatter_ in the query dtype), in every layer at any length;
        //  * sliding-window and chunked layers (Gemma 2/3, Mistral, Cohere2, Llama 4) once the
        //    sequence reaches the window: masking_utils' _ignore_causal_mask_sdpa lets SDPA run
        //    is_causal without a mask only while kv_length < the local size (transformers >= 4.53;
        //    before, Gemma's decoder layers built a sliding copy of the float mask per layer);
        //  * every layer of a padded batch (_ignore_causal_mask_sdpa: a padding mask with zeros is
        //    never skipped): masking_utils' sdpa_mask is a bool [b, 1, s, s] (transformers >= 4.53;
        //    4.36-4.52 built a float mask in the embeddings' dtype, which autocast casts per layer
        //    too, while a pure 16-bit step keeps the one shared tensor: there this counts L - 1 too many).
        // SDPA turns a bool mask into one of the query's dtype (aten/src/ATen/native/transformers/
        // attention.cpp, convert_boolean_attn_mask, before the backend is called; autocast casts a
        // float mask to bf16 as it casts q, k, v), a new tensor per call, and the memory-efficient
        // kernel, the one that takes an arbitrary mask, keeps it for its backward (derivatives.yaml,
        // _scaled_dot_product_efficient_attention: attn_bias is an input of the backward).
        // FlashAttention-2 gets no mask (the window is a kernel argument).
        if (ctx.attention == AttentionImpl::kSdpa && (g.index_n_heads > 0 || SdpaLocalMaskBuilt(g, s) || ctx.padded_sdpa_mask)) w.Save(checked::Mul(mm, b, s, s));
        w.out.through_attention_bytes = w.out.total_bytes;
        break;
      }
    }
  }
  if (!qkv_req || a == 0) w.out.before_scores_bytes = w.out.through_attention_bytes = w.out.total_bytes;
  // The lightning indexer (DeepseekV32Indexer / GlmMoeDsaIndexer.forward, @torch.no_grad) runs in every
  // forward, gradients or not: `scores = matmul(q.float(), k^T.float()) * softmax_scale` and
  // `F.relu(scores)` each hold an fp32 [b, s, index heads, s] tensor beside the one before it; the
  // head-weighted sum and top-k that follow are [b, s, s] (as the transformers serving path counts it,
  // inference/engine_transformers.cpp).
  if (g.index_n_heads > 0 && !g.index_shared && a > 0) w.out.indexer_transient_bytes = checked::Mul(8, b, s, g.index_n_heads, s);
  if (qkv_req && kind.recurrent.kind == MixerKind::kLightning) {
    w.Save(LightningSavedBytes(kind.recurrent, mm, plan.weights_trainable, ctx));
  } else if (qkv_req && kind.recurrent.kind != MixerKind::kNone) {
    w.Save(checked::Mul(T, MixerSavedBytesPerToken(kind.recurrent, mm)));
    w.Save(checked::Mul(b, MixerSavedBytesPerSequence(kind.recurrent, mm)));
  }
  for (const NormSpec* n : other_norms) {
    // BitNet's attn_sub_norm: an RMSNorm on the attention output (matmul dtype) before o_proj.
    if (n->slot == NormSlot::kAttentionSub && qkv_req) w.Save(NormSavedBytes(*n, NormKind::kRmsNorm, true, plan.weights_trainable, T, ctx, mm));
  }
  bool attn_out_req = w.Linears(attn_out, qkv_req, mm, -1, fused_o);
  if (ctx.hidden_dropout > 0 && attn_out_req) w.Save(T * kind.linears.front().in_features);  // residual dropout mask

  // ---- MLP block
  bool h_req = x_req || attn_out_req;
  bool n2_req = h_req;
  if (kind.parallel_residual) {
    // Attention and MLP read the same input (Phi-2 one norm; GPT-NeoX / Falcon-40B a second norm of x).
    n2_req = pre_mlp != nullptr ? w.Norm(*pre_mlp, nk, x_req, T) : n1_req;
  } else if (pre_mlp != nullptr) {
    if (nk == NormKind::kRmsNorm && sandwich.empty() && h_req) w.out.before_mlp_norm_bytes = w.out.total_bytes;
    n2_req = w.Norm(*pre_mlp, nk, h_req, T);
  }
  for (const NormSpec* n : sandwich) w.Norm(*n, NormKind::kRmsNorm, attn_out_req, T);
  auto mlp = [&](const LinearGroup& in_group, const LinearGroup& down_group,
                 bool in_req, int64_t rows, int64_t width, bool input_saved = false) {
    const bool fused = w.out.unsloth_mlp && rows == T;
    // The gate / up outputs keep the MLP input's dtype when they are bnb 4-bit linears fed fp32
    // under autocast (Linear4bit returns out.to(inp_dtype); PEFT's lora Linear4bit adds its 16-bit
    // adapter output to that fp32 result, peft/tuners/lora/bnb.py v0.11): every element-wise
    // tensor of the MLP, and the down projection's input, are then fp32.
    const bool quantized_in = !in_group.empty() && ctx.quantized_base && !plan.weights_trainable && in_group.front()->lora_targetable;
    const int64_t act = quantized_in && Bnb4FollowsInput(ctx, p.residual) ? p.residual : mm;
    w.out.mlp_act_bytes = act;
    bool up_req = w.Linears(in_group, in_req, kind.parallel_residual ? p.residual : p.residual, rows == T ? -1 : rows,
                            fused ? Fused::kInputOnly : Fused::kNo, input_saved);
    w.out.mlp_input_saved = w.last_input_saved;
    if (!up_req) return false;
    if (fused) {
      // LoRA_MLP.forward: ctx.save_for_backward(gateA, gateB, upA, upB, downA, downB, X, e, g); h = f * g
      // (swiglu_fg_kernel) feeds the down projection and is dropped; nothing is released before
      // LoRA_MLP.backward.
      w.Save(2 * mm * rows * width);
      w.Linears(down_group, true, mm, -1, Fused::kNothing);
      w.out.down_saved_bytes = 0;
      return true;
    }
    if (kind.mlp.kind == MlpKind::kGated && w.out.liger_swiglu) {
      // LigerSiLUMulFunction.forward (src/liger_kernel/ops/swiglu.py): ctx.save_for_backward(a, b), c new.
      w.Save(2 * act * rows * width);
    } else if (kind.mlp.kind == MlpKind::kGated) {
      w.Save(act * rows * width);  // act(gate) saves gate
      w.Save(act * rows * width);  // act * up saves act(gate)
      w.Save(act * rows * width);  // ... and up
    } else if (kind.mlp.activation == ActivationFn::kGeluNew) {
      // 0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3))): x, tanh(.), 0.5*x, 1+tanh(.) + 3 float64 scalars.
      w.Save(4 * act * rows * width + 24);
    } else if (kind.mlp.activation == ActivationFn::kGeluTanh) {
      w.Save(act * rows * width);  // F.gelu(approximate="tanh") saves its input
    } else {
      w.Save(act * rows * width);  // gelu / relu save their input
    }
    for (const NormSpec* n : other_norms) {
      // BitNet's ffn_sub_norm: an RMSNorm on act(gate) * up before down_proj.
      if (n->slot == NormSlot::kMlpSub && rows == T) w.Save(NormSavedBytes(*n, NormKind::kRmsNorm, true, plan.weights_trainable, rows, ctx, act));
    }
    const int64_t before_down = w.out.total_bytes;
    bool down_req = w.Linears(down_group, true, act, rows == T ? -1 : rows);
    w.out.down_saved_bytes = w.out.total_bytes - before_down;
    return down_req;
  };
  if (kind.mlp.num_experts == 0) {
    mlp(mlp_in, mlp_down, n2_req, T, kind.mlp.intermediate);
  } else {
    // MoE: transformers' MixtralSparseMoeBlock.forward (modeling_mixtral.py, v4.44 through v4.57;
    // docs/training.md "Mixture of experts"), with every expert given T·k/E rows (the estimate's
    // balanced-routing assumption; the per-expert saves add up to the T·k routed rows).
    // Router: softmax(gate(x), dtype=float) saves its fp32 result; topk its int64 indices;
    // `routing_weights /= routing_weights.sum(...)` (in place) the sum and a copy of the top-k values,
    // only where the block renormalises (Qwen2MoeSparseMoeBlock / Qwen3MoeSparseMoeBlock.forward:
    // `if self.norm_topk_prob:`, transformers v4.44-v4.51; measured: QMOE01 / QMOE11 and Q3MOE01 /
    // Q3MOE08 in measured_cpu_qwen_moe.json, 4·T + 4·T·k per layer apart).
    const int64_t routed = T * kind.mlp.experts_per_token;
    const bool weights_req = w.Linears(router, n2_req, p.residual) && !router.empty();
    w.out.moe_input_saved = w.last_input_saved;
    if (weights_req) w.Save(4 * T * kind.mlp.RouterSlots() + 8 * routed + (kind.mlp.norm_topk_prob ? 4 * T + 4 * routed : 0));
    // Per expert: torch.where(expert_mask[e]) -> (idx, top_x), views of one int64 (rows, 2) nonzero
    // result kept by the gather `hidden_states[None, top_x]`, `routing_weights[top_x, idx, None]` and
    // index_add_; the gathered rows feed w1 / w3 like a dense MLP's input.
    const int64_t experts_start = w.out.total_bytes;
    const bool expert_out_req = mlp(experts_in, experts_down, n2_req, routed, kind.mlp.intermediate);
    w.out.expert_input_saved = w.out.mlp_input_saved;
    const int64_t hid = experts_down.empty() ? 0 : experts_down.front()->out_features;
    if ((expert_out_req || weights_req) && hid > 0) {
      w.Save(16 * routed);
      // `expert_layer(x) * routing_weights[top_x, idx, None]`: the expert output (for the weights'
      // gradient, mlp() set its dtype: fp32 under Bnb4FollowsInput) and the weight column (for the
      // output's), then index_add_ keeps its source, the product in the hidden dtype (it was
      // `.to(hidden_states.dtype)`; under autocast bf16 * fp32 promotes to fp32 already).
      const int64_t experts = kind.mlp.num_experts;
      const int64_t rows = CeilDivBytes(routed, experts);
      const int64_t before = w.out.total_bytes;
      if (weights_req) w.Save(w.out.mlp_act_bytes * routed * hid);
      if (expert_out_req) w.Save(p.residual * routed);
      w.Save(p.residual * routed * hid);
      // One expert's share (exact when E divides T·k: every expert's saves are linear in its rows).
      w.out.expert_rows = rows;
      w.out.expert_output_saved_bytes = (w.out.total_bytes - before) / experts;
      w.out.routing_grad_bytes = weights_req ? p.residual * routed : 0;
      w.out.expert_released_bytes = (w.out.total_bytes - before + w.out.down_saved_bytes) / experts;
      w.out.expert_saved_bytes = (w.out.total_bytes - experts_start) / experts;
      w.out.moe_input_requires_grad = n2_req;
    }
    if (!shared_in.empty() && !shared_scale.empty()) {
      // Qwen2MoeSparseMoeBlock.forward (modeling_qwen2_moe.py, v4.44-v4.51; Qwen3NextSparseMoeBlock
      // the same): `shared_expert_output = self.shared_expert(hidden_states)`, a dense gated MLP on
      // the T rows whose input is the router's (one storage: the gate saved it already when it
      // trains), then `F.sigmoid(self.shared_expert_gate(hidden_states)) * shared_expert_output`:
      // the (h -> 1) gate saves its input like any linear, sigmoid its (T, 1) result and the
      // product the shared output (matmul dtype), each when the other operand needs a gradient.
      // Measured: QMOE01-11 in measured_cpu_qwen_moe.json.
      const bool shared_req = mlp(shared_in, shared_down, n2_req, T, kind.mlp.shared_intermediate, w.out.moe_input_saved);
      const bool sig_req = w.Linears(shared_scale, n2_req, p.residual, -1, Fused::kNo, w.out.moe_input_saved);
      if (sig_req || shared_req) w.Save(mm * T);
      const int64_t shared_out = mm * T * (shared_down.empty() ? 0 : shared_down.front()->out_features);
      if (sig_req) w.Save(shared_out);
      if (shared_req) {
        w.out.shared_width = kind.mlp.shared_intermediate;
        w.out.shared_released_bytes = w.out.down_saved_bytes + (sig_req ? shared_out : 0) + mm * T;
      }
    } else if (!shared_in.empty()) {
      mlp(shared_in, shared_down, n2_req, T, kind.mlp.shared_intermediate);
    }
  }
  if (ctx.hidden_dropout > 0 && (h_req || plan.weights_trainable || plan.lora)) {
    w.Save(T * kind.linears.front().in_features);  // MLP output dropout mask
  }
  w.out.output_requires_grad = h_req || plan.weights_trainable || plan.lora;
  return w.out;
}

int64_t CheckpointInputBytes(const ModelSpec& model, const ActivationContext& ctx) {
  return ctx.prec.residual * ctx.Tokens() * model.hidden_size;
}

}  // namespace vramplan
