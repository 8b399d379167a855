// What each knob sets (levers.h), the memory-order helpers and the inner chains.
#include "planner/levers.h"

#include <algorithm>

#include "parallel/topology.h"

namespace vramplan {
namespace {

std::vector<int64_t> Divisors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t i = 1; i * i <= n; ++i) {
    if (n % i == 0) {
      out.push_back(i);
      if (i != n / i) out.push_back(n / i);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Powers of two up to n, and n.
std::vector<int64_t> Ladder(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t v = 1; v < n; v *= 2) out.push_back(v);
  out.push_back(n);
  return out;
}

void SetMethod(TrainMethod m, Scenario* s) {
  const TrainMethod before = s->train.method;
  s->train.method = m;
  const bool adapters = m == TrainMethod::kLora || m == TrainMethod::kQlora;
  if (adapters && before != TrainMethod::kLora && before != TrainMethod::kQlora) {
    // PEFT LoraConfig(r=16, target_modules="all-linear"): the common recipe (LLaMA-Factory
    // lora_target all, axolotl lora_target_linear).
    s->train.lora.rank = 16;
    s->train.lora.alpha = 32;
    s->train.lora.all_linear = true;
    s->train.lora.targets.clear();
  }
  if (m == TrainMethod::kQlora) {
    s->train.qlora_bits = 4;
    s->train.qlora_backend = QloraBackend::kBitsandbytes;
  }
}

}  // namespace

bool ApplyAssign(const Assign& a, Scenario* s) {
  TrainConfig& t = s->train;
  ParallelConfig& p = s->parallel;
  InferenceConfig& inf = s->inference;
  switch (a.knob) {
    case Knob::kMethod: SetMethod(static_cast<TrainMethod>(a.value), s); return true;
    case Knob::kPrecision:
      t.precision = static_cast<Precision>(a.value);
      if (t.precision == Precision::kBf16 || t.precision == Precision::kFp16) t.autocast = false;
      return true;
    case Knob::kOptimizer:
      t.optimizer = static_cast<Optimizer>(a.value);
      t.optimizer_impl.reset();
      return true;
    case Knob::kFusedAdamW:
      if (t.optimizer != Optimizer::kAdamW) return false;
      t.optimizer_impl = OptimizerImpl::kFused;
      return true;
    case Knob::kTrainAttention:
      if (static_cast<AttentionImpl>(a.value) == AttentionImpl::kFlash && t.precision == Precision::kFp32) return false;
      t.attention = static_cast<AttentionImpl>(a.value);
      return true;
    case Knob::kLoss: t.loss = static_cast<LossImpl>(a.value); return true;
    case Knob::kDropOutputs: s->framework.keep_outputs = false; return true;
    case Knob::kZero: p.zero = static_cast<int>(a.value); return true;
    case Knob::kFsdp: p.fsdp = a.value != 0; return true;
    case Knob::kOffloadOptimizer: p.offload_optimizer = static_cast<Offload>(a.value); return true;
    case Knob::kOffloadParams: p.offload_params = static_cast<Offload>(a.value); return true;
    case Knob::kGpus: p.gpus = a.value; return true;
    case Knob::kTp:
      p.tp = a.value;
      p.etp = 0;
      if (s->framework.trainer == Trainer::kMegatron) p.sequence_parallel = a.value > 1;
      return true;
    case Knob::kPp:
      p.pp = a.value;
      p.vpp = 1;
      p.pp_layers.clear();
      p.pp_schedule.reset();
      return true;
    case Knob::kSeqLen: t.seq_len = a.value; return true;
    case Knob::kCheckpointing: t.gradient_checkpointing = static_cast<Checkpointing>(a.value); return true;
    case Knob::kMicroBatch: t.micro_batch_size = a.value; return true;
    case Knob::kQloraBits: t.qlora_bits = static_cast<int>(a.value); return true;
    case Knob::kFreezeLayers: t.freeze.trainable_layers = a.value; return true;
    case Knob::kLoraRank:
      if (t.method != TrainMethod::kLora && t.method != TrainMethod::kQlora) return false;
      t.lora.rank = a.value;
      return true;
    case Knob::kActivationOffload: t.activation_offload = a.value != 0; return true;
    case Knob::kOptimizerInBackward: t.optimizer_in_backward = a.value != 0; return true;
    case Knob::kPrecomputeRefLogProbs: t.precompute_ref_log_probs = a.value != 0; return true;
    case Knob::kNumGenerations: t.rollout.num_generations = a.value; return true;
    case Knob::kCompletionLength:
      // The prompt is kept: seq_len is prompt + completion (docs/post_training.md, "Online RL").
      t.seq_len = t.seq_len - t.rollout.max_completion_length + a.value;
      t.rollout.max_completion_length = a.value;
      return true;
    case Knob::kVllmSleepLevel:
      // Sleep applies to a colocated engine only (the server keeps its memory).
      if (t.rollout.vllm_mode != VllmMode::kColocate) return false;
      t.rollout.vllm_sleep_level = a.value;
      return true;
    case Knob::kVllmGpuMemoryUtilizationHundredths:
      if (t.rollout.vllm_mode != VllmMode::kColocate) return false;
      t.rollout.vllm_gpu_memory_utilization = static_cast<double>(a.value) / 100.0;
      return true;
    case Knob::kVllmServer:
      // trl vllm-serve on GPUs of its own: its gpu_memory_utilization default is 0.9
      // (trl/scripts/vllm_serve.py ScriptArguments), sleep does not apply.
      t.rollout.vllm_mode = VllmMode::kServer;
      t.rollout.vllm_tensor_parallel_size = a.value;
      t.rollout.vllm_gpu_memory_utilization = 0.9;
      t.rollout.vllm_sleep_level = 0;
      return true;
    case Knob::kTrainingGpusAtMost: return p.gpus <= a.value;  // the server's GPUs come out of the budget
    case Knob::kWeights: inf.weights = static_cast<WeightFormat>(a.value); return true;
    case Knob::kKvCache:
      inf.kv_cache = static_cast<KvDtype>(a.value);
      // llama.cpp: a quantized V cache needs flash attention (llama-context.cpp refuses otherwise).
      if (inf.engine == Engine::kLlamaCpp) inf.flash_attn = true;
      return true;
    case Knob::kFlashAttn: inf.flash_attn = true; return true;
    case Knob::kUbatch:
      inf.n_ubatch = a.value;
      inf.n_batch = std::max(inf.n_batch, a.value);
      return true;
    case Knob::kGpuMemoryUtilization95: inf.gpu_memory_utilization = 0.95; return true;
    case Knob::kNoCudaGraphs: inf.cuda_graphs = false; return true;
    case Knob::kMaxBatchedTokens: inf.max_num_batched_tokens = a.value; return true;
    case Knob::kServeAttention: inf.attention = static_cast<AttentionImpl>(a.value); return true;
    case Knob::kServeGpus:
      p.gpus = a.value;
      if (inf.engine == Engine::kVllm) p.tp = a.value;
      return true;
    case Knob::kContextDivisor:
      inf.prompt_len /= a.value;
      if (inf.max_model_len > 0) inf.max_model_len = std::max<int64_t>(inf.prompt_len + inf.new_tokens, inf.max_model_len / a.value);
      if (inf.n_ctx > 0) inf.n_ctx = std::max<int64_t>(inf.prompt_len + inf.new_tokens, inf.n_ctx / a.value);
      return true;
    case Knob::kBatch: inf.batch_size = a.value; return true;
    case Knob::kGpuLayers: inf.n_gpu_layers = a.value; return true;
    case Knob::kMaxNumSeqs: inf.max_num_seqs = a.value; return true;
  }
  return false;
}

void InnerChain::Apply(Scenario* s, int64_t value) const {
  switch (knob) {
    case Knob::kMicroBatch:
      s->train.micro_batch_size = value;
      s->train.grad_accum_steps = std::max<int64_t>(1, replica_batch / value);
      return;
    case Knob::kGpuLayers: s->inference.n_gpu_layers = value >= layers ? -1 : value; return;
    default: s->inference.batch_size = value; return;
  }
}

InnerChain InnerChainFor(const LeverSpace& space, const Scenario& s, const ModelSpec& model) {
  InnerChain c;
  c.knob = space.inner;
  switch (space.inner) {
    case Knob::kMicroBatch: {
      c.name = "micro_batch_size";
      const int64_t dp = DataParallelDegree(s.parallel);
      int64_t global = space.global_batch;
      // GRPO with fewer completions per prompt: the same prompts, fewer completions per step.
      if (space.user_num_generations > 0 && s.train.rollout.num_generations != space.user_num_generations) {
        global = global / space.user_num_generations * s.train.rollout.num_generations;
      }
      c.replica_batch = std::max<int64_t>(1, (global + dp - 1) / dp);
      c.values = space.inner_free ? Divisors(c.replica_batch) : std::vector<int64_t>{std::min(space.user_micro_batch, c.replica_batch)};
      // torchtune refuses optimizer_in_bwd with gradient accumulation (the step needs the
      // accumulated gradient): the whole per-replica batch in one micro-batch.
      if (s.train.optimizer_in_backward && space.inner_free) c.values = {c.replica_batch};
      break;
    }
    case Knob::kGpuLayers: {
      c.name = "n_gpu_layers";
      c.layers = model.num_layers;
      if (space.inner_free) {
        for (int64_t v = 0; v <= c.layers; ++v) c.values.push_back(v);
      } else {
        c.values = {s.inference.n_gpu_layers < 0 ? c.layers : std::min(s.inference.n_gpu_layers, c.layers)};
      }
      break;
    }
    default:
      c.name = "batch_size";
      c.values = space.inner_free ? Ladder(s.inference.batch_size) : std::vector<int64_t>{s.inference.batch_size};
      break;
  }
  return c;
}

bool CombinationRuns(const Scenario& user, const Scenario& v) {
  const ParallelConfig& p = v.parallel;
  const bool sharded = p.zero > 0 || p.fsdp;
  // unsloth patches one GPU's model (no DeepSpeed / FSDP / multi-GPU in its open-source release).
  if (v.train.loss == LossImpl::kUnsloth && user.train.loss != LossImpl::kUnsloth && (p.gpus > 1 || sharded)) return false;
  // torchtune's optimizer_in_bwd runs the step in per-parameter hooks on whole gradients: not under
  // DeepSpeed ZeRO or FSDP sharding of this model (its distributed recipe's hooks are FSDP's own).
  if (v.train.optimizer_in_backward && !user.train.optimizer_in_backward && sharded) return false;
  return true;
}

void ChainOrder(LeverDim* dim, size_t start) {
  const size_t n = dim->options.size();
  dim->no_more_memory.assign(n, std::vector<bool>(n, false));
  for (size_t a = 0; a < n; ++a) {
    for (size_t b = 0; b < n; ++b) dim->no_more_memory[a][b] = a == b || (a >= start && b > a);
  }
}

void Incomparable(LeverDim* dim) {
  const size_t n = dim->options.size();
  dim->no_more_memory.assign(n, std::vector<bool>(n, false));
  for (size_t i = 0; i < n; ++i) dim->no_more_memory[i][i] = true;
}

int64_t DefaultMaxGpus(const Scenario& user) { return std::max<int64_t>(1, user.parallel.gpus); }

}  // namespace vramplan
