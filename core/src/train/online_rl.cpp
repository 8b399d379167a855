#include "train/online_rl.h"

#include <algorithm>

#include "diagnostics/warning_codes.h"
#include "format.h"
#include "inference/engines.h"
#include "inference/kv_cache.h"
#include "planner/prepared.h"
#include "util/checked_math.h"

namespace vramplan {

bool IsOnlineRl(Objective objective) { return objective == Objective::kGrpo || objective == Objective::kPpo; }

int64_t CompletionTokens(const TrainConfig& t) { return std::max<int64_t>(1, std::min(t.rollout.max_completion_length, t.seq_len - 1)); }

int64_t RolloutSequences(const TrainConfig& t) {
  const int64_t steps = t.rollout.steps_per_generation > 0 ? t.rollout.steps_per_generation : t.grad_accum_steps;
  return checked::Mul(t.micro_batch_size, std::max<int64_t>(1, steps));
}

int64_t LogprobChunkRows(const TrainConfig& t) {
  if (t.rollout.logprob_batch_size > 0) return std::min(t.rollout.logprob_batch_size, RolloutSequences(t));
  return t.objective == Objective::kPpo ? std::min<int64_t>(64, RolloutSequences(t)) : t.micro_batch_size;
}

namespace {
bool Peft(const TrainConfig& t) { return t.method == TrainMethod::kLora || t.method == TrainMethod::kQlora; }
}  // namespace

bool RlReferencePassRuns(const TrainConfig& t) { return t.objective == Objective::kPpo || (t.objective == Objective::kGrpo && t.rollout.beta != 0.0); }

bool RlReferenceCopyResident(const TrainConfig& t) { return RlReferencePassRuns(t) && !Peft(t); }

bool OldPolicyPassRuns(const TrainConfig& t) {
  if (t.objective != Objective::kGrpo) return false;  // PPO: the rollout's own logits give the old log-probs
  const int64_t steps = t.rollout.steps_per_generation > 0 ? t.rollout.steps_per_generation : t.grad_accum_steps;
  return t.rollout.use_vllm || t.grad_accum_steps % std::max<int64_t>(1, steps) != 0;
}

namespace {

WeightFormat FormatOfBytes(int64_t dtype_bytes, Precision p) {
  if (dtype_bytes >= 4) return WeightFormat::kFp32;
  return p == Precision::kFp16 ? WeightFormat::kFp16 : WeightFormat::kBf16;
}

int64_t TermBytes(const Result& r, const char* key) {
  for (const Term& t : r.gpu.breakdown) {
    if (t.key == key) return t.bytes;
  }
  return 0;
}

// vLLM as TRL starts it (trl/generation/vllm_generation.py: LLM(gpu_memory_utilization, max_num_seqs =
// per_device_train_batch_size x tensor_parallel_size x steps_per_generation, max_num_batched_tokens=4096,
// enable_sleep_mode)), sized by the vLLM engine's start-up accounting (inference/engine_vllm.cpp).
void VllmEngine(const Scenario& sc, const Prepared& prepared, int64_t dtype_bytes, RolloutEngine* e) {
  const TrainConfig& t = sc.train;
  const RolloutConfig& ro = t.rollout;
  const int64_t C = CompletionTokens(t);
  Scenario v = sc;
  v.mode = Mode::kInference;
  v.inference = InferenceConfig{};
  v.inference.engine = Engine::kVllm;
  v.inference.weights = FormatOfBytes(dtype_bytes, t.precision);
  v.inference.batch_size = e->sequences;
  v.inference.prompt_len = std::max<int64_t>(1, t.seq_len - C);
  v.inference.new_tokens = C;
  v.inference.max_model_len = t.seq_len;
  v.inference.gpu_memory_utilization = ro.vllm_gpu_memory_utilization;
  if (e->colocated) {
    v.inference.max_num_seqs = std::max<int64_t>(1, e->sequences * ro.vllm_tensor_parallel_size);
    v.inference.max_num_batched_tokens = 4096;
  }
  RankShard rank;
  rank.tp = e->colocated ? 1 : ro.vllm_tensor_parallel_size;
  Result r;
  for (const std::string& key : BreakdownKeys()) r.gpu.breakdown.push_back(Term{key, 0, ""});
  EstimateVllmEngine(v, rank, prepared, &r, false);
  const int64_t weights = TermBytes(r, "weights"), kv = TermBytes(r, "kv_cache");
  const int64_t budget = TermBytes(r, "activations") + TermBytes(r, "logits_and_loss");
  const int64_t other = TermBytes(r, "temporary");  // non-torch memory + CUDA graphs
  e->kv_token_capacity = r.inference.kv_token_capacity;
  e->concurrent_sequences = r.inference.concurrent_sequences;
  e->would_not_start = kv <= 0 || !r.inference.max_model_len_fits;
  if (!e->colocated) {
    e->server_gpus = ro.vllm_tensor_parallel_size;
    e->server_bytes = weights + kv + budget + other;
    e->explain = "vLLM server on " + std::to_string(e->server_gpus) + " GPU(s) of its own: " + Gib(e->server_bytes) + " each";
    return;
  }
  e->weight_bytes = weights;
  e->cache_bytes = kv + budget + other;
  e->outside_pools_bytes = other;
  // Sleep (vllm/device_allocator/cumem.py CuMemAllocator: the "weights" and "kv_cache" pools): level 1
  // offloads the weights to host RAM and discards the KV cache, level 2 discards both; memory outside
  // those pools (CUDA graphs, non-torch) stays. Awake (level 0) the weights and the KV pool stay.
  const int64_t level = ro.vllm_sleep_level;
  e->asleep_weight_bytes = level == 0 ? weights : 0;
  e->asleep_cache_bytes = level == 0 ? kv + other : other;
  e->host_bytes = level == 1 ? weights : 0;
  e->explain = "colocated vLLM at gpu_memory_utilization " + Hundredths(static_cast<uint64_t>(ro.vllm_gpu_memory_utilization * 100 + 0.5)) + ": weights " + Gib(weights) +
               " + KV pool " + Gib(kv) + " (" + WithCommas(e->kv_token_capacity) + " tokens) + activation budget " + Gib(budget) +
               " + non-torch / CUDA graphs " + Gib(other) + "; sleep level " + std::to_string(level) + " keeps " +
               Gib(e->asleep_weight_bytes + e->asleep_cache_bytes) + " while training";
}

// transformers generate() on the policy (TRL GRPO without vLLM: unwrapped_model.generate on the local
// generation batch; TRL PPO batch_generation: chunks of local_rollout_forward_batch_size whose fp32
// scores, output_scores, are all kept for the rollout's log-probs).
void GenerateEngine(const Scenario& sc, int64_t dtype_bytes, RolloutEngine* e) {
  const TrainConfig& t = sc.train;
  const ModelSpec& m = sc.model;
  const int64_t C = CompletionTokens(t), P = std::max<int64_t>(1, t.seq_len - C);
  const bool ppo = t.objective == Objective::kPpo;
  const int64_t rows = ppo ? LogprobChunkRows(t) : e->sequences;
  const KvElementSize kv_dtype = ResolveKvDtype(KvDtype::kAuto, FormatOfBytes(dtype_bytes, t.precision), Engine::kTransformers);
  const int64_t kv = KvBytes(KvGroups(m, Engine::kTransformers, 1), kv_dtype, t.seq_len, rows);
  int64_t inter = 0;
  for (const LayerKind& k : m.kinds) inter = std::max(inter, k.mlp.num_experts > 0 ? k.mlp.experts_per_token * k.mlp.intermediate : k.mlp.intermediate);
  // The prefill's largest no-grad layer temporary (the MLP: its input, gate, up and act(gate) * up)
  // and the last position's logits with their fp32 copy (logits_to_keep=1 in generate()).
  const int64_t prefill = checked::Mul(rows, P, dtype_bytes * (2 * m.hidden_size + 3 * inter));
  const int64_t last_logits = checked::Mul(rows, m.vocab_size, dtype_bytes + 4 + 4);
  const int64_t scores = ppo ? checked::Mul(e->sequences, C, m.vocab_size, 4) : 0;
  e->cache_bytes = kv + prefill + last_logits + scores;
  e->kv_token_capacity = checked::Mul(rows, t.seq_len);
  e->concurrent_sequences = rows;
  e->explain = "transformers generate() on the policy: KV cache of " + WithCommas(rows) + " sequences x " + WithCommas(t.seq_len) + " tokens " +
               Gib(kv) + " + prefill " + Gib(prefill + last_logits) + (ppo ? " + the fp32 scores of all " + WithCommas(e->sequences) + " rollouts " + Gib(scores) : "");
}

}  // namespace

RolloutEngine ComputeRolloutEngine(const Scenario& sc, const Prepared& prepared, int64_t policy_dtype_bytes) {
  RolloutEngine e;
  const RolloutConfig& ro = sc.train.rollout;
  e.sequences = RolloutSequences(sc.train);
  e.vllm = ro.use_vllm;
  e.colocated = !ro.use_vllm || ro.vllm_mode == VllmMode::kColocate;
  if (e.vllm) VllmEngine(sc, prepared, policy_dtype_bytes, &e);
  else GenerateEngine(sc, policy_dtype_bytes, &e);
  return e;
}

void AddOnlineRlWarnings(const Scenario& sc, const RolloutEngine& e, int64_t trainer_static_bytes, Result* r) {
  const TrainConfig& t = sc.train;
  const RolloutConfig& ro = t.rollout;
  auto warn = [r](WarningCode code, const char* field, std::string message) { r->warnings.push_back(MakeWarning(code, field, std::move(message))); };
  if (e.vllm && e.colocated) {
    // vllm/v1/worker/gpu_worker.py: requested = gpu_memory_utilization x total must be free at start-up
    // ("Free memory on device ... is less than desired GPU memory utilization").
    const double requested = ro.vllm_gpu_memory_utilization * static_cast<double>(sc.gpu.memory_bytes);
    if (requested > static_cast<double>(sc.gpu.memory_bytes - trainer_static_bytes)) {
      warn(WarningCode::kWouldNotStart, "train.rollout.vllm_gpu_memory_utilization",
           "vLLM claims " + Gib(static_cast<int64_t>(requested)) + " but the trainer's models already hold " + Gib(trainer_static_bytes) +
               " of the GPU: vLLM refuses to start (less free memory than gpu_memory_utilization asks)");
    }
    if (ro.vllm_tensor_parallel_size > 1) {
      warn(WarningCode::kNotModeled, "train.rollout.vllm_tensor_parallel_size", "colocated vLLM with tensor parallelism: counted as one unsplit engine per GPU");
    }
  }
  if (e.vllm && e.would_not_start) {
    warn(WarningCode::kWouldNotStart, "train.rollout.vllm_gpu_memory_utilization",
         "no room for one sequence's KV cache inside vLLM's gpu_memory_utilization after its weights and activation budget: vLLM would not start");
  } else if (e.vllm && e.concurrent_sequences < e.sequences) {
    warn(WarningCode::kWouldQueue, "train.rollout.vllm_gpu_memory_utilization",
         WithCommas(e.sequences) + " rollouts, " + WithCommas(e.concurrent_sequences) + " fit vLLM's KV pool (" + WithCommas(e.kv_token_capacity) +
             " tokens) at once: the rest queue (slower, not more memory)");
  }
  if (!e.vllm && (ro.vllm_mode != VllmMode::kColocate || ro.vllm_sleep_level != 0)) {
    warn(WarningCode::kNoEffect, "train.rollout.vllm_mode", "vllm_mode and vllm_sleep_level need train.rollout.use_vllm");
  }
  if (e.vllm && !e.colocated && ro.vllm_sleep_level != 0) {
    warn(WarningCode::kNoEffect, "train.rollout.vllm_sleep_level", "sleep mode applies to a colocated vLLM; the server keeps its memory");
  }
  if (t.objective == Objective::kPpo) {
    warn(WarningCode::kApproximate, "train.objective",
         "PPO: the critic (value model) and the reward model are counted with the policy's architecture and load dtype; the critic trains "
         "in full without checkpointing, as TRL's PPOTrainer does (not measured)");
    if (ro.use_vllm) {
      warn(WarningCode::kApproximate, "train.rollout.use_vllm", "TRL's PPOTrainer generates with transformers; a vLLM rollout is counted as verl / OpenRLHF run it");
    }
  }
  if (t.objective == Objective::kGrpo && ro.num_generations > 0 && RolloutSequences(t) % ro.num_generations != 0 && sc.parallel.gpus == 1) {
    warn(WarningCode::kNoEffect, "train.rollout.num_generations",
         "TRL requires the generation batch (micro_batch_size x steps_per_generation x GPUs) to be a multiple of num_generations");
  }
}

}  // namespace vramplan
