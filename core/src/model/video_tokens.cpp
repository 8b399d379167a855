#include "model/video_tokens.h"

#include <algorithm>

#include "util/checked_math.h"

namespace vramplan {
namespace {

using checked::Add;
using checked::Mul;

// qwen_vl_utils vision_process.py (QwenLM/Qwen3-VL 004d5e0): VIDEO_MIN_TOKEN_NUM 128,
// VIDEO_MAX_TOKEN_NUM 768 merged tokens a frame, MODEL_SEQ_LEN 128,000, FRAME_FACTOR 2.
constexpr int64_t kVideoMinTokens = 128;
constexpr int64_t kVideoMaxTokens = 768;
constexpr int64_t kModelSeqLen = 128000;

int64_t Factor(const VisionShape& s) { return s.patch * s.merge; }

int64_t Groups(const VisionShape& s, int64_t frames) {
  const int64_t t = std::max<int64_t>(1, s.temporal_patch);
  return std::max<int64_t>(1, (std::max<int64_t>(1, frames) + t - 1) / t);
}

int64_t Digits(int64_t n) {
  int64_t d = 1;
  while (n >= 10) n /= 10, ++d;
  return d;
}

}  // namespace

bool TakesVideo(const VisionShape& s) { return s.kind == VisionKind::kQwen2Vl || s.kind == VisionKind::kQwen25Vl || s.kind == VisionKind::kQwen3Vl; }

int64_t VideoFrameMaxPixels(const VisionShape& s, int64_t frames, int64_t max_pixels) {
  const int64_t f2 = Mul(Factor(s), Factor(s));
  const int64_t min_px = Mul(kVideoMinTokens, f2);
  // fetch_video: total_pixels / nframes x FRAME_FACTOR in floating point; the cap compares as a float
  // and smart_resize only compares against it, so the floor is exact here.
  const double total = static_cast<double>(kModelSeqLen) * static_cast<double>(f2) * 0.9;
  const double share = total / static_cast<double>(std::max<int64_t>(1, frames)) * 2.0;
  const double cap = std::max(std::min(static_cast<double>(Mul(kVideoMaxTokens, f2)), share),
                              static_cast<double>(static_cast<int64_t>(static_cast<double>(min_px) * 1.05)));
  int64_t out = static_cast<int64_t>(cap);
  if (max_pixels > 0) out = std::min(out, max_pixels);
  return out;
}

ImageTokens VideoOfFrames(const ImageTokens& frame, int64_t groups) {
  ImageTokens t = frame;
  t.llm_tokens = Mul(frame.llm_tokens, groups);
  t.patches = Mul(frame.patches, groups);
  // Qwen2_5_VisionTransformerPretrainedModel / Qwen3VLVisionModel: cu_seqlens =
  // repeat_interleave(h x w, t), each temporal group attends over itself; the windows likewise.
  t.sequences = Mul(frame.sequences, groups);
  t.windows = Mul(frame.windows, groups);
  t.pixel_values = Mul(frame.pixel_values, groups);
  return t;
}

int64_t VideoTextTokens(const VisionShape& s, int64_t groups) {
  if (s.kind != VisionKind::kQwen3Vl || groups <= 0) return 0;
  // Group i of frames sampled at qwen_vl_utils' 2 fps covers seconds i .. i + 0.5: timestamp
  // (2i / 2 + (2i + 1) / 2) / 2 = i + 0.25, written "<i.2 seconds>". The Qwen2 pre-tokenizer splits
  // digits one by one: "<", the integer part's digits, ".", one digit, " seconds", ">" = 5 + digits.
  int64_t n = 0;
  for (int64_t i = 0; i < groups; ++i) n = Add(n, 5 + Digits(i) + 2);
  // The first group's vision_start / vision_end are the video's markup (ImageTokens::markup_tokens,
  // carried from the frame: DecoderTokens adds them), not text.
  return n - 2;
}

ImageTokens TokensForVideo(const VisionShape& s, int64_t frames, int64_t h, int64_t w, int64_t max_pixels) {
  if (!TakesVideo(s) || frames <= 0 || h <= 0 || w <= 0) return {};
  // fetch_video: a list of frames is padded to a multiple of FRAME_FACTOR with its last frame, a
  // file sampled to a multiple of it (smart_nframes); the processor pads to temporal_patch_size.
  const int64_t groups = Groups(s, frames);
  const int64_t nframes = groups * std::max<int64_t>(1, s.temporal_patch);
  const int64_t f = Factor(s);
  QwenSmartResize(f, Mul(kVideoMinTokens, f, f), VideoFrameMaxPixels(s, nframes, max_pixels), &h, &w);
  // The processor's own smart_resize keeps a frame already on the factor grid within its bounds
  // (Qwen2VLVideoProcessor / Qwen3VLVideoProcessor; qwen_vl_utils' Qwen3-VL example passes
  // do_resize=False): the frame is an image of that size.
  const ImageTokens frame = TokensForImage(s, h, w, Mul(h, w));
  ImageTokens t = VideoOfFrames(frame, groups);
  t.llm_tokens = Add(t.llm_tokens, VideoTextTokens(s, groups));
  return t;
}

}  // namespace vramplan
