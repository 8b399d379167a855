#include "model/vision_shape.h"

#include <algorithm>

#include "model/internvl_tower.h"
#include "model/kimi_vl_tower.h"
#include "model/lfm2_vl_tower.h"
#include "model/vision_tower.h"

namespace vramplan {
namespace {

// An integer key of `obj`, or `fallback` (CountVisionTower has already refused bad values).
int64_t IntOr(const nlohmann::json& obj, const char* key, int64_t fallback) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return fallback;
  const double d = it->get<double>();
  return d >= 0 && d <= double(int64_t{1} << 40) ? static_cast<int64_t>(d) : fallback;
}

int64_t ArraySize(const nlohmann::json& obj, const char* key, int64_t fallback) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_array() ? static_cast<int64_t>(it->size()) : fallback;
}

}  // namespace

VisionShape ReadVisionShape(const std::string& wrapper, const nlohmann::json& config, int64_t text_hidden) {
  VisionShape s;
  auto vc_it = config.find("vision_config");
  if (vc_it == config.end() || !vc_it->is_object()) return s;
  const nlohmann::json& vc = *vc_it;
  s.output_hidden = text_hidden;
  if (wrapper == "qwen2_vl") {
    // Qwen2VLVisionConfig defaults (modeling_qwen2_vl.py Qwen2VisionTransformerPretrainedModel):
    // LayerNorm, a non-gated quick_gelu MLP of embed_dim x mlp_ratio, every block over the whole
    // image (no windows); the merger maps to vision_config.hidden_size (the text width).
    s.kind = VisionKind::kQwen2Vl;
    s.hidden = IntOr(vc, "embed_dim", 1280);
    s.layers = IntOr(vc, "depth", 32);
    auto ratio = vc.find("mlp_ratio");
    const double r = ratio != vc.end() && ratio->is_number() ? ratio->get<double>() : 4.0;
    s.intermediate = static_cast<int64_t>(static_cast<double>(s.hidden) * r);
    s.heads = IntOr(vc, "num_heads", 16);
    s.patch = IntOr(vc, "patch_size", 14);
    s.temporal_patch = IntOr(vc, "temporal_patch_size", 2);
    s.merge = IntOr(vc, "spatial_merge_size", 2);
    s.full_attention_layers = s.layers;
    s.output_hidden = IntOr(vc, "hidden_size", text_hidden);
  } else if (wrapper == "qwen2_5_vl") {
    // Qwen2_5_VLVisionConfig defaults; window attention over window_size pixels except on
    // fullatt_block_indexes (modeling_qwen2_5_vl.py Qwen2_5_VisionTransformerPretrainedModel).
    s.kind = VisionKind::kQwen25Vl;
    s.hidden = IntOr(vc, "hidden_size", 1280);
    s.layers = IntOr(vc, "depth", 32);
    s.intermediate = IntOr(vc, "intermediate_size", 3420);
    s.heads = IntOr(vc, "num_heads", 16);
    s.gated_mlp = true;
    s.rms_norm = true;
    s.patch = IntOr(vc, "patch_size", 14);
    s.temporal_patch = IntOr(vc, "temporal_patch_size", 2);
    s.merge = IntOr(vc, "spatial_merge_size", 2);
    s.window_size = IntOr(vc, "window_size", 112);
    s.full_attention_layers = ArraySize(vc, "fullatt_block_indexes", 4);
    s.output_hidden = IntOr(vc, "out_hidden_size", text_hidden);
  } else if (wrapper == "qwen3_vl" || wrapper == "qwen3_vl_moe" || wrapper == "qwen3_5" || wrapper == "qwen3_5_moe") {
    // Qwen3VLVisionConfig defaults. Qwen3.5's tower is Qwen3-VL's without deepstack mergers
    // (Qwen3_5VisionConfig subclasses Qwen3VLVisionConfig), and vLLM serves it through Qwen3-VL's
    // processing (vllm/model_executor/models/qwen3_5.py Qwen3_5ProcessingInfo(Qwen3VLProcessingInfo)).
    s.kind = VisionKind::kQwen3Vl;
    s.hidden = IntOr(vc, "hidden_size", 1152);
    s.layers = IntOr(vc, "depth", 27);
    s.intermediate = IntOr(vc, "intermediate_size", 4304);
    s.heads = IntOr(vc, "num_heads", 16);
    s.patch = IntOr(vc, "patch_size", 16);
    s.temporal_patch = IntOr(vc, "temporal_patch_size", 2);
    s.merge = IntOr(vc, "spatial_merge_size", 2);
    s.full_attention_layers = s.layers;
    s.output_hidden = IntOr(vc, "out_hidden_size", text_hidden);
  } else if (wrapper == "gemma3") {
    // SiglipVisionConfig defaults; Gemma3Config mm_tokens_per_image (256): the 64 x 64 patches of
    // an 896-pixel image average-pooled 4 x 4 (modeling_gemma3.py Gemma3MultiModalProjector).
    s.kind = VisionKind::kGemma3;
    s.hidden = IntOr(vc, "hidden_size", 768);
    s.layers = IntOr(vc, "num_hidden_layers", 12);
    s.intermediate = IntOr(vc, "intermediate_size", 3072);
    s.heads = IntOr(vc, "num_attention_heads", 12);
    s.patch = IntOr(vc, "patch_size", 16);
    s.image_size = IntOr(vc, "image_size", 224);
    s.tokens_per_image = IntOr(config, "mm_tokens_per_image", 256);
    s.full_attention_layers = s.layers;
  } else if (wrapper == "paligemma") {
    // SiglipVisionConfig defaults; PaliGemmaConfig: num_image_tokens = (image_size / patch_size)^2,
    // every patch an image token (no pooling, no CLS).
    s.kind = VisionKind::kSiglip;
    s.hidden = IntOr(vc, "hidden_size", 768);
    s.layers = IntOr(vc, "num_hidden_layers", 12);
    s.intermediate = IntOr(vc, "intermediate_size", 3072);
    s.heads = IntOr(vc, "num_attention_heads", 12);
    s.patch = std::max<int64_t>(1, IntOr(vc, "patch_size", 16));
    s.image_size = IntOr(vc, "image_size", 224);
    s.tokens_per_image = (s.image_size / s.patch) * (s.image_size / s.patch);
    s.full_attention_layers = s.layers;
  } else if (wrapper == "idefics3" || wrapper == "smolvlm") {
    // Idefics3VisionConfig defaults; the processor splits an image into tiles of image_size
    // (max_image_size) plus a global tile, each pixel-shuffled by scale_factor (merge).
    s.kind = VisionKind::kIdefics3;
    s.hidden = IntOr(vc, "hidden_size", 1152);
    s.layers = IntOr(vc, "num_hidden_layers", 12);
    s.intermediate = IntOr(vc, "intermediate_size", 3072);
    s.heads = IntOr(vc, "num_attention_heads", 16);
    s.patch = IntOr(vc, "patch_size", 32);
    s.image_size = IntOr(vc, "image_size", 224);
    s.merge = IntOr(config, "scale_factor", 2);
    s.full_attention_layers = s.layers;
  } else if (wrapper == "llava_onevision") {
    // SiglipVisionConfig keys (the Hub's so400m: 1152 wide, 26 layers, 384 px, patch 14); the
    // processor tiles the image on image_grid_pinpoints (the Hub's: 1..6 x 1..6 tiles of image_size).
    s.kind = VisionKind::kLlavaOnevision;
    s.hidden = IntOr(vc, "hidden_size", 768);
    s.layers = IntOr(vc, "num_hidden_layers", 12);
    s.intermediate = IntOr(vc, "intermediate_size", 3072);
    s.heads = IntOr(vc, "num_attention_heads", 12);
    s.patch = std::max<int64_t>(1, IntOr(vc, "patch_size", 16));
    s.image_size = IntOr(vc, "image_size", 224);
    s.max_tiles = 6;
    auto pins = config.find("image_grid_pinpoints");
    if (pins != config.end() && pins->is_array() && s.image_size > 0) {
      int64_t most = 1;
      for (const auto& pin : *pins) {
        if (!pin.is_array()) continue;
        for (const auto& side : pin) {
          if (side.is_number_integer() && side.get<int64_t>() > 0) most = std::max(most, side.get<int64_t>() / s.image_size);
        }
      }
      s.max_tiles = std::min<int64_t>(most, 16);
    }
    s.full_attention_layers = s.layers;
  } else if (wrapper == "lfm2-vl" || wrapper == "lfm2_vl") {
    // Siglip2VisionConfig keys (the layers LFM2-VL keeps); the processor settings are config.json's
    // top-level keys (Lfm2VlImageProcessor's defaults: tile_size 512, encoder_patch_size 16,
    // downsample_factor 2, min / max_image_tokens 64 / 256, min / max_tiles 2 / 10,
    // max_pixels_tolerance 2.0, use_thumbnail true, do_image_splitting true).
    s.kind = VisionKind::kLfm2Vl;
    s.hidden = IntOr(vc, "hidden_size", 768);
    s.layers = Lfm2VlTowerLayers(config);
    s.intermediate = IntOr(vc, "intermediate_size", 3072);
    s.heads = IntOr(vc, "num_attention_heads", 12);
    s.patch = std::max<int64_t>(1, IntOr(config, "encoder_patch_size", IntOr(vc, "patch_size", 16)));
    s.merge = IntOr(config, "downsample_factor", 2);
    s.image_size = IntOr(config, "tile_size", 512);
    s.tokens_per_image = std::max<int64_t>(1, IntOr(config, "max_image_tokens", 256));
    s.min_tokens = IntOr(config, "min_image_tokens", 64);
    s.min_tiles = std::max<int64_t>(1, IntOr(config, "min_tiles", 2));
    s.max_tiles = std::max<int64_t>(s.min_tiles, std::min<int64_t>(IntOr(config, "max_tiles", 10), 64));
    auto flag = [&](const char* key, bool fallback) {
      auto it = config.find(key);
      return it != config.end() && it->is_boolean() ? it->get<bool>() : fallback;
    };
    s.thumbnail = flag("use_thumbnail", true);
    auto tol = config.find("max_pixels_tolerance");
    s.split_tolerance = tol != config.end() && tol->is_number() && tol->get<double>() > 0 ? tol->get<double>() : 2.0;
    if (!flag("do_image_splitting", true)) s.split_tolerance = 0;
    s.full_attention_layers = s.layers;
  } else if (wrapper == "llava" && LlavaSiglipTower(config)) {
    // LLaVA with a SigLIP tower (LLaVA-Interleave): no CLS, so vision_feature_select_strategy
    // "default" (LlavaModel.get_image_features: selected_image_feature[:, 1:]) drops a real patch
    // and "full" keeps all (side^2) - the Hub configs of llava-interleave say "full".
    s.kind = VisionKind::kSiglip;
    s.hidden = IntOr(vc, "hidden_size", 768);
    s.layers = IntOr(vc, "num_hidden_layers", 12);
    s.intermediate = IntOr(vc, "intermediate_size", 3072);
    s.heads = IntOr(vc, "num_attention_heads", 12);
    s.patch = std::max<int64_t>(1, IntOr(vc, "patch_size", 16));
    s.image_size = IntOr(vc, "image_size", 224);
    const int64_t side = s.image_size / s.patch;
    auto strategy = config.find("vision_feature_select_strategy");
    const bool full = strategy != config.end() && strategy->is_string() && strategy->get<std::string>() == "full";
    s.tokens_per_image = std::max<int64_t>(0, side * side - (full ? 0 : 1));
    s.full_attention_layers = s.layers;
  } else if (wrapper == "llava" || wrapper == "llava_next") {
    // CLIPVisionConfig defaults (LLaVA-1.5's is image 336, patch 14).
    s.kind = wrapper == "llava" ? VisionKind::kLlava : VisionKind::kLlavaNext;
    s.hidden = IntOr(vc, "hidden_size", 768);
    s.layers = IntOr(vc, "num_hidden_layers", 12);
    s.intermediate = IntOr(vc, "intermediate_size", 3072);
    s.heads = IntOr(vc, "num_attention_heads", 12);
    s.patch = IntOr(vc, "patch_size", 32);
    s.image_size = IntOr(vc, "image_size", 224);
    // LlavaNextConfig image_grid_pinpoints default: the largest grid is 2 x 2 (672 x 672) or 3 x 1.
    s.max_tiles = wrapper == "llava" ? 1 : 5;
    s.full_attention_layers = s.layers;
  } else if (wrapper == "mistral3") {
    // PixtralVisionConfig; Mistral3Config spatial_merge_size (2); the processor's longest edge
    // (preprocessor_config.json size.longest_edge 1540 for Mistral-Small-3.1) is image_size.
    s.kind = VisionKind::kPixtral;
    s.hidden = IntOr(vc, "hidden_size", 1024);
    s.layers = IntOr(vc, "num_hidden_layers", 24);
    s.intermediate = IntOr(vc, "intermediate_size", 4096);
    s.heads = IntOr(vc, "num_attention_heads", 16);
    s.gated_mlp = true;
    s.rms_norm = true;
    s.patch = IntOr(vc, "patch_size", 16);
    s.merge = IntOr(config, "spatial_merge_size", 2);
    s.image_size = IntOr(vc, "image_size", 1024);
    s.full_attention_layers = s.layers;
  } else if (wrapper == "llama4") {
    // Llama4VisionConfig; Llama4ImageProcessorFast max_patches 16 chunks of image_size (336) plus
    // a global chunk, each (336 / 14)^2 patches pixel-shuffled by pixel_shuffle_ratio 0.5.
    s.kind = VisionKind::kLlama4;
    s.hidden = IntOr(vc, "hidden_size", 768);
    s.layers = IntOr(vc, "num_hidden_layers", 34);
    s.intermediate = IntOr(vc, "intermediate_size", 5632);
    s.heads = IntOr(vc, "num_attention_heads", 16);
    s.patch = IntOr(vc, "patch_size", 14);
    s.image_size = IntOr(vc, "image_size", 448);
    s.max_tiles = 16;
    s.full_attention_layers = s.layers;
    s.output_dim = IntOr(vc, "vision_output_dim", 7680);
  } else if (wrapper == "mllama") {
    // MllamaVisionConfig: tiles of image_size (560), max_num_tiles (4); local + global layers.
    s.kind = VisionKind::kMllama;
    s.hidden = IntOr(vc, "hidden_size", 1280);
    s.layers = IntOr(vc, "num_hidden_layers", 32) + IntOr(vc, "num_global_layers", 8);
    s.intermediate = IntOr(vc, "intermediate_size", 5120);
    s.heads = IntOr(vc, "attention_heads", IntOr(vc, "num_attention_heads", 16));
    s.patch = IntOr(vc, "patch_size", 14);
    s.image_size = IntOr(vc, "image_size", 448);
    s.max_tiles = std::max<int64_t>(1, IntOr(vc, "max_num_tiles", 4));
    s.full_attention_layers = s.layers;
    s.output_dim = IntOr(vc, "vision_output_dim", 7680);
  } else if (wrapper == "internvl") {
    // InternVLVisionConfig defaults (InternViT-300M: 448 px tiles of 14-pixel patches, a CLS token);
    // the processor tiles each image into up to max_patches (GotOcr2ImageProcessor's 12) tiles plus
    // a thumbnail, and the pixel shuffle folds int(1 / downsample_ratio)^2 patches into a token.
    s.kind = VisionKind::kInternVl;
    s.hidden = IntOr(vc, "hidden_size", 1024);
    s.layers = IntOr(vc, "num_hidden_layers", 24);
    s.intermediate = IntOr(vc, "intermediate_size", 4096);
    s.heads = IntOr(vc, "num_attention_heads", 16);
    auto nt = vc.find("norm_type");
    s.rms_norm = nt != vc.end() && nt->is_string() && nt->get<std::string>() == "rms_norm";
    s.patch = VisionConfigSide(vc, "patch_size", 14);
    s.image_size = VisionConfigSide(vc, "image_size", 448);
    s.merge = InternVlShuffle(config);
    s.max_tiles = 12;
    s.full_attention_layers = s.layers;
  } else if (wrapper == "kimi_vl") {
    // MoonViTConfig keys (defaults: 1152 wide, 27 layers, 16 heads, MLP 4304, patch 14, merge 2 x 2):
    // LayerNorm, a GELU (tanh) MLP, every image one attention sequence at its own resolution. The
    // processor's in_token_limit (KimiVLImageProcessor; 4096 in Kimi-VL-A3B-Instruct's
    // preprocessor_config.json) is not in config.json: 4096 here.
    s.kind = VisionKind::kKimiVl;
    s.hidden = IntOr(vc, "hidden_size", 1152);
    s.layers = IntOr(vc, "num_hidden_layers", 27);
    s.intermediate = IntOr(vc, "intermediate_size", 4304);
    s.heads = IntOr(vc, "num_attention_heads", 16);
    s.patch = IntOr(vc, "patch_size", 14);
    s.merge = KimiVlMergeKernel(vc, 0);
    s.patch_limit = 4096;
    s.full_attention_layers = s.layers;
  } else if (wrapper == "aya_vision") {
    // SiglipVisionConfig keys (Aya Vision 8B: so400m at 364 px, patch 14); AyaVisionConfig
    // downsample_factor (2) is the pixel shuffle; the processor (GotOcr2ImageProcessor, crop_to_patches)
    // tiles an image into up to max_patches 12 tiles of image_size plus a thumbnail.
    s.kind = VisionKind::kAyaVision;
    s.hidden = IntOr(vc, "hidden_size", 768);
    s.layers = IntOr(vc, "num_hidden_layers", 12);
    s.intermediate = IntOr(vc, "intermediate_size", 3072);
    s.heads = IntOr(vc, "num_attention_heads", 12);
    s.patch = IntOr(vc, "patch_size", 16);
    s.image_size = IntOr(vc, "image_size", 224);
    s.merge = IntOr(config, "downsample_factor", 2);
    s.max_tiles = 12;
    s.full_attention_layers = s.layers;
  } else if (wrapper == "glm4v" || wrapper == "glm4v_moe") {
    // Glm4vVisionConfig defaults (Glm4vMoeVisionConfig's are the same): the blocks' SwiGLU MLP is
    // out_hidden_size wide (Glm4VisionMlp), RMSNorm, a fused qkv, every block over the whole image;
    // Glm4vImageProcessor's smart_resize on the 28-pixel grid, 2 x 2 patches a token.
    s.kind = VisionKind::kGlm4v;
    s.hidden = IntOr(vc, "hidden_size", 1536);
    s.layers = IntOr(vc, "depth", 24);
    s.intermediate = IntOr(vc, "out_hidden_size", 4096);
    s.heads = IntOr(vc, "num_heads", 12);
    s.gated_mlp = true;
    s.rms_norm = true;
    s.patch = VisionConfigSide(vc, "patch_size", 14);
    s.temporal_patch = IntOr(vc, "temporal_patch_size", 2);
    s.merge = IntOr(vc, "spatial_merge_size", 2);
    s.image_size = VisionConfigSide(vc, "image_size", 336);
    s.full_attention_layers = s.layers;
    s.output_hidden = IntOr(vc, "out_hidden_size", text_hidden);
  } else if (wrapper == "gemma4") {
    // Gemma4VisionConfig; soft tokens per image from the config (vision_soft_tokens_per_image),
    // each pooled from 3 x 3 patches (approximate: docs/models.md "Image inputs").
    s.kind = VisionKind::kGemma4;
    s.hidden = IntOr(vc, "hidden_size", 768);
    s.layers = IntOr(vc, "num_hidden_layers", 16);
    s.intermediate = IntOr(vc, "intermediate_size", 3072);
    s.heads = IntOr(vc, "num_attention_heads", 12);
    s.gated_mlp = true;
    s.rms_norm = true;
    s.patch = IntOr(vc, "patch_size", 16);
    s.tokens_per_image = IntOr(config, "vision_soft_tokens_per_image", 280);
    s.merge = 3;
    s.full_attention_layers = s.layers;
  } else if (wrapper == "gemma3n") {
    // MobileNetV5 (model/gemma3n_towers.h) is a CNN: none of the ViT fields describe it. What the
    // image terms need: the processor's fixed 768 x 768 input (convert_gemma3n_weights.py main():
    // SiglipImageProcessorFast size 768 x 768; timm's mobilenetv5_300m_enc input_size), the 16 x 16 grid of 2048-wide
    // features the fusion adapter emits (one per 48 x 48 pixels), vision_soft_tokens_per_image of
    // them in the prompt (Gemma3nConfig default 256).
    s.kind = VisionKind::kGemma3n;
    s.hidden = IntOr(vc, "hidden_size", 2048);
    s.image_size = 768;
    s.patch = 48;
    s.tokens_per_image = IntOr(config, "vision_soft_tokens_per_image", 256);
    s.rms_norm = true;
  }
  // Divisors stay positive whatever a pasted config says (0 is accepted by some counting reads).
  s.patch = std::max<int64_t>(1, s.patch);
  s.merge = std::max<int64_t>(1, s.merge);
  s.temporal_patch = std::max<int64_t>(1, s.temporal_patch);
  s.heads = std::max<int64_t>(1, s.heads);
  s.image_size = std::max<int64_t>(1, s.image_size);
  return s;
}

}  // namespace vramplan
