// One moment of a training run: what is live on one GPU at one instant, by breakdown term. The
// training simulation lists its moments in time order (the model load, the forward layer by layer,
// the loss, the backward layer by layer, the optimizer step, zero_grad); the headline peak, the
// per-phase peaks, the breakdown at the peak and the timeline are all read from that one list, so
// the chart and the headline cannot disagree (docs/training.md section 6).
#pragma once

#include <cstdint>

namespace vramplan {

enum class Phase { kLoad, kForward, kBackward, kOptimizerStep, kZeroGrad };

// The JSON spelling of a phase (result.peak_phase, timeline[].phase).
inline const char* PhaseName(Phase p) {
  switch (p) {
    case Phase::kLoad: return "load";
    case Phase::kForward: return "forward";
    case Phase::kBackward: return "backward";
    case Phase::kOptimizerStep: return "optimizer_step";
    case Phase::kZeroGrad: return "zero_grad";
  }
  return "";
}

// What runs at the moment (named in peak_at and the timeline's step labels).
enum class At {
  kModelLoadPeak, kModelLoaded, kStepStart, kLayerForward, kAttentionScores, kCheckpointedScores, kCrossEntropy,
  kCrossEntropyBackward, kMlpBackward, kAttentionBackward, kEmbeddingBackward, kOptimizerStep, kZeroGrad
};

struct Moment {
  Phase phase = Phase::kForward;
  At at = At::kCrossEntropy;
  int64_t layer = -1;  // the decoder layer running, or -1
  // Model states. Built as one device holds them; the data-parallel rank view
  // (parallel/data_parallel.h) turns them into what one rank holds.
  int64_t weights = 0;
  int64_t optimizer_states = 0;
  int64_t gradients = 0;
  int64_t fresh_gradients = 0;  // of which the gradient the running op is producing (not yet handed to a reduce hook)
  // Tensors of the step.
  int64_t activations = 0;      // saved for backward
  int64_t batch = 0;            // input_ids / labels / attention mask (reported with activations)
  int64_t logits_and_loss = 0;
  int64_t kv_cache = 0;
  int64_t temporary = 0;        // the op's own buffers (at the optimizer step: the optimizer's temporaries)
  int64_t workspace = 0;        // cuBLAS workspace (reported with temporary)
  int64_t persistent_buckets = 0;  // DeepSpeed ZeRO-3's gradient bucket (reported with temporary)
  int64_t Total() const {
    return weights + optimizer_states + gradients + activations + batch + logits_and_loss + kv_cache + temporary + workspace + persistent_buckets;
  }
};

}  // namespace vramplan
