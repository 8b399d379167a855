#include "inference/vllm_multimodal.h"

#include <algorithm>

#include "model/video_tokens.h"
#include "util/checked_math.h"

namespace vramplan {
namespace {

using checked::Add;
using checked::Mul;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// vLLM's default limit_mm_per_prompt (vllm/config/multimodal.py MultiModalConfig.get_limit_per_prompt:
// 999 for a modality not given; the V0 engine's default was 1).
int64_t DefaultLimit(const InferenceConfig& inf, int64_t given) {
  if (given >= 0) return given;
  return inf.vllm_version == VllmVersion::kV0Engine ? 1 : 999;
}

int64_t MmLimit(const InferenceConfig& inf) { return DefaultLimit(inf, inf.limit_mm_per_prompt); }

// Videos go through the tower only for towers that take them (model/video_tokens.h).
int64_t VideoLimit(const Scenario& s) {
  return TakesVideo(s.model.vision) ? DefaultLimit(s.inference, s.inference.limit_mm_video_per_prompt) : 0;
}

}  // namespace

ImageTokens InferenceVideo(const Scenario& s) {
  const InferenceConfig& inf = s.inference;
  return TokensForVideo(s.model.vision, inf.video_frames, inf.video_height, inf.video_width, inf.video_max_pixels);
}

int64_t InferenceImageTokens(const Scenario& s) {
  const InferenceConfig& inf = s.inference;
  if (s.model.vision.kind == VisionKind::kNone) return 0;
  int64_t n = 0;
  if (inf.images_per_request > 0) {
    n = Mul(inf.images_per_request, DecoderTokens(TokensForImage(s.model.vision, inf.image_height, inf.image_width, inf.mm_max_pixels)));
  }
  if (inf.videos_per_request > 0 && TakesVideo(s.model.vision)) n = Add(n, Mul(inf.videos_per_request, DecoderTokens(InferenceVideo(s))));
  return n;
}

void FillVideoResult(const Scenario& s, VisionResult* vr) {
  vr->takes_video = TakesVideo(s.model.vision);
  if (!vr->takes_video) return;
  const ImageTokens one = InferenceVideo(s);
  vr->tokens_per_video = DecoderTokens(one);
  vr->patches_per_video = one.patches;
  vr->video_tokens = Mul(s.inference.videos_per_request, DecoderTokens(one));
}

ImageTokens VllmDummyVideo(const VisionShape& v, const ImageTokens& frame, int64_t max_model_len, int64_t video_limit) {
  // vllm/model_executor/models/qwen2_vl.py (002d181) Qwen2VLProcessingInfo: _get_vision_info pads
  // the frames to num_frames + num_frames % temporal_patch_size, grid_t = max(padded // t, 1);
  // _get_max_video_frames(seq_len) grows num_frames from 1 while the next count's tokens fit
  // seq_len (max_model_len); get_num_frames_with_most_features = max(min(that // max(videos, 1),
  // _MAX_FRAMES_PER_VIDEO = 14), 1). Qwen3VLProcessingInfo (qwen3_vl.py 002d7b9) inherits both.
  const int64_t tp = std::max<int64_t>(1, v.temporal_patch);
  auto groups = [&](int64_t n) { return std::max<int64_t>(1, (n + n % tp) / tp); };
  auto tokens = [&](int64_t n) { return Mul(groups(n), frame.llm_tokens); };
  const int64_t videos = std::max<int64_t>(1, video_limit);
  constexpr int64_t kMaxFramesPerVideo = 14;
  // Past 14 x videos frames the answer no longer changes: stop there.
  int64_t total = 1;
  while (total < kMaxFramesPerVideo * videos && tokens(total + 1) <= max_model_len) ++total;
  const int64_t frames = std::max<int64_t>(1, std::min(total / videos, kMaxFramesPerVideo));
  return VideoOfFrames(frame, groups(frames));
}

VllmMultimodal VllmMultimodalProfile(const Scenario& s, int64_t mnbt, int64_t max_model_len, int64_t max_seqs, int64_t dt, int64_t tp) {
  VllmMultimodal mm;
  const VisionShape& v = s.model.vision;
  const InferenceConfig& inf = s.inference;
  const int64_t limit = MmLimit(inf);
  const int64_t video_limit = inf.vllm_version == VllmVersion::kV0Engine ? 0 : VideoLimit(s);
  if (v.kind == VisionKind::kNone || (limit == 0 && video_limit == 0)) return mm;
  mm.loaded = true;
  // The tower and projector in the checkpoint's 16-bit dtype (vLLM keeps vision encoders
  // unquantized in the usual quantized VLM checkpoints), its linears sharded over tp.
  const int64_t tower = s.model.checkpoint.vision_params + s.model.checkpoint.projector_params + s.model.checkpoint.audio_params;
  mm.tower_weight_bytes = CeilDiv(Mul(tower, 2), std::max<int64_t>(1, tp));
  mm.largest = LargestImage(v, inf.mm_max_pixels);
  mm.tokens_per_item = v.kind == VisionKind::kMllama ? mm.largest.cross_attention_states : mm.largest.llm_tokens;
  // V1 (vllm/multimodal/encoder_budget.py 042a4d3, MultiModalBudget): every modality with a
  // non-zero limit has its largest item (get_mm_max_tokens_per_item); the encoder budget covers the
  // largest of them (compute_mm_encoder_budget) and the profile run encodes the modality with the
  // most tokens per item, ties to the later name ("video" over "image":
  // get_modality_with_max_tokens, max by (tokens, name)). The V0 engine's image-only profile is kept.
  int64_t item_limit = limit, budget_item = limit > 0 ? mm.tokens_per_item : 0;
  if (video_limit > 0) {
    const ImageTokens video = VllmDummyVideo(v, mm.largest, max_model_len, video_limit);
    budget_item = std::max(budget_item, video.llm_tokens);
    if (limit == 0 || video.llm_tokens >= mm.tokens_per_item) {
      mm.largest = video;
      mm.tokens_per_item = video.llm_tokens;
      mm.modality = "video";
      item_limit = video_limit;
    }
  }
  if (mm.tokens_per_item <= 0) return mm;
  if (inf.vllm_version == VllmVersion::kV0Engine) {
    // V0 (worker/model_runner.py profile_run): max_num_seqs sequences, cut to
    // max_num_batched_tokens // max_mm_tokens when the model takes images; the encoder-decoder
    // runner (enc_dec_model_runner.py, mllama) does not cut: every sequence gets an image.
    mm.items = v.kind == VisionKind::kMllama ? max_seqs : std::max<int64_t>(1, std::min(max_seqs, mnbt / mm.tokens_per_item));
  } else {
    // V1 (vllm/multimodal/encoder_budget.py MultiModalBudget._get_max_items): the encoder budget is
    // max(max_num_encoder_input_tokens = max_num_batched_tokens, the item's tokens); items per
    // prompt min(limit, max_model_len // tokens), at least 1; items per batch at most budget //
    // tokens and max_num_seqs x items per prompt, at least 1 (gpu_model_runner.py profile_run
    // encodes that many with _get_mm_dummy_batch).
    const int64_t budget = std::max(mnbt, std::max(budget_item, mm.tokens_per_item));
    const int64_t per_prompt = std::max<int64_t>(1, std::min(item_limit, max_model_len / mm.tokens_per_item));
    mm.items = std::max<int64_t>(1, std::min(budget / mm.tokens_per_item, Mul(max_seqs, per_prompt)));
  }
  // The encoder's forward over the batch, no grad: at its peak one layer holds the residual, the
  // normed input and either q, k, v and the attention output, or the MLP's fc1 / gate-up output
  // and its activation; vLLM's vision attention (flash-attn / xformers / sdpa) builds no scores.
  const int64_t n = Mul(mm.items, mm.largest.patches);
  const int64_t i = CeilDiv(v.intermediate, tp), hh = v.hidden;
  const int64_t attn = Add(Mul(2, hh), Mul(4, CeilDiv(hh, tp)));
  const int64_t mlp = Add(Mul(2, hh), Mul(v.gated_mlp ? 3 : 2, i));
  mm.encoder_peak_bytes = Add(Mul(n, std::max(attn, mlp), dt), Mul(mm.items, mm.largest.pixel_values, dt));
  if (v.kind == VisionKind::kMllama) {
    // vllm/model_executor/models/mllama.py: MllamaVisionModel keeps the intermediate layers'
    // outputs it concatenates into vision_output_dim (7680 = 1280 x (1 + 5)) through the rest of
    // the encoder, and _prepare_aspect_ratio_attention_mask builds a dense (tiles x 1608)^2 mask per
    // image in the model dtype that every layer reads.
    const int64_t kept = v.output_dim > hh && hh > 0 ? v.output_dim / hh - 1 : 0;
    mm.encoder_peak_bytes = Add(mm.encoder_peak_bytes, Mul(n, kept, hh, dt), Mul(mm.items, mm.largest.sequence_len, mm.largest.sequence_len, dt));
  }
  // The outputs held in the encoder cache: the projected embeddings (mllama: the cross-attention
  // states of every tile position, text hidden size).
  const int64_t out_width = v.output_hidden > 0 ? v.output_hidden : s.model.hidden_size;
  mm.encoder_cache_bytes = Mul(mm.items, mm.tokens_per_item, out_width, dt);
  return mm;
}

int64_t VllmMultimodalExtra(const VllmMultimodal& mm, int64_t layer_act) {
  if (!mm.loaded || mm.items == 0) return 0;
  const int64_t peak = std::max(mm.encoder_peak_bytes, Add(mm.encoder_cache_bytes, layer_act));
  return std::max<int64_t>(0, peak - layer_act);
}

}  // namespace vramplan
