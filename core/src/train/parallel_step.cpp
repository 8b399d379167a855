#include "train/parallel_step.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "diagnostics/warning_codes.h"
#include "format.h"
#include "gpu/device_overhead.h"
#include "parallel/model_shard.h"
#include "planner/prepared.h"
#include "train/activations.h"
#include "train/flash_attention_backward.h"
#include "train/logits_loss.h"
#include "train/moment.h"
#include "train/optimizer.h"
#include "train/precision.h"
#include "train/preference.h"
#include "train/train_plan.h"
#include "train/weights.h"
#include "units.h"
#include "util/checked_math.h"

namespace vramplan {
namespace {

// Megatron-core's transformer layer with TransformerEngine modules (TELayerNormColumnParallelLinear
// for the fused norm + QKV / fc1, TEDotProductAttention, TERowParallelLinear), per micro-batch in
// the activation dtype `a` (bf16: 2 B). Sequence parallelism shards the norm inputs and outputs
// (TE gathers the norm output again in backward for the weight gradient) and the residual stream:
// Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models",
// table 2: 34 sbh / t per layer with SP (ffn = 4h, no attention dropout, flash attention).
LayerBytes MegatronLayer(const LayerKind& k, const RankGeometry& g, int64_t a, bool flash, bool selective, double hidden_dropout,
                         double attention_dropout, NormKind norm_kind) {
  LayerBytes out;
  const AttentionGeometry& at = k.attention;
  const int64_t heads = at.num_heads, kv = at.num_kv_heads;
  const int64_t stats = (norm_kind == NormKind::kRmsNorm ? 4 : 8) * g.Tu;  // rstd (and mean), fp32 per row
  const int64_t norm_pair = 2 * a * g.Tu * g.h + stats;                      // the norm's input and its output
  const int64_t mask = hidden_dropout > 0 ? g.Tu * g.h : 0;                   // bias-dropout-add mask (bool)
  // ---- attention
  int64_t attention = norm_pair + mask;
  const int64_t qkv = a * g.T * (heads * at.head_dim + kv * (at.head_dim + at.v_head_dim));  // q, k after RoPE, v
  const int64_t core_out = a * g.T * heads * at.v_head_dim;  // the kernel's output = linear_proj's input
  attention += qkv + core_out;
  if (at.mla) attention += a * g.T * (at.q_lora_rank + at.kv_lora_rank + at.qk_rope_head_dim);  // low-rank q / kv and their norms' inputs
  int64_t core_own = 0;  // what recomputing the attention core (selective) drops
  if (flash) {
    core_own = 4 * g.T * heads;  // softmax_lse (fp32)
  } else {
    // Unfused attention (megatron/core/transformer/dot_product_attention.py DotProductAttention with
    // FusedScaleMaskSoftmax): the softmax output and, with attention dropout, its mask and the
    // dropped probabilities (the bmm with V saves them): Korthikanti et al.'s 5as^2b.
    const int64_t sk = g.s;  // keys of the same sequence (unfused attention does not run with cp > 1)
    const int64_t scores = checked::Mul(a, g.b, heads, g.s, sk);
    core_own = scores + (attention_dropout > 0 ? checked::Mul(g.b, heads, g.s, sk) + scores : 0);
    out.forward_temp = std::max(out.forward_temp, scores);  // the raw scores, alive at the softmax
    out.attention_temp += 2 * scores;                          // the probabilities' gradient and the softmax backward's output
  }
  attention += core_own;
  // ---- MLP or experts
  int64_t mlp = norm_pair + mask;
  const MlpGeometry& m = k.mlp;
  const int64_t gate_factor = m.kind == MlpKind::kGated ? 2 : 1;
  if (m.num_experts > 0) {
    // Routed tokens on this rank: each of its Tu tokens goes to top_k experts and, with expert
    // tensor parallelism, the etp group gathers its tokens (Megatron requires SP with tp > 1 for
    // MoE); with balanced routing a rank's experts receive as many rows as its tokens send.
    const int64_t experts_total = m.num_experts * g.ep;
    const int64_t routed = RoutedRows(g, experts_total, m.experts_per_token);
    mlp += 4 * g.Tu * experts_total * 2;           // router logits and probabilities (fp32)
    mlp += a * routed * g.h;                        // the permuted tokens (fc1's input)
    // The experts scale their activation by the routing probabilities themselves (Megatron-LM
    // d98e8a64dd, moe/experts.py TEGroupedMLP.forward bias_act_func; transformer/mlp.py MLP.forward
    // with per_token_scale, which SequentialMLP passes); the unpermute gets no probabilities (moe/
    // token_dispatcher.py combine_preprocess / combine_postprocess), so it saves no expert output.
    // Gated SwiGLU (weighted_bias_swiglu_impl, the default fusion) saves fc1's 2 x ffn output and its
    // own ffn output, fc2's input. A non-gated activation has no fused weighted kernel there
    // (GeLU goes through the unfused branch): the activation saves fc1's output, the multiply by
    // the fp32 probabilities saves the activation's output, and the product cast back to bf16 is
    // fc2's input, three ffn-wide tensors; the fp32 product itself lives only until the cast.
    const int64_t expert_copies = gate_factor + (m.kind == MlpKind::kGated ? 1 : 2);
    mlp += a * routed * m.intermediate * expert_copies;
    if (m.kind != MlpKind::kGated) out.forward_temp = std::max(out.forward_temp, 4 * routed * m.intermediate);
    if (m.shared_intermediate > 0) mlp += a * g.T * (g.h + m.shared_intermediate * (gate_factor + 1));
    out.forward_temp = std::max(out.forward_temp, 2 * a * routed * g.h);  // all-to-all send and receive
    out.mlp_temp = (gate_factor + 1) * a * routed * m.intermediate + 2 * a * routed * g.h;
  } else {
    mlp += a * g.T * m.intermediate * (gate_factor + 1);
    out.mlp_temp = (gate_factor + 1) * a * g.T * m.intermediate;
  }
  out.saved = attention + mlp;
  out.kept = selective ? out.saved - core_own : out.saved;
  // ---- buffers
  if (g.u > 1) out.forward_temp = std::max(out.forward_temp, a * g.T * g.h);  // the sequence-parallel all-gather of the norm output
  const int64_t kv_block = a * g.T * kv * (at.head_dim + at.v_head_dim);
  if (g.cp > 1) {
    // Ring (TE AttnFuncWithCPAndKVP2P): two K/V blocks in flight (send and receive); Ulysses
    // (all-to-all): q, k, v re-laid out over the heads.
    out.forward_temp = std::max(out.forward_temp, g.cp_kind == ContextParallelKind::kRing ? 2 * kv_block : qkv);
  }
  out.attention_temp += a * g.T * (heads * at.head_dim + kv * (at.head_dim + at.v_head_dim)) + 4 * g.T * heads * at.head_dim +
                       (g.cp > 1 ? (g.cp_kind == ContextParallelKind::kRing ? 4 * kv_block : qkv) : 0);
  out.mlp_temp += a * g.Tu * g.h;    // the residual stream's gradient
  out.attention_temp += a * g.Tu * g.h;
  return out;
}

// torchtitan's op-level selective activation checkpointing (torchtitan/distributed/
// activation_checkpoint.py, _get_custom_policy, commit b5bcd76c): inside each checkpointed block the
// outputs of the compute-intensive ops are saved, the attention kernel's (output and logsumexp) and
// every other mm / linear (the first, third, ...; the count restarts in each block, and the MoE
// router's gate is always recomputed), and everything else is recomputed from them and the block's
// input in backward.
int64_t TorchtitanOpSacKept(const LayerKind& k, const RankGeometry& g, int64_t a) {
  int64_t kept = a * g.Tu * g.h;  // the block's input (the checkpoint's argument)
  int64_t mm = 0;
  for (const LinearSpec& l : k.linears) {
    if (l.slot == LinearSlot::kRouter) continue;
    const bool expert = l.parallel == ParallelStyle::kExpert;
    const int64_t rows = expert ? g.T * std::max<int64_t>(1, k.mlp.experts_per_token) : g.T;
    if (++mm % 2 == 1) kept += a * rows * l.out_features;
  }
  kept += a * g.T * k.attention.num_heads * k.attention.v_head_dim + 4 * g.T * k.attention.num_heads;
  return kept;
}


// The moments' labels (MomentLabel), where the model-parallel step differs: the step starts with
// the pipeline's other micro-batches in flight, and Megatron zeroes its gradient buffer in place.
std::string DescribeAt(At at, int64_t layer) {
  if (at == At::kStepStart) return "weights + optimizer states + micro-batches in flight";
  if (at == At::kZeroGrad) return "zero_grad";
  return MomentLabel(at, layer);
}

}  // namespace

int64_t RoutedRows(const RankGeometry& g, int64_t experts, int64_t top_k) {
  const int64_t dropless = checked::Mul(g.Tu, top_k, g.etp);
  if (g.moe_capacity_factor <= 0 || experts <= 0) return dropless;
  // The same floating-point order as math.ceil((num_tokens / num_experts) * capacity_factor), num_tokens = Tu x top_k.
  const double per_expert = (static_cast<double>(g.Tu * top_k) / static_cast<double>(experts)) * g.moe_capacity_factor;
  const int64_t capacity = static_cast<int64_t>(std::ceil(per_expert));
  const int64_t full = checked::Mul(experts, capacity, g.etp);
  // Without padding an expert computes what it was sent, at most its capacity: balanced routing
  // sends Tu x top_k / E, so only a capacity below that (cf < 1) drops tokens.
  return g.moe_pad_to_capacity ? full : std::min(dropless, full);
}

bool UsesModelParallelStep(const Scenario& s) {
  const ParallelConfig& p = s.parallel;
  return s.mode == Mode::kTrain && (p.tp > 1 || p.pp > 1 || p.cp > 1 || p.ep > 1 || s.framework.trainer != Trainer::kHf);
}

StagePrep PrepareStage(const Scenario& sc, const Topology& topo, const PipelineStage& stage, const RankShard& rank, bool explain) {
  const FrameworkConfig& fw = sc.framework;
  const bool megatron = fw.trainer == Trainer::kMegatron;
  // torchtitan runs FSDP2 with MixedPrecisionPolicy(param_dtype=bf16): the parameters (and their
  // states) stay in the model's dtype, every block computes on bf16 copies, and the activations
  // are bf16 (torchtitan/distributed/fsdp.py; config mixed_precision_param).
  const bool titan = fw.trainer == Trainer::kTorchtitan;
  const ModelSplit split{topo.tp, sc.parallel.etp > 0 ? sc.parallel.etp : topo.tp, topo.ep, topo.pp, megatron ? 128 : 1};
  const ModelSpec local = RankLocalModel(sc.model, split, stage);
  // The rank's slice of the sequence (context parallelism) in a copy of the job's settings.
  TrainConfig train = sc.train;
  train.seq_len = CeilDiv(train.seq_len, topo.cp);
  if (megatron) train.optimizer_impl = OptimizerImpl::kFused;  // TE / Apex FusedAdam: multi-tensor, in place
  const PrecisionModel prec = PrecisionFor(train.precision, train.autocast);
  const TrainPlan plan = MakeTrainPlan(local, train, prec);
  const ParamCounts counts = CountParams(local);

  RankGeometry g;
  g.b = train.micro_batch_size;
  g.s = train.seq_len;
  g.T = g.b * g.s;
  g.u = sc.parallel.sequence_parallel ? topo.tp : 1;
  g.Tu = CeilDiv(g.T, g.u);
  g.h = local.hidden_size;
  g.etp = split.etp;
  g.ep = split.ep;
  g.cp = topo.cp;
  g.cp_kind = sc.parallel.cp_kind;
  g.moe_capacity_factor = megatron ? sc.parallel.moe_capacity_factor : 0;
  g.moe_pad_to_capacity = sc.parallel.moe_pad_expert_input_to_capacity;
  const bool half = prec.half || prec.autocast;
  const int64_t act = megatron || (titan && half) ? 2 : prec.matmul;  // activation dtype
  const bool flash = train.attention != AttentionImpl::kEager;
  const Checkpointing ckpt = train.gradient_checkpointing;
  const int64_t microbatches = train.grad_accum_steps;

  // ---- model states of the rank
  const int64_t trainable = plan.trainable_params;
  const int64_t expert_trainable = trainable == counts.total ? counts.experts : 0;  // full training: the experts' share
  const int64_t grad_dtype = megatron ? (fw.grad_reduce_in_fp32.value_or(train.precision == Precision::kMixedBf16 || train.precision == Precision::kBf16) ? 4 : prec.grad)
                                      : prec.grad;
  const int64_t grads_total = (trainable - plan.lora_params) * grad_dtype + plan.lora_params * plan.adapter_bytes_per_param;
  WeightMemory weights = ComputeWeightMemory(local, train, plan, prec, false, ModelLoad::kDirect, &counts, explain);
  const OptimizerMemory opt = ComputeOptimizerMemory(train, prec, plan.trainable_tensors, false, false, fw.device, explain);
  // Megatron's distributed optimizer (parallel.zero 1): master weights and moments sharded over the
  // data-parallel group with the context-parallel ranks (DDP's intra_dp_cp group:
  // megatron/core/process_groups_config.py), the experts' over the expert-data-parallel group
  // (megatron/core/optimizer/distrib_optimizer.py; expert_data_parallel_size = world / (ep x etp x pp)).
  int64_t states_dev = opt.state_bytes;
  const int64_t dp = topo.dp * topo.cp;
  const int64_t edp = std::max<int64_t>(1, topo.gpus / (split.ep * split.etp * topo.pp));
  if (megatron && sc.parallel.zero >= 1 && trainable > 0) {
    // The experts' share of the states (the same bytes per parameter; a ratio, not a product that
    // could leave int64).
    const int64_t expert_states = static_cast<int64_t>(static_cast<double>(opt.state_bytes) *
                                                       (static_cast<double>(expert_trainable) / static_cast<double>(trainable)));
    states_dev = CeilDiv(opt.state_bytes - expert_states, dp) + CeilDiv(expert_states, edp);
  }
  // Other trainers: ZeRO / FSDP through the data-parallel view (parallel/data_parallel.h).
  RankView view;
  if (!megatron) {
    // FSDP2 (torchtitan) gathers bf16 copies of the units; FSDP1 / ZeRO-3 the stored dtype.
    const int64_t unit_dtype = titan && half ? 2 : prec.weight;
    const int64_t embedding_params = local.vocab_size * local.hidden_size;
    const int64_t root_params = embedding_params * (local.tied_embeddings ? 1 : 2) + local.final_norm.Params();
    const int64_t layer_params = local.num_layers > 0 ? std::max<int64_t>(0, counts.total - root_params) / local.num_layers : 0;
    ShardedUnitBytes units;
    units.layer_weight_bytes = layer_params * unit_dtype;
    units.root_weight_bytes = root_params * unit_dtype;
    units.embedding_unit_bytes = embedding_params * unit_dtype;
    units.root_rest_bytes = local.final_norm.Params() * unit_dtype;
    units.max_layer_grad_bytes = layer_params * grad_dtype;
    units.all_grad_bytes = grads_total;
    units.bucket_dtype_bytes = prec.grad;
    units.grad_dtype_bytes = prec.grad;
    view = rank.StatesView(units);
    states_dev = view.States(opt.state_bytes);
  }
  const int64_t weights_dev = megatron ? weights.bytes : view.Weights(weights.bytes);
  const int64_t grads_dev = megatron ? grads_total : view.Gradients(grads_total);

  // ---- activations per layer (memoized per layer kind)
  ActivationContext ctx;
  ctx.batch = g.b;
  ctx.seq = g.s;
  // torchtitan's blocks compute in bf16 (no autocast caches): the activation rules of pure bf16.
  ctx.prec = titan && half ? PrecisionFor(Precision::kBf16) : prec;
  ctx.attention = train.attention;
  ctx.lora = &train.lora;
  ctx.adapter_bytes = plan.adapter_bytes_per_param;
  ctx.hidden_dropout = sc.model.hidden_dropout;
  ctx.attention_dropout = flash ? 0.0 : sc.model.attention_dropout;
  ctx.softmax_fp32 = sc.model.softmax_fp32;
  ctx.norm_kind = sc.model.norm_kind;
  ctx.quantized_base = train.method == TrainMethod::kQlora;
  ctx.qlora_bits = train.qlora_bits;
  std::vector<LayerBytes> kinds(local.kinds.size());
  std::vector<bool> done(local.kinds.size(), false);
  std::vector<LayerBytes> layers;
  layers.reserve(static_cast<size_t>(local.num_layers));
  int64_t stage_kept = 0;
  for (int64_t i = 0; i < local.num_layers; ++i) {
    const size_t k = local.layer_kind[static_cast<size_t>(i)];
    const LayerPlan& lp = plan.layers[static_cast<size_t>(i)];
    if (!done[k]) {
      const LayerKind& kind = local.kinds[k];
      LayerBytes lb;
      if (megatron) {
        lb = MegatronLayer(kind, g, act, flash, ckpt == Checkpointing::kSelective, sc.model.hidden_dropout, sc.model.attention_dropout, sc.model.norm_kind);
      } else {
        const LayerSaved saved = ComputeLayerSaved(kind, lp, ctx);
        lb.saved = saved.total_bytes;
        // Sequence parallelism (torchtitan SequenceParallel on the norms; DTensor): the norms work on
        // T / tp rows.
        if (g.u > 1) {
          for (const NormSpec& n : kind.norms) {
            if (n.slot != NormSlot::kPreAttention && n.slot != NormSlot::kPreMlp) continue;
            const int64_t full = NormSavedBytes(n, sc.model.norm_kind, lp.input_requires_grad, lp.weights_trainable, g.T, ctx);
            lb.saved -= full - CeilDiv(full, g.u);
          }
        }
        lb.kept = ckpt == Checkpointing::kSelective && titan  ? TorchtitanOpSacKept(kind, g, act)
                  : ckpt == Checkpointing::kSelective && !flash ? saved.total_bytes - saved.attention_core_bytes + saved.core_input_bytes
                                                                : lb.saved;
        const int64_t gate = kind.mlp.kind == MlpKind::kGated ? 3 : 2;
        const int64_t width = kind.mlp.num_experts > 0 ? kind.mlp.intermediate * kind.mlp.experts_per_token : kind.mlp.intermediate;
        lb.mlp_temp = ctx.prec.residual * g.T * g.h + gate * ctx.prec.matmul * g.T * width;
        // The attention backward's dq, dk, dv and fp32 dq accumulator. SDPA gets k / v repeated to every
        // query head (torchtitan's Attention.forward repeat_kv before scaled_dot_product_attention,
        // torchtitan/models/llama/model.py at b5bcd76c; HF's sdpa path likewise), so its dk / dv are as
        // wide as q; FlashAttention-2 takes the kv heads and adds its own buffers (flash_attention_backward.h),
        // as the single-device step does.
        const AttentionGeometry& at = kind.attention;
        const bool fa2 = train.attention == AttentionImpl::kFlash;
        const int64_t dkv_heads = fa2 ? at.num_kv_heads : at.num_heads;
        lb.attention_temp = ctx.prec.residual * g.T * g.h + ctx.prec.matmul * g.T * (at.num_heads * at.head_dim + 2 * dkv_heads * at.head_dim) +
                            4 * g.T * at.num_heads * at.head_dim +
                            (fa2 ? FlashAttention2BackwardExtraBytes(g.b, g.s, at.num_heads, at.num_kv_heads, at.head_dim, at.v_head_dim, ctx.prec.matmul) : 0);
        const int64_t kv_block = ctx.prec.matmul * g.T * kind.attention.num_kv_heads * (kind.attention.head_dim + kind.attention.v_head_dim);
        if (g.cp > 1) lb.forward_temp = 2 * kv_block;
        if (g.u > 1) lb.forward_temp = std::max(lb.forward_temp, ctx.prec.matmul * g.T * g.h);
      }
      for (const LinearSpec& l : kind.linears) lb.grad_bytes += LinearGradBytes(l, lp, train, plan, grad_dtype);
      if (lp.weights_trainable) {
        int64_t extra = kind.extra_attention_params + kind.extra_router_params;
        for (const NormSpec& n : kind.norms) extra += n.Params();
        lb.grad_bytes += grad_dtype * extra;
      }
      kinds[k] = lb;
      done[k] = true;
    }
    LayerBytes lb = kinds[k];
    if (ckpt == Checkpointing::kFull) {
      // Megatron's recompute_method / recompute_num_layers (transformer_block.py
      // _checkpointed_forward): uniform keeps one input per chunk of n layers, block recomputes the
      // first n layers of the stage and keeps everything of the others.
      const int64_t n = train.recompute_num_layers;
      const int64_t input = (megatron || titan ? act : prec.residual) * g.Tu * g.h;
      if (train.recompute_method == RecomputeMethod::kBlock) {
        if (n == 0 || i < n) lb.kept = input;  // each recomputed layer is its own checkpoint
        lb.chunk_start = i;
      } else {
        const int64_t chunk = std::max<int64_t>(1, n);
        lb.chunk_start = i - i % chunk;
        lb.kept = i % chunk == 0 ? input : 0;
      }
    }
    if (ckpt != Checkpointing::kFull) lb.chunk_start = i;
    layers.push_back(lb);
    stage_kept += lb.kept;
  }
  // ---- the embedding and the loss head on the end stages
  const int64_t V = local.vocab_size, h = g.h;
  // The token ids the embedding's backward indexes, and its dropout mask (on the sequence-parallel
  // shard: the embedding's output is scattered over the tensor-parallel ranks).
  const int64_t embedding_saved = !stage.embedding ? 0 : 8 * g.T + (local.embedding_dropout > 0 ? g.Tu * h : 0);
  int64_t head_saved = 0, loss_forward = 0, loss_backward = 0;
  std::string loss_explain;
  if (stage.head) {
    const int64_t norm_saved = act * g.Tu * h + 4 * g.Tu;  // final norm input (+ rstd)
    if (megatron) {
      // Output layer (ColumnParallelLinear over vocab / tp) saves its input; vocab-parallel cross
      // entropy (megatron/core/tensor_parallel/cross_entropy.py) runs on logits.float(): the bf16
      // logits and their fp32 copy coexist at the cast, then exp() works in place on the copy,
      // which is saved; in backward the fp32 gradient is made in place and cast back to bf16.
      head_saved = norm_saved + act * g.Tu * h + checked::Mul(4, g.T, V);
      loss_forward = checked::Mul(act, g.T, V);
      loss_backward = checked::Mul(act, g.T, V);
      if (explain) loss_explain = "vocab-parallel cross entropy on " + WithCommas(V) + " vocabulary rows per rank: bf16 logits + their fp32 copy (saved as exp_logits)";
    } else {
      const bool upcast = fw.loss_upcast_logits && sc.model.loss_upcasts_logits;
      const LossHead loss = ComputeLossHead(train, fw, ctx.prec, V, h, plan.lm_head_trainable, upcast, explain,
                                            AmpOutputsFp32(sc, ctx.prec.autocast || ctx.prec.autocast16));
      head_saved = norm_saved + (plan.lm_head_trainable ? act * g.T * h : 0) + loss.saved_bytes;
      // One head moment here: the loss's own or, higher, accelerate's copy after the forward returned.
      loss_forward = std::max(loss.forward_extra_bytes, loss.after_forward_bytes);
      loss_backward = loss.backward_extra_bytes;
      loss_explain = loss.explain;
    }
  }

  StagePrep p;
  p.embedding = stage.embedding;
  p.head = stage.head;
  p.megatron = megatron;
  p.num_layers = local.num_layers;
  p.params_total = counts.total;
  p.embedding_trainable = plan.embedding_trainable;
  p.method = train.method;
  p.g = g;
  p.act = act;
  p.microbatches = microbatches;
  p.trainable = trainable;
  p.grad_dtype = grad_dtype;
  p.grads_total = grads_total;
  p.weight_bytes = weights.bytes;
  p.weight_dtype = prec.weight;
  p.opt = opt;
  p.states_dev = states_dev;
  p.view = view;
  p.weights_dev = weights_dev;
  p.grads_dev = grads_dev;
  p.dp = dp;
  p.edp = edp;
  p.layers = std::move(layers);
  p.stage_kept = stage_kept;
  // What each interleaved model chunk keeps per micro-batch (its layers are consecutive in the
  // rank-local model: parallel/model_shard.h StageLayerIndices).
  size_t next = 0;
  for (int64_t n : stage.chunk_layers) {
    int64_t kept = 0;
    for (int64_t j = 0; j < n && next < p.layers.size(); ++j) kept += p.layers[next++].kept;
    p.chunk_kept.push_back(kept);
  }
  p.embedding_saved = embedding_saved;
  p.head_saved = head_saved;
  p.loss_forward = loss_forward;
  p.loss_backward = loss_backward;
  p.loss_explain = std::move(loss_explain);
  return p;
}

bool SameStageShape(const PipelineStage& a, const PipelineStage& b) {
  return a.embedding == b.embedding && a.head == b.head && a.num_layers == b.num_layers && a.vpp == b.vpp && a.chunk_layers == b.chunk_layers;
}

void EstimateParallelTraining(const Scenario& sc, const Topology& topo, const PipelineStage& stage, const RankShard& rank,
                              const Prepared& prepared, const StagePrep& prep, Result* r, bool explain) {
  const bool megatron = prep.megatron;
  const RankGeometry& g = prep.g;
  const int64_t act = prep.act, microbatches = prep.microbatches, trainable = prep.trainable, grad_dtype = prep.grad_dtype;
  const int64_t grads_total = prep.grads_total, states_dev = prep.states_dev, weights_dev = prep.weights_dev, grads_dev = prep.grads_dev;
  const int64_t dp = prep.dp, edp = prep.edp, stage_kept = prep.stage_kept, embedding_saved = prep.embedding_saved;
  const int64_t head_saved = prep.head_saved, loss_forward = prep.loss_forward, loss_backward = prep.loss_backward;
  const int64_t h = g.h;
  const OptimizerMemory& opt = prep.opt;
  RankView view = prep.view;
  const std::vector<LayerBytes>& layers = prep.layers;
  const std::string& loss_explain = prep.loss_explain;
  // Micro-batches in flight beyond the one simulated: whole-stage equivalents of the chunk-forwards
  // the schedule holds (parallel/pipeline.h); each keeps its layers' and its embedding's saves.
  int64_t in_flight = 0;
  if (!stage.chunk_in_flight.empty()) {
    // Interleaved: each chunk's forwards in flight keep that chunk's layers (the embedding's saves
    // go with chunk 0), less the one micro-batch of every chunk the moments below simulate.
    int64_t held = 0;
    for (size_t c = 0; c < stage.chunk_in_flight.size() && c < prep.chunk_kept.size(); ++c) {
      held = checked::Add(held, checked::Mul(stage.chunk_in_flight[c], prep.chunk_kept[c] + (c == 0 ? embedding_saved : 0)));
    }
    in_flight = std::max<int64_t>(0, held - stage_kept - embedding_saved);
  } else if (stage.in_flight_chunks > stage.vpp) {
    in_flight = checked::Mul(stage_kept + embedding_saved, stage.in_flight_chunks - stage.vpp) / stage.vpp;
  }
  // ---- the moments
  const int64_t workspace = CublasWorkspaceBytes(sc, prepared.device);
  // Gradients resident through the step: Megatron's main_grad buffer always; otherwise every
  // micro-batch after the first accumulates into them.
  const bool accumulating = megatron || microbatches > 1;
  MomentLog moments(/*timeline=*/explain, static_cast<size_t>(2 * prep.num_layers + 16));
  auto push = [&](Moment m) {
    if (!megatron) view.Apply(&m);
    moments.Add(m, explain);
  };
  auto step = [&](Phase phase, At at, int64_t layer = -1) {
    Moment m;
    m.phase = phase;
    m.at = at;
    m.layer = layer;
    m.weight_bytes = megatron ? weights_dev : prep.weight_bytes;
    m.optimizer_state_bytes = megatron ? states_dev : opt.state_bytes;
    m.gradient_bytes = accumulating ? grads_total : 0;
    m.workspace_bytes = workspace;
    m.batch_bytes = stage.embedding || stage.head ? 16 * g.T : 0;  // token ids and labels (int64)
    return m;
  };
  {
    Moment m;
    m.phase = Phase::kLoad;
    m.at = At::kModelLoaded;
    m.weight_bytes = megatron ? weights_dev : prep.weight_bytes;
    m.gradient_bytes = megatron ? grads_total : 0;  // DistributedDataParallel allocates the grad buffer with the model
    push(m);
  }
  int64_t kept_sum = 0, forward_temp = 0, max_kept = 0;
  for (const LayerBytes& lb : layers) {
    kept_sum += lb.kept;
    max_kept = std::max(max_kept, lb.kept);
    forward_temp = std::max(forward_temp, lb.forward_temp);
  }
  // CPU activation offload (torchtune training/_activation_offloading.py OffloadActivations,
  // Megatron's fine-grained activation offloading, DeepSpeed's cpu_checkpointing): what the layers
  // keep goes to host RAM during the forward and comes back for the backward; the GPU holds the
  // layer being copied out (or prefetched back) next to the running one. Other micro-batches in
  // flight wait on the host.
  const bool offload = sc.train.activation_offload;
  const int64_t host_activations = offload ? in_flight + kept_sum : 0;
  const int64_t in_flight_gpu = offload ? 0 : in_flight;
  auto kept_on_gpu = [&](int64_t kept, int64_t window) { return offload ? std::min(kept, window * max_kept) : kept; };
  Moment fwd = step(Phase::kForward, At::kStepStart);
  fwd.activation_bytes = in_flight_gpu + embedding_saved;
  push(fwd);
  {
    // The end of the stage's forward, inside its last layer (its buffers at their largest).
    Moment m = step(Phase::kForward, At::kLayerForward, prep.num_layers - 1);
    m.activation_bytes = in_flight_gpu + embedding_saved + kept_on_gpu(kept_sum - (layers.empty() ? 0 : layers.back().kept), 1) +
                         (layers.empty() ? 0 : layers.back().saved);
    m.temporary_bytes = forward_temp;
    push(m);
  }
  if (stage.head) {
    Moment m = step(Phase::kForward, At::kCrossEntropy);
    m.activation_bytes = in_flight_gpu + embedding_saved + kept_on_gpu(kept_sum, 1);
    m.logits_and_loss_bytes = head_saved + loss_forward;
    push(m);
    Moment b = step(Phase::kBackward, At::kCrossEntropyBackward);
    b.activation_bytes = in_flight_gpu + embedding_saved + kept_on_gpu(kept_sum, 1);
    b.logits_and_loss_bytes = head_saved + loss_backward;
    push(b);
  }
  {
    int64_t below = kept_sum;
    int64_t grads_so_far = 0;
    int64_t chunk_saved = 0;  // a recomputed chunk's layers below the running one hold their saves again
    // Without a timeline only the backward's highest moment is read. Megatron's moments of this
    // loop differ only in the three fields set here (no data-parallel view rewrites them), so the
    // loop keeps the highest (the first on a tie, as MomentLog does) and records that one alone:
    // the same peaks, without building two moments per layer for every rank role.
    const bool peak_only = !explain && megatron;
    int64_t best = -1, best_activation = 0, best_temporary = 0, best_gradient = 0, best_layer = 0;
    At best_at = At::kMlpBackward;
    auto consider = [&](At at, int64_t layer, int64_t activation, int64_t temporary, int64_t gradient) {
      const int64_t variable = activation + temporary + gradient;
      if (variable <= best) return;
      best = variable;
      best_at = at;
      best_layer = layer;
      best_activation = activation;
      best_temporary = temporary;
      best_gradient = gradient;
    };
    for (int64_t i = prep.num_layers - 1; i >= 0; --i) {
      const LayerBytes& lb = layers[static_cast<size_t>(i)];
      below -= lb.kept;
      if (i == prep.num_layers - 1 || layers[static_cast<size_t>(i + 1)].chunk_start != lb.chunk_start) {
        // Entering a chunk (from its last layer): its layers below this one are recomputed too.
        chunk_saved = 0;
        for (int64_t j = lb.chunk_start; j < i; ++j) chunk_saved += layers[static_cast<size_t>(j)].saved;
      } else {
        chunk_saved -= lb.saved;
      }
      const int64_t live = in_flight_gpu + embedding_saved + kept_on_gpu(below, 1) + lb.saved + chunk_saved;  // a recomputed layer saves everything again
      if (peak_only) {
        consider(At::kMlpBackward, i, live, lb.mlp_temp, accumulating ? 0 : grads_so_far);
        consider(At::kAttentionBackward, i, live, lb.attention_temp, accumulating ? 0 : grads_so_far + lb.grad_bytes);
        grads_so_far += lb.grad_bytes;
        continue;
      }
      Moment m = step(Phase::kBackward, At::kMlpBackward, i);
      m.activation_bytes = live;
      m.temporary_bytes = lb.mlp_temp;
      if (!accumulating) m.gradient_bytes = grads_so_far;
      push(m);
      Moment a = step(Phase::kBackward, At::kAttentionBackward, i);
      a.activation_bytes = live;
      a.temporary_bytes = lb.attention_temp;
      if (!accumulating) a.gradient_bytes = grads_so_far + lb.grad_bytes;
      push(a);
      grads_so_far += lb.grad_bytes;
    }
    if (peak_only && best >= 0) {
      Moment m = step(Phase::kBackward, best_at, best_layer);
      m.activation_bytes = best_activation;
      m.temporary_bytes = best_temporary;
      if (!accumulating) m.gradient_bytes = best_gradient;
      push(m);
    }
  }
  if (stage.embedding && prep.embedding_trainable) {
    Moment m = step(Phase::kBackward, At::kEmbeddingBackward);
    m.gradient_bytes = grads_total;
    m.temporary_bytes = act * g.Tu * h;
    push(m);
  }
  {
    Moment m = step(Phase::kOptimizerStep, At::kOptimizerStep);
    m.gradient_bytes = grads_total;
    m.temporary_bytes = megatron ? 0 : opt.step_temporary_bytes;
    push(m);
  }
  push(step(Phase::kZeroGrad, At::kZeroGrad));

  // ---- results
  // The job's trainable parameters (the whole model's, as the single-replica step reports them;
  // the rank's share is in the gradients' explanation).
  r->trainable_params = prepared.TrainPlanFor(sc.model, sc.train, PrecisionFor(sc.train.precision, sc.train.autocast))->trainable_params;
  r->gpu.gradient_bytes = grads_dev;
  r->gpu.optimizer_state_bytes = states_dev;
  r->gpu.paged_bytes = opt.paged_bytes;
  r->gpu.saved_activation_bytes = in_flight_gpu + embedding_saved + kept_on_gpu(kept_sum, 1) + head_saved;
  const Moment* peak = &moments.Peak();
  r->peak_phase = PhaseName(peak->phase);
  r->peak_at = DescribeAt(peak->at, peak->layer);
  ReportPeak(moments, *peak, &r->gpu);
  std::vector<Term>& bd = r->gpu.breakdown;
  if (explain) {
    const std::string where = "pipeline stage " + std::to_string(stage.index) + " of " + std::to_string(topo.pp) + " (" +
                              std::to_string(prep.num_layers) + " layers" + (stage.embedding ? ", embedding" : "") +
                              (stage.head ? ", output layer + loss" : "") + ")";
    bd[0].explain = WithCommas(prep.params_total) + " params on this rank (" + where + "; tp=" + std::to_string(topo.tp) +
                    (topo.ep > 1 ? ", ep=" + std::to_string(topo.ep) : "") + ") x " + std::to_string(prep.weight_dtype) + " B = " + Gib(peak->weight_bytes);
    bd[1].explain = WithCommas(trainable) + " trainable params x " + std::to_string(grad_dtype) + " B" +
                    (megatron ? " (Megatron main_grad buffer, allocated with the model)" : "") + " = " + Gib(grads_total) +
                    "; live at the peak: " + Gib(peak->gradient_bytes);
    bd[2].explain = opt.explain_states + " = " + Gib(opt.state_bytes) +
                    (megatron && sc.parallel.zero >= 1 ? "; distributed optimizer: dense / " + std::to_string(dp) + " data-parallel ranks, experts / " + std::to_string(edp) + " = " + Gib(states_dev)
                     : states_dev != opt.state_bytes ? "; sharded: " + Gib(states_dev) : "");
    bd[3].explain = "saved for backward at the peak: " + Gib(peak->activation_bytes) + " (" + std::to_string(prep.num_layers) + " layers x ~" +
                    Gib(prep.num_layers > 0 ? kept_sum / prep.num_layers : 0) + " per micro-batch of " + WithCommas(g.T) + " tokens" +
                    (g.u > 1 ? ", sequence parallel / " + std::to_string(g.u) : "") + (g.cp > 1 ? ", sequence / cp " + std::to_string(g.cp) : "") +
                    (in_flight > 0 ? "; + " + Gib(in_flight) + " of " + std::to_string(stage.in_flight_chunks) + " chunk-forwards in flight (pipeline schedule)" : "") + ")";
    bd[4].explain = stage.head ? loss_explain + ": " + Gib(peak->logits_and_loss_bytes) + " at the peak" : "no loss on this pipeline stage";
    bd[6].explain = "transient at the peak (" + r->peak_at + "): " + Gib(peak->temporary_bytes) +
                    (forward_temp > 0 ? "; communication buffers up to " + Gib(forward_temp) + " per layer" : "") +
                    (peak->workspace_bytes > 0 ? " + cuBLAS workspace " + WithCommas(peak->workspace_bytes) + " B" : "");
    const std::vector<Moment> points = moments.Timeline();
    r->timeline.reserve(points.size());
    for (const Moment& m : points) r->timeline.push_back(TimelinePoint{PhaseName(m.phase), DescribeAt(m.at, m.layer), m.Total()});
  }
  rank.AddOffloadedHostTerms(opt.state_bytes, trainable, prep.weight_bytes, explain, &r->cpu.breakdown);
  if (host_activations > 0) {
    r->cpu.breakdown.push_back(Term{"offloaded_activations", host_activations,
                                    explain ? "saved activations of " + std::to_string(prep.num_layers) + " layers" +
                                                  (in_flight > 0 ? " and of the micro-batches in flight" : "") + " in host RAM (activation offload)" : ""});
  }
  if (opt.paged_bytes > 0) r->cpu.breakdown.push_back(Term{"paged_optimizer_states", opt.paged_bytes, "paged 8-bit optimizer states in CUDA unified memory"});
  for (const Term& t : r->cpu.breakdown) r->cpu.bytes += t.bytes;
  if (stage.index == 0) {
    if (sc.framework.torch_compile) {
      r->warnings.push_back(MakeWarning(WarningCode::kNotModeled, "framework.torch_compile",
                                        "torch.compile: inductor fuses element-wise chains and its partitioner decides what is saved; this is the eager step's memory"));
    }
    if (sc.train.float8) {
      r->warnings.push_back(MakeWarning(WarningCode::kNotModeled, "train.float8",
                                        "float8 linears save fp8 casts of their inputs and keep scales; this is the 16-bit step's memory"));
    }
    if (sc.train.optimizer_in_backward) {
      r->warnings.push_back(MakeWarning(WarningCode::kNotModeled, "train.optimizer_in_backward",
                                        "the optimizer step in backward is modeled for the single-replica step (framework.trainer hf); this model-parallel step keeps every gradient until the step"));
    }
    if (sc.train.objective != Objective::kSft) {
      r->warnings.push_back(MakeWarning(WarningCode::kNotModeled, "train.objective",
                                        "preference objectives are modeled for the single-replica / data-parallel HF step (TRL); this "
                                        "model-parallel step is the SFT step's memory (no doubled rows, no reference model)"));
    }
    if ((sc.train.recompute_num_layers > 0 || sc.train.recompute_method != RecomputeMethod::kUniform) &&
        sc.train.gradient_checkpointing != Checkpointing::kFull) {
      r->warnings.push_back(MakeWarning(WarningCode::kNoEffect, "train.recompute_num_layers",
                                        "recompute_method and recompute_num_layers shape full recomputation: they need train.gradient_checkpointing true"));
    }
    if (sc.parallel.moe_capacity_factor > 0 && !megatron) {
      r->warnings.push_back(MakeWarning(WarningCode::kNoEffect, "parallel.moe_capacity_factor",
                                        "expert capacity (token dropping) is Megatron-LM's (--moe-expert-capacity-factor); this trainer's experts are dropless"));
    }
    if (sc.parallel.sequence_parallel && topo.tp == 1) {
      r->warnings.push_back(MakeWarning(WarningCode::kNoEffect, "parallel.sequence_parallel",
                                        "sequence parallelism splits the norm and dropout regions over the tensor-parallel ranks: it needs parallel.tp > 1"));
    }
    if (prep.method == TrainMethod::kLora || prep.method == TrainMethod::kQlora || prep.method == TrainMethod::kFreeze) {
      r->warnings.push_back(MakeWarning(WarningCode::kApproximate, "prep.method",
                                        "adapters and frozen layers under tensor/pipeline/context/expert parallelism follow the same per-rank split, but no multi-GPU measurement checks them yet"));
    }
  }
}

}  // namespace vramplan
