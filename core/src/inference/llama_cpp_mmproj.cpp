#include "inference/llama_cpp_mmproj.h"

#include <algorithm>
#include <cmath>

#include "format.h"
#include "util/checked_math.h"

namespace vramplan {
namespace {

using checked::Add;
using checked::Mul;

// clip.cpp clip_model_loader::load_hparams: warmup_image_size defaults to image_size; the dynamic-
// resolution towers (PROJECTOR_TYPE_QWEN2VL, QWEN25VL, PIXTRAL) warm up at patch_size x 8 ("for
// models using dynamic image size, we need to have a smaller image size to warmup, otherwise, user
// will get OOM everytime they load the model").
int64_t WarmupSide(const VisionShape& v) {
  switch (v.kind) {
    case VisionKind::kQwen2Vl:
    case VisionKind::kQwen25Vl:
    case VisionKind::kQwen3Vl:
    case VisionKind::kPixtral:
    case VisionKind::kGlm4v: return v.patch * 8;
    case VisionKind::kGemma4:
    case VisionKind::kKimiVl: return v.patch * 8;  // dynamic resolution as well (assumed the same rule)
    default: return v.image_size;
  }
}

}  // namespace

double MmprojBytesPerElement(MmprojType type) {
  switch (type) {
    case MmprojType::kF32: return 4.0;
    case MmprojType::kQ8_0: return 34.0 / 32.0;  // ggml block_q8_0: an fp16 scale + 32 int8
    case MmprojType::kNone: return 0.0;
    default: return 2.0;  // f16, bf16
  }
}

LlamaCppMmproj LlamaCppMmprojBuffers(const Scenario& s) {
  LlamaCppMmproj p;
  const VisionShape& v = s.model.vision;
  if (s.inference.mmproj == MmprojType::kNone || v.kind == VisionKind::kNone) return p;
  p.loaded = true;
  const CheckpointLayout& ck = s.model.checkpoint;
  p.params = Add(ck.vision_params, ck.projector_params, ck.audio_params);
  // convert_hf_to_gguf.py writes the matrices at the chosen type and the 1-D tensors (norms,
  // biases) in F32; the latter are a fraction of a percent of a ViT and counted at the type here.
  p.weight_bytes = static_cast<int64_t>(std::ceil(static_cast<double>(p.params) * MmprojBytesPerElement(s.inference.mmproj)));
  // clip.cpp alloc_compute_meta / reserve_compute_meta: the graph of one warm-up image is reserved
  // with ggml_backend_sched_reserve, and the buffer is the ggml allocator's peak over it. Derived
  // (approximate, not checked against a printed "compute buffer size"): F32 tensors over the n
  // positions, the larger of the attention stage (the KQ scores heads x n^2 without flash attention,
  // with q, k, v and the layer input 4 n h) and the FFN stage (its up / gate outputs 2 n i and the
  // input and output 2 n h).
  p.warmup_side = std::max<int64_t>(1, WarmupSide(v));
  const int64_t side = p.warmup_side / std::max<int64_t>(1, v.patch);
  // CLIP's and InternViT's class embedding adds a position (clip.cpp: n_patches + 1 with a class_embd).
  p.positions = Mul(side, side) + (v.kind == VisionKind::kLlava || v.kind == VisionKind::kLlavaNext || v.kind == VisionKind::kInternVl ? 1 : 0);
  const int64_t n = p.positions, h = v.hidden, i = v.intermediate, a = std::max<int64_t>(1, v.heads);
  const int64_t attn = Add(s.inference.flash_attn ? 0 : Mul(a, n, n), Mul(4, n, h));
  const int64_t ffn = Add(Mul(2, n, i), Mul(2, n, h));
  p.compute_bytes = Mul(4, std::max(attn, ffn));
  p.explain = "--mmproj (" + WithCommas(p.params) + " tower + projector params at " +
              std::string(s.inference.mmproj == MmprojType::kF32 ? "f32" : s.inference.mmproj == MmprojType::kQ8_0 ? "q8_0" : "16-bit") +
              ") " + Gib(p.weight_bytes) + "; its compute buffer for a " + WithCommas(p.warmup_side) + " px warm-up image (" + WithCommas(n) +
              " positions, F32" + (s.inference.flash_attn ? "" : ", " + WithCommas(a) + " heads x n^2 KQ scores") + ") " + Gib(p.compute_bytes);
  return p;
}

}  // namespace vramplan
