// The training levers (docs/planner.md, "Levers"): what each option sets, what fidelity it gives
// up, and the memory orders the search may rely on.
#include <algorithm>
#include <cstdio>
#include <string>

#include "parallel/topology.h"
#include "planner/levers.h"
#include "train/liger_chunked_loss.h"
#include "train/online_rl.h"
#include "train/preference.h"

namespace vramplan {
namespace {

constexpr int64_t V(TrainMethod m) { return static_cast<int64_t>(m); }

// Fidelity points off 100 of each method (docs/planner.md, "Fidelity"): full > freeze > LoRA > QLoRA.
int MethodLoss(TrainMethod m) {
  switch (m) {
    case TrainMethod::kFull: return 0;
    case TrainMethod::kFreeze: return 10;  // the order only; the option's loss scales with the frozen share
    case TrainMethod::kLora: return 20;
    case TrainMethod::kQlora: return 30;
  }
  return 0;
}

const char* MethodLabel(TrainMethod m) {
  switch (m) {
    case TrainMethod::kFull: return "full fine-tuning";
    case TrainMethod::kFreeze: return "freeze all but the last layers";
    case TrainMethod::kLora: return "LoRA r16 on every linear";
    case TrainMethod::kQlora: return "QLoRA (4-bit base) r16 on every linear";
  }
  return "";
}

bool HasFp32Master(Precision p) {
  return p == Precision::kFp32 || p == Precision::kAmpBf16 || p == Precision::kAmpFp16 || p == Precision::kMixedBf16 ||
         p == Precision::kMixedFp16;
}

bool Bf16Capable(const GpuEntry* gpu) {
  return gpu == nullptr || !(gpu->arch == "pascal" || gpu->arch == "volta" || gpu->arch == "turing");
}

// FlashAttention-2 needs Ampere or newer (its README) and 16-bit inputs.
bool FlashCapable(const GpuEntry* gpu) {
  return gpu == nullptr || gpu->arch == "ampere" || gpu->arch == "ada" || gpu->arch == "hopper" || gpu->arch == "blackwell";
}

LeverOption User() { return LeverOption{"", 0, "", {}}; }

// Not memory-ordered: LoRA / QLoRA add adapter activations (and, under autocast, weight casts)
// that can outweigh the states they save on small models and long sequences (the planner test's
// DeclaredMemoryOrders found such scenarios).
LeverDim MethodDim(const Scenario& user) {
  LeverDim d{"method", {User()}, {}};
  const TrainMethod u = user.train.method;
  for (TrainMethod m : {TrainMethod::kFull, TrainMethod::kFreeze, TrainMethod::kLora, TrainMethod::kQlora}) {
    if (MethodLoss(m) <= MethodLoss(u)) continue;
    // Freeze trains the last N layers: the fewer, the further from full fine-tuning, but always
    // above LoRA (the order the fidelity axis keeps: full > freeze > LoRA > QLoRA).
    int loss = MethodLoss(m) - MethodLoss(u);
    if (m == TrainMethod::kFreeze) {
      const double frozen = 1.0 - static_cast<double>(std::min(user.train.freeze.trainable_layers, user.model.num_layers)) /
                                      static_cast<double>(std::max<int64_t>(1, user.model.num_layers));
      loss = 1 + static_cast<int>(18.0 * frozen + 0.5);
    }
    std::string label = MethodLabel(m);
    // TRL's DPO/KTO trainers with a PEFT policy take the reference from the same model with its
    // adapters disabled (DPOTrainer: ref_model None + peft_config): no reference copy.
    if (ReferencePassRuns(user.train) && (m == TrainMethod::kLora || m == TrainMethod::kQlora)) label += " (the reference is the base with adapters off: no reference copy)";
    d.options.push_back({label, loss, m == TrainMethod::kFreeze ? "trains the last layers only" : "trains low-rank adapters, not the weights",
                         {{Knob::kMethod, V(m)}}});
    // A deeper freeze: the last quarter of the layers (LLaMA-Factory's freeze_trainable_layers).
    const int64_t quarter = user.model.num_layers / 4;
    if (m == TrainMethod::kFreeze && quarter > user.train.freeze.trainable_layers) {
      const int deep = 1 + static_cast<int>(18.0 * (1.0 - static_cast<double>(quarter) / static_cast<double>(user.model.num_layers)) + 0.5);
      d.options.push_back({"freeze all but the last " + std::to_string(quarter) + " layers", deep, "trains the last layers only",
                           {{Knob::kMethod, V(m)}, {Knob::kFreezeLayers, quarter}}});
    }
    // QLoRA on an 8-bit base (bitsandbytes LLM.int8): between LoRA and 4-bit QLoRA.
    if (m == TrainMethod::kQlora && MethodLoss(u) < 25) {
      d.options.push_back({"QLoRA (8-bit base) r16 on every linear", 25 - MethodLoss(u), "trains low-rank adapters, not the weights",
                           {{Knob::kMethod, V(m)}, {Knob::kQloraBits, 8}}});
    }
  }
  Incomparable(&d);
  return d;
}

// Not memory-ordered: AMP keeps fp32 weights and bf16 casts of them, more than fp32 alone when the
// activations are small; dropping autocast changes what LoRA adapters save.
LeverDim PrecisionDim(const Scenario& user, const GpuEntry* gpu) {
  LeverDim d{"precision", {User()}, {}};
  const Precision u = user.train.precision;
  const bool bf16 = Bf16Capable(gpu);
  if (u == Precision::kFp32) {
    const Precision amp = bf16 ? Precision::kAmpBf16 : Precision::kAmpFp16;
    d.options.push_back({bf16 ? "AMP bf16 (fp32 weights, bf16 compute)" : "AMP fp16", 0, "", {{Knob::kPrecision, static_cast<int64_t>(amp)}}});
  }
  if (HasFp32Master(u)) {
    const Precision pure = bf16 ? Precision::kBf16 : Precision::kFp16;
    d.options.push_back({bf16 ? "pure bf16 (no fp32 master weights)" : "pure fp16", 5, "no fp32 master weights",
                         {{Knob::kPrecision, static_cast<int64_t>(pure)}}});
  }
  Incomparable(&d);
  return d;
}

// 8-bit states take a quarter of AdamW's; paged ones leave the allocator's count altogether.
LeverDim OptimizerDim(const Scenario& user) {
  LeverDim d{"optimizer", {User()}, {}};
  const Optimizer u = user.train.optimizer;
  if (u == Optimizer::kAdamW) {
    d.options.push_back({"8-bit AdamW (bitsandbytes)", 3, "8-bit optimizer states", {{Knob::kOptimizer, static_cast<int64_t>(Optimizer::kAdamW8bit)}}});
  }
  if (u == Optimizer::kAdamW || u == Optimizer::kAdamW8bit) {
    d.options.push_back({"paged 8-bit AdamW (states in unified memory)", 3, "8-bit optimizer states",
                         {{Knob::kOptimizer, static_cast<int64_t>(Optimizer::kPagedAdamW8bit)}}});
  }
  ChainOrder(&d);
  return d;
}

// torch.optim.AdamW(fused=True): one kernel per parameter group. Not memory-ordered against the
// foreach step in every scenario (the moment of the peak moves).
LeverDim OptimizerImplDim(const Scenario& user) {
  LeverDim d{"optimizer_impl", {User()}, {}};
  if (user.train.optimizer == Optimizer::kAdamW && user.framework.device == Device::kCuda &&
      user.train.optimizer_impl != OptimizerImpl::kFused) {
    d.options.push_back({"fused AdamW (torch fused=True)", 0, "", {{Knob::kFusedAdamW, 1}}});
  }
  Incomparable(&d);
  return d;
}

LeverDim AttentionDim(const Scenario& user, const GpuEntry* gpu) {
  LeverDim d{"attention", {User()}, {}};
  const AttentionImpl u = user.train.attention;
  if (u == AttentionImpl::kEager) d.options.push_back({"SDPA attention", 0, "", {{Knob::kTrainAttention, static_cast<int64_t>(AttentionImpl::kSdpa)}}});
  if (u != AttentionImpl::kFlash && FlashCapable(gpu)) {
    d.options.push_back({"FlashAttention-2", 0, "", {{Knob::kTrainAttention, static_cast<int64_t>(AttentionImpl::kFlash)}}});
  }
  Incomparable(&d);
  return d;
}

// Preference objectives compute TRL's log-probs on the full logits whatever the loss setting (the
// estimate warns that other losses are not modeled there), except where TRL routes the loss through
// Liger's chunked losses (DPO and GRPO with use_liger_kernel, train/liger_chunked_loss.h): the
// full logits never exist, so that is their one loss lever.
LeverDim LossDim(const Scenario& user) {
  LeverDim d{"loss", {User()}, {}};
  const LossImpl u = user.train.loss;
  if (user.train.objective != Objective::kSft) {
    TrainConfig liger = user.train;
    liger.loss = LossImpl::kFusedLinear;
    if (u != LossImpl::kFusedLinear && LigerChunkedLossApplies(liger)) {
      d.options.push_back({"Liger's chunked " + std::string(user.train.objective == Objective::kDpo ? "DPO" : "GRPO") +
                               " loss (TRL use_liger_kernel)",
                           0, "", {{Knob::kLoss, static_cast<int64_t>(LossImpl::kFusedLinear)}}});
    }
    Incomparable(&d);
    return d;
  }
  if (u == LossImpl::kStandard) d.options.push_back({"chunked cross-entropy", 0, "", {{Knob::kLoss, static_cast<int64_t>(LossImpl::kChunked)}}});
  if (u != LossImpl::kFusedLinear) {
    d.options.push_back({"fused linear cross-entropy (Liger)", 0, "", {{Knob::kLoss, static_cast<int64_t>(LossImpl::kFusedLinear)}}});
  }
  // unsloth's fast cross-entropy: only where unsloth runs (one CUDA GPU, no ZeRO/FSDP:
  // CombinationRuns drops the rest). A job already on several GPUs or sharded stays so in every
  // plan (the GPU lever only adds GPUs, the sharding lever never unshards): no option then.
  const bool single = user.parallel.gpus == 1 && user.parallel.zero == 0 && !user.parallel.fsdp;
  if (u == LossImpl::kStandard && user.framework.device == Device::kCuda && single) {
    d.options.push_back({"unsloth fast cross-entropy (16-bit logits, gradient in place)", 0, "", {{Knob::kLoss, static_cast<int64_t>(LossImpl::kUnsloth)}}});
  }
  Incomparable(&d);
  return d;
}

// Saved activations (or, with checkpointing, the checkpointed layer inputs) to host RAM in the
// forward, back for the backward (torchtune enable_activation_offloading, TRL
// activation_offloading, DeepSpeed cpu_checkpointing). Not memory-ordered: on tiny activations
// the offload's own buffers outweigh what it moves (DeclaredMemoryOrders found a QLoRA scenario
// at 128 tokens where it adds 7 MB).
LeverDim ActivationOffloadDim(const Scenario& user) {
  LeverDim d{"activation_offload", {User()}, {}};
  if (!user.train.activation_offload && user.framework.device == Device::kCuda) {
    d.options.push_back({"activations offloaded to CPU RAM", 0, "", {{Knob::kActivationOffload, 1}}});
  }
  Incomparable(&d);
  return d;
}

// torchtune optimizer_in_bwd: each parameter steps in its post-accumulate-grad hook and its
// gradient is freed at once; no gradient accumulation (the inner chain keeps the whole batch in
// one micro-batch) and no ZeRO/FSDP sharding (CombinationRuns).
LeverDim OptimizerInBackwardDim(const Scenario& user) {
  LeverDim d{"optimizer_in_backward", {User()}, {}};
  // A sharded job stays sharded in every plan (the sharding lever never unshards): no option then.
  const bool sharded = user.parallel.zero > 0 || user.parallel.fsdp;
  if (!user.train.optimizer_in_backward && !sharded && user.train.method != TrainMethod::kLora && user.train.method != TrainMethod::kQlora) {
    d.options.push_back({"optimizer step in the backward (torchtune optimizer_in_bwd)", 0, "", {{Knob::kOptimizerInBackward, 1}}});
  }
  Incomparable(&d);
  return d;
}

// TRL precompute_ref_log_probs: the reference log-probs are computed once before training, so no
// reference model is resident and no reference forward runs in the step (the same values: no
// fidelity given up).
LeverDim PrecomputeReferenceDim(const Scenario& user) {
  LeverDim d{"precompute_ref_log_probs", {User()}, {}};
  if (ReferencePassRuns(user.train)) {
    d.options.push_back({"reference log-probs precomputed before training (TRL precompute_ref_log_probs)", 0, "",
                         {{Knob::kPrecomputeRefLogProbs, 1}}});
  }
  ChainOrder(&d);
  return d;
}

// A smaller LoRA rank: the adapters' states and activations shrink with it (a larger rank never
// lowers the peak: tests/core/properties_test.cpp), at 2 fidelity points per halving.
LeverDim LoraRankDim(const Scenario& user) {
  LeverDim d{"lora_rank", {User()}, {}};
  const bool adapters = user.train.method == TrainMethod::kLora || user.train.method == TrainMethod::kQlora;
  const int64_t rank = adapters ? user.train.lora.rank : 16;
  int loss = 0;
  for (int64_t r = rank / 2; r >= 4; r /= 2) {
    loss += 2;
    d.options.push_back({"LoRA rank " + std::to_string(r), loss, "a smaller LoRA rank", {{Knob::kLoraRank, r}}});
  }
  ChainOrder(&d);
  return d;
}

LeverDim KeepOutputsDim(const Scenario& user) {
  LeverDim d{"keep_outputs", {User()}, {}};
  if (user.framework.keep_outputs) {
    d.options.push_back({"drop full-logit outputs (no compute_metrics on logits)", 1, "no full-logit metrics during training", {{Knob::kDropOutputs, 1}}});
  }
  ChainOrder(&d);
  return d;
}

struct Sharding {
  const char* label;
  int zero;
  bool fsdp;
  Offload optimizer;
  Offload params;
};

// ZeRO-1 is left out: ZeRO-2 shards the gradients too at the same communication volume (one
// reduce-scatter + all-gather per step, Rajbhandari et al. 2020 section 7), so it is never dearer.
// On one GPU (a budget of one) only the offloading stages remain: sharding over one rank saves
// nothing, offloading does (ZeRO-Offload's single-GPU case).
LeverDim ShardingDim(const Scenario& user, const PlanBudget& budget, bool one_gpu) {
  LeverDim d{"sharding", {User()}, {}};
  const ParallelConfig& p = user.parallel;
  // Built element by element (GCC 12 warns falsely on assigning a braced list to a vector).
  std::vector<Sharding> all;
  if (p.fsdp) {
    all.push_back({"FSDP full shard", 0, true, Offload::kNone, Offload::kNone});
    all.push_back({"FSDP with CPU offload", 0, true, Offload::kCpu, Offload::kCpu});
  } else {
    all.push_back({"DeepSpeed ZeRO-2", 2, false, Offload::kNone, Offload::kNone});
    all.push_back({"DeepSpeed ZeRO-2 + optimizer on CPU", 2, false, Offload::kCpu, Offload::kNone});
    all.push_back({"DeepSpeed ZeRO-3", 3, false, Offload::kNone, Offload::kNone});
    all.push_back({"DeepSpeed ZeRO-3 + optimizer on CPU", 3, false, Offload::kCpu, Offload::kNone});
    all.push_back({"DeepSpeed ZeRO-3 + optimizer and weights on CPU", 3, false, Offload::kCpu, Offload::kCpu});
    if (budget.nvme) all.push_back({"DeepSpeed ZeRO-3 + optimizer and weights on NVMe", 3, false, Offload::kNvme, Offload::kNvme});
  }
  if (one_gpu) {
    all.erase(std::remove_if(all.begin(), all.end(), [](const Sharding& sh) { return sh.optimizer == Offload::kNone && sh.params == Offload::kNone; }),
              all.end());
  }
  std::vector<Sharding> kept;
  for (const Sharding& sh : all) {
    if (sh.zero == p.zero && sh.fsdp == p.fsdp && sh.optimizer == p.offload_optimizer && sh.params == p.offload_params) continue;
    kept.push_back(sh);
    d.options.push_back({sh.label, 0, "",
                         {{Knob::kZero, sh.zero},
                          {Knob::kFsdp, sh.fsdp ? 1 : 0},
                          {Knob::kOffloadOptimizer, static_cast<int64_t>(sh.optimizer)},
                          {Knob::kOffloadParams, static_cast<int64_t>(sh.params)}}});
  }
  Incomparable(&d);
  // Offloading more of the same stage never needs more GPU memory.
  auto rank = [](const Sharding& sh) { return (sh.optimizer != Offload::kNone ? 1 : 0) + (sh.params != Offload::kNone ? 1 : 0) + (sh.optimizer == Offload::kNvme ? 1 : 0); };
  for (size_t a = 0; a < kept.size(); ++a) {
    for (size_t b = 0; b < kept.size(); ++b) {
      const Sharding& x = kept[a];
      const Sharding& y = kept[b];
      d.no_more_memory[a + 1][b + 1] = x.zero == y.zero && x.fsdp == y.fsdp && rank(y) >= rank(x) &&
                                       (x.optimizer == Offload::kNone || y.optimizer != Offload::kNone) &&
                                       (x.params == Offload::kNone || y.params != Offload::kNone);
    }
  }
  return d;
}

// More GPUs of the budget's kind: data parallel (HF trainer), or data x tensor x pipeline layouts
// (Megatron, torchtitan). Not memory-ordered (DDP's buckets appear with the second GPU).
LeverDim GpusDim(const Scenario& user, int64_t max_gpus, int64_t global_batch) {
  LeverDim d{"gpus", {User()}, {}};
  const ParallelConfig& p = user.parallel;
  const bool model_parallel = user.framework.trainer != Trainer::kHf;
  const int64_t node = p.gpus_per_node > 0 ? p.gpus_per_node : kDefaultGpusPerNode;  // a node's GPUs, not this job's
  const int64_t cp = std::max<int64_t>(1, p.cp);
  for (int64_t g = 1; g <= max_gpus; g *= 2) {
    for (int64_t tp = 1; tp <= (model_parallel ? std::min<int64_t>(8, node) : 1); tp *= 2) {
      for (int64_t pp = 1; pp <= (model_parallel ? 8 : 1); pp *= 2) {
        if (g % (tp * pp * cp) != 0) continue;
        if (g == p.gpus && (!model_parallel || (tp == p.tp && pp == p.pp))) continue;
        if (!model_parallel && g < p.gpus) continue;  // fewer GPUs never helps data parallelism
        const int64_t dp = g / (tp * pp * cp);
        const bool batch_kept = global_batch % dp == 0;
        std::string label = std::to_string(g) + " GPUs";
        if (model_parallel) label += " (TP " + std::to_string(tp) + ", PP " + std::to_string(pp) + ", DP " + std::to_string(dp) + ")";
        LeverOption o{label, batch_kept ? 0 : 5, batch_kept ? "" : "a different global batch", {{Knob::kGpus, g}}};
        if (model_parallel) {
          o.sets.push_back({Knob::kTp, tp});
          o.sets.push_back({Knob::kPp, pp});
        }
        d.options.push_back(std::move(o));
      }
    }
  }
  Incomparable(&d);
  return d;
}

// Online RL: the completion is what grows (the prompt is the dataset's), so the sequence lever
// shortens the completion and keeps the prompt (TRL max_completion_length truncates generations).
LeverDim CompletionLengthDim(const Scenario& user) {
  LeverDim d{"max_completion_length", {User()}, {}};
  int loss = 0;
  const int64_t completion = CompletionTokens(user.train);
  if (completion != user.train.rollout.max_completion_length) return d;  // capped by seq_len: left as is
  for (int64_t len = completion / 2; len >= 64 && loss < 30; len /= 2) {
    loss += 10;
    d.options.push_back({"max_completion_length " + std::to_string(len), loss, "completions truncated at " + std::to_string(len) + " tokens",
                         {{Knob::kCompletionLength, len}}});
  }
  ChainOrder(&d);
  return d;
}

LeverDim SeqLenDim(const Scenario& user) {
  if (IsOnlineRl(user.train.objective)) return CompletionLengthDim(user);
  LeverDim d{"seq_len", {User()}, {}};
  int loss = 0;
  for (int64_t len = user.train.seq_len / 2; len >= 256 && loss < 30; len /= 2) {
    loss += 10;
    d.options.push_back({"sequence length " + std::to_string(len), loss, "shorter training sequences", {{Knob::kSeqLen, len}}});
  }
  ChainOrder(&d);
  return d;
}

// GRPO: fewer completions per prompt, down to 2 (TRL GRPOConfig requires num_generations >= 2).
// The prompts per step are kept, so the step's completions (the global batch) shrink with it
// (InnerChainFor): the plan says so. Not memory-ordered (the micro-batch chain moves with it).
LeverDim NumGenerationsDim(const Scenario& user, int64_t global_batch) {
  LeverDim d{"num_generations", {User()}, {}};
  const int64_t g = user.train.rollout.num_generations;
  if (user.train.objective != Objective::kGrpo || g < 4 || global_batch % g != 0) return d;
  const int64_t prompts = global_batch / g;
  int loss = 0;
  for (int64_t n = g / 2; n >= 2; n /= 2) {
    if (g % n != 0) break;
    loss += 5;
    d.options.push_back({"num_generations " + std::to_string(n) + " (" + std::to_string(prompts) + " prompts x " + std::to_string(n) +
                             " completions per step)",
                         loss, "fewer completions per prompt (a noisier group baseline) and a smaller global batch",
                         {{Knob::kNumGenerations, n}}});
  }
  Incomparable(&d);
  return d;
}

// A colocated vLLM's sleep level while the trainer runs (vLLM docs/features/sleep_mode.md: level 1
// offloads the weights to host RAM and discards the KV cache, level 2 discards both; TRL
// vllm_enable_sleep_mode sleeps at level 2 and reloads the weights with its weight sync). The same
// outputs; a higher level never keeps more on the GPU.
LeverDim SleepLevelDim(const Scenario& user) {
  LeverDim d{"vllm_sleep_level", {User()}, {}};
  const RolloutConfig& ro = user.train.rollout;
  if (!ro.use_vllm || ro.vllm_mode != VllmMode::kColocate) return d;
  for (int64_t level = ro.vllm_sleep_level + 1; level <= 2; ++level) {
    d.options.push_back({level == 1 ? "vLLM sleeps at level 1 while training (weights to CPU RAM, KV cache freed)"
                                    : "vLLM sleeps at level 2 while training (weights and KV cache freed; TRL vllm_enable_sleep_mode)",
                         0, "", {{Knob::kVllmSleepLevel, level}}});
  }
  ChainOrder(&d);
  return d;
}

// A smaller vLLM claim (gpu_memory_utilization): a smaller KV pool, the same outputs as long as
// every rollout still fits it at once (a plan that makes rollouts queue adds a would_queue warning
// and is no plan). Lower values never claim more.
LeverDim GpuMemoryUtilizationDim(const Scenario& user) {
  LeverDim d{"vllm_gpu_memory_utilization", {User()}, {}};
  const RolloutConfig& ro = user.train.rollout;
  if (!ro.use_vllm || ro.vllm_mode != VllmMode::kColocate) return d;
  const int64_t user_hundredths = static_cast<int64_t>(ro.vllm_gpu_memory_utilization * 100.0 + 0.5);
  for (int64_t h : {50, 30, 20, 10}) {
    if (h >= user_hundredths) continue;
    char value[8];
    std::snprintf(value, sizeof value, "%.2f", static_cast<double>(h) / 100.0);
    d.options.push_back({std::string("vLLM gpu_memory_utilization ") + value, 0, "", {{Knob::kVllmGpuMemoryUtilizationHundredths, h}}});
  }
  ChainOrder(&d);
  return d;
}

// Colocated vLLM -> trl vllm-serve on GPUs of its own (vllm_mode "server"): nothing of the engine
// stays on the training GPUs, but the job needs more GPUs (the smallest tensor-parallel size whose
// share of the 16-bit weights leaves room for the KV pool: half of a GPU at most), counted against
// the budget's max_gpus and in the plan's cost (GPU-seconds).
LeverDim VllmServerDim(const Scenario& user, int64_t max_gpus) {
  LeverDim d{"vllm_mode", {User()}, {}};
  const RolloutConfig& ro = user.train.rollout;
  if (!ro.use_vllm || ro.vllm_mode != VllmMode::kColocate || user.gpu.memory_bytes <= 0) return d;
  const double weights = 2.0 * static_cast<double>(CountParams(user.model).total);
  int64_t tp = 1;
  while (tp < 8 && weights / static_cast<double>(tp) > 0.5 * static_cast<double>(user.gpu.memory_bytes)) tp *= 2;
  if (user.parallel.gpus + tp > max_gpus) return d;
  d.options.push_back({"vLLM in server mode (trl vllm-serve) on " + std::to_string(tp) + " more GPU" + (tp > 1 ? "s" : "") +
                           " (tensor parallel " + std::to_string(tp) + "): the rollout engine leaves the training GPUs",
                       0, "", {{Knob::kVllmServer, tp}, {Knob::kTrainingGpusAtMost, max_gpus - tp}}});
  Incomparable(&d);
  return d;
}

}  // namespace

LeverSpace TrainingLevers(const Scenario& user, const LeverSwitches& on, const PlanBudget& budget, const GpuEntry* gpu) {
  LeverSpace space;
  const int64_t user_dp = DataParallelDegree(user.parallel);
  const int64_t global_batch = user.train.micro_batch_size * std::max<int64_t>(1, user.train.grad_accum_steps) * user_dp;
  // Megatron and torchtitan run their own kernels (TransformerEngine / SDPA), full-parameter
  // training with fp32 master weights and their own optimizers: their levers are the parallel
  // layout, the distributed optimizer and activation recomputation.
  const bool hf = user.framework.trainer == Trainer::kHf;
  if (!hf) space.notes.push_back("Megatron / torchtitan: the method, precision, optimizer and kernel levers are left to the framework's own settings");
  if (on.method && hf) {
    space.dims.push_back(MethodDim(user));
    if (on.lora_rank) space.dims.push_back(LoraRankDim(user));
  }
  if (on.precision && hf) space.dims.push_back(PrecisionDim(user, gpu));
  if (on.optimizer && hf) {
    space.dims.push_back(OptimizerDim(user));
    space.dims.push_back(OptimizerImplDim(user));
  }
  if (on.kernels && hf) {
    space.dims.push_back(AttentionDim(user, gpu));
    space.dims.push_back(LossDim(user));
    space.dims.push_back(KeepOutputsDim(user));
  }
  const int64_t max_gpus = budget.max_gpus > 0 ? budget.max_gpus : DefaultMaxGpus(user);
  if (on.sharding && hf) space.dims.push_back(ShardingDim(user, budget, max_gpus == 1 && user.parallel.gpus == 1));
  if (on.sharding && user.framework.trainer == Trainer::kMegatron && user.parallel.zero == 0) {
    LeverDim d{"sharding", {User(), {"Megatron distributed optimizer", 0, "", {{Knob::kZero, 1}}}}, {}};
    ChainOrder(&d);
    space.dims.push_back(std::move(d));
  }
  if (on.gpus && max_gpus > 1) space.dims.push_back(GpusDim(user, max_gpus, global_batch));
  if (on.seq_len) space.dims.push_back(SeqLenDim(user));
  // The levers for the newer knobs (after the planner's first levers, so their enumeration order
  // is unchanged for scenarios these do not apply to).
  if (hf) {
    if (on.activation_offload) space.dims.push_back(ActivationOffloadDim(user));
    if (on.optimizer) space.dims.push_back(OptimizerInBackwardDim(user));
    if (on.method) space.dims.push_back(PrecomputeReferenceDim(user));
  }
  // Post-training levers (online RL; docs/planner.md, "Levers"): appended, as above.
  if (on.num_generations) space.dims.push_back(NumGenerationsDim(user, global_batch));
  if (on.rollout) {
    space.dims.push_back(VllmServerDim(user, max_gpus));
    space.dims.push_back(SleepLevelDim(user));
    space.dims.push_back(GpuMemoryUtilizationDim(user));
  }
  // Drop levers left with the user's value only.
  space.dims.erase(std::remove_if(space.dims.begin(), space.dims.end(), [](const LeverDim& d) { return d.options.size() < 2; }),
                   space.dims.end());

  if (on.checkpointing) {
    space.checkpointing.push_back({"no activation checkpointing", 0, "", {{Knob::kCheckpointing, static_cast<int64_t>(Checkpointing::kNone)}}});
    if (!hf) {
      space.checkpointing.push_back({"selective activation recomputation", 0, "", {{Knob::kCheckpointing, static_cast<int64_t>(Checkpointing::kSelective)}}});
    }
    space.checkpointing.push_back({"full activation checkpointing", 0, "", {{Knob::kCheckpointing, static_cast<int64_t>(Checkpointing::kFull)}}});
  }
  space.inner = Knob::kMicroBatch;
  space.inner_free = on.micro_batch;
  space.global_batch = global_batch;
  space.user_micro_batch = user.train.micro_batch_size;
  if (user.train.objective == Objective::kGrpo) space.user_num_generations = user.train.rollout.num_generations;
  return space;
}

}  // namespace vramplan
