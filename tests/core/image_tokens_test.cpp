// Image tokens per image (model/image_tokens.cpp) from the processors' code, hand-worked per
// family, and the tower shapes the presets read (model/vision_shape.cpp).
#include <gtest/gtest.h>

#include "model/image_tokens.h"
#include "qwen_vl_tower_shapes.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace {

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
