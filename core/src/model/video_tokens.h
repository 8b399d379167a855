#pragma once
// How many LLM tokens and vision-tower positions one video becomes (docs/models.md "Video
// inputs"), for the towers whose processors take video: Qwen2.5-VL and Qwen3-VL. A video is its
// frames, each resized like an image under a per-frame budget, grouped temporal_patch_size at a
// time (the last frame repeated to fill a group); every group is one image-sized grid of patches
// that the tower attends over on its own, merged m x m into LLM tokens.

#include <cstdint>

#include "model/image_tokens.h"

namespace vramplan {

bool TakesVideo(const VisionShape& shape);

// qwen_vl_utils fetch_video's per-frame pixel cap for `frames` frames: max(min(768 f^2, total /
// frames x 2), int(128 f^2 x 1.05)) with total = 128,000 f^2 x 0.9 (f = patch x merge);
// `max_pixels` > 0 lowers it (the element's max_pixels).
int64_t VideoFrameMaxPixels(const VisionShape& shape, int64_t frames, int64_t max_pixels);

// One video of `frames` frames of `height` x `width` pixels as qwen_vl_utils hands it to the
// processor (frames resized with smart_resize between 128 f^2 and VideoFrameMaxPixels). In the
// result, `sequences` counts the temporal groups, `sequence_len` / `windows` / `window_len` are one
// group's; llm_tokens includes Qwen3-VL's per-group timestamp text (VideoTextTokens).
ImageTokens TokensForVideo(const VisionShape& shape, int64_t frames, int64_t height, int64_t width, int64_t max_pixels = 0);

// A video whose every temporal group is the image grid `frame` (vLLM's dummy video: frames of the
// largest image size); `groups` temporal groups, no text tokens.
ImageTokens VideoOfFrames(const ImageTokens& frame, int64_t groups);

// Qwen3-VL: the text around each temporal group, beyond the one vision_start / vision_end pair an
// image also has (transformers processing_qwen3_vl.py Qwen3VLProcessor.replace_video_token: per
// group "<t.t seconds>" + <|vision_start|> + pads + <|vision_end|>). Qwen2.5-VL: 0.
int64_t VideoTextTokens(const VisionShape& shape, int64_t groups);

}  // namespace vramplan
