#include "train/vision_memory.h"

#include <algorithm>

#include "model/cross_attention_kv.h"
#include "model/video_tokens.h"
#include "util/checked_math.h"

namespace vramplan {
namespace {

// Products of config- and scenario-sized values: checked (util/checked_math.h), so a hostile shape
// is refused as too_large instead of wrapping.
using checked::Add;
using checked::Mul;

bool HasTower(const ModelSpec& m) { return m.vision.kind != VisionKind::kNone; }

ImageTokens ImageOf(const Scenario& sc) {
  return TokensForImage(sc.model.vision, sc.train.image_height, sc.train.image_width, sc.train.image_max_pixels);
}

ImageTokens VideoOf(const Scenario& sc) {
  const TrainConfig& t = sc.train;
  return TokensForVideo(sc.model.vision, t.video_frames, t.video_height, t.video_width, t.video_max_pixels);
}

int64_t VideosPerSample(const Scenario& sc) { return TakesVideo(sc.model.vision) ? sc.train.videos_per_sample : 0; }

// One encoder layer's saved tensors over `n` positions (derived op by op from the transformers
// encoder layers: CLIPEncoderLayer, SiglipEncoderLayer, Qwen2VLVisionBlock, Qwen2_5_VLVisionBlock, Qwen3VLVisionBlock,
// PixtralAttentionLayer, Llama4VisionEncoderLayer, MllamaVisionEncoderLayer, InternVLVisionLayer,
// Glm4vVisionBlock, Kimi-VL's MoonVitEncoderLayer; pre-norm, residual
// adds save nothing):
//   LayerNorm (native_layer_norm): its input + fp32 mean and rstd per row;
//   RMSNorm (Qwen2RMSNorm / PixtralRMSNorm: x.to(fp32) * rsqrt(mean(x^2)), then weight * .to(dtype)):
//     the fp32 input, the fp32 rsqrt per row and the 16-bit product the weight multiplies;
//   attention: the q/k/v projection's input; sdpa / flash: q, k, v, the output and the fp32
//     log-sum-exp per head and row; eager: q and k (matmul), the fp32 softmax output, its 16-bit
//     copy (matmul with v) and v, per sequence s^2 x heads; then o_proj's input;
//   MLP: the first linear's input; GELU: its input and output (fc2's input); SwiGLU: gate's output
//     (silu's input), silu's output, up's output and their product (down's input).
//   CLIP's quick_gelu (x * sigmoid(1.702 x), LLaVA's towers) saves fc1's output, the sigmoid and
//   the product. In fp32 the softmax's .to(dtype) is the same tensor (saved once).
int64_t NormSaved(const VisionShape& s, int64_t n, int64_t e, bool cpu_torch113) {
  if (s.rms_norm) return Add(Mul(n, s.hidden, 4 + e), Mul(4, n), cpu_torch113 ? Mul(4, n, s.hidden) : 0);
  return Add(Mul(n, s.hidden, e), Mul(2 * (cpu_torch113 ? e : 4), n));
}

int64_t LayerSaved(const VisionShape& s, int64_t n, int64_t sum_sq, int64_t e, AttentionImpl attention, bool cpu_torch113) {
  const int64_t h = s.hidden, i = s.intermediate, a = std::max<int64_t>(1, s.heads);
  const int64_t norm = NormSaved(s, n, e, cpu_torch113);
  const int64_t nhe = Mul(n, h, e);
  int64_t attn = nhe;  // q/k/v projection input
  if (attention == AttentionImpl::kEager) {
    attn = Add(attn, Mul(3, nhe), Mul(a, sum_sq, e == 4 ? 4 : 4 + e));
  } else {
    attn = Add(attn, Mul(4, nhe), Mul(4, n, a));
  }
  attn = Add(attn, nhe);  // o_proj input
  // Qwen's (and Glm4vVisionAttention's, MoonVitEncoderLayer's wqkv) fused qkv Linear(h, 3h): v is a
  // view of its output, so the saved v keeps all 3h alive (q and k are fresh tensors after the rotary
  // embedding).
  if (s.kind == VisionKind::kQwen2Vl || s.kind == VisionKind::kQwen25Vl || s.kind == VisionKind::kQwen3Vl || s.kind == VisionKind::kGlm4v ||
      s.kind == VisionKind::kKimiVl) {
    attn = Add(attn, Mul(2, nhe));
  }
  // InternVLVisionLayer multiplies the attention and MLP outputs by the layer-scale parameters
  // lambda_1 / lambda_2 (modeling_internvl.py): each product saves its activation operand for the
  // parameter's gradient.
  if (s.kind == VisionKind::kInternVl) attn = Add(attn, Mul(2, nhe));
  // Qwen2-VL's VisionMlp runs Qwen2VLVisionConfig's hidden_act, quick_gelu by default.
  const bool quick_gelu = s.kind == VisionKind::kLlava || s.kind == VisionKind::kLlavaNext || s.kind == VisionKind::kQwen2Vl;
  const int64_t mlp = Add(nhe, Mul(s.gated_mlp ? 4 : quick_gelu ? 3 : 2, n, i, e));
  return Add(Mul(2, norm), attn, mlp);
}

// Projector / merger saved tensors over the image's `n` tower positions: its norm's input, the
// first linear's input, the activation's input and the second linear's input, each about n x h
// elements (Qwen's merger: n / m^2 rows of h m^2; LLaVA's two linears; Gemma 3's pool + norm +
// matmul): derived, 4 n h elements.
int64_t ProjectorSaved(const VisionShape& s, int64_t n, int64_t e) { return Mul(4, n, s.hidden, e); }

}  // namespace

int64_t TowerSavedBytesPerImage(const VisionShape& s, const ImageTokens& img, int64_t e, AttentionImpl attention, bool checkpointed,
                                bool cpu_torch113) {
  const int64_t n = img.patches;
  int64_t per_layer_sum = 0;
  if (checkpointed) {
    // transformers runs each vision block through _gradient_checkpointing_func when
    // gradient_checkpointing is on: a block keeps its input hidden state.
    per_layer_sum = Mul(s.layers, n, s.hidden, e);
  } else {
    const int64_t full_sq = Mul(img.sequences, img.sequence_len, img.sequence_len);
    const int64_t window_sq = img.windows > 0 ? Mul(img.windows, img.window_len, img.window_len) : full_sq;
    const int64_t full_layers = img.windows > 0 ? std::min(s.full_attention_layers, s.layers) : s.layers;
    per_layer_sum = Add(Mul(full_layers, LayerSaved(s, n, full_sq, e, attention, cpu_torch113)),
                        Mul(s.layers - full_layers, LayerSaved(s, n, window_sq, e, attention, cpu_torch113)));
  }
  // The patch embedding saves its (16-bit) pixel input for its weight's gradient; the final /
  // post norm its input.
  return Add(per_layer_sum, Mul(img.pixel_values, e), NormSaved(s, n, e, cpu_torch113));
}

int64_t VisionLlmTokens(const Scenario& sc) {
  if (!HasTower(sc.model)) return sc.train.seq_len;
  int64_t n = sc.train.seq_len;
  if (sc.train.images_per_sample > 0) n = Add(n, Mul(sc.train.images_per_sample, DecoderTokens(ImageOf(sc))));
  if (VideosPerSample(sc) > 0) n = Add(n, Mul(VideosPerSample(sc), DecoderTokens(VideoOf(sc))));
  return n;
}

VisionTrainMemory ComputeVisionTraining(const Scenario& sc, int64_t rows, const PrecisionModel& stored, const PrecisionModel& prec) {
  VisionTrainMemory v;
  const ModelSpec& m = sc.model;
  if (!HasTower(m)) return v;
  const TrainConfig& t = sc.train;
  const int64_t tower = m.checkpoint.vision_params + m.checkpoint.audio_params;
  const int64_t projector = m.checkpoint.projector_params;
  v.tower_params = tower + projector;
  // The tower stays in the 16-bit compute dtype under QLoRA (bitsandbytes quantizes the decoder's
  // linears; LLaMA-Factory and TRL's VLM recipes keep the vision tower out of the quantization).
  const int64_t weight_elem = t.method == TrainMethod::kQlora ? 2 : stored.weight;
  const bool tower_trains = !t.freeze_vision_tower;
  const bool projector_trains = !t.freeze_multi_modal_projector || tower_trains;
  v.trainable_params = (tower_trains ? tower : 0) + (!t.freeze_multi_modal_projector ? projector : 0);
  v.weight_bytes = Add(Mul(v.tower_params, weight_elem), Mul(v.trainable_params, stored.master));
  v.gradient_bytes = Mul(v.trainable_params, stored.grad);
  v.per_image = ImageOf(sc);  // reported even without images: what one would cost
  if (TakesVideo(m.vision)) v.per_video = VideoOf(sc);
  const int64_t e = prec.matmul;
  // What one image or video keeps for backward. The processor's pixel_values (fp32) travel with
  // the batch; the model casts them to its dtype. A trained projector saves its tensors; so does a
  // frozen one under a trained tower (its input needs a gradient). A frozen tower and projector save
  // nothing: their parameters and the pixel input need no gradient, so autograd records no graph
  // there (docs/training.md). A video runs through the tower as its temporal groups, each attending
  // over itself (model/video_tokens.h): the same layers over more patches.
  auto saved = [&](const ImageTokens& item) {
    int64_t bytes = Mul(item.pixel_values, 4);
    if (tower_trains) {
      bytes = Add(bytes, TowerSavedBytesPerImage(m.vision, item, e, t.attention, t.gradient_checkpointing == Checkpointing::kFull));
    }
    if (projector_trains) bytes = Add(bytes, ProjectorSaved(m.vision, item.patches, e));
    return bytes;
  };
  if (t.images_per_sample > 0) {
    v.images = Mul(rows, t.images_per_sample);
    v.image_tokens_per_sample = Mul(t.images_per_sample, DecoderTokens(v.per_image));
    v.activation_bytes = Mul(v.images, saved(v.per_image));
    // mllama: every cross-attention layer keeps the images' expanded K and V for the q gradient
    // (and k_norm's tensors when K itself needs a gradient: a trained tower or projector, or a full
    // fine-tune's k_proj). The decoder's walk counts these layers as self-attention over the text.
    const bool k_grad = tower_trains || projector_trains || t.method == TrainMethod::kFull;
    v.cross_attention_kv_bytes = TransformersCrossKvBytes(CrossAttentionOf(m), CrossAttentionStates(m, v.images), e, k_grad);
    v.activation_bytes = Add(v.activation_bytes, v.cross_attention_kv_bytes);
  }
  if (VideosPerSample(sc) > 0) {
    v.videos = Mul(rows, VideosPerSample(sc));
    v.video_tokens_per_sample = Mul(VideosPerSample(sc), DecoderTokens(v.per_video));
    v.activation_bytes = Add(v.activation_bytes, Mul(v.videos, saved(v.per_video)));
  }
  return v;
}

}  // namespace vramplan
