// Tokens per video (model/video_tokens.cpp), hand-worked from qwen_vl_utils vision_process.py
// fetch_video / smart_resize (QwenLM/Qwen3-VL 004d5e0) and the Qwen processors' patchify
// (transformers video_processing_qwen2_vl.py, video_processing_qwen3_vl.py): frames padded to a
// multiple of 2, each resized under the per-frame budget, grid_t x grid_h x grid_w patches merged
// 2 x 2. The same numbers come out of qwen_vl_utils itself:
//   from qwen_vl_utils.vision_process import smart_resize  # then grid = (n // 2) x (h // p) x (w // p)
#include <gtest/gtest.h>

#include "inference/vllm_multimodal.h"
#include "launch/launch_ops.h"
#include "model/video_tokens.h"
#include "train/vision_memory.h"
#include "qwen_vl_tower_shapes.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace video_tokens_test {

using testing_support::Qwen25VlTower;
using testing_support::Qwen3VlTower;

struct Case {
  const char* what;
  VisionShape shape;
  int64_t frames, height, width, max_pixels;
  int64_t patches, llm_tokens, groups;
};

TEST(VideoTokens, QwenVlUtilsFrames) {
  const Case cases[] = {
      // 720p, 16 frames, factor 28: cap min(768 x 784, 90,316,800 / 16 x 2) = 602,112; 728 x 1288 is
      // above it, beta = sqrt(921,600 / 602,112) = 1.2372 -> 560 x 1008: 40 x 72 patches a group, 8 groups.
      {"qwen2.5 720p 16 frames", Qwen25VlTower(), 16, 720, 1280, 0, 8 * 40 * 72, 8 * 720, 8},
      // 768 frames: the total budget wins, 90,316,800 / 768 x 2 = 235,200 -> 336 x 644: 24 x 46 a group.
      {"qwen2.5 720p 768 frames", Qwen25VlTower(), 768, 720, 1280, 0, 384 * 24 * 46, 384 * 276, 384},
      // max_pixels 256 x 28 x 28 = 200,704 (the element's max_pixels): 336 x 588, 24 x 42 a group.
      {"qwen2.5 720p max_pixels 200704", Qwen25VlTower(), 16, 720, 1280, 200704, 8 * 24 * 42, 8 * 252, 8},
      // 5 frames pad to 6 (3 groups); 240 x 320 is below min_pixels 100,352: scaled up to 280 x 392.
      {"qwen2.5 small, odd frames", Qwen25VlTower(), 5, 240, 320, 0, 3 * 20 * 28, 3 * 140, 3},
      // Qwen3-VL, factor 32: cap 786,432; 704 x 1280 above it -> 640 x 1152, 40 x 72 a group; plus
      // the 8 groups' "<i.2 seconds>" (6 tokens) and vision_start / vision_end, less the prompt's pair:
      // 8 x 8 - 2 = 62 text tokens.
      {"qwen3 720p 16 frames", Qwen3VlTower(), 16, 720, 1280, 0, 8 * 40 * 72, 8 * 720 + 62, 8},
  };
  for (const Case& c : cases) {
    const ImageTokens t = TokensForVideo(c.shape, c.frames, c.height, c.width, c.max_pixels);
    EXPECT_EQ(t.patches, c.patches) << c.what;
    EXPECT_EQ(t.llm_tokens, c.llm_tokens) << c.what;
    EXPECT_EQ(t.sequences, c.groups) << c.what;
    EXPECT_EQ(t.pixel_values, c.patches * 3 * 2 * c.shape.patch * c.shape.patch) << c.what;
  }
  // Qwen2.5-VL's windows: 4 x 4 merged units (112 / 2 / 14) over each group's 20 x 36 merged grid.
  const ImageTokens t = TokensForVideo(Qwen25VlTower(), 16, 720, 1280);
  EXPECT_EQ(t.windows, 8 * 5 * 9);
  EXPECT_EQ(t.window_len, 64);
  EXPECT_EQ(t.sequence_len, 40 * 72);
  // Timestamps past 9 s take one more digit: groups 0-9 x 8 + 10-11 x 9 - 2.
  EXPECT_EQ(VideoTextTokens(Qwen3VlTower(), 12), 10 * 8 + 2 * 9 - 2);
  EXPECT_EQ(VideoTextTokens(Qwen25VlTower(), 12), 0);
  // Towers that take no video.
  VisionShape gemma;
  gemma.kind = VisionKind::kGemma3;
  EXPECT_FALSE(TakesVideo(gemma));
  EXPECT_EQ(TokensForVideo(gemma, 16, 720, 1280).llm_tokens, 0);
}

TEST(VideoTokens, VllmDummyVideo) {
  // vllm qwen2_vl.py (002d181) Qwen2VLProcessingInfo: frames of the largest image (16,384 tokens a
  // group); with max_model_len 32,768 the frame count grows 1 -> 4 (5 frames pad to 6 = 3 groups,
  // 49,152 tokens, too many); one video: min(4, 14) = 4 frames = 2 groups.
  const ImageTokens frame = LargestImage(Qwen25VlTower());
  ASSERT_EQ(frame.llm_tokens, 16384);
  ImageTokens v = VllmDummyVideo(Qwen25VlTower(), frame, 32768, 1);
  EXPECT_EQ(v.llm_tokens, 32768);
  EXPECT_EQ(v.patches, 2 * 65536);
  // vLLM's default limit (999 videos): 4 // 999 = 0 -> 1 frame, padded to one group.
  v = VllmDummyVideo(Qwen25VlTower(), frame, 32768, 999);
  EXPECT_EQ(v.llm_tokens, 16384);
  // A long context caps at _MAX_FRAMES_PER_VIDEO = 14 frames = 7 groups.
  EXPECT_EQ(VllmDummyVideo(Qwen25VlTower(), frame, 1 << 20, 1).llm_tokens, 7 * 16384);
}

Scenario Vllm(const std::string& inference_json) {
  auto sc = ParseScenario("{\"model\": \"Qwen/Qwen2.5-VL-7B-Instruct\", \"mode\": \"inference\", \"inference\": " + inference_json + "}");
  EXPECT_TRUE(sc.ok()) << (sc.ok() ? "" : sc.errors()[0].message);
  return sc.value();
}

TEST(VideoTokens, VllmProfilesTheModalityWithTheMostTokens) {
  // Default limits: the dummy video is one group of the largest frame, 16,384 tokens like the
  // image; the tie goes to "video" (MultiModalBudget.get_modality_with_max_tokens), same bytes.
  const Scenario s = Vllm("{\"engine\": \"vllm\", \"max_model_len\": 32768}");
  const VllmMultimodal dflt = VllmMultimodalProfile(s, 8192, 32768, 256, 2, 1);
  EXPECT_EQ(dflt.modality, "video");
  EXPECT_EQ(dflt.tokens_per_item, 16384);
  EXPECT_EQ(dflt.items, 1);
  EXPECT_EQ(dflt.encoder_peak_bytes, 65536LL * (2 * 1280 + 3 * 3420) * 2 + 65536LL * 1176 * 2);
  // --limit-mm-per-prompt '{"image": 1, "video": 1}': the video (4 frames, 32,768 tokens) wins; the
  // encoder budget max(8,192, 32,768) holds one; twice the patches and the pixels.
  Scenario one = s;
  one.inference.limit_mm_per_prompt = 1;
  one.inference.limit_mm_video_per_prompt = 1;
  const VllmMultimodal mm = VllmMultimodalProfile(one, 8192, 32768, 256, 2, 1);
  EXPECT_EQ(mm.modality, "video");
  EXPECT_EQ(mm.tokens_per_item, 32768);
  EXPECT_EQ(mm.items, 1);
  EXPECT_EQ(mm.encoder_peak_bytes, 2 * dflt.encoder_peak_bytes);
  EXPECT_EQ(mm.encoder_cache_bytes, 32768LL * 3584 * 2);
  // No video: the image profile as before; neither: no tower.
  Scenario images = s;
  images.inference.limit_mm_video_per_prompt = 0;
  EXPECT_EQ(VllmMultimodalProfile(images, 8192, 32768, 256, 2, 1).modality, "image");
  images.inference.limit_mm_per_prompt = 0;
  EXPECT_FALSE(VllmMultimodalProfile(images, 8192, 32768, 256, 2, 1).loaded);
}

TEST(VideoTokens, RequestsAndTrainingCountTheVideo) {
  // Two 16-frame 720p videos per request: 2 x (5,760 features + 2 markup: <|vision_start|> /
  // <|vision_end|>, as for an image) on top of the prompt.
  Scenario s = Vllm("{\"engine\": \"vllm\", \"max_model_len\": 32768, \"videos_per_request\": 2}");
  const Result r = Estimate(s);
  ASSERT_TRUE(r.vision.present);
  EXPECT_TRUE(r.vision.takes_video);
  EXPECT_EQ(r.vision.tokens_per_video, 5760 + 2);
  EXPECT_EQ(r.vision.video_tokens, 2 * (5760 + 2));
  EXPECT_EQ(r.vision.llm_tokens, 1024 + 2 * (5760 + 2));
  // Training with the tower trained: the video's saved tensors are the image path's over its
  // 23,040 patches (8 groups, each attending over itself).
  auto t = ParseScenario(R"({"model": "Qwen/Qwen2.5-VL-7B-Instruct", "train": {"method": "full", "seq_len": 1024,
      "videos_per_sample": 1, "freeze_vision_tower": false, "gradient_checkpointing": false}})");
  ASSERT_TRUE(t.ok());
  const Result tr = Estimate(t.value());
  EXPECT_EQ(tr.vision.video_tokens, 5760 + 2);
  EXPECT_EQ(tr.vision.llm_tokens, 1024 + 5760 + 2);
  const ImageTokens one = TokensForVideo(t.value().model.vision, 16, 720, 1280);
  const int64_t expected = one.pixel_values * 4 + TowerSavedBytesPerImage(t.value().model.vision, one, 2, AttentionImpl::kSdpa, false) + 4 * one.patches * 1280 * 2;
  EXPECT_EQ(tr.vision.tower_activation_bytes, expected);
  // A model whose tower takes no video says so.
  auto g = ParseScenario(R"({"model": "google/gemma-3-4b-it", "train": {"method": "lora", "videos_per_sample": 1}})");
  ASSERT_TRUE(g.ok());
  bool warned = false;
  for (const auto& w : Estimate(g.value()).warnings) warned |= w.field_path == "train.videos_per_sample";
  EXPECT_TRUE(warned);
}

TEST(VideoTokens, ImportsTheVideoLimit) {
  const launch::ImportOutcome a = launch::ImportLaunchConfig(
      "vllm serve Qwen/Qwen2.5-VL-7B-Instruct --limit-mm-per-prompt '{\"image\": 2, \"video\": 1}'", "auto");
  ASSERT_TRUE(a.errors.empty());
  EXPECT_EQ(a.scenario["inference"]["limit_mm_per_prompt"], 2);
  EXPECT_EQ(a.scenario["inference"]["limit_mm_video_per_prompt"], 1);
  const launch::ImportOutcome b = launch::ImportLaunchConfig("vllm serve Qwen/Qwen2.5-VL-7B-Instruct --limit-mm-per-prompt image=0,video=0", "auto");
  ASSERT_TRUE(b.errors.empty());
  EXPECT_EQ(b.scenario["inference"]["limit_mm_per_prompt"], 0);
  EXPECT_EQ(b.scenario["inference"]["limit_mm_video_per_prompt"], 0);
  // LLaMA-Factory's per-frame cap (hparams/model_args.py video_max_pixels).
  const launch::ImportOutcome c = launch::ImportLaunchConfig(
      "model_name_or_path: Qwen/Qwen2.5-VL-7B-Instruct\nstage: sft\nfinetuning_type: lora\nvideo_max_pixels: 65536\n", "llamafactory");
  ASSERT_TRUE(c.errors.empty()) << c.errors[0].message;
  EXPECT_EQ(c.scenario["train"]["video_max_pixels"], 65536);
}

}  // namespace
}  // namespace vramplan
