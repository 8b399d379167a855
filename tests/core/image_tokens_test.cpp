// Image tokens per image (model/image_tokens.cpp) from the processors' code, hand-worked per
// family, and the tower shapes the presets read (model/vision_shape.cpp).
#include <gtest/gtest.h>

#include "model/hf_config.h"
#include "model/image_tokens.h"
#include "qwen_vl_tower_shapes.h"
#include "test_support.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace image_tokens_test {

using testing_support::Qwen25VlTower;
using testing_support::Qwen3VlTower;

TEST(ImageTokens, Qwen25VlSmartResize) {
  // 1024 / 28 = 36.57 -> 37 -> 1036 px a side; 74 x 74 patches, 37 x 37 tokens; windows of 4 x 4
  // merged tokens (112 / 2 / 14) over the 37 x 37 grid: 10 x 10.
  ImageTokens t = TokensForImage(Qwen25VlTower(), 1024, 1024);
  EXPECT_EQ(t.patches, 5476);
  EXPECT_EQ(t.llm_tokens, 1369);
  // + <|vision_start|> / <|vision_end|> (LLaMA-Factory mm_plugin.py Qwen2VLPlugin.process_messages)
  EXPECT_EQ(t.markup_tokens, 2);
  EXPECT_EQ(DecoderTokens(t), 1371);
  EXPECT_EQ(t.windows, 100);
  EXPECT_EQ(t.window_len, 64);
  EXPECT_EQ(t.pixel_values, 5476 * 3 * 2 * 14 * 14);
  // LLaMA-Factory's image_max_pixels 768 x 768: beta = sqrt(1024^2 / 589,824) = 4/3;
  // floor(1024 / beta / 28) = 27 -> 756 px: 54 x 54 patches, 729 tokens.
  t = TokensForImage(Qwen25VlTower(), 1024, 1024, 589824);
  EXPECT_EQ(t.patches, 2916);
  EXPECT_EQ(t.llm_tokens, 729);
  // Below min_pixels (3,136): 20 x 20 -> ceil(20 x 2.8 / 28) x 28 = 56 a side: 4 x 4 patches, 4 tokens.
  t = TokensForImage(Qwen25VlTower(), 20, 20);
  EXPECT_EQ(t.llm_tokens, 4);
  // The largest image (vLLM's profile): max_pixels 12,845,056 = 3584^2: 256 x 256 patches, 16,384 tokens.
  EXPECT_EQ(LargestImage(Qwen25VlTower()).llm_tokens, 16384);
  // max_pixels 28 x 28 x 1280 = 1,003,520: floor(1001.76 / 28) x 28 = 980 a side, 35 x 35 tokens.
  EXPECT_EQ(LargestImage(Qwen25VlTower(), 1003520).llm_tokens, 1225);
}

TEST(ImageTokens, Qwen3VlPatch16) {
  const VisionShape s = Qwen3VlTower();
  ImageTokens t = TokensForImage(s, 1024, 1024);  // factor 32: 64 x 64 patches, 32 x 32 tokens
  EXPECT_EQ(t.patches, 4096);
  EXPECT_EQ(t.llm_tokens, 1024);
  EXPECT_EQ(DecoderTokens(t), 1026);  // the same two markup tokens as Qwen2.5-VL
  EXPECT_EQ(t.windows, 0);
  EXPECT_EQ(LargestImage(s).llm_tokens, 16384);  // longest_edge 16,777,216 = 4096^2
}

TEST(ImageTokens, FixedTowers) {
  VisionShape llava;
  llava.kind = VisionKind::kLlava;
  llava.patch = 14; llava.image_size = 336;
  ImageTokens t = TokensForImage(llava, 1024, 768);
  EXPECT_EQ(t.llm_tokens, 576);  // 24 x 24, the CLS dropped (vision_feature_select_strategy "default")
  EXPECT_EQ(t.markup_tokens, 0);  // processing_llava.py: "<image>" becomes the 576 features alone
  EXPECT_EQ(t.patches, 577);
  VisionShape gemma3;
  gemma3.kind = VisionKind::kGemma3;
  gemma3.patch = 14; gemma3.image_size = 896; gemma3.tokens_per_image = 256;
  t = TokensForImage(gemma3, 1024, 1024);
  EXPECT_EQ(t.llm_tokens, 256);
  EXPECT_EQ(t.patches, 4096);  // 64 x 64, pooled 4 x 4
  // processing_gemma3.py full_image_sequence: "\n\n", <start_of_image>, 256 soft tokens,
  // <end_of_image>, "\n\n" (one token each).
  EXPECT_EQ(DecoderTokens(t), 260);
  VisionShape gemma4;
  gemma4.kind = VisionKind::kGemma4;
  gemma4.patch = 16; gemma4.merge = 3; gemma4.tokens_per_image = 280;
  t = TokensForImage(gemma4, 1024, 1024);
  EXPECT_EQ(t.llm_tokens, 280);
  EXPECT_EQ(DecoderTokens(t), 282);  // processing_gemma4.py replace_image_token: boi + 280 + eoi
}

TEST(ImageTokens, LlavaNextAnyres) {
  VisionShape s;
  s.kind = VisionKind::kLlavaNext;
  s.patch = 14; s.image_size = 336;
  // Square: the 672 x 672 grid, 48 x 48 features, nothing unpadded, + 48 newlines + the 576 base.
  ImageTokens t = TokensForImage(s, 1024, 1024);
  EXPECT_EQ(t.llm_tokens, 48 * 48 + 48 + 576);
  EXPECT_EQ(t.patches, 5 * 577);
  // 800 wide x 600 high: the 672 x 672 grid keeps the most (672 x 504); the padding rows go:
  // new height int(600 x 48 / 800) = 36, 36 x 48 + 36 + 576.
  t = TokensForImage(s, 600, 800);
  EXPECT_EQ(t.llm_tokens, 36 * 48 + 36 + 576);
}

TEST(ImageTokens, PixtralRowsWithBreaks) {
  VisionShape s;
  s.kind = VisionKind::kPixtral;
  s.patch = 14; s.merge = 2; s.image_size = 1540;
  // 1024 px: 74 patches a side (ceil), 37 rows of 37 [IMG] + one [IMG_BREAK] / [IMG_END] each.
  ImageTokens t = TokensForImage(s, 1024, 1024);
  EXPECT_EQ(t.patches, 74 * 74);
  EXPECT_EQ(t.llm_tokens, 37 * 37 + 37);
  // 3080 x 1540 is scaled by 2 to fit the 1540 longest edge: 770 x 1540 -> 55 x 110 patches.
  t = TokensForImage(s, 1540, 3080);
  EXPECT_EQ(t.patches, 55 * 110);
  EXPECT_EQ(t.llm_tokens, 27 * 55 + 27);
}

TEST(ImageTokens, TiledCanvases) {
  VisionShape l4;
  l4.kind = VisionKind::kLlama4;
  l4.patch = 14; l4.image_size = 336; l4.max_tiles = 16;
  // 1024 px: the smallest canvas holding it is 4 x 4 chunks (1344); + the global chunk: 17 x 144
  // tokens + 16 tile separators + image_start / image / image_end.
  ImageTokens t = TokensForImage(l4, 1024, 1024);
  EXPECT_EQ(t.llm_tokens, 17 * 144 + 16 + 3);
  EXPECT_EQ(t.patches, 17 * 577);
  t = TokensForImage(l4, 336, 336);  // one chunk, no global chunk
  EXPECT_EQ(t.llm_tokens, 144 + 3);
  t = TokensForImage(l4, 300, 700);  // 1 x 3 chunks (336 x 1008): the smallest upscale
  EXPECT_EQ(t.sequences, 4);
  VisionShape ml;
  ml.kind = VisionKind::kMllama;
  ml.patch = 14; ml.image_size = 560; ml.max_tiles = 4;
  // Every image padded to 4 tiles of 1601 positions (1608 with the padding to a multiple of 8);
  // one <|image|> token in the text.
  t = TokensForImage(ml, 1024, 1024);
  EXPECT_EQ(t.llm_tokens, 1);
  EXPECT_EQ(t.patches, 4 * 1608);
  EXPECT_EQ(t.cross_attention_states, 4 * 1601);
}

// The wrappers read from tests/fixtures/param_counts.json rows: their tower shape and the tokens of
// one image, worked by hand from the processors (docs/models.md "Image inputs").
TEST(ImageTokens, Qwen2VlPaliGemmaIdefics3FromTheirConfigs) {
  nlohmann::json table = testing_support::LoadFixture("param_counts.json");
  const auto shape_of = [&](const std::string& id) {
    for (const auto& row : table["models"]) {
      if (row["id"] != id) continue;
      Issues warnings;
      auto spec = ModelSpecFromHfConfig(row["config"], "model", &warnings);
      EXPECT_TRUE(spec.ok()) << id;
      for (const Issue& w : warnings) EXPECT_NE(w.code, "text_model_only") << id << ": " << w.message;
      return spec.ok() ? spec.value().vision : VisionShape{};
    }
    ADD_FAILURE() << id << " not in param_counts.json";
    return VisionShape{};
  };
  // Qwen2-VL: Qwen2.5-VL's smart_resize (1024 -> 1036 a side, 74 x 74 patches, 37 x 37 tokens), no windows,
  // a LayerNorm tower with a quick_gelu MLP of 1280 x 4.
  VisionShape q = shape_of("Qwen/Qwen2-VL-7B-Instruct");
  EXPECT_EQ(q.kind, VisionKind::kQwen2Vl);
  EXPECT_EQ(q.intermediate, 5120);
  EXPECT_FALSE(q.gated_mlp);
  EXPECT_FALSE(q.rms_norm);
  ImageTokens t = TokensForImage(q, 1024, 1024);
  EXPECT_EQ(t.patches, 5476);
  EXPECT_EQ(t.llm_tokens, 1369);
  EXPECT_EQ(t.markup_tokens, 2);
  EXPECT_EQ(t.windows, 0);
  EXPECT_EQ(LargestImage(q).llm_tokens, 16384);
  // PaliGemma 224: (224 / 14)^2 = 256 patches, each a token, no markup.
  VisionShape pg = shape_of("google/paligemma2-3b-mix-224");
  EXPECT_EQ(pg.kind, VisionKind::kSiglip);
  t = TokensForImage(pg, 1024, 768);
  EXPECT_EQ(t.patches, 256);
  EXPECT_EQ(t.llm_tokens, 256);
  EXPECT_EQ(t.markup_tokens, 0);
  EXPECT_EQ(LargestImage(pg).llm_tokens, 256);
  // SmolVLM-256M (tiles of 512, patch 16, scale_factor 4: 32^2 / 16 = 64 tokens a tile). 1024 x 1024
  // -> longest edge 2048 -> 4 x 4 tiles + the global one: 17 x 64 = 1,088 tokens; markup 2 x 16 +
  // 4 rows + 3 = 39; the tower runs 17 sequences of 1,024 patches.
  VisionShape sm = shape_of("HuggingFaceTB/SmolVLM-256M-Instruct");
  EXPECT_EQ(sm.kind, VisionKind::kIdefics3);
  t = TokensForImage(sm, 1024, 1024);
  EXPECT_EQ(t.llm_tokens, 1088);
  EXPECT_EQ(t.markup_tokens, 39);
  EXPECT_EQ(t.sequences, 17);
  EXPECT_EQ(t.sequence_len, 1024);
  EXPECT_EQ(t.patches, 17 * 1024);
  EXPECT_EQ(t.pixel_values, 17 * 3 * 512 * 512);
  // 640 wide x 480 high: width 2048, height int(2048 / (4 / 3)) = 1536 (even); tiles 4 wide x 3 high
  // + global = 13 x 64 = 832 tokens, markup 2 x 12 + 3 + 3 = 30.
  t = TokensForImage(sm, 480, 640);
  EXPECT_EQ(t.llm_tokens, 832);
  EXPECT_EQ(t.markup_tokens, 30);
  // 1000 x 300 (h x w): height 2048, width int(2048 x 0.3) = 614 -> 614 (even); vision-encoder
  // resize: height 2048, width int(2048 x 0.3) = 614 rounded up to 1024: 4 rows x 2 cols + 1 = 9 tiles.
  t = TokensForImage(sm, 1000, 300);
  EXPECT_EQ(t.llm_tokens, 9 * 64);
  EXPECT_EQ(t.markup_tokens, 2 * 8 + 4 + 3);
  EXPECT_EQ(LargestImage(sm).llm_tokens, 1088);
  // SmolVLM2-2.2B: tiles of 384, patch 14, scale_factor 3: 27^2 / 9 = 81 tokens a tile (the processor's
  // image_seq_len); 1024 x 1024 -> 1536 a side, 4 x 4 + 1 tiles.
  VisionShape sm2 = shape_of("HuggingFaceTB/SmolVLM2-2.2B-Instruct");
  EXPECT_EQ(sm2.kind, VisionKind::kIdefics3);
  t = TokensForImage(sm2, 1024, 1024);
  EXPECT_EQ(t.llm_tokens, 17 * 81);
  EXPECT_EQ(t.sequence_len, 729);
  // LLaVA-Interleave: SigLIP 384 / 14 = 27 a side, "full" keeps all 729 patches; no CLS position.
  VisionShape li = shape_of("llava-hf/llava-interleave-qwen-0.5b-hf");
  EXPECT_EQ(li.kind, VisionKind::kSiglip);
  t = TokensForImage(li, 1024, 1024);
  EXPECT_EQ(t.llm_tokens, 729);
  EXPECT_EQ(t.patches, 729);
  EXPECT_EQ(t.markup_tokens, 0);
}

// InternVL (processing_internvl.py with GotOcr2ImageProcessor's get_optimal_tiled_canvas, worked by hand):
// 448-pixel tiles of 32 x 32 patches + CLS, 256 tokens each after the pixel shuffle, <img> / </img> markup.
TEST(ImageTokens, InternVlDynamicTiles) {
  nlohmann::json table = testing_support::LoadFixture("param_counts.json");
  VisionShape s;
  for (const auto& row : table["models"]) {
    if (row["id"] != "OpenGVLab/InternVL3-1B-hf") continue;
    Issues warnings;
    auto spec = ModelSpecFromHfConfig(row["config"], "model", &warnings);
    ASSERT_TRUE(spec.ok());
    s = spec.value().vision;
  }
  ASSERT_EQ(s.kind, VisionKind::kInternVl);
  // 1024 x 1024: ratio 1; grids (1, 1), (2, 2), (3, 3) tie at difference 0 and each later one wins while
  // 1,048,576 > 0.5 x 448^2 x c r (401,408 for 2 x 2, 903,168 for 3 x 3): 9 tiles + the thumbnail.
  ImageTokens t = TokensForImage(s, 1024, 1024);
  EXPECT_EQ(t.llm_tokens, 10 * 256);
  EXPECT_EQ(t.markup_tokens, 2);
  EXPECT_EQ(t.sequences, 10);
  EXPECT_EQ(t.sequence_len, 1025);
  EXPECT_EQ(t.patches, 10 * 1025);
  EXPECT_EQ(t.pixel_values, 10 * 3 * 448 * 448);
  // 448 x 448: the 2 x 2 grid ties but 200,704 < 401,408 keeps (1, 1): one tile, no thumbnail.
  t = TokensForImage(s, 448, 448);
  EXPECT_EQ(t.llm_tokens, 256);
  EXPECT_EQ(t.sequences, 1);
  // 480 high x 640 wide: ratio 1.333; (1, 1) 0.333, (2, 1) 0.667, (3, 2) 0.167, (4, 3) 0: 12 + 1 tiles.
  t = TokensForImage(s, 480, 640);
  EXPECT_EQ(t.llm_tokens, 13 * 256);
  // 300 high x 1000 wide: ratio 3.333; (3, 1) differs by 0.333, (6, 2) ties later but 300,000 < 0.5 x 448^2 x 12
  // keeps (3, 1): 3 tiles + the thumbnail.
  t = TokensForImage(s, 300, 1000);
  EXPECT_EQ(t.llm_tokens, 4 * 256);
  EXPECT_EQ(LargestImage(s).llm_tokens, 13 * 256);
}

// GLM-4.1V / GLM-4.5V (image_processing_glm4v.py smart_resize with num_frames 2, worked by hand).
TEST(ImageTokens, Glm4vSmartResize) {
  nlohmann::json table = testing_support::LoadFixture("param_counts.json");
  for (const char* id : {"zai-org/GLM-4.1V-9B-Thinking", "zai-org/GLM-4.5V"}) {
    VisionShape s;
    for (const auto& row : table["models"]) {
      if (row["id"] != id) continue;
      Issues warnings;
      auto spec = ModelSpecFromHfConfig(row["config"], "model", &warnings);
      ASSERT_TRUE(spec.ok()) << id;
      s = spec.value().vision;
    }
    ASSERT_EQ(s.kind, VisionKind::kGlm4v) << id;
    // 1024 / 28 = 36.57 -> 37: 1036 x 1036, 2 x 1036^2 = 2,146,592 within [12,544, 9,633,792]: 74 x 74 patches,
    // 37 x 37 tokens + <|begin_of_image|> / <|end_of_image|>.
    ImageTokens t = TokensForImage(s, 1024, 1024);
    EXPECT_EQ(t.patches, 5476);
    EXPECT_EQ(t.llm_tokens, 1369);
    EXPECT_EQ(t.markup_tokens, 2);
    EXPECT_EQ(t.pixel_values, 5476 * 3 * 2 * 14 * 14);
    // 4000 x 3000 (h x w): 143 x 28 by 107 x 28 gives 2 x 4004 x 2996 > 9,633,792; beta = sqrt(2 x 12e6 / 9,633,792)
    // = 1.5784: floor(4000 / 1.5784 / 28) = 90, floor(3000 / 1.5784 / 28) = 67 -> 180 x 134 patches, 90 x 67 tokens.
    t = TokensForImage(s, 4000, 3000);
    EXPECT_EQ(t.llm_tokens, 90 * 67);
    // 50 x 50: 2 x 56^2 = 6,272 < 12,544; beta = sqrt(12,544 / 5,000) = 1.584: ceil(50 x 1.584 / 28) = 3 -> 84 x 84,
    // 6 x 6 patches, 9 tokens.
    t = TokensForImage(s, 50, 50);
    EXPECT_EQ(t.llm_tokens, 9);
    // The largest: a square at the cap, floor(sqrt(4,816,896) / 28) = 78 -> 2184 a side, 156^2 patches.
    EXPECT_EQ(LargestImage(s).llm_tokens, 78 * 78);
  }
}

// LLaVA-OneVision (processing_llava_onevision.py _get_number_of_features / _get_unpadded_features,
// worked by hand): SigLIP 384 px / 14 = 27 x 27 = 729 features a tile, pinpoints 1..6 x 1..6 tiles.
TEST(ImageTokens, LlavaOnevisionAnyresMax9) {
  VisionShape s;
  s.kind = VisionKind::kLlavaOnevision;
  s.patch = 14;
  s.image_size = 384;
  s.max_tiles = 6;
  // 1024 x 1024: the smallest pinpoint holding it is 1152 x 1152 (3 x 3); 81 x 81 features, no padding
  // (equal aspect: new_width int(1024 x 81 / 1024) = 81), ratio sqrt(6561 / (9 x 729)) = 1 <= 1.1:
  // 6561 + 81 newlines + 729 base = 7,371; the tower runs 9 + 1 tiles of 729.
  ImageTokens t = TokensForImage(s, 1024, 1024);
  EXPECT_EQ(t.llm_tokens, 7371);
  EXPECT_EQ(t.sequences, 10);
  EXPECT_EQ(t.patches, 10 * 729);
  EXPECT_EQ(t.pixel_values, 10 * 3 * 384 * 384);
  // 500 high x 1000 wide: 768 x 1152 (2 x 3 tiles) holds it with the least waste; 54 x 81 features, the
  // aspect 2 > 1.5 so new_height int(500 x 81 / 1000) = 40, padding (54 - 40) / 2 = 7 -> 40 rows:
  // 40 x 81 + 40 + 729 = 4,009; 7 tiles.
  t = TokensForImage(s, 500, 1000);
  EXPECT_EQ(t.llm_tokens, 4009);
  EXPECT_EQ(t.sequences, 7);
  // The largest: 2304 x 2304 (6 x 6): 162 x 162 features, ratio sqrt(26,244 / 6,561) = 2 > 1.1, so
  // floor(162 / 2) = 81 a side: 6561 + 81 + 729 = 7,371 (the paper's 729 x (9 + 1) at most), 37 tiles.
  t = LargestImage(s);
  EXPECT_EQ(t.llm_tokens, 7371);
  EXPECT_EQ(t.sequences, 37);
}

// LFM2-VL (image_processing_lfm2_vl_fast.py smart_resize / _is_image_too_large / crop_image_to_patches,
// processing_lfm2_vl.py expand_text_with_placeholders; worked by hand) with LFM2-VL-450M's config.json:
// encoder_patch_size 16 x downsample_factor 2 = 32-pixel units, 64..256 tokens, tiles of 512, 2..10 tiles,
// max_pixels_tolerance 2, use_thumbnail false.
TEST(ImageTokens, Lfm2VlSmartResizeAndTiles) {
  nlohmann::json table = testing_support::LoadFixture("param_counts.json");
  VisionShape s;
  for (const auto& row : table["models"]) {
    if (row["id"] != "LiquidAI/LFM2-VL-450M") continue;
    Issues warnings;
    auto spec = ModelSpecFromHfConfig(row["config"], "model", &warnings);
    ASSERT_TRUE(spec.ok());
    s = spec.value().vision;
  }
  ASSERT_EQ(s.kind, VisionKind::kLfm2Vl);
  // 500 high x 300 wide: round(15.625) = 16 and round(9.375) = 9 units -> 512 x 288 = 147,456 pixels, within
  // [64, 256] x 32^2 and below the split bound 256 x 32^2 x 2 = 524,288: one image of 16 x 9 = 144 tokens
  // + <|image_start|> / <|image_end|>.
  ImageTokens t = TokensForImage(s, 500, 300);
  EXPECT_EQ(t.llm_tokens, 144);
  EXPECT_EQ(t.markup_tokens, 2);
  EXPECT_EQ(t.sequences, 1);
  EXPECT_EQ(t.sequence_len, 1024);  // padded to max_num_patches = max(256 x 2^2, (512 / 16)^2)
  // 1024 x 1024: 1,048,576 > 524,288, so split: aspect 1 -> the 2 x 2 grid (3 x 3 ties, but 1024^2 is not
  // above half of 9 x 512^2); 4 tiles x (512 / 32)^2 = 1,024 tokens, no thumbnail; markup start + 4 tile
  // tokens + end.
  t = TokensForImage(s, 1024, 1024);
  EXPECT_EQ(t.llm_tokens, 1024);
  EXPECT_EQ(t.markup_tokens, 6);
  EXPECT_EQ(t.sequences, 4);
  EXPECT_EQ(t.patches, 4 * 1024);
  // The most tiles: a 10 x 1 grid, 2,560 tokens and 10 tile tokens.
  t = LargestImage(s);
  EXPECT_EQ(t.llm_tokens, 2560);
  EXPECT_EQ(t.markup_tokens, 12);
  // use_thumbnail (Lfm2VlImageProcessor's default): the smart-resized image follows the tiles: 1024 x 1024
  // scaled by sqrt(1024^2 / 262,144) = 2 to 512 x 512, 256 more tokens and <|img_thumbnail|>.
  s.thumbnail = true;
  t = TokensForImage(s, 1024, 1024);
  EXPECT_EQ(t.llm_tokens, 1024 + 256);
  EXPECT_EQ(t.markup_tokens, 7);
  EXPECT_EQ(t.sequences, 5);
}

VisionShape ShapeOfRow(const char* id) {
  nlohmann::json table = testing_support::LoadFixture("param_counts.json");
  for (const auto& row : table["models"]) {
    if (row["id"] != id) continue;
    Issues warnings;
    auto spec = ModelSpecFromHfConfig(row["config"], "model", &warnings);
    if (spec.ok()) return spec.value().vision;
  }
  return {};
}

// Aya Vision (processing_aya_vision.py over GotOcr2ImageProcessor's crop_to_patches, worked by hand):
// 364-pixel tiles of 26 x 26 SigLIP patches (no CLS), 13 x 13 = 169 tokens each after the 2 x 2 shuffle;
// markup <|START_OF_IMG|>, TILE_1 .. TILE_(n-1), TILE_GLOBAL, <|END_OF_IMG|>.
TEST(ImageTokens, AyaVisionTilesOf169) {
  const VisionShape s = ShapeOfRow("CohereLabs/aya-vision-8b");
  ASSERT_EQ(s.kind, VisionKind::kAyaVision);
  // 1024 x 1024: (1, 1), (2, 2), (3, 3) tie at difference 0; each later one wins while 1,048,576 exceeds
  // 0.5 x 364^2 x c r (264,992 for 2 x 2, 596,232 for 3 x 3): 9 crops + the thumbnail.
  ImageTokens t = TokensForImage(s, 1024, 1024);
  EXPECT_EQ(t.llm_tokens, 10 * 169);
  EXPECT_EQ(t.markup_tokens, 12);
  EXPECT_EQ(t.sequences, 10);
  EXPECT_EQ(t.sequence_len, 676);
  EXPECT_EQ(t.patches, 10 * 676);
  EXPECT_EQ(t.pixel_values, 10 * 3 * 364 * 364);
  // 364 x 364: 132,496 is not above 264,992, so (1, 1): the global tile alone, START + TILE_GLOBAL + END.
  t = TokensForImage(s, 364, 364);
  EXPECT_EQ(t.llm_tokens, 169);
  EXPECT_EQ(t.markup_tokens, 3);
  // The largest: a 4:3 image fills the 4 x 3 grid, 12 crops + the thumbnail.
  t = LargestImage(s);
  EXPECT_EQ(t.llm_tokens, 13 * 169);
  EXPECT_EQ(t.markup_tokens, 15);
}

// Kimi-VL (vLLM kimi_vl.py KimiVLProcessingInfo.get_num_image_tokens, worked by hand): in_token_limit
// 4096 patches of 14 px, sides padded to 28, 2 x 2 patches a token, one tower sequence per image.
TEST(ImageTokens, KimiVlTokenLimitAndPadding) {
  const VisionShape s = ShapeOfRow("moonshotai/Kimi-VL-A3B-Instruct");
  ASSERT_EQ(s.kind, VisionKind::kKimiVl);
  // 500 high x 300 wide: 35 x 21 = 735 patches, under the limit; 500 -> 504 and 300 -> 308 px:
  // 36 x 22 patches, 18 x 11 tokens.
  ImageTokens t = TokensForImage(s, 500, 300);
  EXPECT_EQ(t.patches, 36 * 22);
  EXPECT_EQ(t.llm_tokens, 198);
  EXPECT_EQ(t.markup_tokens, 4);  // <|media_start|> image <|media_content|> ... <|media_end|>
  EXPECT_EQ(t.sequences, 1);
  EXPECT_EQ(t.sequence_len, 792);
  EXPECT_EQ(t.pixel_values, 792 * 3 * 14 * 14);
  // 1024 x 1024 (vLLM's dummy image, the largest it profiles): 73 x 73 = 5,329 > 4,096, scale 64 / 73:
  // int(1024 x 64 / 73) = 897 a side, padded to 924: 66 x 66 patches, 33 x 33 = 1,089 tokens.
  t = TokensForImage(s, 1024, 1024);
  EXPECT_EQ(t.patches, 66 * 66);
  EXPECT_EQ(t.llm_tokens, 1089);
  EXPECT_EQ(LargestImage(s).llm_tokens, 1089);
  // 2000 high x 1000 wide: 142 x 71 = 10,082 patches, scale sqrt(4096 / 10082) = 0.63739: 1274 x 637 px,
  // padded to 1288 x 644: 92 x 46 patches, 46 x 23 = 1,058 tokens.
  t = TokensForImage(s, 2000, 1000);
  EXPECT_EQ(t.patches, 92 * 46);
  EXPECT_EQ(t.llm_tokens, 1058);
}

TEST(ImageTokens, PresetsReadTheirTowerShape) {
  struct Row {
    const char* id;
    VisionKind kind;
    int64_t tokens_1024;
  };
  const Row rows[] = {
      {"Qwen/Qwen2.5-VL-7B-Instruct", VisionKind::kQwen25Vl, 1369},
      {"Qwen/Qwen3-VL-8B-Instruct", VisionKind::kQwen3Vl, 1024},
      {"Qwen/Qwen3.5-27B", VisionKind::kQwen3Vl, 1024},  // Qwen3-VL's patch 16, merge 2
      {"Qwen/Qwen3.5-35B-A3B", VisionKind::kQwen3Vl, 1024},
      {"llava-hf/llava-1.5-7b-hf", VisionKind::kLlava, 576},
      {"mistralai/Mistral-Small-3.1-24B-Instruct-2503", VisionKind::kPixtral, 37 * 37 + 37},
      {"meta-llama/Llama-4-Scout-17B-16E-Instruct", VisionKind::kLlama4, 17 * 144 + 16 + 3},
      {"meta-llama/Llama-3.2-11B-Vision-Instruct", VisionKind::kMllama, 1},
      {"meta-llama/Llama-3.1-8B", VisionKind::kNone, 0},
  };
  for (const Row& row : rows) {
    auto sc = ParseScenario(std::string("{\"model\": \"") + row.id + "\"}");
    ASSERT_TRUE(sc.ok()) << row.id;
    const VisionShape& v = sc.value().model.vision;
    EXPECT_EQ(v.kind, row.kind) << row.id;
    EXPECT_EQ(TokensForImage(v, 1024, 1024).llm_tokens, row.tokens_1024) << row.id;
  }
}

}  // namespace
}  // namespace vramplan
