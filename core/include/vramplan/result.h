// Result v1: what one estimate returns. Byte counts are exact integers inside the core and JSON
// integers on the wire. Breakdown terms are the tensors live at the peak moment, so
//   peak_allocated = weights + gradients + optimizer_states + activations + logits_and_loss
//                    + kv_cache + temporary
//   reserved       = peak_allocated + allocator_overhead
//   device_total   = reserved + cuda_context + comm_buffers (what nvidia-smi shows; comm_buffers:
//                    NCCL's communicator buffers, 0 on one GPU)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vramplan/error.h"
#include "vramplan/model_spec.h"
#include "vramplan/scenario.h"

namespace vramplan {

// One term of the breakdown, with its formula and the numbers plugged in.
struct Term {
  std::string key;      // "weights", "gradients", ... (stable JSON key)
  int64_t bytes = 0;
  std::string explain;  // e.g. "8,030,261,248 params x 2 B (bf16) = 16,060,522,496 B"
};

// The moments the peak is taken from (training: train/moment.h; inference: each engine), in time
// order: max(allocated_bytes) == gpu.peak_allocated_bytes, and each phase's maximum == its phase peak
// (for Result::timeline, the worst rank's; for each RankResult, that rank's own).
struct TimelinePoint {
  std::string phase;  // "load", "forward", "backward", "optimizer_step", "zero_grad", "prefill", "decode"
  std::string step;   // "layer 3", "lm_head", "cross_entropy", ...
  int64_t allocated_bytes = 0;
};

struct PhasePeaks {
  int64_t load = 0;  // the model load, before the first step (train/load_phase.h)
  int64_t forward = 0;
  int64_t backward = 0;
  int64_t optimizer_step = 0;
  int64_t reference = 0;  // preference objectives: the reference model's forward (docs/post_training.md)
  int64_t rollout = 0;    // GRPO / PPO: generation (the colocated engine awake)
  int64_t logprob = 0;    // GRPO / PPO: the no-grad old-policy / reference / reward / value passes
};

// GRPO / PPO: the rollout engine (docs/post_training.md). Colocated, its bytes are in gpu (model
// "rollout"); in server mode it runs on `server_gpus` GPUs of its own, outside parallel.gpus.
struct RolloutResult {
  bool present = false;
  std::string engine;  // "vllm" or "generate" (transformers, on the policy)
  std::string mode;    // "colocate" or "server"
  int64_t server_gpus = 0;
  int64_t engine_bytes = 0;          // what the engine holds awake on one of its GPUs (colocate: the trainer's GPU)
  int64_t asleep_bytes = 0;          // ... while the trainer runs (colocate: its sleep level keeps this)
  int64_t host_bytes = 0;            // sleep level 1: the weights backed up in host RAM
  int64_t rollout_sequences = 0;     // completions generated per rank per generation
  int64_t kv_token_capacity = 0;     // vLLM: tokens its KV pool holds
  int64_t concurrent_sequences = 0;  // of rollout_sequences, how many run at once
};

// An honest range for the device total (planner/peak_band.h): `expected` is device_total_bytes (what
// `fits` is judged on); `low`/`high` widen it by what the estimate cannot pin: the caching
// allocator's spread and, for unpacked data, the typical batch. verdict: "fits" (high fits),
// "tight" (the band straddles the capacity), "does_not_fit" (low does not fit).
struct PeakBand {
  int64_t low_bytes = 0;
  int64_t expected_bytes = 0;
  int64_t high_bytes = 0;
  std::string verdict;
  std::string basis;  // what widens it, in words
};

struct GpuResult {
  std::string id;
  std::string name;
  int64_t capacity_bytes = 0;  // memory the fit is judged against
  int64_t peak_allocated_bytes = 0;
  int64_t reserved_bytes = 0;
  int64_t device_total_bytes = 0;
  int64_t headroom_bytes = 0;  // capacity - device_total (negative: does not fit)
  bool fits = false;
  std::vector<Term> breakdown;  // keys in a fixed order, see BreakdownKeys()
  PhasePeaks phase_peaks;
  int64_t saved_activation_bytes = 0;  // saved for backward at the end of the forward pass
  int64_t gradient_bytes = 0;          // all gradients after backward (training)
  int64_t optimizer_state_bytes = 0;   // device-resident optimizer states (training)
  int64_t paged_bytes = 0;             // unified-memory (paged) optimizer states, not in allocated
  int64_t load_reserved_bytes = 0;     // reserved once the model is loaded (training); reserved_bytes >= it
  std::string load_explain;
  PeakBand band;
  // The allocated peak by model (training): "policy" (the model that trains, its states and its
  // passes) and "reference" (a frozen reference copy and its forward's tensors); they sum to
  // peak_allocated_bytes.
  std::vector<Term> models;
};

// Host RAM. `bytes` and `breakdown` are one rank's process (training: each GPU's own process, e.g.
// its offloaded shard; transformers' device_map="auto" and llama.cpp: the one process of the job);
// `node_bytes` is what the fullest host needs: bytes x the processes it runs (node_processes =
// min(gpus, gpus_per_node) with one process per GPU: training, vLLM, transformers with tp > 1;
// 1 otherwise). Offload on an 8-GPU node needs 8x what one rank offloads.
struct CpuResult {
  int64_t bytes = 0;  // host RAM needed by one rank's process
  std::vector<Term> breakdown;
  int64_t node_processes = 1;  // processes on the fullest host, each holding `bytes`
  int64_t node_bytes = 0;      // host RAM of the fullest host: sum over its processes
};

// One rank role (parallel/topology.h): `count` GPUs that hold the same bytes. The fields mean what
// the same fields of GpuResult and Result mean, for one GPU of this role (the breakdown without
// explain strings); `host_bytes` is the host RAM of one of its processes (CpuResult::bytes).
struct RankResult {
  std::string role;  // "all" while every rank of the job is alike
  int64_t count = 0;
  std::vector<Term> breakdown;
  int64_t peak_allocated_bytes = 0;
  int64_t reserved_bytes = 0;
  int64_t device_total_bytes = 0;
  std::vector<TimelinePoint> timeline;
  PhasePeaks phase_peaks;
  int64_t host_bytes = 0;
};

struct InferenceCapacity {
  bool present = false;
  int64_t kv_bytes_per_token = 0;
  int64_t kv_token_capacity = 0;       // vLLM: tokens the KV pool holds
  int64_t max_concurrency = 0;         // at max_model_len
  int64_t concurrent_sequences = 0;    // of batch_size, how many run at once (vLLM: the rest queue)
  bool max_model_len_fits = true;
  int64_t max_context_fits = 0;        // inverse: largest context that fits at batch_size, at most the model's limit
  std::string max_context_bound;       // what ends it: "memory", "model_context" or "input_limit"
  int64_t max_batch_fits = 0;          // inverse: largest batch at the context length
  // Inverse: the highest-precision (most stored bytes) weight format this engine runs that fits,
  // "" if none. JSON: highest_precision_format_fits, and the older name smallest_format_fits.
  std::string smallest_format_fits;
  int64_t min_gpus = 0;                // inverse: GPUs (tensor parallel) needed
  // Hybrid models: the recurrent (conv + SSM / delta-rule) state one sequence keeps on one GPU,
  // over all linear-attention / Mamba layers (inference/recurrent_state.h); 0 for attention-only
  // models, and then not written to the JSON.
  int64_t state_bytes_per_sequence = 0;
  int64_t recurrent_layers = 0;
};

struct TrainingCapacity {
  bool present = false;
  int64_t max_micro_batch_fits = 0;  // at the scenario's seq_len (0: even 1 does not fit)
  int64_t max_seq_len_fits = 0;      // at the scenario's micro_batch_size, at most the model's context limit
  std::string max_seq_len_bound;     // what ends it: "memory", "model_context" or "input_limit"
  // Smallest total GPU count (a multiple of tp x pp x cp, at most kMaxGpus) at which the scenario
  // fits when only data parallelism grows, with its own sharding (ZeRO stage / FSDP / offload);
  // 0 when none does (e.g. plain data parallelism, which does not lower per-GPU memory).
  int64_t min_gpus = 0;
  // Only when min_gpus is 0 and the scenario does not already shard parameters: the same answer
  // with DeepSpeed ZeRO-3 (parallel.zero 3, offloads as given); 0 when even that does not fit, or
  // when not asked (min_gpus > 0, or ZeRO-3/FSDP already).
  int64_t min_gpus_zero3 = 0;
  // Batches as they are (train.packing / typical_seq_len): which batch the figures and the inverse
  // answers above are about ("packed": every batch is seq_len; "longest_batch": unpacked data, the
  // peak of the run is at its longest batch), and the typical step of unpacked data.
  std::string batches;
  int64_t typical_seq_len = 0;                 // 0 when packed or not given
  int64_t typical_peak_allocated_bytes = 0;
  int64_t typical_device_total_bytes = 0;
};

// Image inputs of a vision-language model (docs/models.md "Image inputs"); written only for models
// with a modelled vision tower (text-only results keep their shape).
struct VisionResult {
  bool present = false;
  int64_t tokens_per_image = 0;      // LLM tokens one image of the scenario's resolution becomes
  int64_t patches_per_image = 0;     // vision-tower positions of that image (before any merge)
  int64_t image_tokens = 0;          // per sample (training) / request (inference)
  int64_t llm_tokens = 0;            // seq_len / prompt_len + image_tokens: what the decoder runs over
  int64_t tower_params = 0;          // vision tower + projector
  int64_t tower_weight_bytes = 0;    // held on the device (0 when not loaded)
  int64_t tower_trainable_params = 0;
  int64_t tower_activation_bytes = 0;  // training: saved by the tower and projector for backward
  // vLLM's multimodal profile run: the dummy encoder batch it runs at start-up and what it keeps
  // out of the KV pool for it (inference/vllm_multimodal.h).
  int64_t profile_items = 0;
  int64_t profile_tokens_per_item = 0;
  int64_t profile_bytes = 0;
  // Video inputs (written only for towers that take video: takes_video).
  bool takes_video = false;
  int64_t tokens_per_video = 0;      // LLM tokens one video of the scenario's frames and size becomes
  int64_t patches_per_video = 0;     // vision-tower positions of that video
  int64_t video_tokens = 0;          // per sample / request
  std::string profile_modality;      // vLLM: the modality its profile run encodes ("image", "video")
  // Llama 3.2 Vision: the cross-attention layers' K/V over the vision states (written when > 0).
  int64_t cross_attention_kv_bytes = 0;
  // llama.cpp --mmproj: the projector's compute buffer (its weights are tower_weight_bytes).
  int64_t mmproj_compute_bytes = 0;
};

struct Result {
  int schema = kSchemaVersion;
  ParamCounts params;
  int64_t trainable_params = 0;
  GpuResult gpu;  // the worst rank: the role with the largest device_total_bytes (the first on a tie)
  CpuResult cpu;
  std::vector<RankResult> ranks;  // every distinct rank role, with its count (sum = parallel.gpus)
  std::string peak_phase;
  std::string peak_at;  // what is running at the peak ("cross_entropy", "layer 31 attention", ...)
  std::string peak_model;  // training: the model whose pass runs at the peak ("policy", "reference")
  std::vector<TimelinePoint> timeline;  // the worst rank's (gpu's)
  // One word for the answer (planner/verdict.h): "fits", "fits_queued" (vLLM starts, but only
  // inference.concurrent_sequences of batch_size run at once), "exceeds_model_context" (fits in
  // memory, longer than the model's context limit), "does_not_fit" (or the engine would not start).
  std::string verdict;
  InferenceCapacity inference;
  TrainingCapacity training;
  RolloutResult rollout;
  VisionResult vision;
  Issues warnings;
  // Non-empty when the estimate was refused: code "too_large" when a byte count of this scenario
  // would exceed 2^62 B on one device (docs/schema.md, "Size limits"). Every number is then zero
  // and gpu.fits is false; EstimateJson returns these as {"ok": false, "errors": [...]}.
  Issues errors;
};

// Fixed order of GPU breakdown keys (the page's stacked bar and table use it).
const std::vector<std::string>& BreakdownKeys();

}  // namespace vramplan
