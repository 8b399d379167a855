#pragma once
// vLLM and vision-language models (docs/inference.md "vLLM: multimodal models"): the vision tower
// and projector it loads beside the decoder, and the multimodal part of its start-up profile run,
// which encodes a dummy batch of the largest images before the decoder's dummy run and keeps the
// encoder outputs (its encoder cache) through it. Whatever that peak adds is kept out of the KV pool.

#include <cstdint>

#include "model/image_tokens.h"
#include "vramplan/scenario.h"

namespace vramplan {

struct VllmMultimodal {
  bool loaded = false;              // the tower is loaded (limit_mm_per_prompt != 0)
  int64_t tower_weight_bytes = 0;   // per GPU (tensor-parallel shard)
  ImageTokens largest;              // the profile's dummy item
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

// The decoder tokens of one request: prompt_len + images_per_request x the image's tokens (0
// extra for text-only models and requests).
int64_t InferenceImageTokens(const Scenario& s);

}  // namespace vramplan
