// llama.cpp --mmproj (inference/llama_cpp_mmproj.cpp): the projector file's weights at its type and
// the compute buffer tools/mtmd/clip.cpp reserves for its warm-up image, hand-worked.
#include <gtest/gtest.h>

#include "inference/llama_cpp_mmproj.h"
#include "launch/launch_ops.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace llama_cpp_mmproj_test {

// Gemma-3-4B's config.json (the 4B's text_config and SigLIP vision_config; the preset reads the text
// decoder only), as tests/golden's inline_configs_gemma3_multimodal pastes it.
constexpr const char* kGemma3 =
    R"({"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3", "text_config": {"head_dim": 256,
    "hidden_size": 2560, "intermediate_size": 10240, "model_type": "gemma3_text", "num_attention_heads": 8, "num_hidden_layers": 34,
    "num_key_value_heads": 4, "sliding_window": 1024, "sliding_window_pattern": 6, "vocab_size": 262208}, "vision_config":
    {"hidden_size": 1152, "image_size": 896, "intermediate_size": 4304, "model_type": "siglip_vision_model", "num_attention_heads": 16,
    "num_hidden_layers": 27, "patch_size": 14, "vision_use_head": false}})";

Scenario LlamaCpp(const std::string& model, const std::string& extra) {
  const std::string m = model == "gemma3" ? std::string(kGemma3) : "\"" + model + "\"";
  auto sc = ParseScenario("{\"model\": " + m + ", \"mode\": \"inference\", \"inference\": {\"engine\": \"llama_cpp\", "
                          "\"weights\": \"gguf_q4_k_m\"" + extra + "}}");
  EXPECT_TRUE(sc.ok()) << (sc.ok() ? "" : sc.errors()[0].message);
  return sc.value();
}

int64_t Term(const Result& r, const std::string& key) {
  for (const auto& t : r.gpu.breakdown) if (t.key == key) return t.bytes;
  return -1;
}

TEST(LlamaCppMmproj, Gemma3SiglipAtItsWarmupImage) {
  const Scenario s = LlamaCpp("gemma3", ", \"mmproj\": \"f16\"");
  const LlamaCppMmproj p = LlamaCppMmprojBuffers(s);
  ASSERT_TRUE(p.loaded);
  EXPECT_EQ(p.params, 416866032 + 2950272);  // SigLIP 400M + the projector (params.by_module)
  EXPECT_EQ(p.weight_bytes, 2 * p.params);
  // warmup_image_size = image_size (896): 64 x 64 = 4,096 positions; without flash attention the
  // F32 KQ scores 16 heads x 4,096^2 + q, k, v and the input 4 x 4,096 x 1,152.
  EXPECT_EQ(p.warmup_side, 896);
  EXPECT_EQ(p.positions, 4096);
  EXPECT_EQ(p.compute_bytes, 4 * (16LL * 4096 * 4096 + 4LL * 4096 * 1152));
  // With flash attention the FFN stage is the larger: 2 x 4,096 x 4,304 + 2 x 4,096 x 1,152.
  Scenario fa = s;
  fa.inference.flash_attn = true;
  EXPECT_EQ(LlamaCppMmprojBuffers(fa).compute_bytes, 4 * (2LL * 4096 * 4304 + 2LL * 4096 * 1152));
  // q8_0: 34 B per 32 elements.
  Scenario q8 = s;
  q8.inference.mmproj = MmprojType::kQ8_0;
  EXPECT_NEAR(static_cast<double>(LlamaCppMmprojBuffers(q8).weight_bytes), static_cast<double>(p.params) * 34 / 32, 1);
}

TEST(LlamaCppMmproj, QwenWarmsUpSmall) {
  // PROJECTOR_TYPE_QWEN25VL: warmup_image_size = patch_size x 8 = 112 px, 8 x 8 positions; the
  // FFN stage (SwiGLU 2 x 64 x 3,420 + 2 x 64 x 1,280) is larger than the scores.
  const LlamaCppMmproj p = LlamaCppMmprojBuffers(LlamaCpp("Qwen/Qwen2.5-VL-7B-Instruct", ", \"mmproj\": \"f16\""));
  EXPECT_EQ(p.warmup_side, 112);
  EXPECT_EQ(p.positions, 64);
  EXPECT_EQ(p.compute_bytes, 4 * (2LL * 64 * 3420 + 2LL * 64 * 1280));
}

TEST(LlamaCppMmproj, TheEngineAddsBothOnTheGpu) {
  const Result before = Estimate(LlamaCpp("gemma3", ""));
  const Scenario with = LlamaCpp("gemma3", ", \"mmproj\": \"f16\"");
  const Result after = Estimate(with);
  const LlamaCppMmproj p = LlamaCppMmprojBuffers(with);
  EXPECT_EQ(Term(after, "weights") - Term(before, "weights"), p.weight_bytes);
  EXPECT_EQ(Term(after, "activations") - Term(before, "activations"), p.compute_bytes);
  EXPECT_EQ(after.gpu.device_total_bytes - before.gpu.device_total_bytes, p.weight_bytes + p.compute_bytes);
  ASSERT_TRUE(after.vision.present);
  EXPECT_EQ(after.vision.mmproj_compute_bytes, p.compute_bytes);
  EXPECT_FALSE(before.vision.present);
  // The compute buffer is derived, not checked against a printed size: flagged approximate.
  bool approximate = false;
  for (const auto& w : after.warnings) approximate |= w.field_path == "inference.mmproj" && w.code == "approximate";
  EXPECT_TRUE(approximate);
  // A text-only model: nothing to load, said.
  const Result text = Estimate(LlamaCpp("meta-llama/Llama-3.1-8B", ", \"mmproj\": \"f16\""));
  bool warned = false;
  for (const auto& w : text.warnings) warned |= w.field_path == "inference.mmproj";
  EXPECT_TRUE(warned);
}

TEST(LlamaCppMmproj, ImportsTheFileType) {
  // llama-server -mm / --mmproj FILE (common/arg.cpp); the type from the file name.
  const launch::ImportOutcome a = launch::ImportLaunchConfig(
      "llama-server -m gemma-3-4b-it-Q4_K_M.gguf --mmproj mmproj-model-f16.gguf -c 8192", "auto");
  ASSERT_TRUE(a.errors.empty());
  EXPECT_EQ(a.scenario["inference"]["mmproj"], "f16");
  const launch::ImportOutcome b = launch::ImportLaunchConfig("llama-server -m x-Q4_K_M.gguf -mm mmproj-BF16.gguf", "auto");
  ASSERT_TRUE(b.errors.empty());
  EXPECT_EQ(b.scenario["inference"]["mmproj"], "bf16");
}

}  // namespace
}  // namespace vramplan
