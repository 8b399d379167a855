// One moment of a training run: what is live on one GPU at one instant, by breakdown term. The
// training simulation lists its moments in time order (the model load, the forward layer by layer,
// the loss, the backward layer by layer, the optimizer step, zero_grad); the headline peak, the
// per-phase peaks, the breakdown at the peak and the timeline are all read from that one list, so
// the chart and the headline cannot disagree (docs/training.md section 6).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "vramplan/result.h"

namespace vramplan {

// kReference: the reference model's no-grad forward of a preference objective; kRollout: GRPO/PPO
// generation; kLogprob: their no-grad old-policy / reference / reward / value passes
// (docs/post_training.md).
enum class Phase { kLoad, kForward, kBackward, kOptimizerStep, kZeroGrad, kReference, kRollout, kLogprob };
inline constexpr size_t kPhaseCount = 8;

// The JSON spelling of a phase (result.peak_phase, timeline[].phase).
inline const char* PhaseName(Phase p) {
  switch (p) {
    case Phase::kLoad: return "load";
    case Phase::kForward: return "forward";
    case Phase::kBackward: return "backward";
    case Phase::kOptimizerStep: return "optimizer_step";
    case Phase::kZeroGrad: return "zero_grad";
    case Phase::kReference: return "reference";
    case Phase::kRollout: return "rollout";
    case Phase::kLogprob: return "logprob";
  }
  return "";
}

// What runs at the moment (named in peak_at and the timeline's step labels).
enum class At {
  kModelLoadPeak, kModelLoaded, kStepStart, kLayerForward, kAttentionScores, kCheckpointedScores, kFinalNorm, kCrossEntropy,
  kCrossEntropyBackward, kFinalNormBackward, kRecompute, kMlpBackward, kMlpNormBackward, kAttentionBackward, kQkvBackward, kFsdpGradientFlatten, kEmbeddingBackward, kOptimizerStep, kZeroGrad,
  kPolicyLogProbs, kReferenceLayer, kReferenceLogProbs, kPolicyLogProbsBackward,
  kRolloutGenerate, kTrainerWithEngine, kOldPolicyLogProbs, kRefPolicyLogProbs, kScoringPass, kCriticBackward,
  kKtoEntropyMetric, kRolloutEngineStarted, kSftTerm, kPreferenceLoss, kIndexerScores
};

// What runs at a moment, as peak_at and the timeline's step labels name it.
inline std::string MomentLabel(At at, int64_t layer) {
  switch (at) {
    case At::kModelLoadPeak: return "model load (peak)";
    case At::kModelLoaded: return "model loaded";
    case At::kStepStart: return "weights + optimizer states + batch";
    case At::kLayerForward: return "layer " + std::to_string(layer);
    case At::kAttentionScores: return "layer " + std::to_string(layer) + " attention scores";
    case At::kCheckpointedScores: return "layer " + std::to_string(layer) + " attention scores (checkpointed)";
    case At::kFinalNorm: return "final norm";
    case At::kCrossEntropy: return "cross_entropy";
    case At::kCrossEntropyBackward: return "cross_entropy backward";
    case At::kFinalNormBackward: return "final norm backward";
    case At::kRecompute: return "layer " + std::to_string(layer) + " recomputed (checkpoint)";
    case At::kMlpNormBackward: return "layer " + std::to_string(layer) + " post-attention norm backward";
    case At::kQkvBackward: return "layer " + std::to_string(layer) + " q/k/v backward";
    case At::kFsdpGradientFlatten: return "layer " + std::to_string(layer) + " gradient flattened for its reduce-scatter (FSDP)";
    case At::kMlpBackward: return "layer " + std::to_string(layer) + " MLP backward";
    case At::kAttentionBackward: return "layer " + std::to_string(layer) + " attention backward";
    case At::kEmbeddingBackward: return "embedding backward";
    case At::kOptimizerStep: return "optimizer.step";
    case At::kZeroGrad: return "zero_grad(set_to_none)";
    case At::kPolicyLogProbs: return "policy log-probs (selective_log_softmax)";
    case At::kReferenceLayer: return "reference layer " + std::to_string(layer) + " (no_grad)";
    case At::kReferenceLogProbs: return "reference log-probs (selective_log_softmax)";
    case At::kPolicyLogProbsBackward: return "policy log-probs backward";
    case At::kRolloutGenerate: return "rollout: generation (engine awake)";
    case At::kTrainerWithEngine: return "trainer + engine (before generation)";
    case At::kOldPolicyLogProbs: return "old-policy log-probs (no_grad, one chunk)";
    case At::kRefPolicyLogProbs: return "reference log-probs (no_grad, one chunk)";
    case At::kScoringPass: return "reward / value forward (no_grad, one chunk)";
    case At::kCriticBackward: return "critic backward";
    case At::kKtoEntropyMetric: return "KTO entropy metric (entropy_from_logits, no_grad)";
    case At::kRolloutEngineStarted: return "rollout engine started in the trainer's __init__ (awake)";
    case At::kSftTerm: return "DPO sft term (cross_entropy on the chosen rows, after the reference)";
    case At::kPreferenceLoss: return "DPO loss (after the reference, both models' fp32 logits alive)";
    case At::kIndexerScores: return "layer " + std::to_string(layer) + " DSA indexer scores";
  }
  return "";
}

struct Moment {
  Phase phase = Phase::kForward;
  At at = At::kCrossEntropy;
  int64_t layer = -1;  // the decoder layer running, or -1
  // Model states. Built as one device holds them; the data-parallel rank view
  // (parallel/data_parallel.h) turns them into what one rank holds.
  int64_t weight_bytes = 0;
  int64_t optimizer_state_bytes = 0;
  int64_t gradient_bytes = 0;
  int64_t fresh_gradient_bytes = 0;  // of which the gradient the running op is producing (not yet handed to a reduce hook)
  int64_t unreduced_gradient_bytes = 0;  // FSDP: of which the root unit's gradients, whole until the backward's end (parallel/data_parallel.h)
  // Tensors of the step.
  int64_t activation_bytes = 0;  // saved for backward
  int64_t batch_bytes = 0;       // input_ids / labels / attention mask (reported with activations)
  int64_t logits_and_loss_bytes = 0;
  int64_t kv_cache_bytes = 0;
  int64_t temporary_bytes = 0;          // the op's own buffers (at the optimizer step: the optimizer's temporaries)
  int64_t frozen_unit_hook_bytes = 0;   // of which FSDP1's frozen-unit hooks hold (parallel/fsdp_frozen_unit_hooks.h)
  int64_t workspace_bytes = 0;          // cuBLAS workspace (reported with temporary)
  int64_t persistent_bucket_bytes = 0;  // DeepSpeed ZeRO-3's gradient bucket (reported with temporary)
  // The reference model of a preference objective: its frozen weights (reported with weights) and
  // the tensors of its no-grad forward (logits, log-probs; reported with logits_and_loss).
  int64_t reference_weight_bytes = 0;
  int64_t reference_pass_bytes = 0;
  bool reference_runs = false;  // the reference model's pass runs at this moment
  // GRPO / PPO (docs/post_training.md): the colocated rollout engine (its weights; its KV pool,
  // activation budget and CUDA graphs), the frozen reward model, and the critic (value model) of
  // PPO with its states, gradients and saved activations; reported with the matching terms.
  int64_t rollout_weight_bytes = 0;
  int64_t rollout_cache_bytes = 0;
  int64_t reward_weight_bytes = 0;
  int64_t critic_weight_bytes = 0;
  int64_t critic_state_bytes = 0;
  int64_t critic_gradient_bytes = 0;
  int64_t critic_activation_bytes = 0;
  const char* running = nullptr;  // the model whose pass runs, when not the policy or the reference
  int64_t RolloutBytes() const { return rollout_weight_bytes + rollout_cache_bytes; }
  int64_t CriticBytes() const { return critic_weight_bytes + critic_state_bytes + critic_gradient_bytes + critic_activation_bytes; }
  int64_t Total() const {
    return weight_bytes + optimizer_state_bytes + gradient_bytes + activation_bytes + batch_bytes + logits_and_loss_bytes + kv_cache_bytes +
           temporary_bytes + workspace_bytes + persistent_bucket_bytes + reference_weight_bytes + reference_pass_bytes + RolloutBytes() +
           reward_weight_bytes + CriticBytes();
  }
};

// The moments of one run as they are added, in time order: the highest overall (the first one on a
// tie), the highest after the load, and the highest of each phase. With `timeline`, the moments
// marked for the chart are kept too; Timeline() returns them with the peak and every phase's
// highest moment merged in, in time order. (Inverse searches and summary tables need the maxima
// alone.)
class MomentLog {
 public:
  // `expected_kept`: about how many moments will be marked for the timeline (room made at once).
  MomentLog(bool timeline, size_t expected_kept) : timeline_(timeline) {
    if (timeline_) kept_.reserve(expected_kept);
  }

  void Add(const Moment& m, bool for_timeline) {
    const size_t index = count_++;
    const int64_t total = m.Total();
    Indexed& p = phase_peak_[static_cast<size_t>(m.phase)];
    if (total > p.total) p = {m, index, total};
    if (timeline_ && for_timeline) kept_.push_back({m, index, total});
  }

  const Moment& Peak() const { return Highest(/*with_load=*/true).moment; }
  const Moment& StepPeak() const { return Highest(/*with_load=*/false).moment; }  // the highest moment after the load
  // The highest moment of a phase (0 when the phase has none).
  int64_t PhasePeakBytes(Phase p) const { return std::max<int64_t>(0, phase_peak_[static_cast<size_t>(p)].total); }

  std::vector<Moment> Timeline() const {
    // The kept moments are in time order already; the few phase maxima are sorted and merged in,
    // each moment once (a phase maximum is often a kept moment too).
    std::array<const Indexed*, kPhaseCount> peaks{};
    size_t n = 0;
    for (const Indexed& p : phase_peak_) {
      if (p.total >= 0) peaks[n++] = &p;
    }
    for (size_t i = 1; i < n; ++i) {  // insertion sort by time: eight at most
      for (size_t j = i; j > 0 && peaks[j]->index < peaks[j - 1]->index; --j) std::swap(peaks[j], peaks[j - 1]);
    }
    std::vector<Moment> out;
    out.reserve(kept_.size() + n);
    size_t last = SIZE_MAX;
    auto add = [&out, &last](const Indexed& m) {
      if (m.index != last) out.push_back(m.moment);
      last = m.index;
    };
    size_t k = 0, p = 0;
    while (k < kept_.size() || p < n) {
      if (p == n || (k < kept_.size() && kept_[k].index <= peaks[p]->index)) add(kept_[k++]);
      else add(*peaks[p++]);
    }
    return out;
  }

 private:
  struct Indexed {
    Moment moment;
    size_t index = SIZE_MAX;
    int64_t total = -1;  // below any moment: the first one added is the highest so far
  };
  // The overall highest is the highest of the phase maxima, the earliest on a tie.
  const Indexed& Highest(bool with_load) const {
    const Indexed* best = &phase_peak_[static_cast<size_t>(Phase::kForward)];
    for (size_t i = 0; i < phase_peak_.size(); ++i) {
      const Indexed& p = phase_peak_[i];
      if (!with_load && i == static_cast<size_t>(Phase::kLoad)) continue;
      if (p.total > best->total || (p.total == best->total && p.index < best->index)) best = &p;
    }
    return *best;
  }

  bool timeline_;
  size_t count_ = 0;
  std::array<Indexed, kPhaseCount> phase_peak_{};
  std::vector<Indexed> kept_;
};

// The per-phase peaks of `log`, and the breakdown terms of its moment `peak` in the fixed order
// (explain strings left empty), as both training steps report them.
// `online_rl`: GRPO / PPO, whose models add "rollout", "reward" and "critic".
inline void ReportPeak(const MomentLog& log, const Moment& peak, GpuResult* gpu, bool online_rl = false) {
  gpu->phase_peaks.load = log.PhasePeakBytes(Phase::kLoad);
  gpu->phase_peaks.forward = log.PhasePeakBytes(Phase::kForward);
  gpu->phase_peaks.backward = log.PhasePeakBytes(Phase::kBackward);
  gpu->phase_peaks.optimizer_step = log.PhasePeakBytes(Phase::kOptimizerStep);
  gpu->phase_peaks.reference = log.PhasePeakBytes(Phase::kReference);
  gpu->phase_peaks.rollout = log.PhasePeakBytes(Phase::kRollout);
  gpu->phase_peaks.logprob = log.PhasePeakBytes(Phase::kLogprob);
  const int64_t reference = peak.reference_weight_bytes + peak.reference_pass_bytes;
  const int64_t others = peak.RolloutBytes() + peak.reward_weight_bytes + peak.CriticBytes();
  gpu->models = {Term{"policy", peak.Total() - reference - others, ""}, Term{"reference", reference, ""}};
  if (online_rl) {
    gpu->models.push_back(Term{"rollout", peak.RolloutBytes(), ""});
    gpu->models.push_back(Term{"reward", peak.reward_weight_bytes, ""});
    gpu->models.push_back(Term{"critic", peak.CriticBytes(), ""});
  }
  std::vector<Term>& bd = gpu->breakdown;
  bd.reserve(BreakdownKeys().size());  // the device overheads append theirs (gpu/device_overhead.h)
  bd.push_back(Term{"weights", peak.weight_bytes + peak.reference_weight_bytes + peak.rollout_weight_bytes + peak.reward_weight_bytes + peak.critic_weight_bytes, ""});
  bd.push_back(Term{"gradients", peak.gradient_bytes + peak.critic_gradient_bytes, ""});
  bd.push_back(Term{"optimizer_states", peak.optimizer_state_bytes + peak.critic_state_bytes, ""});
  bd.push_back(Term{"activations", peak.activation_bytes + peak.batch_bytes + peak.critic_activation_bytes, ""});
  bd.push_back(Term{"logits_and_loss", peak.logits_and_loss_bytes + peak.reference_pass_bytes, ""});
  bd.push_back(Term{"kv_cache", peak.kv_cache_bytes + peak.rollout_cache_bytes, ""});
  bd.push_back(Term{"temporary", peak.temporary_bytes + peak.workspace_bytes + peak.persistent_bucket_bytes, ""});
}

}  // namespace vramplan
