#pragma once
// llama.cpp's multimodal projector (`--mmproj FILE`, docs/inference.md "llama.cpp: --mmproj"): the
// projector GGUF holds the vision tower (CLIP / SigLIP / the Qwen ViT) and the projector at its file
// type; tools/mtmd/clip.cpp loads its tensors into a backend buffer on the GPU (unless
// --no-mmproj-offload) and reserves a compute buffer for one warm-up image.

#include <cstdint>
#include <string>

#include "vramplan/scenario.h"

namespace vramplan {

struct LlamaCppMmproj {
  bool loaded = false;
  int64_t params = 0;          // tower + projector (+ audio) elements in the file
  int64_t weight_bytes = 0;    // at the file type
  int64_t warmup_side = 0;     // the warm-up image's side in pixels (clip.cpp warmup_image_size)
  int64_t positions = 0;       // tower positions of the warm-up image
  int64_t compute_bytes = 0;   // the compute buffer reserved for it
  std::string explain;
};

// Bytes per element of a projector file type (q8_0: 34 B per block of 32).
double MmprojBytesPerElement(MmprojType type);

// The projector's buffers for the scenario's model (loaded = false without `inference.mmproj` or
// without a modelled vision tower). `flash_attn`: clip.cpp's attention follows the context's.
LlamaCppMmproj LlamaCppMmprojBuffers(const Scenario& s);

}  // namespace vramplan
