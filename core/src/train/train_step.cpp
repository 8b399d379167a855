// One training step, moment by moment. Persistent memory (weights, optimizer states, batch) sits
// under everything; the forward pass piles up saved tensors layer by layer; the loss head adds the
// logits; backward frees saved tensors while gradients appear; the optimizer step adds its
// temporaries. Each candidate moment below is a place where measurement showed a peak
// (shared/measure/analysis.md section 5), with every live tensor classified into a breakdown term.
// Cost is O(layer kinds + layers) with no per-token work.
#include "train/train_step.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string>

#include "diagnostics/warning_codes.h"
#include "format.h"
#include "gpu/device_overhead.h"
#include "inference/kv_cache.h"
#include "parallel/fsdp_mixed_precision.h"
#include "parallel/fsdp_bnb_quant_state.h"
#include "parallel/fsdp_frozen_unit_hooks.h"
#include "parallel/fsdp_nf4_shard.h"
#include "parallel/fsdp_stream_pools.h"
#include "parallel/shard.h"
#include "parallel/zero2_accumulation.h"
#include "parallel/zero3_gather.h"
#include "parallel/zero3_sub_groups.h"
#include "planner/prepared.h"
#include "train/activations.h"
#include "train/flash_attention_backward.h"
#include "train/liger_chunked_loss.h"
#include "train/load_phase.h"
#include "train/logits_loss.h"
#include "train/moment.h"
#include "train/online_rl.h"
#include "train/optimizer.h"
#include "train/precision.h"
#include "train/preference.h"
#include "train/train_plan.h"
#include "model/video_tokens.h"
#include "train/vision_memory.h"
#include "train/rope_cache.h"
#include "train/weights.h"
#include "util/checked_math.h"

namespace vramplan {
namespace {

// Element bytes of a layer's MLP intermediates: the matmul dtype, or fp32 where bnb 4-bit linears
// return their fp32 input's dtype under autocast (activations.h Bnb4FollowsInput).
int64_t MlpActBytes(const LayerSaved& saved, const PrecisionModel& prec) {
  return saved.mlp_act_bytes > 0 ? saved.mlp_act_bytes : prec.matmul;
}

// Whether a layer under Liger's kernels runs peft's LoRA (no dropout, no DoRA) on its `slot`
// projection (the moments of Liger's SwiGLU MLP that depend on it: measured_cpu_kernels.json).
bool LigerLoraAt(const LayerPlan& lp, const LayerKind& kind, const LoraConfig& lora, LinearSlot slot) {
  if (!lp.lora || lora.dropout > 0 || lora.use_dora) return false;
  for (const auto& l : kind.linears) {
    if (l.slot == slot && IsLoraTarget(l, lora)) return true;
  }
  return false;
}

// peft's `* scaling`: the Python float becomes a 0-dim tensor on the CPU: a float64 scalar and its
// fp32 cast for fp32 tensors, a 16-bit scalar for 16-bit ones (measured: LG01 bf16, LG02 fp32); on
// CUDA a host-side wrapped number.
int64_t CpuScalarBytes(bool on_cpu, const PrecisionModel& prec) { return !on_cpu ? 0 : prec.half ? prec.matmul : 8 + 4; }

int64_t BreakdownBytes(const Result& r, const char* key) {
  for (const Term& t : r.gpu.breakdown) {
    if (t.key == key) return t.bytes;
  }
  return 0;
}

// PPO's critic (TRL PPOTrainer's value_model, the policy's architecture by default here): trained
// in full (TRL applies the PEFT config to the policy only) and without gradient checkpointing
// (PolicyAndValueWrapper.gradient_checkpointing_enable enables it on the policy only). Its states
// and saved activations are those of the same model's SFT step with the lm_head in place of the
// one-output score head (an over-estimate by the lm_head's weights and logits).
struct CriticMemory {
  int64_t weights = 0, states = 0, grads = 0, activations = 0;
};

struct LayerInfo {
  LayerSaved saved;
  int64_t grad_bytes = 0;       // gradients this layer produces
  int64_t down_grad_bytes = 0;  // ... of which the MLP down projection (produced first)
  int64_t pre_attn_grad_bytes = 0;  // produced before the attention core's backward (MLP, norms, o_proj)
  int64_t mlp_grad_bytes = 0;       // ... of which the MLP linears and the pre-MLP norm (before that norm's input gradient)
  int64_t kept_forward_bytes = 0;     // what stays saved after this layer's forward (ckpt: its input)
  int64_t intermediate = 0;
  bool gated = true;
  // Live from this layer's forward to the end of the forward, outside its saved tensors (the
  // forward timeline points add them up layer by layer).
  int64_t kv_bytes = 0;             // use_cache: this layer's k and v
  int64_t autocast_bytes = 0;       // amp: cached 16-bit casts of its trainable weights and adapters
  int64_t autocast_unsaved_bytes = 0;  // ... of which no op saves without checkpointing (LoRA A casts on a no-grad input)
  int64_t autocast_bias_bytes = 0;  // ... and of its trainable biases
  int64_t rng_state_bytes = 0;      // checkpointing on the CPU: the RNG state its checkpoint stores
  // Full checkpointing: the layer's input, kept by its checkpoint through its own backward, when the
  // recomputed layer does not save that very tensor (16-bit input: RMSNorm saves an fp32 copy).
  int64_t recomputed_input_bytes = 0;
  size_t kind = 0;                  // layers with the same `kind` are identical (their memo entry, below)
  int64_t offloaded_bytes = 0;      // train.activation_offload: what it keeps lives in host RAM instead
};

// torch.utils.checkpoint stores torch.get_rng_state() (5056 B, a CPU tensor: host memory on CUDA).
constexpr int64_t kCpuRngStateBytes = 5056;

// Of two candidates for one instant of the timeline (two statements of one op whose highest is not
// known in closed form), the one that is higher once on the rank (the first on a tie).
Moment HigherOnRank(const Moment& a, const Moment& b, const RankView& view) {
  Moment ra = a, rb = b;
  view.Apply(&ra);
  view.Apply(&rb);
  return rb.Total() > ra.Total() ? b : a;
}

// result.vision for a VLM (io/result_json.cpp writes it only then).
void FillVisionResult(const VisionTrainMemory& v, const Scenario& sc_samples, Result* r) {
  VisionResult& out = r->vision;
  out.present = true;
  out.tokens_per_image = DecoderTokens(v.per_image);
  out.patches_per_image = v.per_image.patches;
  out.image_tokens = v.image_tokens_per_sample;
  out.llm_tokens = sc_samples.train.seq_len + v.image_tokens_per_sample + v.video_tokens_per_sample;
  out.takes_video = TakesVideo(sc_samples.model.vision);
  out.tokens_per_video = DecoderTokens(v.per_video);
  out.patches_per_video = v.per_video.patches;
  out.video_tokens = v.video_tokens_per_sample;
  out.cross_attention_kv_bytes = v.cross_attention_kv_bytes;
  out.tower_params = v.tower_params;
  out.tower_weight_bytes = v.weight_bytes;
  out.tower_trainable_params = v.trainable_params;
  out.tower_activation_bytes = v.activation_bytes;
}

}  // namespace

void EstimateTraining(const Scenario& sc_samples, const RankShard& rank, const Prepared& prepared, Result* r, bool explain) {
  // Preference objectives forward chosen and rejected rows concatenated: the step runs on
  // micro_batch_size x 2 rows (train/preference.h); everything below sees the rows.
  const int64_t rows_per_sample = RowsPerSample(sc_samples.train.objective);
  std::optional<Scenario> rows_scenario;
  // Vision-language models: seq_len counts the text tokens; the decoder runs over them and the
  // image tokens (train/vision_memory.h).
  const int64_t image_tokens = VisionLlmTokens(sc_samples) - sc_samples.train.seq_len;
  // Attention sinks (gpt-oss, MiMo-V2-Flash): transformers has no SDPA path for them
  // (GptOssPreTrainedModel._supports_sdpa = False: the default resolves to eager, an explicit "sdpa"
  // raises), so an SDPA step is the eager one (warned below).
  const bool sinks_run_eager = sc_samples.train.attention == AttentionImpl::kSdpa && HasAttentionSinks(sc_samples.model);
  if (rows_per_sample > 1 || image_tokens > 0 || sinks_run_eager) {
    rows_scenario = sc_samples;
    rows_scenario->train.micro_batch_size *= rows_per_sample;
    rows_scenario->train.seq_len += image_tokens;
    if (rows_scenario->train.typical_seq_len > 0) rows_scenario->train.typical_seq_len += image_tokens;
    if (sinks_run_eager) rows_scenario->train.attention = AttentionImpl::kEager;
  }
  const Scenario& sc = rows_scenario ? *rows_scenario : sc_samples;
  const bool preference = sc.train.objective != Objective::kSft;
  // GRPO / PPO (train/online_rl.h): rows are completions of seq_len tokens (prompt + completion).
  const bool online_rl = IsOnlineRl(sc.train.objective);
  const bool ppo = sc.train.objective == Objective::kPpo;
  const ModelSpec& model = sc.model;
  const TrainConfig& train = sc.train;
  const FrameworkConfig& fw = sc.framework;
  // `stored`: the parameters', gradients' and optimizer states' precision; `prec`: what the layers
  // compute in (the same, except FSDP's 16-bit mixed precision over fp32 parameters:
  // parallel/fsdp_mixed_precision.h).
  const PrecisionModel stored = PrecisionFor(train.precision, train.autocast);
  const PrecisionModel prec = FsdpComputePrecision(sc, stored);
  const bool fsdp_16bit_units = FsdpComputesIn16Bit(sc);
  const std::shared_ptr<const TrainPlan> plan_for_method = prepared.TrainPlanFor(model, train, stored);
  const TrainPlan& plan = *plan_for_method;
  const bool legacy = fw.preset == FrameworkPreset::kTorch113Hf444;
  const bool on_cpu = fw.device == Device::kCpu;
  const int64_t b = train.micro_batch_size, s = train.seq_len, T = b * s;
  const int64_t h = model.hidden_size, V = model.vocab_size, L = model.num_layers;

  ActivationContext ctx;
  ctx.batch = b;
  ctx.seq = s;
  ctx.prec = prec;
  ctx.attention = train.attention;
  ctx.norm_saves_squared = fw.rmsnorm_saves_squared_input;
  ctx.attention_mask = fw.attention_mask;
  ctx.padded_sdpa_mask = train.attention == AttentionImpl::kSdpa && fw.attention_mask && !train.packing && b > 1;
  ctx.quantized_base = train.method == TrainMethod::kQlora;
  ctx.qlora_bits = train.qlora_bits;
  ctx.gptq = train.qlora_backend == QloraBackend::kGptq;
  ctx.torchao = train.qlora_backend == QloraBackend::kTorchao;
  ctx.torchao_compiled = ctx.torchao && fw.torch_compile;
  ctx.quantize_targets_only = fw.model_load == ModelLoad::kTorchtune01;
  ctx.lora = &train.lora;
  ctx.adapter_bytes = fsdp_16bit_units ? 2 : plan.adapter_bytes_per_param;  // FSDP casts the adapters with their unit
  ctx.attention_dropout = train.attention == AttentionImpl::kEager ? model.attention_dropout : 0.0;  // fused kernels regenerate it
  ctx.hidden_dropout = model.hidden_dropout;
  ctx.softmax_fp32 = model.softmax_fp32;
  ctx.scale_is_tensor = model.scale_is_tensor;
  ctx.norm_kind = model.norm_kind;
  ctx.kernels = train.kernels;
  ctx.cpu = on_cpu;

  // ---- persistent memory
  WeightMemory weights = ComputeWeightMemory(model, train, plan, stored, legacy, fw.model_load, &prepared.params, explain);
  if (rank.data.fsdp && rank.data.dp > 1 && train.method == TrainMethod::kQlora && train.qlora_backend == QloraBackend::kTorchao) {
    // FSDP's shards of torchao NF4 weights keep compact quantization factors (parallel/fsdp_nf4_shard.h).
    const int64_t saved = TorchaoNf4ShardedSavedBytes(weights.quantized_linear_params);
    weights.bytes -= saved;
    if (explain) weights.explain += "; FSDP's NF4 shards hold compact quantization factors (new_zeros): - " + Gib(saved) + " = " + BytesExplained(weights.bytes);
  }
  // transformers <= 4.41 Mistral / Mixtral: each attention layer's cos/sin cache (train/rope_cache.h);
  // buffers, so ZeRO-3 / FSDP leave them whole on every rank (kept out of the sharded data below).
  const int64_t rope_cache_bytes = fw.rope_cache_per_layer ? PerLayerRopeCacheBytes(model, train, stored) : 0;
  if (rope_cache_bytes > 0) {
    weights.bytes += rope_cache_bytes;
    if (explain) weights.explain += "; + per-layer RoPE cos/sin caches (framework.rope_cache_per_layer) " + Gib(rope_cache_bytes) + " = " + BytesExplained(weights.bytes);
  }
  OptimizerMemory opt = ComputeOptimizerMemory(train, stored, plan.trainable_tensors, legacy, fw.adamw_foreach_denom_copy, fw.device, explain);
  // A VLM's vision tower and projector (train/vision_memory.h): held beside the decoder; when they
  // train, their gradients (produced last in backward) and optimizer states at the decoder's rate
  // per trained parameter; their saved tensors live from their forward to the end of backward.
  const VisionTrainMemory vision = ComputeVisionTraining(sc, b, stored, prec);
  if (vision.tower_params > 0) {
    weights.bytes += vision.weight_bytes;
    if (explain) weights.explain += "; + vision tower and projector " + std::to_string(vision.tower_params) + " params";
    const double state_rate = plan.trainable_params > 0 ? static_cast<double>(opt.state_bytes) / static_cast<double>(plan.trainable_params) : 8.0;
    opt.state_bytes += static_cast<int64_t>(state_rate * static_cast<double>(vision.trainable_params));
    FillVisionResult(vision, sc_samples, r);
  }
  const int64_t grads_total = (plan.trainable_params - plan.lora_params) * prec.grad + plan.lora_params * plan.adapter_bytes_per_param +
                              vision.gradient_bytes;
  int64_t batch_bytes = fw.batch_on_device ? (fw.attention_mask ? 24 : 16) * T : 0;
  // KTO's collator adds the KL batch (KL_input_ids, KL_attention_mask, KL_completion_mask: each
  // completion paired with another row's prompt, the same shape) and a bool label per completion
  // (trl/trainer/kto_trainer.py, _compute_kl_logps; measured: the T rows of measured_cpu_dpo.json).
  if (fw.batch_on_device && train.objective == Objective::kKto) batch_bytes += 24 * T + b;
  // unsloth's CausalLM_fast_forward (models/llama.py, c069555) creates self.extra_ignored_labels =
  // torch.full((max_seq_length, 1), -100) on the device at its first step and keeps it (the column
  // hstack'ed onto labels[..., 1:]); max_seq_length taken as the training length (measured: the UL
  // rows of measured_cpu_unsloth_loss.json, alive at the step's start).
  if (train.loss == LossImpl::kUnsloth && !preference) batch_bytes += 8 * s;
  const int64_t workspace = CublasWorkspaceBytes(sc, prepared.device);
  r->trainable_params = plan.trainable_params + vision.trainable_params;
  r->gpu.gradient_bytes = grads_total;
  r->gpu.optimizer_state_bytes = opt.state_bytes;
  r->gpu.paged_bytes = opt.paged_bytes;

  // ---- per-layer saved tensors (memoized per distinct kind and plan)
  const Checkpointing ckpt = train.gradient_checkpointing;
  const bool eager = train.attention == AttentionImpl::kEager;
  std::vector<LayerInfo> layers;  // filled below by copying each layer's memoized kind (no zero-fill first)
  layers.reserve(static_cast<size_t>(L));
  struct Memo {
    uint8_t kind;
    LayerPlan plan;
    LayerInfo info;
  };
  std::vector<Memo> memo;
  bool any_qk_grad = false;
  int64_t ckpt_layers = 0;
  int64_t selective_layers = 0;
  int64_t autocast_cache = 0;  // amp: cached 16-bit casts of trainable layer weights (alive until forward ends)
  int64_t autocast_bias_cache = 0;  // amp: cached 16-bit casts of trainable biases (addmm): never saved
  int64_t autocast_unsaved_cache = 0;  // amp without full checkpointing: cached casts no op saves
  const bool offload = train.activation_offload;
  int64_t offloaded_host = 0;  // host RAM holding the offloaded activations at the end of the forward
  for (int64_t i = 0; i < L; ++i) {
    const uint8_t k = model.layer_kind[static_cast<size_t>(i)];
    const LayerPlan& lp = plan.layers[static_cast<size_t>(i)];
    LayerInfo* info = nullptr;
    for (auto& m : memo) {
      if (m.kind == k && m.plan.input_requires_grad == lp.input_requires_grad && m.plan.weights_trainable == lp.weights_trainable && m.plan.lora == lp.lora) info = &m.info;
    }
    if (info == nullptr) {
      const LayerKind& kind = model.kinds[k];
      LayerInfo li;
      li.saved = ComputeLayerSaved(kind, lp, ctx);
      li.intermediate = kind.mlp.num_experts > 0 ? kind.mlp.intermediate * kind.mlp.experts_per_token : kind.mlp.intermediate;
      li.gated = kind.mlp.kind == MlpKind::kGated;
      for (const auto& l : kind.linears) {
        int64_t g = LinearGradBytes(l, lp, train, plan, prec.grad);
        li.grad_bytes += g;
        if (l.role != ModuleRole::kAttention || IsAttentionOutput(l.slot)) li.pre_attn_grad_bytes += g;
        if (l.role != ModuleRole::kAttention) li.mlp_grad_bytes += g;
        if (IsDownProjection(l.slot)) li.down_grad_bytes += g;
      }
      if (lp.weights_trainable) {
        int64_t extra = 0;
        for (const auto& n : kind.norms) extra += n.Params();
        extra += kind.extra_attention_params + kind.extra_router_params;
        li.grad_bytes += prec.grad * extra;
        li.pre_attn_grad_bytes += prec.grad * extra / 2;  // the post-attention norm of two
        for (const auto& n : kind.norms) {
          if (n.slot == NormSlot::kPreMlp) li.mlp_grad_bytes += prec.grad * n.Params();
        }
      }
      li.kind = memo.size();
      memo.push_back(Memo{k, lp, li});
      info = &memo.back().info;
    }
    layers.push_back(*info);
    LayerInfo& li = layers.back();
    any_qk_grad = any_qk_grad || li.saved.qk_require_grad;
    const bool participates = lp.input_requires_grad || lp.weights_trainable || lp.lora;
    if (ckpt == Checkpointing::kFull) {
      li.kept_forward_bytes = participates ? prec.residual * T * h : 0;
      ckpt_layers += participates ? 1 : 0;
      li.rng_state_bytes = on_cpu && participates ? kCpuRngStateBytes : 0;
      // RMSNorm's x.to(float32) is the input itself in fp32; LayerNorm saves its input as is.
      // unsloth's / Liger's RMSNorm Function saves the input itself.
      const bool input_saved = lp.input_requires_grad && (model.norm_kind != NormKind::kRmsNorm || prec.residual == 4 || ctx.FastRmsNorm());
      li.recomputed_input_bytes = participates && !input_saved ? li.kept_forward_bytes : 0;
    } else if (ckpt == Checkpointing::kSelective && eager && li.saved.attention_core_bytes > 0) {
      // The attention core (repeat_kv, q k^T, softmax, probs v) is recomputed in backward: its own saves
      // vanish and the checkpoint keeps its arguments q_embed, k_embed, v (fixtures *.selective).
      li.kept_forward_bytes = li.saved.total_bytes - li.saved.attention_core_bytes + li.saved.core_input_bytes;
      ++selective_layers;
      li.rng_state_bytes = on_cpu ? kCpuRngStateBytes : 0;
    } else {
      li.kept_forward_bytes = li.saved.total_bytes;
    }
    if (prec.autocast && lp.weights_trainable) {
      for (const auto& l : model.kinds[k].linears) {
        li.autocast_bytes += 2 * l.in_features * l.out_features * l.copies;
        if (l.bias) li.autocast_bias_bytes += 2 * l.out_features * l.copies;
      }
    }
    if ((prec.autocast || prec.autocast16) && lp.lora) {
      // Trainable fp32 adapters are leaves that require grad: autocast caches their casts too.
      li.autocast_bytes += li.saved.adapter_cast_bytes;
      li.autocast_unsaved_bytes = ckpt == Checkpointing::kFull ? 0 : li.saved.adapter_cast_unsaved_bytes;
    }
    autocast_cache += li.autocast_bytes;
    autocast_bias_cache += li.autocast_bias_bytes;
    autocast_unsaved_cache += li.autocast_unsaved_bytes;
    if (offload) {
      // What the layer keeps goes to host RAM as it is saved and comes back for its backward
      // (docs/frameworks.md). Full checkpointing: the checkpoint input only (unsloth's
      // Unsloth_Offloaded_Gradient_Checkpointer: hidden_states.to("cpu") in forward, .to("cuda") in
      // backward; a custom autograd.Function, so no RNG state is stored); otherwise every saved
      // tensor (torchtune OffloadActivations' pack hook).
      li.offloaded_bytes = li.kept_forward_bytes;
      offloaded_host += li.kept_forward_bytes;
      li.kept_forward_bytes = 0;
      if (ckpt == Checkpointing::kFull) li.rng_state_bytes = 0;
    }
  }

  // ---- shared and head tensors
  const LayerKind& last_kind = model.kinds[model.layer_kind.back()];
  const int64_t rot_dim = static_cast<int64_t>(last_kind.attention.head_dim * model.rope_fraction);
  const int64_t cos_sin = (any_qk_grad && rot_dim > 0) ? 2 * s * rot_dim * prec.rope : 0;
  // The eager mask: Llama-style models build a 4-D causal mask (b, 1, s, s); GPT-2 keeps the causal
  // part in a buffer and adds an extended padding mask (b, 1, 1, s).
  const bool learned_positions = model.position_embedding_rows > 0;
  const int64_t mask_bytes = !eager ? 0
                             : learned_positions ? b * s * prec.rope
                             : (fw.attention_mask ? checked::Mul(b, s, s, prec.rope) : checked::Mul(s, s + 1, prec.rope));
  // SDPA's bool masks (transformers >= 4.53 masking_utils sdpa_mask, one per mask type the model
  // uses, shared by its layers; each layer's SDPA keeps its own converted copy, activations.cpp): the
  // padding mask of an unpacked batch, and the sliding / chunked one from the window on. Like the
  // eager mask they are layer arguments the checkpoints keep until each layer's backward.
  int64_t sdpa_shared_masks = 0;
  if (train.attention == AttentionImpl::kSdpa) {
    bool local = false;
    for (const LayerKind& k : model.kinds) local = local || SdpaLocalMaskBuilt(k.attention, s);
    sdpa_shared_masks = ((ctx.padded_sdpa_mask ? 1 : 0) + (local ? 1 : 0)) * checked::Mul(b, s, s);
  }
  int64_t ckpt_shared = 0;
  if (ckpt == Checkpointing::kFull && ckpt_layers > 0) ckpt_shared = mask_bytes + sdpa_shared_masks + (learned_positions ? 0 : 8 * s);
  if (ckpt == Checkpointing::kSelective && selective_layers > 0) ckpt_shared = mask_bytes + sdpa_shared_masks;  // the mask is a core argument
  const int64_t rng_states = on_cpu && !(offload && ckpt == Checkpointing::kFull) ? kCpuRngStateBytes * (ckpt == Checkpointing::kFull ? ckpt_layers : selective_layers) : 0;

  bool final_req = plan.embedding_trainable;
  for (const auto& lp : plan.layers) final_req = final_req || lp.weights_trainable || lp.lora;
  const int64_t final_norm_saved = NormSavedBytes(model.final_norm, model.norm_kind, final_req, plan.final_norm_trainable, T, ctx);
  // Liger's fused linear cross-entropy runs the lm_head inside its Function: no mm saves the final
  // norm's output (the Function keeps its gradients instead: logits_loss.cpp).
  const bool fused_head = train.loss == LossImpl::kFusedLinear && !preference;
  // Cut Cross Entropy (logits_loss.cpp) takes lm_head.weight as it is (no F.linear, no autocast cast)
  // and saves the final norm's output itself: counted in the loss head's saved set.
  const bool cce_head = train.loss == LossImpl::kCce && !preference;
  int64_t lm_head_saved = 0;
  if (plan.lm_head_trainable && !fused_head && !cce_head) lm_head_saved += (prec.autocast ? 2 : prec.residual) * T * h;
  if (final_req && prec.autocast && !cce_head) lm_head_saved += 2 * V * h;  // bf16 weight cast, also when frozen or tied
  const bool norm_out_saved = (plan.lm_head_trainable && !prec.autocast && !fused_head) || cce_head;
  const int64_t norm_out_extra = norm_out_saved ? 0 : prec.residual * T * h;
  const bool upcast = fw.loss_upcast_logits && model.loss_upcasts_logits && (!fw.loss_shift_logits_copy || model.legacy_logits_upcast);
  // accelerate's convert_outputs_to_fp32 (train/preference.h AmpOutputsFp32): the model's 16-bit
  // logits come back with an fp32 copy; a preference / RL head computes on that copy, the SFT loss
  // ran inside the forward and the copy sits beside what it saved.
  const bool amp_outputs_fp32 = AmpOutputsFp32(sc, prec.autocast || prec.autocast16);
  LossHead loss = ComputeLossHead(train, fw, prec, V, h, plan.lm_head_trainable, upcast, explain, amp_outputs_fp32 && !preference);
  PreferenceHead pref;
  const bool outputs_fp32 = preference && amp_outputs_fp32;
  const int64_t ld = outputs_fp32 ? 4 : prec.matmul;
  const int64_t converted_from = outputs_fp32 ? prec.matmul : 0;
  if (preference) {
    // TRL passes no labels: the logits stay in the lm_head's output dtype (no .float() upcast).
    // GRPO forwards with logits_to_keep = completion + 1 (GRPOTrainer._get_per_token_logps_and_entropies);
    // TRL PPO's forward() returns every position's logits and slices the completion's.
    const int64_t head_seq = online_rl && !ppo ? CompletionTokens(train) + 1 : s;
    pref = ComputePreferenceHead(train, sc_samples.train.micro_batch_size, b, head_seq, V, ld, prec.autocast || prec.autocast16, on_cpu, explain, converted_from);
    if (LigerChunkedLossApplies(train)) {
      // TRL use_liger_kernel (train/liger_chunked_loss.h): the hidden state goes to Liger's chunked
      // loss, no logits; DPO runs the reference backbone (no logits either) before the loss.
      const LigerChunkedHead liger =
          ComputeLigerChunkedHead(train, b, head_seq - 1, s, V, h, prec.residual, prec.weight, prec.matmul, prec.autocast || prec.autocast16, explain);
      pref.policy = liger.policy;
      pref.alive_at_reference_bytes = liger.policy_hidden_bytes;
      pref.reference_pass_bytes = liger.reference_hidden_bytes;
      pref.sft_term_bytes = 0;  // not modeled with Liger's loss (docs/post_training.md)
      lm_head_saved = 0;  // the lm_head module never runs (Liger multiplies by its weight itself)
    }
    loss = pref.policy;
  }
  // keep_outputs: the output object (fp32 logits, and the KV cache with use_cache) lives until
  // backward ends; otherwise it is dropped before backward and the cache with it. (TRL's
  // _compute_loss drops its outputs when it returns, before the Trainer's backward.)
  const int64_t keep_outputs = fw.keep_outputs && !preference ? loss.keep_outputs_bytes : 0;
  const int64_t head_saved = final_norm_saved + lm_head_saved;

  int64_t layers_kept = 0;
  for (const auto& li : layers) layers_kept += li.kept_forward_bytes;
  const int64_t embedding_dropout_mask = (model.embedding_dropout > 0 && any_qk_grad) ? T * h : 0;
  // Learned absolute positions: the position embedding saves its (freshly built) int64 indices.
  const int64_t position_ids_saved = (model.position_embedding_rows > 0 && plan.embedding_trainable) ? 8 * s : 0;
  const int64_t saved_total = cos_sin + ckpt_shared + layers_kept + head_saved + loss.saved_bytes + embedding_dropout_mask + position_ids_saved;
  // unsloth's offloaded checkpointer keeps the layers' other arguments (mask, position ids, cos/sin)
  // as Python attributes of its ctx, not as saved tensors: alive, but not "saved for backward".
  r->gpu.saved_activation_bytes = saved_total - (offload && ckpt == Checkpointing::kFull ? ckpt_shared + cos_sin : 0) + vision.activation_bytes;

  // KV cache returned by the model during training (use_cache=True without checkpointing).
  int64_t kv_cache = 0;
  if (fw.use_cache && ckpt != Checkpointing::kFull && !preference) {  // TRL forwards with use_cache=False
    for (int64_t i = 0; i < L; ++i) {
      const AttentionGeometry& g = model.kinds[model.layer_kind[static_cast<size_t>(i)]].attention;
      // k after RoPE (q_after_rope dtype) and v (matmul dtype). The eager core saves repeat_kv'd
      // copies, except when repeat_kv returns its input (one query head per KV head) or an expand()
      // view, and the matmul folds (batch, heads) into a view: then the saved k (not under autocast,
      // which casts it) and v are the cache's own storages (measured: the fp32 use_cache rows of
      // measured_cpu_random.json).
      const LayerInfo& li = layers[static_cast<size_t>(i)];
      const bool eager_saves = eager && li.saved.qk_require_grad;
      // (with several heads and a batch > 1 the matmul's reshape copies; measured).
      const bool same_tensor = (g.num_kv_heads == g.num_heads || g.num_kv_heads == 1) && (b == 1 || g.num_heads == 1);
      const bool k_shared = eager_saves && same_tensor && !prec.autocast;
      const bool v_shared = eager_saves && same_tensor;
      layers[static_cast<size_t>(i)].kv_bytes = T * g.num_kv_heads * ((k_shared ? 0 : g.head_dim * QkBytes(prec, g.no_rope)) + (v_shared ? 0 : g.v_head_dim * prec.matmul));
      kv_cache += layers[static_cast<size_t>(i)].kv_bytes;
    }
  }

  const int64_t kept_kv_cache = fw.keep_outputs ? kv_cache : 0;
  // torchtune optimizer_in_bwd (torchtune/training/memory.py, create_optim_in_bwd_wrapper and
  // register_optim_in_bwd_hooks, v0.2 on): one optimizer per parameter, stepped in the parameter's
  // post-accumulate-grad hook, then zero_grad() sets its gradient to None. A gradient lives only
  // from its AccumulateGrad to its own step; the step's temporaries are one tensor's. torchtune
  // refuses gradient accumulation with it (warned below).
  const bool in_bwd = train.optimizer_in_backward;
  auto one_tensor_step = [&](int64_t elements, int64_t dtype_bytes) -> int64_t {
    if (elements <= 0) return 0;
    TensorShape t;
    t.rows = elements;
    t.dtype_bytes = dtype_bytes;
    return ComputeOptimizerMemory(train, stored, {t}, legacy, fw.adamw_foreach_denom_copy, fw.device, false).step_temporary_bytes;
  };
  const int64_t grads_resident = train.grad_accum_steps > 1 && !in_bwd ? grads_total : 0;

  // ---- data parallel: what one rank holds (the shard step, parallel/shard.h), applied to every moment below
  const DataParallel& dp = rank.data;
  // DeepSpeed's gradient buckets hold the trainable parameters' gradients (16-bit under ZeRO's
  // fp16/bf16 modes, which also cast LoRA adapters: engine module.half()/bfloat16()).
  const int64_t bucket_dtype = plan.lora_params > 0 && plan.trainable_params == plan.lora_params ? std::min<int64_t>(plan.adapter_bytes_per_param, prec.weight)
                                                                                               : prec.grad;
  RankView view;
  int64_t zero3_sub_group_elements = 0;  // DeepSpeed ZeRO-3: the largest optimizer sub-group (explanation)
  {
    const int64_t vh = model.vocab_size * model.hidden_size;
    const int64_t root_bytes = (vh * (model.tied_embeddings ? 1 : 2) + model.final_norm.Params()) * prec.weight;
    // bitsandbytes' QuantState is not in the sharded parameter data: never gathered, whole on the rank.
    const int64_t unsharded = FsdpUnshardedWeightBytes(dp, train, weights.quant_state_bytes) + (dp.shard_params ? rope_cache_bytes : 0);
    int64_t layer_bytes = L > 0 ? std::max<int64_t>(0, weights.bytes - unsharded - root_bytes) / L : 0;
    // FSDP mixed precision gathers 16-bit copies of the fp32 units (parallel/fsdp_mixed_precision.h).
    const int64_t gathered_root = fsdp_16bit_units ? root_bytes / prec.weight * 2 : root_bytes;
    if (fsdp_16bit_units) layer_bytes = layer_bytes / prec.weight * 2;
    int64_t max_layer_grads = 0;
    for (const auto& li : layers) max_layer_grads = std::max(max_layer_grads, li.grad_bytes);
    const int64_t unit_dtype = fsdp_16bit_units ? 2 : prec.weight;
    ShardedUnitBytes units;
    units.layer_weight_bytes = layer_bytes;
    units.root_weight_bytes = gathered_root;
    units.embedding_unit_bytes = vh * unit_dtype;
    units.root_rest_bytes = model.final_norm.Params() * unit_dtype;
    units.max_layer_grad_bytes = max_layer_grads;
    units.all_grad_bytes = grads_total;
    units.bucket_dtype_bytes = bucket_dtype;
    units.grad_dtype_bytes = prec.grad;
    view = rank.StatesView(units);
    view.unsharded_weight_bytes = unsharded;
    // DeepSpeed ZeRO-3 gathers leaf modules, keeps the forward's tail for its backward and never
    // partitions small parameters (parallel/zero3_gather.h); the elements in the weights' dtype.
    if (dp.shard_params && !dp.fsdp && !dp.keep_gathered) {
      const Prepared::Zero3Count z = prepared.Zero3CountFor(model, Zero3KnobsOf(sc.parallel));
      const int64_t elements = z.elements;
      const Zero3Gathered& g = z.gathered;
      // Whole bytes per element for 16/32-bit weights (the model's buffers, a few bytes, left out);
      // the mean for quantized layers (QLoRA: packed 4-bit layers, 16-bit embeddings).
      // bitsandbytes' QuantState is not gathered (it is whole on the rank already): the gathered
      // parameter data is the weights less it.
      const int64_t gathered_data = weights.bytes - unsharded;
      const int64_t per_element = elements > 0 ? gathered_data / elements : 0;
      auto bytes_of = [&](int64_t n) -> int64_t {
        if (per_element >= 1) return n * per_element;
        if (elements > 0) return static_cast<int64_t>(static_cast<double>(n) * static_cast<double>(gathered_data) / static_cast<double>(elements));
        return 0;
      };
      view.gathered_bytes = bytes_of(g.Total());
      view.zero3_gather_pool_bytes = bytes_of(g.kept + g.prefetched);
    }
    // DeepSpeed ZeRO-3 steps one sub-group at a time (parallel/zero3_sub_groups.h): the largest
    // sub-group's fp32 gradient (a moment with its 16-bit flat copy beside it) and the optimizer's
    // temporaries over that one flat fp32 tensor. Not for Adafactor: its states and temporaries are
    // sized per (factored) parameter in every ZeRO stage here, and one flat tensor would count its
    // unfactored update for ZeRO-3 alone (a ZeRO-3 step above ZeRO-2's by GBs: Physics test). What
    // DeepSpeed's flat partitions do to Adafactor's factoring, in any stage, is not modeled.
    if (dp.shard_params && !dp.fsdp && !dp.offload_states && stored.master > 0 && !in_bwd && train.optimizer != Optimizer::kAdafactor) {
      const int64_t sub_group = Zero3LargestSubGroupElements(plan.trainable_tensors, dp.dp);
      view.zero3_step_temporary_bytes = std::max(one_tensor_step(sub_group, 4), (bucket_dtype + 4) * sub_group);
      zero3_sub_group_elements = sub_group;
    }
  }
  const int64_t weights_dev = view.Weights(weights.bytes), states_dev = view.States(opt.state_bytes);
  // The frozen reference copy: the policy's weights in their dtype, loaded at the trainer's start
  // and resident through the step; under ZeRO-3 / FSDP TRL prepares it sharded like the policy
  // (dpo_trainer.py prepare_deepspeed / prepare_fsdp).
  const bool reference_copy = ReferenceCopyResident(train) || RlReferenceCopyResident(train);
  const int64_t reference_weights = !reference_copy ? 0 : dp.shard_params ? (weights.bytes + dp.dp - 1) / dp.dp : weights.bytes;
  // ---- GRPO / PPO: the rollout engine, PPO's critic and reward model (docs/post_training.md)
  RolloutEngine engine;
  CriticMemory critic;
  int64_t reward_weights = 0, rollout_buffer = 0;
  if (online_rl) {
    engine = ComputeRolloutEngine(sc, prepared, prec.matmul);
    // ZeRO-3 without vLLM: generate() runs on the gathered policy (TRL ds3_gather_for_generation).
    if (!engine.vllm && dp.shard_params) engine.cache_bytes += weights.bytes - weights_dev;
    if (!engine.colocated) engine.weight_bytes = engine.cache_bytes = engine.asleep_weight_bytes = engine.asleep_cache_bytes = 0;
    // generate() leaves nothing behind once it returns.
    if (!engine.vllm) engine.asleep_weight_bytes = engine.asleep_cache_bytes = 0;
    // The generated batch kept for steps_per_generation steps (GRPOTrainer._prepare_inputs: the
    // shuffled generation batch, each micro-batch a view of it): prompt and completion ids and masks
    // (int64, 16 B per token), one fp32 advantage per row and the per-token fp32 log-probs computed in
    // the logprob phase (old policy, reference, vLLM's sampling log-probs). _compute_loss then
    // concatenates the micro-batch's ids and masks (16 B per token, the step's batch below).
    const int64_t C = CompletionTokens(train);
    const int64_t logp_rows = (OldPolicyPassRuns(train) ? 1 : 0) + (RlReferencePassRuns(train) ? 1 : 0) + (engine.vllm ? 1 : 0);
    rollout_buffer = checked::Mul(engine.sequences, 16 * s + 4 + 4 * C * logp_rows);
    if (ppo) {
      Scenario cs = sc_samples;
      cs.train.objective = Objective::kSft;
      cs.train.method = TrainMethod::kFull;
      cs.train.gradient_checkpointing = Checkpointing::kNone;
      Result cr;
      EstimateTraining(cs, rank, prepared, &cr, false);
      critic.weights = BreakdownBytes(cr, "weights");
      critic.states = cr.gpu.optimizer_state_bytes;
      critic.grads = cr.gpu.gradient_bytes;
      critic.activations = cr.gpu.saved_activation_bytes;
      // The reward model: frozen, the policy's architecture and load dtype (prepared like the
      // reference: sharded under ZeRO-3).
      reward_weights = critic.weights;
    }
  }
  const LoadPhase load = ComputeLoadPhase(sc, plan, stored, weights_dev, explain, &prepared.load_replay);
  r->gpu.load_reserved_bytes = load.reserved_bytes;
  // A colocated vLLM without sleep mode (vllm_sleep_level 0: no CuMemAllocator) allocates its weights,
  // its profile run's activations and its KV pool through PyTorch's caching allocator inside
  // GRPOTrainer.__init__ (TRL vllm_generation.py _init_vllm), so torch.cuda.max_memory_reserved()
  // after building the trainer counts them; with sleep mode they are in vLLM's own pools, outside
  // torch's counters. The non-torch part and the CUDA graphs (vLLM's `temporary`) are left out.
  if (online_rl && engine.vllm && engine.colocated && sc.train.rollout.vllm_sleep_level == 0 && load.reserved_bytes > 0) {
    const int64_t engine_torch = engine.weight_bytes + engine.cache_bytes - engine.outside_pools_bytes;
    r->gpu.load_reserved_bytes = checked::Add(load.reserved_bytes, engine_torch);
    if (explain) r->gpu.load_explain += "; + the colocated vLLM started in the trainer's __init__ (weights, profile-run activations and KV pool through the caching allocator) " + Gib(engine_torch);
  }
  r->gpu.load_explain = load.explain;

  // ---- the moments, in time order; each one is what the rank holds at that instant
  // The timeline keeps every moment outside the layers and about 16 layers per pass (plus, added by
  // the log, the peak and each phase's highest moment).
  const int64_t stride = std::max<int64_t>(1, L / 16);
  // Marked moments: up to three per marked layer in backward, one in forward, and a few outside.
  MomentLog moments(/*timeline=*/explain, /*expected_kept=*/static_cast<size_t>(4 * (L / stride + 2) + 16));
  // FSDP's root unit (embedding, final norm, lm_head in one unit; parallel.fsdp_embedding_units off)
  // reduces its gradients once, after the embedding's, the last of the backward: FSDP1's root
  // FlatParameter gets its gradient when SplitWithSizesBackward has all its views' gradients
  // (FlatParamHandle._get_unflat_views_unaligned, torch/distributed/fsdp/_flat_param.py) and its
  // post-backward hook runs then; FSDP2 reduces a group whose forward inputs need no gradient (the
  // root's are token ids) in the root's final callback (_fsdp_state.py _root_post_backward_final_callback,
  // _fsdp_param_group.py _register_post_backward_hook: no RegisterPostBackwardFunction without
  // inputs that require grad). So the lm_head's weight gradient is whole on the rank from its
  // matmul's backward to the backward's end. Set below once it exists; one micro-batch per step
  // only (under accumulation the walk keeps every gradient resident and this fresh one is not
  // separated from them).
  int64_t fsdp_root_grad_whole = 0;
  // (With parallel.fsdp_embedding_units the embedding is a unit of its own, reduced at the same
  // moment, and the output layer's unit reduces right after its own backward: not held whole.)
  const bool fsdp_root_grads = dp.fsdp && dp.shard_grads && dp.shard_params && !dp.unsharded_grads_until_step && !in_bwd &&
                               train.grad_accum_steps == 1 && !preference && !online_rl;
  // unsloth's offloaded checkpointing of a LoRA model (unsloth/models/_utils.py
  // Unsloth_Offloaded_Gradient_Checkpointer; FastLanguageModel.get_peft_model ->
  // prepare_model_for_kbit_training -> enable_input_require_grads): the frozen embedding's output is
  // made to require grad, a leaf; the graph's AccumulateGrad node for it keeps it on the device from the
  // embedding to the backward's end (the Function offloads only its own copy). Not saved for backward.
  // Measured: UL05 / UL06 in measured_cpu_unsloth_loss.json (b·s·h at the forward's and backward's peaks).
  // The same Function behind axolotl's and LLaMA-Factory's options; torchtune's OffloadActivations
  // (saved_tensors_hooks, no enable_input_require_grads; its runs carry its chunked loss or its 0.1
  // load) keeps no such leaf.
  const bool torchtune = train.loss == LossImpl::kChunked || fw.model_load == ModelLoad::kTorchtune01;
  const int64_t input_leaf = offload && !torchtune && ckpt == Checkpointing::kFull && ckpt_layers > 0 && plan.lora_params > 0 &&
                                     !plan.embedding_trainable ? prec.residual * T * h : 0;
  int64_t hook_now = 0;  // FSDP1 frozen-unit hooks: what they hold at the backward moments pushed now (explain)
  // DeepSpeed ZeRO-2 under gradient accumulation: a second gradient partition in the backward of
  // every micro-batch after the first (parallel/zero2_accumulation.h). `zero2_produced`: the
  // gradient bytes (as one device holds them) this micro-batch's backward has produced so far.
  const Zero2AccumulationPartition zero2_second =
      Zero2AccumulationPartitionFor(dp, train.grad_accum_steps, in_bwd, plan.trainable_params + vision.trainable_params, bucket_dtype);
  int64_t zero2_produced = 0;
  auto push = [&moments, &view, stride, L, explain, &vision, &fsdp_root_grad_whole, input_leaf, &hook_now, &zero2_second, &zero2_produced,
               grads_total](Moment m) {
    if (m.phase == Phase::kBackward) m.frozen_unit_hook_bytes = hook_now;
    if (m.phase == Phase::kBackward) m.unreduced_gradient_bytes = std::max(m.unreduced_gradient_bytes, fsdp_root_grad_whole);
    if (m.phase == Phase::kForward || m.phase == Phase::kBackward) m.activation_bytes += vision.activation_bytes;
    if ((m.phase == Phase::kForward && m.at != At::kStepStart) || m.phase == Phase::kBackward) m.temporary_bytes += input_leaf;
    view.Apply(&m);
    if (m.phase == Phase::kBackward && zero2_second.partition_bytes > 0) m.gradient_bytes += zero2_second.BytesAfter(zero2_produced, grads_total);
    moments.Add(m, explain && (m.layer < 0 || m.layer % stride == 0 || m.layer == L - 1));
  };
  // A moment of the step: weights, optimizer states (steady state: they exist from the first
  // step on), the batch and the cuBLAS workspace under everything.
  auto step = [&](Phase phase, At at, int64_t layer = -1) {
    Moment m;
    m.phase = phase;
    m.at = at;
    m.layer = layer;
    m.weight_bytes = weights.bytes;
    m.optimizer_state_bytes = opt.state_bytes;
    m.batch_bytes = batch_bytes;
    m.workspace_bytes = workspace;
    m.reference_weight_bytes = reference_weights;
    if (online_rl) {
      m.batch_bytes = rollout_buffer + (fw.batch_on_device ? 16 * T : 0);
      m.rollout_weight_bytes = engine.asleep_weight_bytes;
      m.rollout_cache_bytes = engine.asleep_cache_bytes;
      m.reward_weight_bytes = reward_weights;
      m.critic_weight_bytes = critic.weights;
      m.critic_state_bytes = critic.states;
      // TRL PolicyAndValueWrapper.forward runs the critic first: its saved tensors wait under the
      // policy's forward and backward (one backward over pg_loss + vf_coef * vf_loss).
      if (phase == Phase::kForward || phase == Phase::kBackward) m.critic_activation_bytes = critic.activations;
    }
    return m;
  };
  // -- the model load (train/load_phase.h): the weights and the load's transient; no optimizer
  // states, batch or workspace yet. torch.cuda.max_memory_allocated() includes it.
  {
    Moment m;
    m.phase = Phase::kLoad;
    m.at = At::kModelLoadPeak;
    m.weight_bytes = weights.bytes;
    m.temporary_bytes = load.peak_allocated_bytes - weights_dev;
    m.reference_weight_bytes = reference_weights;  // TRL loads the reference in DPOTrainer.__init__, before training
    m.reward_weight_bytes = reward_weights;
    m.critic_weight_bytes = critic.weights;
    push(m);
    m.at = At::kModelLoaded;
    m.temporary_bytes = 0;
    push(m);
    // A colocated vLLM starts inside GRPOTrainer.__init__ (TRL trl/generation/vllm_generation.py
    // _init_vllm: LLM(gpu_memory_utilization=...), then llm.sleep(level) only with
    // vllm_enable_sleep_mode): its weights and KV pool are on the GPU beside the loaded policy before
    // the first step, so the load phase (what TRL's notebooks print after building the trainer:
    // tests/fixtures/gpu/post_training_runs.json) holds them; asleep, only the sleep level's residue
    // stays (the training moments' rollout bytes).
    if (online_rl && engine.vllm && engine.colocated) {
      m.at = At::kRolloutEngineStarted;
      m.rollout_weight_bytes = engine.weight_bytes;
      m.rollout_cache_bytes = engine.cache_bytes;
      m.running = "rollout";
      push(m);
    }
  }
  // A no-grad forward's last decoder layer over the micro-batch (a reference or log-prob pass).
  // What its forward keeps from the start (inputs_embeds, which LlamaModel.forward holds, the eager
  // causal mask, cos/sin, the cache_position arange) + the layer input and its norm output + q after
  // RoPE and the repeat_kv'd k and v; at eager attention's `+ causal_mask` the scaled scores (16-bit:
  // also their fp32 promotion on the CPU) and the sum, or at the softmax the sum and its fp32 result
  // (measured: the amp rows of measured_cpu_dpo.json, live blocks at the reference's peak).
  auto no_grad_last_layer = [&]() -> int64_t {
    if (L == 0) return 0;
    const AttentionGeometry& g = last_kind.attention;
    const int64_t a = g.num_heads;
    const int64_t kept = (learned_positions ? 0 : prec.residual * T * h) + mask_bytes + (rot_dim > 0 ? 2 * s * rot_dim * prec.rope : 0) + 8 * s;
    // Scores: fp32: the masked sum and the softmax (8 B per score); 16-bit: the sum (2), softmax's
    // fp32 copy of its input and its fp32 result (4 + 4); AMP on the CPU: the scaled scores (2), their
    // fp32 promotion for `+ causal_mask` (4) and the sum (4); on CUDA the promotion is in the kernel.
    const int64_t scores = !eager ? 0 : prec.autocast ? (on_cpu ? 10 : 8) : prec.half ? 10 : 8;
    // The layer's input is inputs_embeds itself in a one-layer model (counted in `kept`).
    const int64_t layer_input = L > 1 || learned_positions ? prec.residual * T * h : 0;
    const int64_t att = kept + layer_input + prec.residual * T * h + T * a * (2 * prec.q_after_rope * g.head_dim + prec.matmul * g.v_head_dim) +
                        (eager ? checked::Mul(scores, b, a, s, s) : prec.matmul * T * a * g.v_head_dim) +
                        // fp32 on the CPU: at `/ math.sqrt(head_dim)` the float64 scalar and its fp32
                        // cast (12 B, as at the checkpointed scores; measured: K04's reference peak).
                        (eager && on_cpu && !prec.half ? 8 + 4 : 0);
    // In the MLP: the layer input (the caller's `hidden_states`), the attention block's sum, its norm
    // output, and act(gate), up and their product.
    const int64_t mlp = kept + layer_input + 2 * prec.residual * T * h + 3 * MlpActBytes(layers.back().saved, prec) * T * layers.back().intermediate;
    return std::max(mlp, att);
  };
  // -- GRPO / PPO before the step: the rollout (the engine awake, no gradients), then the no-grad
  // passes over the generated batch in chunks of LogprobChunkRows rows (docs/post_training.md).
  if (online_rl) {
    Moment gen = step(Phase::kRollout, At::kRolloutGenerate);
    gen.rollout_weight_bytes = engine.colocated ? engine.weight_bytes : 0;
    gen.rollout_cache_bytes = engine.colocated ? engine.cache_bytes : 0;
    gen.running = "rollout";
    push(gen);
    const int64_t chunk = LogprobChunkRows(train);
    auto scaled = [&](int64_t bytes) { return b > 0 ? checked::Mul(bytes / b + (bytes % b != 0), chunk) : 0; };
    const int64_t head_seq = ppo ? s : CompletionTokens(train) + 1;
    const int64_t head = ComputePreferenceHead(train, chunk, chunk, head_seq, V, ld, prec.autocast || prec.autocast16, on_cpu, false, converted_from)
                             .reference_pass_bytes;
    const int64_t pass = scaled(no_grad_last_layer()) + head;
    // TRL PPO keeps the fp32 generation scores of every rollout until its scoring loop ends.
    const int64_t ppo_scores = ppo && !engine.vllm ? checked::Mul(engine.sequences, CompletionTokens(train), V, 4) : 0;
    auto pass_moment = [&](At at, const char* running, int64_t bytes, bool on_reference_copy) {
      Moment m = step(Phase::kLogprob, at);
      m.logits_and_loss_bytes = ppo_scores;
      if (on_reference_copy) {
        m.reference_pass_bytes = bytes;
        m.reference_runs = true;
      } else {
        m.temporary_bytes += bytes;
        m.running = running;
      }
      push(m);
    };
    if (OldPolicyPassRuns(train)) pass_moment(At::kOldPolicyLogProbs, "policy", pass, false);
    if (RlReferencePassRuns(train)) pass_moment(At::kRefPolicyLogProbs, "policy", pass, reference_copy);
    if (ppo) {
      // get_reward: the backbone with output_hidden_states=True returns all L + 1 hidden states,
      // then the score head (1 output per position): value model first, then the reward model.
      const int64_t hidden = checked::Mul(L + 1, chunk, s, h * prec.residual);
      pass_moment(At::kScoringPass, "critic", scaled(no_grad_last_layer()) + hidden, false);
    }
  }
  // -- forward: the step starts (gradients of earlier micro-batches resident under accumulation),
  // then each layer's forward leaves its saved tensors (and its cache, casts, RNG states) behind.
  Moment layer_done = step(Phase::kForward, At::kStepStart);
  layer_done.gradient_bytes = grads_resident;
  push(layer_done);
  layer_done.activation_bytes = cos_sin + ckpt_shared;
  layer_done.at = At::kLayerForward;
  // Each layer only adds (sizes are >= 0) and the rank view adds the same to every forward moment,
  // so these moments never decrease: the highest of them, the first on a tie, is the end of the
  // last layer (before the last one) that added anything, holding what the last of them holds.
  // Without the timeline that one moment stands for them all (MomentLog keeps the maxima only).
  int64_t last_growth = 0;  // the first layer whose end holds what the end of layer L - 2 holds
  for (int64_t i = 0; i < L; ++i) {
    const LayerInfo& li = layers[static_cast<size_t>(i)];
    const int64_t temporary = li.rng_state_bytes + li.autocast_bias_bytes + (ckpt == Checkpointing::kFull ? li.autocast_bytes : li.autocast_unsaved_bytes);
    layer_done.layer = i;
    layer_done.activation_bytes += li.kept_forward_bytes;
    layer_done.kv_cache_bytes += li.kv_bytes;
    layer_done.temporary_bytes += temporary;
    const int64_t added = li.kept_forward_bytes + li.kv_bytes + temporary;
    if (i + 1 == L) break;  // the last layer's end follows its attention scores, below
    if (explain) {
      push(layer_done);
    } else {
      if (added > 0) last_growth = i;
      if (i + 2 == L) {
        Moment highest = layer_done;
        highest.layer = last_growth;
        push(highest);
      }
    }
  }
  // -- forward: the last layer's eager attention scores (long sequences, small vocabularies).
  if (eager && ckpt != Checkpointing::kFull && L > 0) {
    const LayerInfo& li = layers.back();
    const AttentionGeometry& g = last_kind.attention;
    const int64_t a = g.num_heads;
    int64_t before = cos_sin;
    for (int64_t i = 0; i + 1 < L; ++i) before += layers[static_cast<size_t>(i)].kept_forward_bytes;
    before += li.saved.before_scores_bytes;
    // The frames' locals at `attn_weights + causal_mask` / softmax of the last layer (transformers
    // 4.44 LlamaAttention.forward and its callers), beside what the layers saved. Each was read from
    // the live blocks at the measured forward peak (F_longseq_v2k_gqa4.*.b1s1024, K01 of the DPO
    // fixture) and is named by the op that allocates it:
    //  * v after repeat_kv (`expand` + `reshape`, a copy at the query heads' width; a view for one KV
    //    head; for MHA it is v itself): the second matmul has not run yet, so nothing has saved it.
    const LayerPlan& last_plan = plan.layers.back();
    const int64_t kv_width = g.num_kv_heads == 1 ? 1 : a;
    int64_t locals = prec.matmul * T * kv_width * g.v_head_dim;
    //  * under autocast: the fp32 norm output, q_embed and the repeated k_embed (RoPE's fp32 sin/cos
    //    promote q and k), of which the matmul saved only its bf16 casts.
    if (prec.autocast) locals += 4 * T * h + 4 * T * a * g.head_dim + 4 * T * kv_width * g.head_dim;
    //  * without autocast, the norm output (`self.weight * hidden_states.to(input_dtype)`) when no
    //    linear saves it: the base weights are frozen and no adapter reads it in its own dtype (peft
    //    casts x to the adapters' fp32 first, and lora_A saves that copy).
    if (!prec.autocast && !ctx.quantized_base && !last_plan.weights_trainable) {
      bool adapter_reads_it = false;
      for (const auto& l : last_kind.linears) {
        if (l.role != ModuleRole::kAttention || IsAttentionOutput(l.slot)) continue;
        adapter_reads_it = adapter_reads_it || (last_plan.lora && IsLoraTarget(l, train.lora) && plan.adapter_bytes_per_param == prec.residual);
      }
      if (!adapter_reads_it) locals += prec.residual * T * h;
    }
    //  * the last layer's input (`residual`, the previous layer's residual sum), unless its RMSNorm
    //    saved it: `hidden_states.to(torch.float32)` is the input itself only in fp32, and only when
    //    it needs a gradient; a 16-bit input stays beside its saved fp32 copy.
    if (L > 1 && !learned_positions && !(last_plan.input_requires_grad && prec.residual == 4)) locals += prec.residual * T * h;
    //  * q_embed, and k_embed when repeat_kv did not copy it (MHA; MQA's expand view), at b > 1: q and k
    //    come out of `.view(b, s, heads, d).transpose(1, 2)` and RoPE's elementwise ops keep that
    //    memory layout, so matmul's `reshape(b·heads, s, d)` copies them and saves the copy
    //    (`aten::matmul > aten::reshape > aten::clone`); the frame still holds the originals. At b = 1
    //    the reshape is a view. Under autocast the saved copy is of the cast (q_embed is counted
    //    above); under selective recomputation the copy is dropped and q_embed is the checkpoint's.
    if (!prec.autocast && ckpt != Checkpointing::kSelective && b > 1 && !g.mla) {
      const bool k_copied = g.num_kv_heads == a || g.num_kv_heads == 1;
      locals += prec.q_after_rope * T * g.head_dim * (a + (k_copied && !fw.use_cache ? g.num_kv_heads : 0));
    }
    //  * `cache_position` (torch.arange, int64 8·s; position_ids is its view), held by LlamaModel.forward.
    if (!learned_positions) locals += 8 * s;
    if (on_cpu && fw.cpu_kv_alive_at_scores) locals += T * g.num_kv_heads * g.head_dim * (prec.q_after_rope + prec.matmul);
    // LlamaModel.forward keeps `inputs_embeds` alive through the whole forward: extra unless layer 0's
    // norm saved it as its fp32 input (fp32/amp with a trainable embedding or upstream).
    const bool embeds_saved = plan.layers.front().input_requires_grad && prec.residual == 4;
    if (!embeds_saved && !learned_positions) locals += prec.residual * T * h;
    // Selective recomputation: the checkpoints' CPU RNG states (one per layer, the last included: it is
    // stashed before the core runs).
    locals += ckpt == Checkpointing::kSelective ? rng_states : 0;
    const int64_t score_factor = prec.autocast ? (on_cpu ? 10 : 8) : (prec.half ? 10 : 8);
    // fp32 on the CPU the peak is at `/ math.sqrt(head_dim)` (the matmul's result and the quotient, 8
    // b·a·s² in all): the float64 0-dim scalar's fp32 copy (4 B) is alive beside the scalar itself. A
    // 16-bit or autocast step peaks later, at the mask's sum / softmax's fp32 copy, where the scalar is
    // gone unless DivBackward0 saved it, and under selective recomputation the checkpoint dropped it.
    const bool peak_at_div = !prec.half && !prec.autocast;
    if (on_cpu && peak_at_div) locals += 4;
    if (ckpt == Checkpointing::kSelective && !peak_at_div && !ctx.scale_is_tensor) locals -= 8;
    // Under autocast q' and k' are the matmul's bf16 casts of q_embed and k^T, made inside the
    // checkpointed core: nothing keeps them once the matmul returns (the checkpoint's pack hook drops
    // them; without autocast they are q_embed itself and the repeated k, which the frames hold).
    if (ckpt == Checkpointing::kSelective && prec.autocast) locals -= li.saved.scores_operands_bytes;
    Moment m = step(Phase::kForward, At::kAttentionScores, L - 1);
    m.gradient_bytes = grads_resident;
    m.activation_bytes = before;
    m.kv_cache_bytes = kv_cache;
    // gpt-oss's core with sinks (activations.h): its own set at the softmax, measured.
    const int64_t scores = g.sinks ? SinkScoresForwardBytes(prec, b, a, s, g.v_head_dim) : checked::Mul(score_factor, b, a, s, s);
    m.temporary_bytes = locals + mask_bytes + scores + autocast_unsaved_cache;
    push(m);
  }
  // -- forward: the last layer's DSA indexer scores (DeepSeek-V3.2, GLM-5). The layers below keep what
  // they saved; this one has saved up to its projections (under full checkpointing only its input:
  // the checkpointed forward saves nothing else), and its input is held by the decoder layer's
  // `residual` beside the indexer's two fp32 score tensors (activations.cpp).
  if (L > 0 && layers.back().saved.indexer_transient_bytes > 0) {
    const LayerInfo& li = layers.back();
    Moment m = step(Phase::kForward, At::kIndexerScores, L - 1);
    m.gradient_bytes = grads_resident;
    m.activation_bytes = cos_sin + ckpt_shared + layers_kept - li.kept_forward_bytes +
                         (ckpt == Checkpointing::kFull ? li.kept_forward_bytes : li.saved.before_scores_bytes);
    m.kv_cache_bytes = kv_cache;
    m.temporary_bytes = prec.residual * T * h + li.saved.indexer_transient_bytes + autocast_unsaved_cache;
    push(m);
  }
  // -- forward under full checkpointing: the last layer runs its eager attention with nothing saved
  // but its input; n1, q/k after RoPE and the repeated v are the live locals at the scores.
  if (eager && ckpt == Checkpointing::kFull && L > 0 && layers.back().saved.qk_require_grad) {
    const AttentionGeometry& g = last_kind.attention;
    const int64_t a = g.num_heads;
    const int64_t score_factor = prec.autocast ? (on_cpu ? 10 : 8) : (prec.half ? 10 : 8);
    // The last layer's casts after its attention core (o_proj, the MLP) do not exist yet.
    const LayerPlan& last_plan = plan.layers.back();
    int64_t later_casts = 0;
    for (const auto& l : last_kind.linears) {
      if (l.role == ModuleRole::kAttention && !IsAttentionOutput(l.slot)) continue;
      if (prec.autocast && last_plan.weights_trainable) later_casts += 2 * l.in_features * l.out_features * l.copies;
      if ((prec.autocast || prec.autocast16) && last_plan.lora && IsLoraTarget(l, train.lora) && plan.adapter_bytes_per_param == 4) {
        later_casts += 2 * train.lora.rank * (l.in_features + l.out_features) * l.copies;
      }
    }
    // repeat_kv returns an expand() view for one KV head: k and v stay at their own width.
    const int64_t kv_width = g.num_kv_heads == 1 ? 1 : a;
    Moment m = step(Phase::kForward, At::kCheckpointedScores, L - 1);
    m.gradient_bytes = grads_resident;
    m.activation_bytes = cos_sin + ckpt_shared + layers_kept;
    m.temporary_bytes = prec.residual * T * h + QkBytes(prec, g.no_rope) * T * (a + kv_width) * g.head_dim + prec.matmul * T * kv_width * g.v_head_dim +
                  (g.sinks ? SinkScoresForwardBytes(prec, b, a, s, g.v_head_dim) : checked::Mul(score_factor, b, a, s, s)) + rng_states + autocast_cache -
                  later_casts;
    // fp32 on the CPU the peak is at `/ math.sqrt(head_dim)`: the Python scalar is a float64 0-dim
    // CPU tensor (8 B) and its fp32 cast (4 B), which only a saved DivBackward0 would keep (measured:
    // R132 and F_longseq_v2k_gqa4.fp32.adamw.b1s1024.ckpt, 12 B; on CUDA they are host tensors).
    if (on_cpu && !prec.half) m.temporary_bytes += 8 + 4;
    push(m);
  }
  // -- forward under full checkpointing: the last layer's forward runs with nothing saved but its
  // input (the checkpoint's); two of its statements can hold the forward's peak besides the scores,
  // and the higher is one moment of the timeline. The casts made so far and the RNG states are alive
  // as at the scores.
  //  * RoPE (apply_rotary_pos_emb, transformers models/llama/modeling_llama.py, 4.44), at the last
  //    product of each of q and k, `rotate_half(x) * sin`: the layer's norm output, q, k and v as
  //    projected, the factors of the statement running (x * cos, rotate_half(x), the product) and,
  //    for k, q's result; 16-bit x times fp32 sin makes an fp32 copy of x on the CPU (type
  //    promotion; CUDA's kernels read mixed dtypes). Measured: R124 in measured_cpu_random.json (AMP
  //    + LoRA), live blocks at the forward's peak.
  //  * the gated MLP's `act_fn(gate_proj(x)) * up_proj(x)` (LlamaMLP.forward): the attention block's
  //    residual sum and the post-attention norm's output beside act(gate), up and their product; the
  //    down projection's casts do not exist yet. Measured: R126 (fp32, MQA), live blocks at the
  //    forward's peak.
  if (ckpt == Checkpointing::kFull && L > 0 && layers.back().saved.qk_require_grad) {
    const AttentionGeometry& g = last_kind.attention;
    const int64_t a = g.num_heads, kv = g.num_kv_heads, d = g.head_dim;
    const LayerPlan& last_plan = plan.layers.back();
    // The casts of the linears that have not run yet at a statement.
    auto casts_of = [&](bool (*after)(const LinearSpec&)) {
      int64_t bytes = 0;
      for (const auto& l : last_kind.linears) {
        if (!after(l)) continue;
        if (prec.autocast && last_plan.weights_trainable) bytes += 2 * l.in_features * l.out_features * l.copies;
        if ((prec.autocast || prec.autocast16) && last_plan.lora && IsLoraTarget(l, train.lora) && plan.adapter_bytes_per_param == 4) {
          bytes += 2 * train.lora.rank * (l.in_features + l.out_features) * l.copies;
        }
      }
      return bytes;
    };
    const int64_t after_rope = casts_of([](const LinearSpec& l) { return l.role != ModuleRole::kAttention || IsAttentionOutput(l.slot); });
    const int64_t after_mlp_product = casts_of([](const LinearSpec& l) { return IsDownProjection(l.slot); });
    Moment m = step(Phase::kForward, At::kLayerForward, L - 1);
    m.gradient_bytes = grads_resident;
    m.activation_bytes = cos_sin + ckpt_shared + layers_kept;
    m.temporary_bytes = -1;
    Moment highest = m;
    if (rot_dim == d && !g.mla && !learned_positions && !g.no_rope) {  // a NoPE layer has no RoPE statement
      const int64_t promote = on_cpu && prec.matmul < prec.q_after_rope ? prec.q_after_rope : 0;
      const int64_t factors = 2 * prec.q_after_rope + prec.matmul + promote;  // x * cos, the product; rotate_half(x), its copy
      const int64_t projected = prec.matmul * T * (a * d + kv * (d + g.v_head_dim));
      const int64_t base = prec.residual * T * h + projected + rng_states + autocast_cache - after_rope;
      Moment q = m, k = m;
      q.temporary_bytes = base + factors * T * a * d;
      k.temporary_bytes = base + prec.q_after_rope * T * a * d + factors * T * kv * d;
      highest = HigherOnRank(q, k, view);
    }
    const LayerInfo& li = layers.back();
    if (li.gated && last_kind.mlp.num_experts == 0) {
      Moment mlp = m;
      mlp.temporary_bytes = 2 * prec.residual * T * h + 3 * MlpActBytes(li.saved, prec) * T * li.intermediate + rng_states + autocast_cache - after_mlp_product;
      if (li.saved.unsloth_mlp) {
        // unsloth's LoRA_MLP.forward at the down projection's matmul_lora (unsloth/kernels/utils.py):
        // e, g, h = f * g, out = h @ W^T and XA = h @ A^T beside the residual and X (measured: UK07 in
        // measured_cpu_kernels.json).
        mlp.temporary_bytes += prec.matmul * T * (h + train.lora.rank);
        // unsloth <= 2025.2 adds the LoRA term out of place (`out += (X @ A) @ (s * B)`): the term
        // (T·h) and s·B (r·h) beside XA (measured: UO rows of measured_cpu_kernels.json).
        if (fw.unsloth_lora_out_of_place) mlp.temporary_bytes += prec.matmul * (T * h + train.lora.rank * h);
      }
      if (li.saved.liger_swiglu && LigerLoraAt(last_plan, last_kind, train.lora, LinearSlot::kUp)) {
        // Liger's SiLUMul has not run yet at up_proj's peft `lora_B(lora_A(x)) * scaling`: gate_proj's
        // output, the base output, lora_B's output and their product (+ the scaling scalar) beside
        // the residual sum and the norm's output (measured: LG02 in measured_cpu_kernels.json).
        mlp.temporary_bytes += prec.matmul * T * li.intermediate + CpuScalarBytes(on_cpu, prec);
      }
      highest = highest.temporary_bytes < 0 ? mlp : HigherOnRank(highest, mlp, view);
    } else if (li.gated && li.saved.expert_rows > 0) {
      // Routed experts (MixtralSparseMoeBlock.forward, its loop): the last expert's
      // `act_fn(w1(x)) * w3(x)`, its act(w1), w3 and product one expert's rows wide, beside the
      // residual sum and the norm's output, the block's frame (final_hidden_states, the router
      // logits, top-k indices and routing weights, the int64 one_hot mask), the expert's where()
      // indices and gathered rows, and the previous expert's weighted output (its loop variable,
      // rebound only after this expert returns). Only the last expert's w2 cast is not made yet.
      // Measured: MOE24 / MOE25 in measured_cpu_moe.json, live blocks at the forward's peak.
      const int64_t E = last_kind.mlp.num_experts, routed = T * last_kind.mlp.experts_per_token;
      const int64_t rows = li.saved.expert_rows;
      Moment mlp = m;
      mlp.temporary_bytes = 2 * prec.residual * T * h + prec.residual * T * h + prec.matmul * T * E + 8 * routed + 8 * routed * E +
                            prec.residual * routed + 16 * rows + prec.residual * rows * h + (E > 1 ? prec.residual * rows * h : 0) +
                            3 * MlpActBytes(li.saved, prec) * rows * last_kind.mlp.intermediate + rng_states + autocast_cache - after_mlp_product / E;
      highest = highest.temporary_bytes < 0 ? mlp : HigherOnRank(highest, mlp, view);
      if (li.saved.shared_width > 0) {
        // Qwen2MoeSparseMoeBlock (v4.44-v4.51) after the loop: the shared expert's
        // `act_fn(gate_proj(x)) * up_proj(x)` on all T rows (act, up and the product), beside the
        // same frames and the last expert's loop variables (its indices, gathered rows and
        // weighted output); every routed w2 cast is made, the shared down_proj's not yet.
        // Measured: QMOE15 in measured_cpu_qwen_moe.json, live blocks at the forward's peak.
        const int64_t shared_down_cast = casts_of([](const LinearSpec& l) { return l.role == ModuleRole::kSharedExperts && IsDownProjection(l.slot); });
        Moment sh = m;
        sh.temporary_bytes = 3 * prec.residual * T * h + prec.matmul * T * E + 8 * routed + 8 * routed * E + prec.residual * routed + 16 * rows +
                             2 * prec.residual * rows * h + 3 * MlpActBytes(li.saved, prec) * T * li.saved.shared_width + rng_states + autocast_cache -
                             shared_down_cast;
        highest = HigherOnRank(highest, sh, view);
      }
    }
    if (highest.temporary_bytes >= 0) push(highest);
  }
  // -- forward without full checkpointing, a 16-bit base with fp32 LoRA adapters (peft's
  // autocast_adapter_dtype) on the last layer's down projection: peft's `result +
  // lora_B(lora_A(x.to(fp32))) * scaling` (peft/tuners/lora/layer.py Linear.forward) adds an fp32
  // T·h product to the 16-bit base output, so the CPU makes an fp32 copy of the base output for the
  // sum: three fp32 T·h tensors beside the base output and what the frames still hold and nothing
  // saves (a frozen base saves nothing, the adapters save their fp32 copies): `inputs_embeds`, the
  // layer's input and its attention sum (the 16-bit RMSNorm saves an fp32 copy), the post-attention
  // norm's output, act(gate) * up, the eager mask and cache_position (int64, 8·s). Every layer's
  // saved set is complete by then. Measured: R045 in measured_cpu_random.json (bf16, LoRA on every
  // linear), live blocks at the forward's peak: 361,872 B of temporaries, exact.
  if (ckpt != Checkpointing::kFull && L > 0 && prec.half && !prec.autocast && !prec.autocast16 && plan.adapter_bytes_per_param == 4 &&
      plan.adapter_bytes_per_param > prec.weight) {
    const LayerInfo& li = layers.back();
    const LayerPlan& lp = plan.layers.back();
    bool down_adapter = false;
    for (const auto& l : last_kind.linears) down_adapter = down_adapter || (lp.lora && !lp.weights_trainable && IsDownProjection(l.slot) && IsLoraTarget(l, train.lora));
    if (down_adapter && li.gated && last_kind.mlp.num_experts == 0 && !learned_positions && !ctx.quantized_base) {
      const int64_t th = prec.residual * T * h;
      const bool embeds_saved = plan.layers.front().input_requires_grad && prec.residual == 4;
      const int64_t frames = (embeds_saved ? 0 : th) + (L > 1 ? th : 0) + 2 * th + prec.matmul * T * li.intermediate + mask_bytes + 8 * s;
      Moment m = step(Phase::kForward, At::kLayerForward, L - 1);
      m.gradient_bytes = grads_resident;
      m.activation_bytes = cos_sin + ckpt_shared + layers_kept;
      m.kv_cache_bytes = kv_cache;
      m.temporary_bytes = frames + prec.matmul * T * h + 3 * 4 * T * h + rng_states;
      push(m);
    }
  }
  // -- forward without full checkpointing, Liger's kernels and a LoRA adapter in the base dtype on
  // the last layer's down projection: at peft's `lora_B(lora_A(x)) * scaling` the base output,
  // lora_B's output and their product (+ the scaling scalar) beside what the frames hold and nothing
  // saves: inputs_embeds (unless layer 0's norm saved it), the eager mask and cache_position. Liger's
  // norms save the layer input and the attention sum, lora_A saves SiLUMul's output (measured: LG01
  // in measured_cpu_kernels.json, live blocks at the forward's peak, exact).
  if (ckpt != Checkpointing::kFull && L > 0 && layers.back().saved.liger_swiglu && !prec.autocast && !prec.autocast16 &&
      plan.adapter_bytes_per_param == prec.weight && !ctx.quantized_base &&
      LigerLoraAt(plan.layers.back(), last_kind, train.lora, LinearSlot::kDown)) {
    const int64_t embeds = plan.layers.front().input_requires_grad ? 0 : prec.residual * T * h;
    Moment m = step(Phase::kForward, At::kLayerForward, L - 1);
    m.gradient_bytes = grads_resident;
    m.activation_bytes = cos_sin + ckpt_shared + layers_kept;
    m.kv_cache_bytes = kv_cache;
    m.temporary_bytes = embeds + mask_bytes + 8 * s + 3 * prec.matmul * T * h + CpuScalarBytes(on_cpu, prec) + rng_states;
    push(m);
  }
  // -- forward without full checkpointing, a LoRA adapter on the routed experts' w3 (same dtype
  // as the matmuls, no autocast): peft's `result + lora_B(lora_A(x)) * scaling` in the last layer's
  // last expert, at w3 (the expert's last input projection): its base output, lora_B's output and
  // their product (I wide, one expert's rows) and the scalar's cast, beside what the frames hold and
  // nothing saves (the eager mask and cache_position, inputs_embeds unless layer 0 saved it, a 16-bit
  // layer's input and attention sum, the MoE input unless the gate saved it, final_hidden_states,
  // the router logits, routing weights and one_hot mask, the gathered rows unless saved). Not saved
  // yet: that expert's w3 output, SiLU·up, w2's saves and its weighted output's, the final norm's,
  // lm_head's and the loss's. Measured: MOE22 / MOE23 in measured_cpu_moe.json, live blocks.
  if (ckpt != Checkpointing::kFull && L > 0 && layers.back().saved.expert_rows > 0 && last_kind.mlp.kind == MlpKind::kGated &&
      !prec.autocast && !prec.autocast16 && plan.adapter_bytes_per_param == prec.matmul && !ctx.quantized_base) {
    const LayerInfo& li = layers.back();
    const LayerPlan& lp = plan.layers.back();
    bool up_adapter = false;
    for (const auto& l : last_kind.linears) {
      up_adapter = up_adapter || (lp.lora && l.slot == LinearSlot::kExpertUp && IsLoraTarget(l, train.lora));
    }
    if (up_adapter) {
      const int64_t th = prec.residual * T * h;
      const int64_t rows = li.saved.expert_rows, I = last_kind.mlp.intermediate;
      const int64_t E = last_kind.mlp.num_experts, routed = T * last_kind.mlp.experts_per_token;
      const bool embeds_saved = plan.layers.front().input_requires_grad && prec.residual == 4;
      const int64_t frames = mask_bytes + 8 * s + (embeds_saved ? 0 : th) + (prec.residual == 4 ? 0 : (L > 1 ? th : 0) + th) +
                             (li.saved.moe_input_saved ? 0 : th) + th + prec.matmul * T * E + prec.residual * routed + 8 * routed * E +
                             (li.saved.expert_input_saved ? 0 : prec.residual * rows * h);
      Moment m = step(Phase::kForward, At::kLayerForward, L - 1);
      m.gradient_bytes = grads_resident;
      m.activation_bytes = saved_total - loss.saved_bytes - head_saved - li.saved.expert_released_bytes - MlpActBytes(li.saved, prec) * rows * I;
      m.kv_cache_bytes = kv_cache;
      m.temporary_bytes = frames + 3 * prec.matmul * rows * I + (on_cpu ? (prec.half ? prec.matmul : 4) : 0) + rng_states;
      push(m);
    }
  }
  if (L > 0) push(layer_done);
  // -- forward: the loss op (logits, fp32 upcast, log-probs) on top of everything saved.
  // Preference objectives compute the log-probs after the model's forward has returned: the final
  // norm's output is gone unless lm_head saved it.
  // (accelerate's wrapper closes the forward's autocast region before the head: its cached casts are gone.)
  const int64_t head_temporaries = rng_states + (outputs_fp32 ? 0 : autocast_bias_cache + (ckpt == Checkpointing::kFull ? autocast_cache : autocast_unsaved_cache));
  // -- forward: the final RMSNorm's last statement, `self.weight * hidden_states.to(input_dtype)`
  // (LlamaRMSNorm.forward), inside LlamaModel.forward: every layer's saves and the norm's own, the
  // norm output being made (lm_head has not run: its saves do not exist yet), the eager causal mask
  // and cache_position (locals of LlamaModel.forward), inputs_embeds unless layer 0 saved it, the
  // norm's 16-bit input (the caller's `hidden_states`; the norm saves an fp32 copy), the variance (4·T) and, unless it is the saved y, the fp32 x·rsqrt (16-bit: its cast is saved;
  // frozen norm weight: nothing saves it). Above the loss only with a small vocabulary (measured:
  // MOE19-21 and MOE27-29 in measured_cpu_moe.json, 64 tokens, live blocks at the forward's peak).
  // It and the loss are two statements of the model's forward: the timeline keeps the higher.
  Moment final_norm;
  const bool final_norm_moment = L > 0 && !preference && !online_rl && model.norm_kind == NormKind::kRmsNorm && !ctx.FastRmsNorm() &&
                                 !learned_positions && !fused_head;
  if (final_norm_moment) {
    const bool full_ckpt = ckpt == Checkpointing::kFull && ckpt_layers > 0;
    const bool embeds_saved = full_ckpt || (plan.layers.front().input_requires_grad && prec.residual == 4);
    const bool y_saved = prec.residual == 4 && plan.final_norm_trainable;
    Moment m = step(Phase::kForward, At::kFinalNorm);
    m.gradient_bytes = grads_resident;
    m.activation_bytes = saved_total - loss.saved_bytes - lm_head_saved;
    m.kv_cache_bytes = kv_cache;
    m.temporary_bytes = prec.residual * T * h + (ckpt_shared > 0 ? 0 : mask_bytes + 8 * s) + (embeds_saved ? 0 : prec.residual * T * h) + 4 * T +
                        (prec.residual == 4 ? 0 : prec.residual * T * h) + (y_saved ? 0 : 4 * T * h) + head_temporaries;
    final_norm = m;
  }
  {
    Moment m = step(Phase::kForward, preference ? At::kPolicyLogProbs : At::kCrossEntropy);
    m.gradient_bytes = grads_resident;
    m.activation_bytes = saved_total - loss.saved_bytes;
    m.logits_and_loss_bytes = loss.saved_bytes + loss.forward_extra_bytes;
    m.kv_cache_bytes = kv_cache;
    m.temporary_bytes = (preference ? 0 : norm_out_extra) + head_temporaries;
    push(final_norm_moment ? HigherOnRank(m, final_norm, view) : m);
  }
  // -- after the model's forward returned (accelerate's convert_outputs_to_fp32 on a forward that
  // computed its loss): the saved set, the fp32 copy and the loss; the forward's locals are gone.
  if (loss.after_forward_bytes > 0) {
    Moment m = step(Phase::kForward, At::kCrossEntropy);
    m.gradient_bytes = grads_resident;
    m.activation_bytes = saved_total - loss.saved_bytes;
    m.logits_and_loss_bytes = loss.saved_bytes + loss.after_forward_bytes;
    m.kv_cache_bytes = kv_cache;
    m.temporary_bytes = head_temporaries;
    push(m);
  }
  // -- the reference forward (DPOTrainer._compute_loss, after the policy's log-probs, under
  // torch.no_grad() with checkpointing disabled): the policy's saved tensors, its logits and
  // log-probs stay alive beneath it; it keeps only its per-sequence log-probs afterwards, but its
  // logits and selective_log_softmax's row buffers peak during it (measured_cpu_dpo.json).
  if (preference && ReferencePassRuns(train) && L > 0) {
    Moment m = step(Phase::kReference, At::kReferenceLayer, L - 1);
    m.gradient_bytes = grads_resident;
    m.activation_bytes = saved_total - loss.saved_bytes;
    m.logits_and_loss_bytes = pref.alive_at_reference_bytes;
    m.temporary_bytes = head_temporaries;
    m.reference_runs = true;
    // The reference's last decoder layer, no grad. What its forward keeps from the start
    // (inputs_embeds, which LlamaModel.forward holds, the eager causal mask, cos/sin, the
    // cache_position arange) + the layer input and its norm output + q after RoPE and the
    // repeat_kv'd k and v; at eager attention's `+ causal_mask` the scaled scores (16-bit: also
    // their fp32 promotion on the CPU) and the sum, or at the softmax the sum and its fp32 result
    // (measured: the amp rows of measured_cpu_dpo.json, live blocks at the reference's peak).
    m.reference_pass_bytes = no_grad_last_layer();
    push(m);
    m.at = At::kReferenceLogProbs;
    m.layer = -1;
    m.reference_pass_bytes = pref.reference_pass_bytes;
    push(m);
  }
  // The forward after the reference pass (train/preference.cpp): the policy's saved set less the
  // loss's, its logits alive beside `head_bytes`, the reference's still alive in _compute_loss.
  auto push_after_reference = [&](At at, int64_t head_bytes) {
    Moment m = step(Phase::kForward, at);
    m.gradient_bytes = grads_resident;
    m.activation_bytes = saved_total - loss.saved_bytes;
    m.logits_and_loss_bytes = pref.alive_at_reference_bytes + head_bytes;
    m.temporary_bytes = head_temporaries;
    push(m);
  };
  // -- TRL's "sft" term (train.rpo_alpha): its cross-entropy after the DPO loss.
  if (preference && pref.sft_term_bytes > 0 && L > 0) push_after_reference(At::kSftTerm, pref.sft_term_bytes);
  // -- the DPO loss after the reference pass, with accelerate's fp32 logits.
  if (preference && pref.loss_window_bytes > 0 && L > 0) push_after_reference(At::kPreferenceLoss, pref.loss_window_bytes);
  // -- KTO's metrics after the loss (KTOTrainer._compute_loss, still inside it): entropy_from_logits
  // on shift_logits.detach() reshapes the non-contiguous slice to (R·(s-1), V), a copy, then
  // log_softmax, exp and their product over 128-row chunks; the policy's logits (16-bit: alive in
  // `outputs`) and the reference's (`ref_outputs`, a local too) are alive beneath it (measured: the
  // T rows of measured_cpu_dpo.json, the "loss" window's peak at the chunk's product).
  if (train.objective == Objective::kKto && L > 0) {
    Moment m = step(Phase::kForward, At::kKtoEntropyMetric);
    m.gradient_bytes = grads_resident;
    m.activation_bytes = saved_total - loss.saved_bytes;
    const int64_t row = (s - 1) * V;
    const int64_t chunk_rows = std::min<int64_t>(128, b * (s - 1));
    const int64_t policy_logits = ld == 4 ? 0 : ld * b * s * V;  // fp32: kept by the saved views
    const int64_t reference_logits = ReferencePassRuns(train) ? ld * b * s * V : 0;
    // entropy_from_logits appends each chunk's entropies to a list: at the last full chunk (the peak)
    // the earlier chunks' results are alive (measured: U01, 285 rows, 512 B).
    const int64_t earlier_chunks = b * (s - 1) >= 128 ? b * (s - 1) / 128 - 1 : 0;
    m.logits_and_loss_bytes = loss.saved_bytes + policy_logits + reference_logits + ld * b * row + 3 * chunk_rows * V * ld +
                              earlier_chunks * 128 * ld + pref.kto_loss_window_bytes;
    m.temporary_bytes = head_temporaries;
    push(m);
  }
  // -- CPU host quirk: oneDNN's bf16 matmul allocates an fp32 output buffer at the lm_head, in the
  // forward (logits) and in the weight-gradient matmul (docs/derivations_extended.md section 0).
  const bool onednn_buffers = on_cpu && fw.cpu_onednn_bf16_buffers && prec.half && plan.lm_head_trainable && !cce_head;  // CCE: no lm_head matmul
  if (onednn_buffers) {
    Moment fwd = step(Phase::kForward, At::kCrossEntropy);
    fwd.activation_bytes = saved_total - loss.saved_bytes;
    fwd.temporary_bytes = 2 * T * V + 4 * T * V + 128 + rng_states;
    push(fwd);
  }
  // -- backward: the loss head (gradient of the log-probs and of the logits).
  {
    Moment m = step(Phase::kBackward, preference ? At::kPolicyLogProbsBackward : At::kCrossEntropyBackward);
    m.gradient_bytes = grads_resident;
    m.activation_bytes = saved_total - loss.saved_bytes;
    m.logits_and_loss_bytes = loss.saved_bytes + loss.backward_extra_bytes + keep_outputs;
    m.kv_cache_bytes = kept_kv_cache;
    m.temporary_bytes = rng_states;
    // Under AMP the lm_head's weight gradient comes out of the bf16 matmul (2·V·h) and its
    // ToCopyBackward0 makes the fp32 gradient of the master weight (4·V·h) while it exists; the loss
    // head's and lm_head's saved tensors are released, the input gradient is already fp32 (measured:
    // R007 in measured_cpu_random.json, AMP, live blocks at bwd:ToCopyBackward0). The higher of the
    // two is the loss head's backward moment.
    if (prec.autocast && plan.lm_head_trainable && !in_bwd && !onednn_buffers && !preference && !cce_head) {
      Moment cast = step(Phase::kBackward, At::kCrossEntropyBackward);
      const int64_t fp32_grad = prec.grad * V * h;
      cast.gradient_bytes = grads_resident + (model.tied_embeddings ? 0 : fp32_grad);
      cast.activation_bytes = saved_total - loss.saved_bytes - lm_head_saved;
      cast.logits_and_loss_bytes = keep_outputs;
      cast.kv_cache_bytes = kept_kv_cache;
      cast.temporary_bytes = 2 * V * h + prec.residual * T * h + (model.tied_embeddings ? fp32_grad : 0) + rng_states + (on_cpu ? 8 : 0);
      m = HigherOnRank(m, cast, view);
    }
    push(m);
  }
  if (fsdp_root_grads && !dp.embedding_units && plan.lm_head_trainable && !model.tied_embeddings) fsdp_root_grad_whole = prec.grad * V * h;
  if (onednn_buffers) {  // the lm_head's weight-gradient matmul (see the forward's oneDNN moment)
    const int64_t q = model.legacy_logits_upcast || prec.autocast ? 4 : prec.matmul;
    Moment bwd = step(Phase::kBackward, At::kCrossEntropyBackward);
    bwd.activation_bytes = saved_total - loss.saved_bytes;
    bwd.temporary_bytes = 2 * T * V + 6 * V * h + 128 + 2 * q + rng_states;
    push(bwd);
  }
  // -- backward: the final RMSNorm's `weight * y` (MulBackward0): its input gradient and, with a
  // trainable weight, the product summed into the weight's gradient, both at the residual width,
  // beside the incoming gradient; the loss head's and lm_head's saved tensors are released by then
  // and a tied lm_head's gradient is parked (measured: R137 in measured_cpu_random.json, AMP).
  if (final_req && model.norm_kind == NormKind::kRmsNorm && model.final_norm.has_weight) {
    Moment m = step(Phase::kBackward, At::kFinalNormBackward);
    m.gradient_bytes = grads_resident + (plan.lm_head_trainable && !model.tied_embeddings && !in_bwd ? prec.grad * V * h : 0) +
                       (plan.final_norm_trainable ? prec.grad * model.final_norm.Params() : 0);
    m.activation_bytes = saved_total - loss.saved_bytes - lm_head_saved;
    m.logits_and_loss_bytes = keep_outputs;
    m.kv_cache_bytes = kept_kv_cache;
    m.temporary_bytes = (model.tied_embeddings && plan.lm_head_trainable ? prec.grad * V * h : 0) + rng_states + (on_cpu ? 8 : 0) +
                        (plan.final_norm_trainable ? 3 : 2) * prec.residual * T * h;
    // Then the same norm's PowBackward0 (x32.pow(2)): five fp32 T·h buffers (the gradient from the
    // x32 * rsqrt branch, mean's expanded gradient, x32.pow(1), its product with 2 and the product
    // with the gradient) and no residual-stream gradient yet; the norm has released all it saved
    // but x32 (the `weight * y` input, the rsqrt result, mean's x32^2), which outweighs the moment
    // above with a 16-bit residual (measured: R019 in measured_cpu_random.json, bf16, live blocks
    // at bwd:PowBackward0; torch/csrc/autograd/FunctionsManual.cpp pow_backward, PyTorch 1.13).
    Moment pow = step(Phase::kBackward, At::kFinalNormBackward);
    pow.gradient_bytes = m.gradient_bytes;
    pow.activation_bytes = saved_total - loss.saved_bytes - lm_head_saved - final_norm_saved + 4 * T * h;
    pow.logits_and_loss_bytes = keep_outputs;
    pow.kv_cache_bytes = kept_kv_cache;
    pow.temporary_bytes = (model.tied_embeddings && plan.lm_head_trainable ? prec.grad * V * h : 0) + rng_states + (on_cpu ? 8 : 0) + 5 * 4 * T * h;
    if (ctx.FastRmsNorm()) {
      // unsloth's / Liger's RMSNorm Function: the incoming gradient becomes the input gradient in
      // place; nothing else (its saved input and rstd are in saved_total).
      m.temporary_bytes = (model.tied_embeddings && plan.lm_head_trainable ? prec.grad * V * h : 0) + rng_states + (on_cpu ? 8 : 0) +
                          prec.residual * T * h;
      push(m);
    } else {
      push(HigherOnRank(m, pow, view));  // one moment of the timeline: the norm's backward
    }
  }
  // -- backward through the layers, last to first.
  const int64_t head_grads = in_bwd ? 0
                             : (plan.lm_head_trainable && !model.tied_embeddings ? prec.grad * V * h : 0) +
                                   (plan.final_norm_trainable ? prec.grad * model.final_norm.Params() : 0);
  if (in_bwd && plan.lm_head_trainable && !model.tied_embeddings) {
    // lm_head's step in its hook: its fresh gradient and the step's temporaries, beside the
    // gradient of the logits the weight gradient was computed from.
    Moment m = step(Phase::kBackward, At::kCrossEntropyBackward);
    m.activation_bytes = saved_total - loss.saved_bytes - lm_head_saved;
    m.gradient_bytes = prec.grad * V * h;
    m.logits_and_loss_bytes = keep_outputs + prec.matmul * T * V;
    m.kv_cache_bytes = kept_kv_cache;
    m.temporary_bytes = one_tensor_step(V * h, prec.grad) + rng_states;
    push(m);
  }
  int64_t hook_after_layers = 0;  // FSDP1 frozen-unit hooks: what they hold after the layers' backward
  {
    int64_t kept_below = cos_sin + ckpt_shared + layers_kept;  // saved by the layers below layer i (and shared)
    int64_t grads_so_far = head_grads;
    zero2_produced = grads_so_far;
    const int64_t carry = prec.residual * T * h;  // gradient of the residual stream
    // A tied lm_head's weight gradient waits in the autograd engine's input buffer for the
    // embedding's (summed at the embedding backward): alive through every layer's backward.
    const int64_t parked_tied_grad = model.tied_embeddings && plan.lm_head_trainable ? prec.grad * V * h : 0;
    // Checkpoint RNG states: a layer's is released with its checkpoint once its backward is done.
    int64_t rng_live = rng_states;
    // On the CPU (exact sizes): the loss (4 B) and the root gradient torch.autograd.backward makes
    // with ones_like (4 B) live until backward returns (measured; on CUDA two 512-B blocks, left out).
    const int64_t loss_scalars = !on_cpu ? 0 : preference ? pref.loss_scalar_bytes : 8;
    // unsloth's offloaded checkpointer is an autograd.Function whose backward re-runs the layer and
    // calls torch.autograd.backward(output, dY): the output's gradient dY stays referenced by that
    // frame through the whole layer's backward (measured: FW01, measured_cpu_frameworks.json).
    const int64_t offload_grad_output = offload && ckpt == Checkpointing::kFull ? prec.residual * T * h : 0;
    // FSDP1's reshard-only hook on frozen units (parallel/fsdp_frozen_unit_hooks.h): every layer whose
    // backward is done keeps its recomputed input and that input's gradient until the end of the
    // backward. The gradient of the layer just above is the running layer's incoming gradient
    // (`carry`, counted by its moments), so it joins `hook_retained` one layer later.
    const bool frozen_unit_hooks = FsdpFrozenUnitHooks(sc);
    int64_t hook_retained = 0;       // held at the running layer's moments
    int64_t hook_pending_grad = 0;   // the input gradient of the layer above (the running layer's carry)
    // Without the timeline only the highest moments matter (MomentLog keeps the maxima), and in a
    // run of identical layers (the same `kind`) one layer's moments are the next one's, less the
    // saved tensors of the layer below (kept_forward_bytes) and plus the gradients this layer
    // produced (grad_bytes, none under accumulation: all of them are resident), which the rank view
    // turns into a growth of at least RankView::LeastGradientGrowth and at most grad_bytes. So when
    // the gradients grow by no more than the saved tensors shrink, the moments never rise and the
    // run's first layer (in backward order) holds its highest, the first on a tie; when they grow
    // by more, its last layer does; otherwise every layer is simulated.
    enum class RunKeeps { kAll, kFirst, kLast } run_keeps = RunKeeps::kAll;
    int64_t run_first = L - 1, run_last = L - 1;  // the run of layer i: run_last <= i <= run_first
    for (int64_t i = L - 1; i >= 0; --i) {
      const LayerInfo& li = layers[static_cast<size_t>(i)];
      if (!explain && (i == L - 1 || layers[static_cast<size_t>(i + 1)].kind != li.kind)) {  // a run starts
        run_first = run_last = i;
        while (run_last > 0 && layers[static_cast<size_t>(run_last - 1)].kind == li.kind) --run_last;
        const int64_t grows = train.grad_accum_steps > 1 || in_bwd ? 0 : li.grad_bytes;
        // With the frozen-unit hooks the moments rise from layer to layer by at least the gradient
        // growth (the released input stays), plus the retained input gradients: the run's last
        // layer holds the highest when that first step already rises; otherwise all are simulated.
        const int64_t hook_step = frozen_unit_hooks && plan.layers[static_cast<size_t>(i)].input_requires_grad ? li.kept_forward_bytes : 0;
        // ZeRO-2 under accumulation: the second partition appears within a run (zero2_accumulation.h).
        if (run_first == run_last || zero2_second.partition_bytes > 0) run_keeps = RunKeeps::kAll;
        else if (hook_step > 0) run_keeps = view.LeastGradientGrowth(grows) + hook_step > li.kept_forward_bytes + li.rng_state_bytes ? RunKeeps::kLast : RunKeeps::kAll;
        else if (grows <= li.kept_forward_bytes + li.rng_state_bytes) run_keeps = RunKeeps::kFirst;
        else if (view.LeastGradientGrowth(grows) > li.kept_forward_bytes + li.rng_state_bytes) run_keeps = RunKeeps::kLast;
        else run_keeps = RunKeeps::kAll;
      }
      hook_now = hook_retained;
      const bool simulated = explain || run_keeps == RunKeeps::kAll || (run_keeps == RunKeeps::kFirst && i == run_first) ||
                             (run_keeps == RunKeeps::kLast && i == run_last);
      const LayerKind& kind = model.kinds[model.layer_kind[static_cast<size_t>(i)]];
      const AttentionGeometry& g = kind.attention;
      const int64_t a = g.num_heads;
      const int64_t grads_live = in_bwd ? 0 : train.grad_accum_steps > 1 ? grads_total : grads_so_far;
      kept_below -= li.kept_forward_bytes;
      const int64_t saved_prev = kept_below;
      if (simulated && (li.saved.output_requires_grad || li.grad_bytes > 0)) {
        // MLP backward: the layer's saved tensors, gradients so far, and the MLP input/activation grads.
        // What every moment of this layer's backward holds besides its own tensors: the kept outputs,
        // the parked tied gradient, the live RNG states and the recomputed layer's kept input.
        const int64_t layer_extra = parked_tied_grad + rng_live + li.recomputed_input_bytes + loss_scalars + offload_grad_output + hook_retained;
        // The element-wise MLP backward (act * up): the down projection's MmBackward0 has run and
        // released what it saved (its input, its weight cast, its adapters' tensors).
        // Routed experts (transformers' loop over experts, docs/training.md "Mixture of experts"): the
        // backward runs one expert at a time, the last one first; at its element-wise backward it has
        // released its index_add_ source, its weighted output's operands and its w2's saves, and the
        // buffers are one expert's rows wide.
        const bool moe = kind.mlp.num_experts > 0 && li.saved.expert_rows > 0;
        const int64_t down_released = kind.mlp.num_experts == 0 ? li.saved.down_saved_bytes : moe ? li.saved.expert_released_bytes : 0;
        const int64_t mlp_width = moe ? kind.mlp.intermediate : li.intermediate;
        const int64_t mlp_rows = moe ? li.saved.expert_rows : T;
        const int64_t down_grad = moe ? li.down_grad_bytes / kind.mlp.num_experts : li.down_grad_bytes;
        if (ckpt == Checkpointing::kFull && li.rng_state_bytes + li.recomputed_input_bytes + li.kept_forward_bytes + li.offloaded_bytes > 0 &&
            (kind.mlp.num_experts == 0 || moe) && li.gated) {
          // The end of the recomputation: the layer's first backward node (down_proj's MmBackward0,
          // or `* scaling` when down_proj has an adapter) unpacks a saved tensor and the checkpoint
          // re-runs the whole layer. Its last statement holds, beside the full saved set, the
          // residual, down_proj's output and the residual sum (with the CPU's fp32 promotion copy
          // of the 16-bit branch under AMP; act * up is gone with mlp()'s frame); under AMP with an
          // fp32 adapter on down_proj the peak is at lora_B(lora_A(x.to(fp32))) * scaling instead:
          // the fp32 copy of x (4·T·I), the product, the base output, lora_B's output and its product
          // with scaling, autocast's unsaved adapter casts and a 2-B cast of the scaling. Plus the
          // gradient of the layer's output (and its 16-bit copy for the branch under AMP) and
          // fork_rng's copy of the RNG state on the CPU (measured: trace of R106 and R136 in
          // measured_cpu_random.json, live bytes by autograd node).
          const LayerPlan& lp = plan.layers[static_cast<size_t>(i)];
          bool down_adapter = false;
          for (const auto& l : kind.linears) down_adapter = down_adapter || (lp.lora && IsDownProjection(l.slot) && IsLoraTarget(l, train.lora));
          const int64_t TI = T * li.intermediate;
          int64_t locals = 0;
          if (moe) {
            // Three statements of the re-run MoE layer (MixtralSparseMoeBlock.forward) can hold its
            // peak: the residual sum after the block (final_hidden_states, hidden dtype, and the
            // router logits, kept by the decoder layer's frame, in place of down_proj's output); the
            // last expert's `expert_layer(x) * routing_weights[...]`, with the block's frame alive
            // (final_hidden_states, the logits, the MoE input unless the gate saved it, the routing
            // weights, the int64 one_hot expert mask) and the expert's gathered rows unless w1 saved
            // them, plus the CPU's fp32 promotion of the 16-bit expert output under AMP; and, with an
            // adapter on w2, peft's `lora_B(lora_A(x)) * scaling` in that expert (the base output,
            // lora_B's output, their product and the cast of the saved float64 scalar; its weighted
            // output's saves do not exist yet). Measured: MOE04-06 and MOE14 in measured_cpu_moe.json, live blocks.
            const int64_t E = kind.mlp.num_experts, routed = T * kind.mlp.experts_per_token;
            const int64_t rows = li.saved.expert_rows;
            const int64_t th = prec.residual * T * h;
            // (+ a 16-bit attention sum, the decoder layer's `residual`: the norm saved an fp32 copy)
            const int64_t frame = th + prec.matmul * T * E + (li.saved.moe_input_saved ? 0 : th) + prec.residual * routed + 8 * routed * E +
                                  (prec.residual == 4 ? 0 : th);
            const int64_t gathered = li.saved.expert_input_saved ? 0 : prec.residual * rows * h;
            const int64_t sum = (prec.residual == 4 ? 1 : 2) * th + th + prec.matmul * T * E;
            const int64_t weighted = frame + gathered + (on_cpu && prec.matmul < prec.residual ? 4 * rows * h : 0);
            locals = std::max(sum, weighted);
            if (li.saved.shared_width > 0) {
              // Qwen2MoeSparseMoeBlock (v4.44-v4.51) runs on past the loop: its last statement,
              // `final_hidden_states + shared_expert_output`, holds the frame and the last expert's
              // gathered rows, the gated product (matmul dtype, not saved), the CPU's fp32 promotion
              // of a 16-bit product and the sum (hidden dtype); the MoE input is a saved storage when
              // the shared expert's projections (or their adapters) kept it. Measured: QMOE06 / QMOE10
              // in measured_cpu_qwen_moe.json.
              const int64_t input_unsaved = li.saved.moe_input_saved || li.saved.mlp_input_saved ? 0 : th;
              const int64_t shared_frame = frame - (li.saved.moe_input_saved ? 0 : th) + input_unsaved;
              locals = std::max(locals, shared_frame + gathered + prec.matmul * T * h + (on_cpu && prec.matmul < prec.residual ? 4 * T * h : 0) + th);
            }
            bool w2_adapter = false;
            for (const auto& l : kind.linears) w2_adapter = w2_adapter || (lp.lora && l.role == ModuleRole::kExperts && IsDownProjection(l.slot) && IsLoraTarget(l, train.lora));
            if (w2_adapter && !prec.autocast && !prec.autocast16 && plan.adapter_bytes_per_param == prec.matmul) {
              locals = std::max(locals, frame + gathered + 3 * prec.matmul * rows * h + (on_cpu ? (prec.half ? prec.matmul : 4) : 0) - li.saved.expert_output_saved_bytes);
            }
          } else if (down_adapter && prec.autocast && plan.adapter_bytes_per_param == 4) {
            locals = (prec.matmul + 4) * TI + prec.residual * T * h + 3 * prec.matmul * T * h + li.saved.adapter_cast_unsaved_bytes + 2;
          } else {
            // (an fp32 residual is the pre-MLP norm's saved input already)
            locals = (prec.residual == 4 ? 1 : 2) * prec.residual * T * h + MlpActBytes(li.saved, prec) * T * h + (prec.autocast && on_cpu ? 4 * T * h : 0);
          }
          if (li.saved.unsloth_mlp) {
            // unsloth's LoRA_MLP.forward at the down projection (matmul_lora(h, downW, ...)): h = f * g
            // (T·I) and its output beside the saved X, e, g and the frame's residual.
            // unsloth <= 2025.2 (framework.unsloth_lora_out_of_place): matmul_lora's out-of-place LoRA term
            // (h @ A) @ (s * B): XA (T·r), s·B (r·h) and the term (T·h) beside its output.
            const int64_t term = fw.unsloth_lora_out_of_place ? prec.matmul * (T * train.lora.rank + train.lora.rank * h + T * h) : 0;
            locals = std::max(locals, prec.matmul * TI + prec.matmul * T * h + prec.residual * T * h + term);
          }
          if (li.saved.indexer_transient_bytes > 0) {
            // The re-run forward passes the DSA indexer before the attention core: the layer has
            // saved up to its projections, beside the indexer's two fp32 score tensors.
            Moment ix = step(Phase::kBackward, At::kIndexerScores, i);
            ix.gradient_bytes = grads_live;
            ix.activation_bytes = saved_prev + li.saved.before_scores_bytes;
            ix.logits_and_loss_bytes = keep_outputs;
            ix.kv_cache_bytes = kept_kv_cache;
            ix.temporary_bytes = layer_extra + carry + prec.residual * T * h + li.saved.indexer_transient_bytes;
            push(ix);
          }
          Moment rc = step(Phase::kBackward, At::kRecompute, i);
          rc.gradient_bytes = grads_live;
          rc.activation_bytes = saved_prev + li.saved.total_bytes;
          rc.logits_and_loss_bytes = keep_outputs;
          rc.kv_cache_bytes = kept_kv_cache;
          // (the MoE output is in the hidden dtype: no 16-bit copy of the gradient for it)
          // (a gated shared expert's 16-bit product gets its own copy of the gradient from the
          // block's `final_hidden_states + shared_expert_output` AddBackward0 before the re-run)
          const bool shared16 = moe && li.saved.shared_width > 0 && prec.matmul < prec.residual;
          rc.temporary_bytes = layer_extra + carry + (prec.autocast && !moe ? prec.matmul * T * h : 0) + (shared16 ? prec.matmul * T * h : 0) +
                               (on_cpu && !offload ? kCpuRngStateBytes : 0) + locals;
          push(rc);
        }
        Moment mlp = step(Phase::kBackward, At::kMlpBackward, i);
        mlp.gradient_bytes = grads_live + (train.grad_accum_steps > 1 || in_bwd ? 0 : down_grad);
        mlp.activation_bytes = saved_prev + li.saved.total_bytes - down_released;
        mlp.logits_and_loss_bytes = keep_outputs;
        mlp.kv_cache_bytes = kept_kv_cache;
        // unsloth's LoRA_MLP.backward: DW = dY @ downW^T (T·I), then swiglu_DWf_DW_dfg_kernel writes h,
        // df, de into DW, e, g in place and dX goes into X (out = X); Liger's SiLUMul backward writes
        // into a and b: one intermediate-width buffer beside the saved ones.
        // With an adapter on the down projection the gradient of SiLUMul's output is the sum of the
        // base's and lora_A's input gradients: three intermediate-width buffers at the sum
        // (measured: LG01, bwd ReshapeAliasBackward0 > aten::add, measured_cpu_kernels.json).
        const bool liger_down_adapter = li.saved.liger_swiglu && LigerLoraAt(plan.layers[static_cast<size_t>(i)], kind, train.lora, LinearSlot::kDown);
        // Without one, the peak is down_proj's MmBackward0 making that gradient while its saved input
        // (SiLUMul's output) is still held; SiLUMul's backward then writes into a and b in place
        // (measured: LG07, full fine-tuning, bwd MmBackward0 > aten::mm).
        if (li.saved.liger_swiglu && !liger_down_adapter) mlp.activation_bytes += down_released;
        const int64_t mlp_buffers = li.saved.unsloth_mlp ? 1 : li.saved.liger_swiglu ? (liger_down_adapter ? 3 : 1) : li.gated ? 3 : 2;
        // unsloth <= 2025.2 (framework.unsloth_lora_out_of_place; unslothai/unsloth 6dd9d4e
        // kernels/utils.py matmul_lora): DW = matmul_lora(dY, downW.t(), ..., downB, downA, downS) frees
        // the dequantized weight, then adds `(dY @ downB^T) @ (downS * downA)` out of place: the term
        // (T·I), dY·B (T·r) and s·A (r·I) beside X, e, g and DW (measured: UO rows of measured_cpu_kernels.json).
        const int64_t dequant_or_term = li.saved.unsloth_mlp && fw.unsloth_lora_out_of_place
                                            ? std::max(li.saved.max_dequant_bytes,
                                                       prec.matmul * (mlp_rows * mlp_width + mlp_rows * train.lora.rank + train.lora.rank * mlp_width))
                                            : li.saved.max_dequant_bytes;
        mlp.temporary_bytes = carry + mlp_buffers * MlpActBytes(li.saved, prec) * mlp_rows * mlp_width + layer_extra + dequant_or_term +
                              (moe ? li.saved.routing_grad_bytes : 0);
        push(mlp);
        if (moe && li.saved.shared_width > 0) {
          // Qwen2MoeSparseMoeBlock's shared expert (modeling_qwen2_moe.py, v4.44-v4.51), the first
          // part of the block in backward (created last): after the gate product's MulBackward0,
          // SigmoidBackward0 and shared_expert_gate's MmBackward0 (its input gradient, T x h in the
          // hidden dtype, waits in the engine's buffer for the other readers of hidden_states) and
          // down_proj's, the element-wise `act_fn(gate_proj(x)) * up_proj(x)` backward holds three
          // T x I_shared buffers beside the gradients of down_proj and shared_expert_gate.
          // Measured: QMOE04-06 and QMOE10 in measured_cpu_qwen_moe.json (checkpointed, layer 0).
          int64_t shared_grads = 0;
          for (const auto& l : kind.linears) {
            if (l.role == ModuleRole::kSharedExperts && (IsDownProjection(l.slot) || l.slot == LinearSlot::kSharedExpertScale))
              shared_grads += LinearGradBytes(l, plan.layers[static_cast<size_t>(i)], train, plan, prec.grad);
          }
          Moment sh = mlp;
          sh.gradient_bytes = grads_live + (train.grad_accum_steps > 1 || in_bwd ? 0 : shared_grads);
          sh.activation_bytes = saved_prev + li.saved.total_bytes - li.saved.shared_released_bytes;
          sh.temporary_bytes = carry + 3 * MlpActBytes(li.saved, prec) * T * li.saved.shared_width + layer_extra + li.saved.max_dequant_bytes +
                               (li.saved.moe_input_requires_grad ? prec.residual * T * h : 0);
          push(sh);
        }
        if (moe && kind.mlp.num_experts >= 2 && li.saved.moe_input_requires_grad) {
          // The second expert in backward, at its gathered rows' IndexBackward0: the gradient of the
          // MoE input arrives per expert as a zero (T, h) tensor with the rows put in, and the
          // engine sums it with what the first expert sent out of place (after the node has run and
          // released its saved indices): three T·h tensors beside the routing weights' gradient.
          // Both experts have released all their saves and produced their weight gradients
          // (measured: MOE30, 16 experts, live blocks at the backward's peak).
          int64_t expert_grads = 0;
          for (const auto& l : kind.linears) {
            if (l.role == ModuleRole::kExperts && l.copies > 0) expert_grads += LinearGradBytes(l, plan.layers[static_cast<size_t>(i)], train, plan, prec.grad) / l.copies;
          }
          Moment second = mlp;
          second.gradient_bytes = grads_live + (train.grad_accum_steps > 1 || in_bwd ? 0 : 2 * expert_grads);
          second.activation_bytes = saved_prev + li.saved.total_bytes - 2 * li.saved.expert_saved_bytes;
          second.temporary_bytes = carry + 3 * prec.residual * T * h + li.saved.routing_grad_bytes + layer_extra + li.saved.max_dequant_bytes;
          push(second);
        }
        if (in_bwd && li.down_grad_bytes > 0) {
          // The down projection's step in its hook, the first of the layer's (its gradient is the
          // first produced): its gradient and the step's temporaries over the MLP backward's buffers.
          Moment hook = mlp;
          hook.gradient_bytes = down_grad;
          hook.temporary_bytes += one_tensor_step(down_grad / std::max<int64_t>(1, prec.grad), prec.grad);
          push(hook);
        }
        if (prec.autocast && li.grad_bytes > 0 && li.gated) {
          // The bf16 weight gradient of up_proj and its fp32 conversion coexist (ToCopyBackward0).
          Moment cast = mlp;
          cast.temporary_bytes += 4 * mlp_width * h + 2 * mlp_rows * h - 8 * mlp_rows * mlp_width;
          push(cast);
        }
        if (li.saved.before_mlp_norm_bytes >= 0 && kind.mlp.num_experts == 0) {
          // The pre-MLP RMSNorm's backward at PowBackward0 (x32.pow(2)): four fp32 T·h tensors (the
          // gradient from the x32 * rsqrt branch, mean's expanded gradient, x32.pow(1) and its
          // product) beside the residual gradient; the MLP's saved tensors are gone, the norm keeps
          // its fp32 input (measured: the bf16 rows of measured_cpu_random.json, where these fp32
          // buffers outweigh the 16-bit MLP ones).
          Moment norm = step(Phase::kBackward, At::kMlpNormBackward, i);
          norm.gradient_bytes = grads_live + (train.grad_accum_steps > 1 || in_bwd ? 0 : li.mlp_grad_bytes);
          norm.activation_bytes = saved_prev + li.saved.before_mlp_norm_bytes + 4 * T * h;
          norm.logits_and_loss_bytes = keep_outputs;
          norm.kv_cache_bytes = kept_kv_cache;
          norm.temporary_bytes = carry + 5 * 4 * T * h + layer_extra + li.saved.max_dequant_bytes;
          if (ctx.FastRmsNorm()) {
            // unsloth's / Liger's RMSNorm backward: its saved input and rstd, and the output gradient
            // (the MLP's input gradient) overwritten with the input gradient in place (unsloth
            // Fast_RMS_Layernorm.backward `dX = dY`; Liger rms_norm_backward in_place=True).
            norm.activation_bytes = saved_prev + li.saved.before_mlp_norm_bytes + prec.residual * T * h + 4 * T;
            norm.temporary_bytes = carry + prec.residual * T * h + layer_extra + li.saved.max_dequant_bytes;
          }
          push(norm);
        }
        if (li.saved.qk_require_grad) {
          Moment att = step(Phase::kBackward, At::kAttentionBackward, i);
          att.gradient_bytes = grads_live + (train.grad_accum_steps > 1 || in_bwd ? 0 : li.pre_attn_grad_bytes);
          att.activation_bytes = saved_prev + li.saved.through_attention_bytes;
          att.logits_and_loss_bytes = keep_outputs;
          att.kv_cache_bytes = kept_kv_cache;
          // The residual gradient flows on only when the layer's input needs one (not into a frozen embedding).
          const int64_t att_carry = plan.layers[static_cast<size_t>(i)].input_requires_grad ? carry : 0;
          att.temporary_bytes = att_carry + prec.matmul * T * a * g.v_head_dim + layer_extra + li.saved.max_dequant_bytes;
          if (ckpt == Checkpointing::kSelective && eager && li.saved.attention_core_bytes > 0) {
            // The checkpoint still holds the core's arguments while the re-run core's backward runs:
            // k_embed and v beside their repeat_kv copies (GQA), q_embed beside its autocast cast
            // (measured: the *.selective rows of measured_cpu_ext.json, b = 1).
            if (g.num_kv_heads < a) att.temporary_bytes += T * g.num_kv_heads * (QkBytes(prec, g.no_rope) * g.head_dim + prec.matmul * g.v_head_dim);
            if (prec.autocast && !g.no_rope) att.temporary_bytes += prec.q_after_rope * T * a * g.head_dim;
          }
          if (eager) {
            // grad of the probabilities and softmax backward output; gpt-oss's core with sinks: activations.h
            att.temporary_bytes += g.sinks ? SinkScoresBackwardBytes(prec, b, a, s, g.v_head_dim) : checked::Mul(8, b, a, s, s);
          } else {
            // dq, dk, dv (+ FlashAttention's fp32 dq accumulator)
            const int64_t kv_heads = train.attention == AttentionImpl::kFlash ? g.num_kv_heads : a;
            att.temporary_bytes += prec.matmul * T * (a * g.head_dim + 2 * kv_heads * g.head_dim) + 4 * T * a * g.head_dim;
            if (train.attention == AttentionImpl::kFlash) att.temporary_bytes += FlashAttention2BackwardExtraBytes(b, s, a, g.num_kv_heads, g.head_dim, g.v_head_dim, prec.matmul);
          }
          push(att);
        }
      }
      if (simulated && li.saved.last_qkv_saved_bytes >= 0 && kind.mlp.num_experts == 0) {
        // The q/k/v projections' backward, at q_proj (the last to run, created first): every weight
        // gradient of the layer but the input norm's, the pre-attention norm's saved tensors and
        // what q_proj saved, the gradient of the norm's output accumulated from v and k, q's input
        // gradient and the residual gradient (measured: R038 in measured_cpu_random.json).
        int64_t norm_grad = 0;
        if (plan.layers[static_cast<size_t>(i)].weights_trainable) {
          for (const auto& n : kind.norms) {
            if (n.slot == NormSlot::kPreAttention) norm_grad += prec.grad * n.Params();
          }
        }
        const int64_t layer_extra = parked_tied_grad + rng_live + li.recomputed_input_bytes + loss_scalars + offload_grad_output + hook_retained;
        Moment qkv = step(Phase::kBackward, At::kQkvBackward, i);
        qkv.gradient_bytes = grads_live + (train.grad_accum_steps > 1 || in_bwd ? 0 : li.grad_bytes - norm_grad);
        qkv.activation_bytes = saved_prev + li.saved.pre_attn_norm_bytes + li.saved.last_qkv_saved_bytes;
        qkv.logits_and_loss_bytes = keep_outputs;
        qkv.kv_cache_bytes = kept_kv_cache;
        qkv.temporary_bytes = (plan.layers[static_cast<size_t>(i)].input_requires_grad ? carry : 0) + 3 * prec.residual * T * h + layer_extra;
        push(qkv);
      }
      if (simulated && dp.fsdp && dp.shard_grads && !in_bwd && li.grad_bytes > 0) {
        // FSDP reduces a decoder layer's gradient when the layer's last parameter gradient exists,
        // and first copies the per-parameter gradients into one flat tensor, so for a moment the
        // unit's gradient exists twice in full: the per-parameter gradients (the rank view's
        // unit_grad_bytes) and the flat copy (here).
        //   FSDP1: the module's parameters are views of the unsharded FlatParameter (torch.split +
        //   view in FlatParamHandle._get_unflat_views_unaligned, torch/distributed/fsdp/_flat_param.py,
        //   PyTorch 2.1-2.5), so autograd's SplitWithSizesBackward concatenates the views' gradients
        //   into the FlatParameter's (split_with_sizes_backward, torch/csrc/autograd/FunctionsManual.cpp:
        //   at::cat) before _post_backward_hook (_runtime_utils.py) reduce-scatters it; under mixed
        //   precision the gathered flat parameter and so its gradient are in param_dtype.
        //   FSDP2: foreach_reduce allocates reduce_scatter_input and copies every unsharded gradient
        //   into it (foreach_reduce_scatter_copy_in) before unsharded_grads.clear()
        //   (torch/distributed/_composable/fsdp/_fsdp_collectives.py, PyTorch 2.4-2.5).
        // The moment follows the layer's input-norm backward: the layer's saved tensors are released,
        // the gradient of its input (for the layer below) exists.
        const int64_t flat_copy = fsdp_16bit_units ? li.grad_bytes / prec.grad * 2 : li.grad_bytes;
        const int64_t layer_extra = parked_tied_grad + rng_live + li.recomputed_input_bytes + loss_scalars + offload_grad_output + hook_retained;
        Moment flat = step(Phase::kBackward, At::kFsdpGradientFlatten, i);
        flat.gradient_bytes = grads_live + (train.grad_accum_steps > 1 ? 0 : li.grad_bytes);
        flat.activation_bytes = saved_prev;
        flat.logits_and_loss_bytes = keep_outputs;
        flat.kv_cache_bytes = kept_kv_cache;
        flat.temporary_bytes = (plan.layers[static_cast<size_t>(i)].input_requires_grad ? carry : 0) + layer_extra + flat_copy;
        push(flat);
      }
      if (!in_bwd) grads_so_far += li.grad_bytes;
      zero2_produced = grads_so_far;
      rng_live -= li.rng_state_bytes;
      if (frozen_unit_hooks && plan.layers[static_cast<size_t>(i)].input_requires_grad && li.kept_forward_bytes > 0) {
        hook_retained += li.kept_forward_bytes + hook_pending_grad;  // this layer's input; the gradient of the one above
        hook_pending_grad = prec.residual * T * h;                   // this layer's input gradient: the next layer's carry
      }
    }
    hook_after_layers = hook_retained;  // the backward's remaining moments (the last input gradient is theirs)
    hook_now = hook_retained;
  }
  // -- backward end: the embedding gradient (tied: lm_head's grad waits for the embedding's, then both are summed).
  zero2_produced = grads_total;
  if (plan.embedding_trainable) {
    Moment m = step(Phase::kBackward, At::kEmbeddingBackward);
    m.gradient_bytes = in_bwd ? prec.grad * V * h : grads_total;
    m.fresh_gradient_bytes = prec.grad * V * h;  // the embedding's weight gradient, just produced
    m.temporary_bytes = (model.tied_embeddings && plan.lm_head_trainable) ? 2 * V * h * prec.grad : prec.residual * T * h;
    m.logits_and_loss_bytes = keep_outputs;
    m.kv_cache_bytes = kept_kv_cache;
    if (on_cpu) m.temporary_bytes += 8;  // the loss and the root gradient, as in the layers' backward
    if (in_bwd) m.temporary_bytes += one_tensor_step(V * h, prec.grad);  // its step in the hook
    m.temporary_bytes += hook_after_layers;  // FSDP1 frozen-unit hooks: removed in _finalize_params, after this
    if (fsdp_root_grads) {
      // The root's gradients (embedding, lm_head, final norm; with fsdp_embedding_units the
      // embedding unit's alone) whole, and their flat copy for the reduce-scatter (FSDP1:
      // SplitWithSizesBackward's cat; FSDP2: foreach_reduce's reduce_scatter_input), at the moment
      // the embedding's gradient completes the unit.
      const int64_t root_grads = prec.grad * V * h + fsdp_root_grad_whole +
                                 (plan.final_norm_trainable && !dp.embedding_units ? prec.grad * model.final_norm.Params() : 0);
      m.unreduced_gradient_bytes = root_grads;
      m.temporary_bytes += root_grads;
    }
    push(m);
  }
  fsdp_root_grad_whole = 0;
  hook_now = 0;
  // -- PPO: the critic's backward runs after the policy's (its ops were recorded first): the
  // policy's gradients done, the critic's appearing while its saved tensors are freed.
  if (ppo) {
    Moment m = step(Phase::kBackward, At::kCriticBackward);
    m.gradient_bytes = in_bwd ? 0 : grads_total;
    m.critic_gradient_bytes = critic.grads;
    m.critic_activation_bytes = critic.activations / 2;  // about half freed when half the gradients exist
    m.running = "critic";
    push(m);
  }
  // -- optimizer step
  {
    Moment m = step(Phase::kOptimizerStep, At::kOptimizerStep);
    m.gradient_bytes = in_bwd ? 0 : grads_total;  // in backward: every parameter has stepped already
    m.temporary_bytes = in_bwd ? 0 : opt.step_temporary_bytes;
    m.critic_gradient_bytes = critic.grads;  // one optimizer over policy and critic (TRL PPOTrainer)
    push(m);
  }
  // -- zero_grad(set_to_none=True): the gradients are gone until the next backward.
  push(step(Phase::kZeroGrad, At::kZeroGrad));

  // ---- host side of data parallelism: what offload moves to host RAM (per rank)
  rank.AddOffloadedHostTerms(opt.state_bytes, plan.trainable_params, weights.bytes, explain, &r->cpu.breakdown);
  r->gpu.gradient_bytes = in_bwd ? 0 : view.Gradients(grads_total);  // in backward: each one is None after its step
  r->gpu.optimizer_state_bytes = states_dev;

  // ---- the peak and the per-phase peaks: maxima over the same moments (the first one wins a tie)
  const Moment* peak = &moments.Peak();
  const Moment* step_peak = &moments.StepPeak();
  r->peak_phase = PhaseName(peak->phase);
  r->peak_at = MomentLabel(peak->at, peak->layer);
  r->peak_model = peak->running != nullptr ? peak->running : peak->reference_runs ? "reference" : "policy";

  // ---- the phase peaks and the breakdown at the peak
  ReportPeak(moments, *peak, &r->gpu, online_rl);
  std::vector<Term>& bd = r->gpu.breakdown;
  if (peak->phase == Phase::kLoad) {
    // The load holds torch.cuda.max_memory_allocated(). Reserved is what the caching allocator
    // holds at its fullest over the run: the segments the load reserved, or the step's peak plus
    // its reserve (gpu/device_overhead.h), whichever is larger; the step's figures are the same
    // whether or not the load is the allocated peak.
    const int64_t step_static = step_peak->weight_bytes + step_peak->optimizer_state_bytes;
    const int64_t step_reserved = step_peak->Total() + AllocatorOverheadBytes(sc, step_static, step_peak->Total() - step_static);
    const int64_t reserved = std::max(load.reserved_bytes, step_reserved);
    bd.push_back(Term{"allocator_overhead", reserved - peak->Total(),
                      explain ? "the model load holds the allocated peak; reserved is the larger of the load's reserve " + Gib(load.reserved_bytes) +
                                    " and the step's peak " + Gib(step_peak->Total()) + " (" + MomentLabel(step_peak->at, step_peak->layer) +
                                    ") plus its allocator reserve = " + Gib(step_reserved) + "; reserved - allocated = " + Gib(reserved - peak->Total())
                              : ""});
  }
  if (const int64_t pool = IdleGatherPoolBytes(view, peak->phase); pool > 0 && peak->phase != Phase::kLoad && fw.device == Device::kCuda) {
    // The gathered units' (ZeRO-3: parameters') segments stay cached on the all-gather stream through
    // the optimizer step (parallel/fsdp_stream_pools.h): the reserve at this peak is the usual one plus that pool.
    int64_t allocated = 0, static_bytes = 0;
    for (const Term& t : bd) {
      allocated += t.bytes;
      if (t.key == "weights" || t.key == "optimizer_states") static_bytes += t.bytes;
    }
    const int64_t usual = AllocatorOverheadBytes(sc, static_bytes, allocated - static_bytes);
    const int64_t reserve = std::max(usual + pool, load.reserved_bytes - allocated);
    bd.push_back(Term{"allocator_overhead", reserve,
                      explain ? "caching allocator reserve at the optimizer step: the usual " + Gib(usual) + " (1% of weights + states, a share of the rest) + the " + std::string(view.dp.fsdp ? "FSDP" : "ZeRO-3") + " all-gather stream's cached segments " +
                                    Gib(pool) +
                                    (view.dp.fsdp ? " (the gathered units; a freed block serves its own stream only: docs/parallel.md, FSDP's all-gather pool) = "
                                                  : " (the parameters gathered at the turn, the persistent ones aside; a freed block serves its own stream only: docs/parallel.md, ZeRO-3's all-gather pool) = ") +
                                    Gib(reserve)
                              : ""});
  }
  if (explain) {
    const std::string method = train.method == TrainMethod::kFull ? "full" : train.method == TrainMethod::kFreeze ? "freeze"
                               : train.method == TrainMethod::kLora ? "LoRA" : "QLoRA";
    bd[0].explain = weights.explain;
    if (reference_weights > 0) bd[0].explain += "; + frozen reference copy (TRL ref_model, the policy's dtype) " + Gib(reference_weights);
    else if (ReferencePassRuns(train)) bd[0].explain += "; reference = the base with its adapters disabled (PEFT: no copy)";
    if (dp.shard_params) {
      if (view.unsharded_weight_bytes > 0) {
        const bool quant_state = view.unsharded_weight_bytes > rope_cache_bytes;
        const std::string what = quant_state && rope_cache_bytes > 0 ? "bitsandbytes' QuantState and the RoPE caches "
                                 : quant_state                     ? "bitsandbytes' QuantState "
                                                                   : "the RoPE caches (buffers) ";
        const std::string qs = what + Gib(view.unsharded_weight_bytes) + (quant_state && rope_cache_bytes > 0 ? " stay" : " stays") +
                               " whole on every rank (outside the sharded parameter data)";
        bd[0].explain += dp.offload_params ? "; offloaded to host RAM but " + qs
                                           : "; sharded: / " + std::to_string(dp.dp) + " ranks except " + qs + " = " + Gib(weights_dev);
      } else {
        bd[0].explain += dp.offload_params ? "; offloaded to host RAM (ZeRO-3 offload_param)" : "; sharded: / " + std::to_string(dp.dp) + " ranks = " + Gib(weights_dev);
      }
      bd[0].explain += "; + gathered units " + Gib(view.gathered_bytes) + " while layers run (in temporary)";
    }
    bd[1].explain = WithCommas(plan.trainable_params) + " trainable params (" + method + ")" +
                    (plan.lora_params > 0 ? ": adapters " + WithCommas(plan.lora_params) + " x " + std::to_string(plan.adapter_bytes_per_param) + " B" +
                                                (plan.trainable_params > plan.lora_params ? ", others x " + std::to_string(prec.grad) + " B" : "")
                                          : " x " + std::to_string(prec.grad) + " B") +
                    " = " + Gib(grads_total) + "; live at the peak: " + Gib(peak->gradient_bytes) +
                    (peak->phase == Phase::kBackward && zero2_second.partition_bytes > 0 && zero2_second.BytesAfter(grads_total, grads_total) > 0
                         ? "; DeepSpeed ZeRO-2 with accumulation: from the second micro-batch on the backward holds a second partition (up to " +
                               Gib(zero2_second.partition_bytes) + ") beside the accumulated one (stage_1_and_2.py averaged_gradients; docs/parallel.md)"
                         : "");
    bd[2].explain = opt.explain_states + " = " + Gib(opt.state_bytes) +
                    (opt.paged_bytes > 0 ? " (+ " + Gib(opt.paged_bytes) + " paged in unified memory)" : "") +
                    (dp.offload_states ? "; offloaded to host RAM" : dp.shard_states ? "; sharded: / " + std::to_string(dp.dp) + " ranks = " + Gib(states_dev) : "") +
                    (peak->phase == Phase::kLoad ? "; not allocated yet at the load peak (created at the first optimizer step)" : "");
    bd[3].explain = "saved for backward at the peak: " + Gib(peak->activation_bytes) + "; at the end of the forward the layers keep " +
                    Gib(saved_total - loss.saved_bytes) + " (" + std::to_string(L) + " layers x ~" + Gib(L > 0 ? layers_kept / L : 0) + ", " +
                    (ckpt == Checkpointing::kFull && offload ? "checkpointed with offload: each layer's input waits in host RAM (" + Gib(offloaded_host) + ") and comes back for its backward, where the recomputed layer saves its tensors again"
                     : offload ? "offloaded: each layer's saved tensors wait in host RAM (" + Gib(offloaded_host) + ") and come back for its backward"
                     : ckpt == Checkpointing::kFull ? "checkpointed: each layer keeps its input; the layer recomputed in backward saves its tensors again"
                     : ckpt == Checkpointing::kSelective ? "selective recomputation of attention" : "no checkpointing") +
                    ") + batch tensors " + WithCommas(peak->batch_bytes) + " B";
    bd[4].explain = loss.explain + ", b=" + std::to_string(b) + " s=" + std::to_string(s) + " V=" + WithCommas(V) + ": " +
                    Gib(peak->logits_and_loss_bytes) + " at the peak";
    if (peak->reference_pass_bytes > 0) bd[4].explain += " + the reference forward's logits and log-prob buffers " + Gib(peak->reference_pass_bytes);
    if (kv_cache > 0) bd[5].explain = "use_cache=True returns every layer's k and v during training";
    if (peak->RolloutBytes() > 0) {  // GRPO / PPO: the rollout engine at the peak (train/online_rl.h)
      if (peak->rollout_weight_bytes > 0) bd[0].explain += "; + the rollout engine's own weights " + Gib(peak->rollout_weight_bytes);
      bd[5].explain = (kv_cache > 0 ? bd[5].explain + "; " : std::string()) + "rollout engine at the peak " + Gib(peak->RolloutBytes()) +
                      (peak->phase == Phase::kRollout ? " (generating): " : " (between generations): ") + engine.explain;
    }
    if (peak->reward_weight_bytes + peak->CriticBytes() > 0) {
      bd[0].explain += "; + PPO reward model " + Gib(peak->reward_weight_bytes) + " and critic " + Gib(peak->critic_weight_bytes) +
                       " (the policy's architecture; critic states " + Gib(peak->critic_state_bytes) + ", gradients " + Gib(peak->critic_gradient_bytes) +
                       ", saved activations " + Gib(peak->critic_activation_bytes) + " in their terms)";
    }
    bd[6].explain = peak->phase == Phase::kLoad
                        ? "transient at the peak (" + r->peak_at + "): " + Gib(peak->temporary_bytes) + "; " + load.explain
                        : "transient at the peak (" + r->peak_at + "): " + Gib(peak->temporary_bytes) +
                              (peak->workspace_bytes > 0 ? " + cuBLAS workspace " + WithCommas(peak->workspace_bytes) + " B" : "") +
                              (view.backward_bucket_bytes > 0 && peak->phase == Phase::kBackward ? "; includes DeepSpeed gradient buckets " + WithCommas(dp.backward_bucket_elements) + " x " + std::to_string(bucket_dtype) + " B" : "") +
                              (peak->persistent_bucket_bytes > 0 && dp.persistent_bucket_elements > 0 ? " + DeepSpeed ZeRO-3 gradient bucket " + WithCommas(dp.persistent_bucket_elements) + " x " + std::to_string(bucket_dtype) + " B" : "") +
                              (peak->persistent_bucket_bytes > 0 && dp.ddp_gradient_copy ? " + DDP all-reduce buckets (a flat copy of the gradients, gradient_as_bucket_view false) " + Gib(grads_total) : "") +
                              (peak->frozen_unit_hook_bytes > 0 ? "; includes FSDP1's frozen-unit hooks (parallel.fsdp_frozen_unit_hooks): the recomputed inputs and input gradients of the layers back-propagated so far, kept until the backward ends " + Gib(peak->frozen_unit_hook_bytes) : "") +
                              (peak->phase == Phase::kOptimizerStep ? "; " + opt.explain_temporary : "") +
                              (peak->phase == Phase::kOptimizerStep && zero3_sub_group_elements > 0
                                   ? "; DeepSpeed ZeRO-3 steps one sub-group at a time (sub_group_size 1e9): the largest holds " +
                                         WithCommas(zero3_sub_group_elements) + " elements on this rank: " + Gib(view.zero3_step_temporary_bytes) + " at once (its 16-bit flat gradient and fp32 copy, or the update)"
                                   : "");

    // ---- timeline: the moments themselves (allocated bytes; the CUDA context and the allocator
    // reserve come on top), thinned on deep models but always with the peak and every phase's
    // highest moment: max(timeline) == peak_allocated and each phase's maximum == its phase peak.
    const std::vector<Moment> points = moments.Timeline();
    r->timeline.reserve(points.size());
    for (const Moment& m : points) r->timeline.push_back(TimelinePoint{PhaseName(m.phase), MomentLabel(m.at, m.layer), m.Total()});
  }

  // ---- host memory
  if (offloaded_host > 0) {
    r->cpu.breakdown.push_back(Term{"offloaded_activations", offloaded_host,
                                    ckpt == Checkpointing::kFull ? "checkpointed layer inputs offloaded to host RAM in the forward (train.activation_offload)"
                                                                 : "saved activations offloaded to host RAM in the forward (train.activation_offload)"});
  }
  if (engine.host_bytes > 0) {
    r->cpu.breakdown.push_back(Term{"rollout_slept_weights", engine.host_bytes, "vLLM sleep level 1: its weights wait in host RAM between generations"});
  }
  if (online_rl) {
    RolloutResult& o = r->rollout;
    o.present = true;
    o.engine = engine.vllm ? "vllm" : "generate";
    o.mode = engine.colocated ? "colocate" : "server";
    o.server_gpus = engine.server_gpus;
    o.engine_bytes = engine.colocated ? engine.weight_bytes + engine.cache_bytes : engine.server_bytes;
    o.asleep_bytes = engine.asleep_weight_bytes + engine.asleep_cache_bytes;
    o.host_bytes = engine.host_bytes;
    o.rollout_sequences = engine.sequences;
    o.kv_token_capacity = engine.kv_token_capacity;
    o.concurrent_sequences = engine.concurrent_sequences;
    AddOnlineRlWarnings(sc, engine, weights_dev + reference_weights + reward_weights + critic.weights, r);
  }
  if (opt.paged_bytes > 0) r->cpu.breakdown.push_back(Term{"paged_optimizer_states", opt.paged_bytes, "paged AdamW 8-bit states in CUDA unified memory (evicted to host under pressure)"});
  for (const auto& t : r->cpu.breakdown) r->cpu.bytes += t.bytes;

  // ---- fields whose effect is not modeled yet are said, never silently ignored
  const ParallelConfig& p = sc.parallel;
  if (!p.fsdp && p.fsdp_sharding != FsdpSharding::kFullShard) {
    r->warnings.push_back(MakeWarning(WarningCode::kNoEffect, "parallel.fsdp_sharding", "fsdp_sharding applies to FSDP: it needs parallel.fsdp true"));
  }
  if (fw.torch_compile) {
    r->warnings.push_back(MakeWarning(WarningCode::kNotModeled, "framework.torch_compile",
                                      train.qlora_backend == QloraBackend::kTorchao && train.method == TrainMethod::kQlora
                                          ? "torch.compile: only the fused torchao NF4 dequantization (one kernel writing the bf16 weight) is modeled; inductor's other fusions and its partitioner's saves are the eager step's memory"
                                          : "torch.compile: inductor fuses element-wise chains and its partitioner decides what is saved; this is the eager step's memory"));
  }
  if (in_bwd && train.grad_accum_steps > 1) {
    r->warnings.push_back(MakeWarning(WarningCode::kUnsupportedCombination, "train.optimizer_in_backward",
                                      "torchtune refuses optimizer_in_bwd with gradient accumulation (the step needs the accumulated gradient); estimated without accumulation"));
  }
  if (LigerChunkedLossApplies(train)) {
    r->warnings.push_back(MakeWarning(WarningCode::kApproximate, "train.loss",
                                      "Liger's chunked loss (TRL use_liger_kernel): each chunk is sized by chunk_forward's eager ops, an upper "
                                      "bound for the compiled chunk (Liger's own loss benchmark suggests 6-8 B per chunk logit against the "
                                      "14 B counted for a DPO pair); not measured on a GPU"));
  }
  if (preference && train.loss != LossImpl::kStandard && !LigerChunkedLossApplies(train)) {
    r->warnings.push_back(MakeWarning(WarningCode::kNotModeled, "train.loss",
                                      "preference objectives compute TRL's selective_log_softmax on the full logits; chunked and "
                                      "fused-linear losses (TRL use_liger_kernel) are not modeled for them"));
  }
  if (train.precompute_ref_log_probs && !ReferencePassRuns(sc_samples.train) && train.objective != Objective::kDpo &&
      train.objective != Objective::kIpo && train.objective != Objective::kKto) {
    r->warnings.push_back(MakeWarning(WarningCode::kNoEffect, "train.precompute_ref_log_probs",
                                      "precompute_ref_log_probs applies to objectives with a reference model (dpo, ipo, kto)"));
  }
  if (train.images_per_sample > 0 && model.vision.kind == VisionKind::kNone) {
    r->warnings.push_back(MakeWarning(WarningCode::kNoEffect, "train.images_per_sample",
                                      "images apply to vision-language models with a modelled vision tower (docs/models.md); this model reads text only"));
  }
  if (train.videos_per_sample > 0 && !TakesVideo(model.vision)) {
    r->warnings.push_back(MakeWarning(WarningCode::kNoEffect, "train.videos_per_sample",
                                      "videos apply to the vision-language models whose processors take video (Qwen2.5-VL, Qwen3-VL; docs/models.md); this model's are not modelled"));
  }
  if (train.float8) {
    r->warnings.push_back(MakeWarning(WarningCode::kNotModeled, "train.float8",
                                      "float8 linears save fp8 casts of their inputs and keep scales; this is the 16-bit step's memory"));
  }
  if (train.recompute_num_layers > 0 || train.recompute_method != RecomputeMethod::kUniform) {
    r->warnings.push_back(MakeWarning(WarningCode::kNoEffect, "train.recompute_num_layers",
                                      "recompute_method and recompute_num_layers are Megatron's and torchtitan's (framework.trainer); transformers' gradient checkpointing wraps every layer"));
  }
  if (p.sequence_parallel) {  // with tp > 1 the model-parallel step runs instead (train/parallel_step.h)
    r->warnings.push_back(MakeWarning(WarningCode::kNoEffect, "parallel.sequence_parallel", "sequence parallelism splits the norm and dropout regions over the tensor-parallel ranks: it needs parallel.tp > 1"));
  }
  if ((p.reduce_bucket_size || p.overlap_comm || p.contiguous_gradients) && (p.zero == 0 || p.fsdp)) {
    r->warnings.push_back(MakeWarning(WarningCode::kNoEffect, "parallel.reduce_bucket_size", "reduce_bucket_size, overlap_comm and contiguous_gradients are DeepSpeed ZeRO settings: they need parallel.zero 1-3"));
  }
  if (fw.model_load == ModelLoad::kTorchtune01 && !load.replayed) {
    r->warnings.push_back(MakeWarning(WarningCode::kNoEffect, "framework.model_load", "model_load torchtune_0_1 replays torchtune 0.1's single-device recipe (one CUDA GPU, no ZeRO/FSDP, dense decoders); this load is estimated as direct"));
  }
  if (p.offload_params != Offload::kNone && !dp.shard_params) {
    r->warnings.push_back(MakeWarning(WarningCode::kNoEffect, "parallel.offload_params", "parameter offload needs ZeRO-3 or FSDP (parallel.zero: 3 or parallel.fsdp: true)"));
  }
  if (train.attention == AttentionImpl::kFlash && !prec.half) {
    r->warnings.push_back(MakeWarning(WarningCode::kUnsupportedCombination, "train.attention", "FlashAttention needs fp16/bf16 inputs; with fp32 weights and no autocast transformers falls back to another kernel"));
  }
  bool recurrent_mixers = false, short_conv = false, kimi_delta = false, lightning = false;
  for (const LayerKind& k : model.kinds) {
    short_conv = short_conv || k.recurrent.kind == MixerKind::kShortConv;
    kimi_delta = kimi_delta || k.recurrent.kind == MixerKind::kKimiDelta;
    lightning = lightning || k.recurrent.kind == MixerKind::kLightning;
    recurrent_mixers = recurrent_mixers || (k.recurrent.kind != MixerKind::kNone && k.recurrent.kind != MixerKind::kShortConv &&
                                            k.recurrent.kind != MixerKind::kLightning);
  }
  if (lightning) {
    // activations.cpp LightningSavedBytes: transformers modeling_minimax.py
    // MiniMaxLightningAttention.forward, checked against a torch port on CPU, not on a GPU.
    r->warnings.push_back(MakeWarning(WarningCode::kApproximate, "model",
                                      "MiniMax Lightning attention layers: their saved activations follow transformers' eager "
                                      "block loop (MiniMaxLightningAttention.forward: the silu input, q / k / v and their "
                                      "decayed copies, each block's scores and K^T V state, the norm and the sigmoid gate; "
                                      "docs/training.md), worked from the code with every tensor in one dtype and checked "
                                      "against a CPU port, not measured on a GPU; autocast's casts and fp32 decay buffers "
                                      "are not modelled"));
  }
  if (short_conv) {
    r->warnings.push_back(MakeWarning(WarningCode::kApproximate, "model",
                                      "LFM2 short-convolution layers: their saved activations follow transformers' torch path "
                                      "(Lfm2ShortConv.slow_forward: the in_proj output, the conv input and its padded output; "
                                      "docs/training.md), worked from the code and not measured; with causal_conv1d installed "
                                      "on CUDA, cuda_kernels_forward saves different tensors"));
  }
  if (recurrent_mixers) {
    r->warnings.push_back(MakeWarning(WarningCode::kApproximate, "model",
                                      "linear-attention / Mamba layers: their saved activations are modelled from what the fused kernels save "
                                      "for backward (causal-conv1d, mamba_ssm mamba_split_conv1d_scan_combined / selective_scan, fla "
                                      "chunk_gated_delta_rule; docs/training.md), not measured"));
  }
  if (kimi_delta) {
    r->warnings.push_back(MakeWarning(WarningCode::kApproximate, "model",
                                      "Kimi Delta Attention layers: their saved activations follow fla's chunk_kda as the remote "
                                      "modeling_kimi.py calls it (ChunkKDAFunction.forward with recomputation on, the fused gate, the "
                                      "three short convolutions, FusedRMSNormGated; docs/training.md), worked from the code, not measured"));
  }
  if (sinks_run_eager) {
    r->warnings.push_back(MakeWarning(WarningCode::kUnsupportedCombination, "train.attention",
                                      "transformers trains attention sinks (gpt-oss, MiMo-V2-Flash) only with its eager core "
                                      "(GptOssPreTrainedModel._supports_sdpa = False: the default falls back to eager, an explicit "
                                      "attn_implementation=\"sdpa\" raises): the step is walked as eager attention, whose "
                                      "[b, heads, s, s + 1] probabilities each layer keeps"));
  }
  // DeepSeek sparse attention has no FlashAttention training path in transformers (GlmMoeDsa:
  // _supports_flash_attn = False; DeepseekV32's flash-mla kernel takes the top-k indices and has no
  // backward): the step is walked as dense FlashAttention-2 without the indexer's mask.
  if (HasSparseIndexer(model) && train.attention == AttentionImpl::kFlash) {
    r->warnings.push_back(MakeWarning(WarningCode::kApproximate, "train.attention",
                                      "DeepSeek sparse attention trains under SDPA or eager in transformers (no FlashAttention backward "
                                      "with the indexer's top-k): walked as dense FlashAttention-2, without the per-layer top-k mask SDPA "
                                      "would keep"));
  }
  if (!model.approximations.training.empty()) {
    r->warnings.push_back(MakeWarning(WarningCode::kApproximate, "model", model.approximations.training));
  }
  // transformers' per-expert MoE loop is measured for Mixtral, Qwen2-MoE and Qwen3-MoE (CPU fixtures
  // measured_cpu_moe.json / measured_cpu_qwen_moe.json, balanced routing: MlpGeometry::
  // measured_expert_loop); other MoE blocks (DeepSeek, gpt-oss, GLM, fused experts), MLA and
  // parallel-residual layers follow the same rules unmeasured.
  const bool moe = model.kinds.size() > 0 && last_kind.mlp.num_experts > 0;
  const bool measured_moe_loop = moe && last_kind.mlp.measured_expert_loop;
  if (model.kinds.size() > 0 && (last_kind.attention.mla || (moe && !measured_moe_loop) || last_kind.norms.empty() || last_kind.parallel_residual)) {
    r->warnings.push_back(MakeWarning(WarningCode::kApproximate, "model", "activation memory of this architecture (MoE/MLA/parallel-residual) follows the same autograd rules but has no measured fixture yet"));
  } else if (moe) {
    r->warnings.push_back(MakeWarning(WarningCode::kApproximate, "model",
                                      "MoE routing is taken as balanced (T x top_k / experts tokens per expert, the measured CPU "
                                      "fixtures' routing): the routed rows are exact, but an unbalanced router gives the busiest "
                                      "expert larger per-expert buffers at the backward peak"));
  }
}

}  // namespace vramplan
