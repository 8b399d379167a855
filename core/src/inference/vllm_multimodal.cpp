#include "inference/vllm_multimodal.h"

#include <algorithm>

#include "util/checked_math.h"

namespace vramplan {
namespace {

using checked::Add;
using checked::Mul;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// vLLM's default limit_mm_per_prompt (vllm/config/multimodal.py MultiModalConfig.get_limit_per_prompt:
// 999 for a modality not given; the V0 engine's default was 1).
int64_t MmLimit(const InferenceConfig& inf) {
  if (inf.limit_mm_per_prompt >= 0) return inf.limit_mm_per_prompt;
  return inf.vllm_version == VllmVersion::kV0Engine ? 1 : 999;
}

}  // namespace

int64_t InferenceImageTokens(const Scenario& s) {
  const InferenceConfig& inf = s.inference;
  if (s.model.vision.kind == VisionKind::kNone || inf.images_per_request <= 0) return 0;
  return Mul(inf.images_per_request, DecoderTokens(TokensForImage(s.model.vision, inf.image_height, inf.image_width, inf.mm_max_pixels)));
}

VllmMultimodal VllmMultimodalProfile(const Scenario& s, int64_t mnbt, int64_t max_model_len, int64_t max_seqs, int64_t dt, int64_t tp) {
  VllmMultimodal mm;
  const VisionShape& v = s.model.vision;
  const InferenceConfig& inf = s.inference;
  const int64_t limit = MmLimit(inf);
  if (v.kind == VisionKind::kNone || limit == 0) return mm;
  mm.loaded = true;
  // The tower and projector in the checkpoint's 16-bit dtype (vLLM keeps vision encoders
  // unquantized in the usual quantized VLM checkpoints), its linears sharded over tp.
  const int64_t tower = s.model.checkpoint.vision_params + s.model.checkpoint.projector_params + s.model.checkpoint.audio_params;
  mm.tower_weight_bytes = CeilDiv(Mul(tower, 2), std::max<int64_t>(1, tp));
  mm.largest = LargestImage(v, inf.mm_max_pixels);
  mm.tokens_per_item = v.kind == VisionKind::kMllama ? mm.largest.cross_attention_states : mm.largest.llm_tokens;
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
    const int64_t budget = std::max(mnbt, mm.tokens_per_item);
    const int64_t per_prompt = std::max<int64_t>(1, std::min(limit, max_model_len / mm.tokens_per_item));
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
