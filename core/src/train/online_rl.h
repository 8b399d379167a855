// Online RL objectives (GRPO, PPO; docs/post_training.md): which models are resident, how many
// completions one rank generates, and what the rollout engine (a colocated or separate vLLM, or
// transformers' generate() on the policy) holds awake and asleep. The training step itself is the
// policy step of train_step.cpp on rows of prompt + completion; this file sizes what surrounds it.
#pragma once

#include <cstdint>
#include <string>

#include "parallel/shard.h"
#include "vramplan/result.h"
#include "vramplan/scenario.h"

namespace vramplan {

struct Prepared;

bool IsOnlineRl(Objective objective);

// Generated tokens per completion: max_completion_length, at most seq_len - 1 (the prompt keeps a token).
int64_t CompletionTokens(const TrainConfig& train);
// Completions one rank generates at once: micro_batch_size x steps_per_generation (TRL:
// generation_batch_size / num_processes; steps_per_generation defaults to gradient_accumulation_steps).
int64_t RolloutSequences(const TrainConfig& train);
// Rows per no-grad log-prob chunk: TRL GRPO passes batch_size = per_device_train_batch_size to
// _get_per_token_logps_and_entropies; TRL PPO chunks by local_rollout_forward_batch_size (64).
int64_t LogprobChunkRows(const TrainConfig& train);

// A frozen reference copy is resident: GRPO when beta != 0 and the policy is not a PEFT model
// (GRPOTrainer.__init__); PPO unless PEFT (PPOTrainer.__init__: create_reference_model).
bool RlReferenceCopyResident(const TrainConfig& train);
// Reference log-probs are computed (a no-grad reference pass): GRPO when beta != 0; PPO always.
bool RlReferencePassRuns(const TrainConfig& train);
// GRPO computes old-policy log-probs in a no-grad pass when generations are reused over several
// steps (gradient_accumulation_steps % (steps_per_generation x num_iterations) != 0) or, with vLLM,
// for its importance-sampling correction (vllm_importance_sampling_correction, default True).
bool OldPolicyPassRuns(const TrainConfig& train);

struct RolloutEngine {
  bool vllm = false;
  bool colocated = true;
  int64_t sequences = 0;        // completions generated at once on one rank
  // On the training GPU while it generates (colocate; for generate(): its KV cache and buffers).
  int64_t weight_bytes = 0;     // vLLM's own copy of the weights
  int64_t cache_bytes = 0;      // KV pool + activation budget + sampler + non-torch + CUDA graphs; generate(): KV + prefill
  int64_t outside_pools_bytes = 0;  // of cache_bytes: non-torch memory + CUDA graphs (vLLM's `temporary` term)
  // ... while the trainer runs (the sleep level's residue), and host RAM (sleep level 1).
  int64_t asleep_weight_bytes = 0;
  int64_t asleep_cache_bytes = 0;
  int64_t host_bytes = 0;
  int64_t kv_token_capacity = 0;
  int64_t concurrent_sequences = 0;
  bool would_not_start = false;
  // Server mode: the server's GPUs and what one of them holds.
  int64_t server_gpus = 0;
  int64_t server_bytes = 0;
  std::string explain;
};

// `policy_dtype_bytes`: the policy's 16-bit (or fp32) compute dtype, vLLM's weights dtype.
RolloutEngine ComputeRolloutEngine(const Scenario& sc, const Prepared& prepared, int64_t policy_dtype_bytes);

// What the estimate of an online RL step says in words: a vLLM that would not start (its claim above
// the free memory left by the trainer's `trainer_static_bytes`, or no room for its KV cache), rollouts
// that queue, and the settings whose effect is not modeled.
void AddOnlineRlWarnings(const Scenario& sc, const RolloutEngine& engine, int64_t trainer_static_bytes, Result* r);

}  // namespace vramplan
