#pragma once
// A vision-language model's vision tower and projector in the training step (docs/training.md
// "Vision-language models"): their weights (always held: transformers loads the whole
// ...ForConditionalGeneration), their gradients and optimizer states when they train, and what
// autograd saves in them for backward. The decoder's extra image tokens are not here: the step
// runs the decoder over seq_len + image tokens (VisionLlmTokens).

#include <cstdint>

#include "model/image_tokens.h"
#include "train/precision.h"
#include "vramplan/scenario.h"

namespace vramplan {

struct VisionTrainMemory {
  ImageTokens per_image;
  int64_t images = 0;                 // images in one micro-batch (rows x images_per_sample)
  int64_t image_tokens_per_sample = 0;
  int64_t tower_params = 0;           // vision + projector (+ audio) elements held
  int64_t trainable_params = 0;       // of them, trained
  int64_t weight_bytes = 0;
  int64_t gradient_bytes = 0;
  int64_t activation_bytes = 0;       // saved for backward over the micro-batch, with the pixel inputs
  // Video inputs (model/video_tokens.h): one video, the videos in the micro-batch, their tokens per sample.
  ImageTokens per_video;
  int64_t videos = 0;
  int64_t video_tokens_per_sample = 0;
  // Llama 3.2 Vision: the cross-attention layers' K / V over the vision states, saved for backward
  // (model/cross_attention_kv.h); included in activation_bytes.
  int64_t cross_attention_kv_bytes = 0;
};

// The decoder tokens of one sample: seq_len (text) + images_per_sample x the image's tokens +
// videos_per_sample x the video's tokens (towers that take video).
int64_t VisionLlmTokens(const Scenario& sc);

// `rows`: sequences in the micro-batch (preference objectives double them); `prec`: what the
// layers compute in; `stored`: the parameters' and gradients' precision.
VisionTrainMemory ComputeVisionTraining(const Scenario& sc, int64_t rows, const PrecisionModel& stored, const PrecisionModel& prec);

// Saved for backward by one image in a trained tower (bytes): every encoder layer's saved tensors
// (or only each layer's input under gradient checkpointing), the patch embedding's input and the
// final norm. Exposed for the hand-worked tests.
// `cpu_torch113`: what PyTorch 1.13 on the CPU saves besides (LayerNorm's mean / rstd in the input
// dtype instead of fp32; mean.dim saving RMSNorm's squared fp32 input, pytorch#109876), for the
// measured fixture tests/fixtures/training/measured_cpu_vision.json.
int64_t TowerSavedBytesPerImage(const VisionShape& s, const ImageTokens& img, int64_t elem_bytes, AttentionImpl attention,
                                bool checkpointed, bool cpu_torch113 = false);

}  // namespace vramplan
