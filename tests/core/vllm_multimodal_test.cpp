// vLLM's multimodal profile run (inference/vllm_multimodal.cpp): the dummy encoder batch by the
// V1 encoder budget and the V0 rule, hand-worked on the presets.
#include <gtest/gtest.h>

#include "inference/vllm_multimodal.h"
#include "launch/launch_ops.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace vllm_multimodal_test {

Scenario Vllm(const std::string& model, const std::string& inference_json) {
  auto sc = ParseScenario("{\"model\": \"" + model + "\", \"mode\": \"inference\", \"inference\": " + inference_json + "}");
  EXPECT_TRUE(sc.ok()) << (sc.ok() ? "" : sc.errors()[0].message);
  return sc.value();
}

TEST(VllmMultimodal, Qwen25VlEncodesOneLargestImage) {
  const Scenario s = Vllm("Qwen/Qwen2.5-VL-7B-Instruct", "{\"engine\": \"vllm\", \"max_model_len\": 32768}");
  // The largest image: max_pixels 12,845,056 -> 65,536 patches, 16,384 tokens; the encoder budget
  // max(8,192, 16,384) holds one.
  const VllmMultimodal mm = VllmMultimodalProfile(s, 8192, 32768, 256, 2, 1);
  ASSERT_TRUE(mm.loaded);
  EXPECT_EQ(mm.tokens_per_item, 16384);
  EXPECT_EQ(mm.items, 1);
  // One layer at its MLP: residual + normed input (2 x 1280) + gate, up, act (3 x 3420) per patch,
  // bf16, + the pixel tensor (65,536 x 1,176 values).
  EXPECT_EQ(mm.encoder_peak_bytes, 65536LL * (2 * 1280 + 3 * 3420) * 2 + 65536LL * 1176 * 2);
  EXPECT_EQ(mm.encoder_cache_bytes, 16384LL * 3584 * 2);
  EXPECT_EQ(VllmMultimodalExtra(mm, 1000), mm.encoder_peak_bytes - 1000);
  // mm_processor_kwargs max_pixels 1,003,520 (28 x 28 x 1280): 1,225 tokens, 6 fit the budget.
  Scenario small = s;
  small.inference.mm_max_pixels = 1003520;
  EXPECT_EQ(VllmMultimodalProfile(small, 8192, 32768, 256, 2, 1).items, 6);
  // limit_mm_per_prompt 0 for images and videos: text only, no tower.
  Scenario text = s;
  text.inference.limit_mm_per_prompt = 0;
  text.inference.limit_mm_video_per_prompt = 0;
  EXPECT_FALSE(VllmMultimodalProfile(text, 8192, 32768, 256, 2, 1).loaded);
}

TEST(VllmMultimodal, MllamaV0EncodesAnImagePerSequence) {
  // The V0 encoder-decoder runner gives every one of max_num_seqs dummy sequences an image
  // (pixel_values [256, 1, 1, 4, 3, 560, 560] in the published start-up logs).
  const Scenario s = Vllm("meta-llama/Llama-3.2-11B-Vision-Instruct", "{\"engine\": \"vllm\", \"vllm_version\": \"0.6-0.10_v0\"}");
  const VllmMultimodal mm = VllmMultimodalProfile(s, 8192, 8192, 256, 2, 1);
  EXPECT_EQ(mm.items, 256);
  EXPECT_EQ(mm.largest.patches, 4 * 1608);
  EXPECT_EQ(mm.tokens_per_item, 4 * 1601);
}

TEST(VllmMultimodal, MllamaPublishedProfilePeak) {
  // vllm-project/vllm PR #12126 (2025-01-16, V0 engine): `vllm serve meta-llama/Llama-3.2-11B-Vision
  // --load-format dummy --max-model-len 65536 --max-num-seqs 128 --enforce-eager` on an H100 80GB
  // printed "PyTorch activation peak memory takes 36.63GiB". V0's token budget is max_model_len.
  const Scenario s = Vllm("meta-llama/Llama-3.2-11B-Vision-Instruct", "{\"engine\": \"vllm\", \"vllm_version\": \"0.6-0.10_v0\", "
                          "\"max_model_len\": 65536, \"max_num_seqs\": 128, \"cuda_graphs\": false}");
  const VllmMultimodal mm = VllmMultimodalProfile(s, 65536, 65536, 128, 2, 1);
  EXPECT_EQ(mm.items, 128);
  // 128 x 4 x 1608 positions: the MLP stage (2 x 1280 + 2 x 5120), the 5 kept intermediate outputs
  // (5 x 1280), the pixels and the 128 dense 6432^2 masks, bf16.
  const int64_t n = 128LL * 6432;
  EXPECT_EQ(mm.encoder_peak_bytes, n * (2 * 1280 + 2 * 5120) * 2 + 128LL * 4 * 3 * 560 * 560 * 2 + n * 5 * 1280 * 2 + 128LL * 6432 * 6432 * 2);
  const Result r = Estimate(s);
  int64_t act = 0;
  for (const auto& t : r.gpu.breakdown) if (t.key == "activations") act = t.bytes;
  const double published = 36.63 * 1024 * 1024 * 1024;
  EXPECT_NEAR(static_cast<double>(act) / published, 1.10, 0.03) << act;  // +10%: docs/inference.md
}

TEST(VllmMultimodal, EngineAddsTowerWeightsAndImageTokens) {
  Scenario base = Vllm("Qwen/Qwen2.5-VL-7B-Instruct",
                       "{\"engine\": \"vllm\", \"max_model_len\": 32768, \"limit_mm_per_prompt\": 0, \"limit_mm_video_per_prompt\": 0}");
  Scenario with = Vllm("Qwen/Qwen2.5-VL-7B-Instruct", "{\"engine\": \"vllm\", \"max_model_len\": 32768}");
  const Result a = Estimate(base), b = Estimate(with);
  ASSERT_TRUE(b.vision.present);
  EXPECT_FALSE(a.vision.present);
  EXPECT_EQ(b.vision.tower_weight_bytes, 2 * (b.params.vision + b.params.projector));
  EXPECT_GT(b.vision.profile_bytes, 0);
  EXPECT_LT(b.inference.kv_token_capacity, a.inference.kv_token_capacity);
  // Images per request lengthen the prompt: 2 images of 1024 x 1024 = 2 x (1,369 tokens +
  // <|vision_start|> / <|vision_end|>).
  Scenario req = with;
  req.inference.images_per_request = 2;
  const Result c = Estimate(req);
  EXPECT_EQ(c.vision.tokens_per_image, 1371);
  EXPECT_EQ(c.vision.image_tokens, 2 * 1371);
  EXPECT_EQ(c.vision.llm_tokens, with.inference.prompt_len + 2 * 1371);
}

TEST(VllmMultimodal, ImportsTheLimitAndTheProcessorsMaxPixels) {
  // vllm serve flags (vllm/engine/arg_utils.py): --limit-mm-per-prompt as JSON or the older
  // image=N form, --mm-processor-kwargs '{"max_pixels": ...}'.
  const launch::ImportOutcome a = launch::ImportLaunchConfig(
      "vllm serve Qwen/Qwen2.5-VL-7B-Instruct --limit-mm-per-prompt '{\"image\": 2}' "
      "--mm-processor-kwargs '{\"max_pixels\": 1003520}'", "auto");
  ASSERT_TRUE(a.errors.empty());
  EXPECT_EQ(a.scenario["inference"]["limit_mm_per_prompt"], 2);
  EXPECT_EQ(a.scenario["inference"]["mm_max_pixels"], 1003520);
  const launch::ImportOutcome b = launch::ImportLaunchConfig("vllm serve Qwen/Qwen2.5-VL-7B-Instruct --limit-mm-per-prompt image=0,video=0", "auto");
  ASSERT_TRUE(b.errors.empty());
  EXPECT_EQ(b.scenario["inference"]["limit_mm_per_prompt"], 0);
  // LLaMA-Factory's VLM keys.
  const launch::ImportOutcome c = launch::ImportLaunchConfig(
      "model_name_or_path: Qwen/Qwen2.5-VL-7B-Instruct\nstage: sft\nfinetuning_type: full\nfreeze_vision_tower: false\n"
      "freeze_multi_modal_projector: false\nimage_max_pixels: 262144\n", "llamafactory");
  ASSERT_TRUE(c.errors.empty()) << c.errors[0].message;
  EXPECT_EQ(c.scenario["train"]["freeze_vision_tower"], false);
  EXPECT_EQ(c.scenario["train"]["freeze_multi_modal_projector"], false);
  EXPECT_EQ(c.scenario["train"]["image_max_pixels"], 262144);
}

}  // namespace
}  // namespace vramplan
