// Online RL's rollout on the cost axis (rollout_time.h). Every term is a time on the step's
// critical path: TRL's GRPOTrainer generates, scores and trains in turn (trl/trainer/grpo_trainer.py
// _generate_and_score_completions, read at TRL v1.9.0+26, commit f2cd577), so nothing overlaps.
#include "planner/rollout_time.h"

#include <algorithm>

#include "inference/kv_cache.h"
#include "parallel/topology.h"
#include "train/online_rl.h"

namespace vramplan {
namespace {

// transformers generate() runs without CUDA graphs: the serving model's eager/graph decode ratio
// (1.14x vllm-project/vllm PR #1440 to 1.44x facebookresearch/metaseq PR #270; step_time.cpp).
constexpr double kEagerDecodeSlowdown = 1.3;

}  // namespace

RolloutTime RolloutStepTime(const Scenario& s, const ModelSpec& model, const ParamCounts& params, const HardwareRates& rates) {
  RolloutTime out;
  const TrainConfig& t = s.train;
  if (!IsOnlineRl(t.objective)) return out;
  const RolloutConfig& ro = t.rollout;
  const double accum = static_cast<double>(std::max<int64_t>(1, t.grad_accum_steps));
  const double spg = static_cast<double>(ro.steps_per_generation > 0 ? ro.steps_per_generation : std::max<int64_t>(1, t.grad_accum_steps));
  const double generations = accum / spg;  // generations per optimizer step (TRL: one every steps_per_generation)
  const double rank_rows = static_cast<double>(RolloutSequences(t));
  const double completion = static_cast<double>(CompletionTokens(t));
  const double prompt = static_cast<double>(std::max<int64_t>(1, t.seq_len - CompletionTokens(t)));
  const bool fp32 = t.precision == Precision::kFp32;
  const double rate = fp32 ? rates.fp32_flops_per_s : rates.matmul_flops_per_s;
  const double active = static_cast<double>(params.active_per_token > 0 ? params.active_per_token : params.total);
  const double weights = (fp32 ? 4.0 : 2.0) * static_cast<double>(params.total);  // the engine's copy: the policy's compute dtype
  const WeightFormat format = fp32 ? WeightFormat::kFp32 : (t.precision == Precision::kFp16 ? WeightFormat::kFp16 : WeightFormat::kBf16);
  const Engine engine = ro.use_vllm ? Engine::kVllm : Engine::kTransformers;
  const double kv_per_token = static_cast<double>(KvBytesPerToken(KvGroups(model, engine, 1), ResolveKvDtype(KvDtype::kAuto, format, engine)));

  // One generation: prefill at the compute rate (2 FLOPs per active parameter per prompt token),
  // decode at HBM bandwidth (each of the completion's steps reads the weights and the batch's K/V at
  // its mean context, prompt + completion / 2), as the serving model (step_time.cpp ServingTime).
  auto generate = [&](double rows, double split, double waves) {
    const double prefill = rows * prompt * 2.0 * active / (split * rate);
    const double kv = rows / waves * (prompt + completion / 2.0) * kv_per_token / split;
    return prefill + waves * completion * (weights / split + kv) / rates.hbm_bytes_per_s;
  };
  double per_generation = 0;
  if (ro.use_vllm && ro.vllm_mode == VllmMode::kServer) {
    // trl vllm-serve: the main process gathers every rank's prompts and one server generates them
    // all (VLLMGeneration.generate: gather_object, then vllm_client.generate); the trainer waits.
    // The server's GPUs count in the job's GPU-seconds; the new weights go to it over NCCL every
    // step (vllm_client.update_named_param).
    const int64_t server = std::max<int64_t>(1, ro.vllm_tensor_parallel_size);
    out.extra_gpus = server;
    const double all_rows = rank_rows * static_cast<double>(DataParallelDegree(s.parallel));
    per_generation = generate(all_rows, static_cast<double>(server), 1.0) + weights / rates.intra_node_bytes_per_s;
  } else if (ro.use_vllm) {
    // Colocated: each rank's engine generates its rows; the weight sync is an on-GPU copy (read and
    // write); sleep level 1 moves the weights to host RAM and back over PCIe (vLLM
    // docs/features/sleep_mode.md), level 2 discards them and the sync rewrites them (TRL wakes the
    // weights, syncs, then wakes the KV cache: vllm_generation.py), so it adds no transfer.
    per_generation = generate(rank_rows, 1.0, 1.0) + 2.0 * weights / rates.hbm_bytes_per_s;
    if (ro.vllm_sleep_level == 1) per_generation += 2.0 * weights / rates.host_link_bytes_per_s;
  } else {
    // transformers generate() on the policy, in chunks for PPO (local_rollout_forward_batch_size).
    const double chunk = static_cast<double>(t.objective == Objective::kPpo ? LogprobChunkRows(t) : RolloutSequences(t));
    const double waves = std::max(1.0, rank_rows / std::max(1.0, chunk));
    per_generation = kEagerDecodeSlowdown * generate(rank_rows, 1.0, waves);
  }
  // No-grad forwards over the step's completions (prompt + completion tokens): GRPO's old-policy and
  // reference passes; PPO's reference, value and reward passes.
  double passes = (RlReferencePassRuns(t) ? 1.0 : 0.0) + (OldPolicyPassRuns(t) ? 1.0 : 0.0);
  if (t.objective == Objective::kPpo) passes += 2.0;
  const double step_tokens = static_cast<double>(t.micro_batch_size) * accum * static_cast<double>(t.seq_len);
  const double logprob = passes * step_tokens * 2.0 * active / rate;
  out.seconds = generations * per_generation + logprob;
  return out;
}

}  // namespace vramplan
