#pragma once
// vLLM and vision-language models (docs/inference.md "vLLM: multimodal models"): the vision tower
// and projector it loads beside the decoder, and the multimodal part of its start-up profile run,
// which encodes a dummy batch of the largest images before the decoder's dummy run and keeps the
// encoder outputs (its encoder cache) through it. Whatever that peak adds is kept out of the KV pool.

#include <cstdint>
#include <string>

#include "model/image_tokens.h"
#include "vramplan/result.h"
#include "vramplan/scenario.h"

namespace vramplan {

struct VllmMultimodal {
  bool loaded = false;              // the tower is loaded (limit_mm_per_prompt != 0)
  int64_t tower_weight_bytes = 0;   // per GPU (tensor-parallel shard)
  ImageTokens largest;              // the profile's dummy item (a video: its temporal groups)
  std::string modality = "image";   // the modality of the dummy batch (the most tokens per item)
  int64_t tokens_per_item = 0;      // its embeddings in the decoder (the encoder budget's unit)
  int64_t items = 0;                // items in the dummy encoder batch
  int64_t encoder_peak_bytes = 0;   // the tower's forward over the dummy batch (one layer's tensors)
  int64_t encoder_cache_bytes = 0;  // the batch's outputs, kept through the decoder's dummy run
};

// `mnbt`: max_num_batched_tokens; `dt`: the compute dtype's bytes; `tp`: tensor-parallel degree.
VllmMultimodal VllmMultimodalProfile(const Scenario& s, int64_t mnbt, int64_t max_model_len, int64_t max_seqs, int64_t dt, int64_t tp);

// The profile's peak with the decoder's dummy-run activations `layer_act`: the larger of the
// encoder's own forward and its outputs under the decoder's run; what it adds beyond layer_act.
int64_t VllmMultimodalExtra(const VllmMultimodal& mm, int64_t layer_act);

// The decoder tokens one request adds to prompt_len: images_per_request x the image's tokens +
// videos_per_request x the video's tokens (0 for text-only models and requests).
int64_t InferenceImageTokens(const Scenario& s);

// One video of the scenario's inference.video_* settings (model/video_tokens.h; empty when the
// tower takes no video).
ImageTokens InferenceVideo(const Scenario& s);

// result.vision's video keys for a request of the scenario's videos (takes_video, tokens_per_video, ...).
void FillVideoResult(const Scenario& s, VisionResult* vr);

// vLLM's dummy video for the profile run (Qwen2VLProcessingInfo.get_num_frames_with_most_features):
// frames of the largest image `frame`, as many as fit max_model_len split over the video limit, at
// most 14 (_MAX_FRAMES_PER_VIDEO), at least 1; padded to temporal_patch_size.
ImageTokens VllmDummyVideo(const VisionShape& v, const ImageTokens& frame, int64_t max_model_len, int64_t video_limit);

}  // namespace vramplan
