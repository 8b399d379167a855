#pragma once
// How many LLM tokens and vision-tower positions one image becomes, per family, from the
// processors' code (docs/models.md "Image inputs" cites each). The processor resizes the image;
// the tower runs over its patches (per tile); the projector merges or pools them into the tokens
// that take positions in the decoder's sequence.

#include <cstdint>

#include "vramplan/model_spec.h"

namespace vramplan {

struct ImageTokens {
  int64_t llm_tokens = 0;      // placeholder tokens in the decoder's sequence (Pixtral: with its row breaks)
  int64_t patches = 0;         // tower positions over all its sequences (tiles), CLS tokens included
  int64_t sequences = 1;       // independent attention sequences in the tower (tiles; Qwen: the image)
  int64_t sequence_len = 0;    // positions per sequence (the largest; eager attention's scores)
  int64_t windows = 0;         // Qwen2.5-VL: windows of the windowed layers (0: none)
  int64_t window_len = 0;      // ... positions per window (the largest)
  int64_t pixel_values = 0;    // elements of the pixel tensor handed to the tower
  int64_t cross_attention_states = 0;  // mllama: positions the decoder's cross-attention reads (tiles x patches)
  // Markup the processor wraps each image in that is not an image feature (Qwen's
  // <|vision_start|> / <|vision_end|>, Gemma's begin / end of image and Gemma 3's blank lines):
  // decoder positions, not encoder outputs. Llama 4's and Pixtral's markup is in llm_tokens already.
  int64_t markup_tokens = 0;
};

// The decoder positions one image takes: its features (llm_tokens) and its markup.
inline int64_t DecoderTokens(const ImageTokens& t) { return t.llm_tokens + t.markup_tokens; }

// One image of `height` x `width` pixels. `max_pixels` > 0 caps height x width: for the Qwen
// processors it is their max_pixels (smart_resize), for the other families a pre-resize that
// keeps the aspect ratio (LLaMA-Factory image_max_pixels); 0 keeps each processor's default.
ImageTokens TokensForImage(const VisionShape& shape, int64_t height, int64_t width, int64_t max_pixels = 0);

// The largest image the processor produces (what vLLM's profile run encodes): Qwen at its
// max_pixels (`max_pixels` > 0 overrides the preprocessor default), tiled families at their
// largest grid, fixed-size towers at their size.
ImageTokens LargestImage(const VisionShape& shape, int64_t max_pixels = 0);

// transformers image_processing_qwen2_vl.py smart_resize (the Qwen processors' and qwen_vl_utils'
// resize): both sides on the factor grid, scaled to fit [min_pixels, max_pixels].
void QwenSmartResize(int64_t factor, int64_t min_pixels, int64_t max_pixels, int64_t* height, int64_t* width);

}  // namespace vramplan
