// A VLM's vision tower in the training step (train/vision_memory.cpp): hand-worked saved tensors
// of a tiny encoder layer, and the step's terms with and without images on LLaVA-1.5-7B.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_support.h"
#include "train/vision_memory.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace vision_memory_test {

// A CLIP-like tower of one layer: h 8, MLP 16, 2 heads, 2-pixel patches on a 4-pixel image:
// 2 x 2 patches + CLS = 5 positions, 48 pixel values.
VisionShape Tiny() {
  VisionShape s;
  s.kind = VisionKind::kLlava;
  s.hidden = 8; s.layers = 1; s.intermediate = 16; s.heads = 2;
  s.patch = 2; s.image_size = 4; s.full_attention_layers = 1;
  return s;
}

TEST(VisionMemory, TinyLayerSavedTensorsByHand) {
  const ImageTokens img = TokensForImage(Tiny(), 4, 4);
  ASSERT_EQ(img.patches, 5);
  ASSERT_EQ(img.pixel_values, 48);
  // bf16 (2 B), sdpa. Per LayerNorm: input 5 x 8 x 2 = 80 + fp32 mean/rstd 5 x 8 = 40 -> 120, two: 240.
  // Attention: qkv input 80 + q, k, v, out 4 x 80 + lse 5 x 2 heads x 4 = 40 + o_proj input 80 = 520.
  // MLP: fc1 input 80 + CLIP's quick_gelu (fc1 output, sigmoid, product) 3 x 5 x 16 x 2 = 480 -> 560.
  // Layer 1,320; + the patch embedding's pixel input 48 x 2 = 96 + the post LayerNorm 120: 1,536.
  EXPECT_EQ(TowerSavedBytesPerImage(Tiny(), img, 2, AttentionImpl::kSdpa, false), 1536);
  // Eager: q, k, v 3 x 80 and the scores 2 heads x 25 x (4 fp32 softmax + 2 probs) = 300 instead of
  // q, k, v, out and lse: attention 80 + 240 + 300 + 80 = 700, layer 1,500, total 1,716.
  EXPECT_EQ(TowerSavedBytesPerImage(Tiny(), img, 2, AttentionImpl::kEager, false), 1716);
  // Checkpointed: the block's input 80 + pixels 96 + post norm 120.
  EXPECT_EQ(TowerSavedBytesPerImage(Tiny(), img, 2, AttentionImpl::kSdpa, true), 296);
}

// Measured on the CPU with PyTorch 1.13 (tests/fixtures/training/measure_vision_tower.py): eager
// attention, fp32 and bf16, CLIP (quick_gelu), SigLIP (gelu tanh) and a Pixtral-like RMSNorm +
// SwiGLU tower. Exact, except the 8-byte CPU scalar each `tensor * python_float` saves (the
// attention scaling, CLIP's 1.702): wrapped numbers, not device memory on a GPU.
TEST(VisionMemory, MatchesMeasuredTowers) {
  const nlohmann::json table = testing_support::LoadFixture("training/measured_cpu_vision.json");
  ASSERT_TRUE(table.contains("rows"));
  int rows = 0;
  for (const auto& row : table["rows"]) {
    VisionShape s;
    const std::string act = row["act"];
    s.kind = act == "quick_gelu" ? VisionKind::kLlava : act == "swiglu" ? VisionKind::kPixtral : VisionKind::kGemma3;
    s.hidden = row["hidden"];
    s.intermediate = row["intermediate"];
    s.heads = row["heads"];
    s.layers = row["layers"];
    s.full_attention_layers = s.layers;
    s.gated_mlp = act == "swiglu";
    s.rms_norm = row["rms_norm"];
    const int64_t patch = row["patch"], side = row["image_size"].get<int64_t>() / patch;
    ImageTokens img;
    img.patches = side * side + (row["cls"].get<bool>() ? 1 : 0);
    img.sequences = 1;
    img.sequence_len = img.patches;
    img.pixel_values = side * side * 3 * patch * patch;
    const int64_t e = row["dtype"] == "fp32" ? 4 : 2;
    const int64_t scalars = 8 * s.layers * (act == "quick_gelu" ? 2 : 1);
    EXPECT_EQ(TowerSavedBytesPerImage(s, img, e, AttentionImpl::kEager, false, /*cpu_torch113=*/true) + scalars,
              row["saved_bytes"].get<int64_t>())
        << row["name"];
    ++rows;
  }
  EXPECT_EQ(rows, 5);
}

Result RunLlava(const std::string& train_json) {
  auto sc = ParseScenario("{\"model\": \"llava-hf/llava-1.5-7b-hf\", \"mode\": \"train\", \"train\": " + train_json + "}");
  EXPECT_TRUE(sc.ok()) << (sc.ok() ? "" : sc.errors()[0].message);
  return Estimate(sc.value());
}

int64_t TermBytes(const Result& r, const char* key) {
  for (const auto& t : r.gpu.breakdown) if (t.key == key) return t.bytes;
  return -1;
}

TEST(VisionMemory, FrozenTowerAddsItsWeightsTheImageTokensAndThePixels) {
  // LoRA (the default method) with the tower and projector frozen (LLaMA-Factory's defaults): one
  // image of LLaVA-1.5 is 576 tokens on top of seq_len, and autograd records nothing in the tower;
  // the fp32 pixel_values (3 x 336 x 336 x 4 B) ride with the batch.
  const Result with_image = RunLlava("{\"seq_len\": 1024, \"images_per_sample\": 1}");
  const Result longer_text = RunLlava("{\"seq_len\": 1600, \"images_per_sample\": 0}");
  ASSERT_TRUE(with_image.vision.present);
  EXPECT_EQ(with_image.vision.tokens_per_image, 576);
  EXPECT_EQ(with_image.vision.llm_tokens, 1600);
  EXPECT_EQ(with_image.vision.tower_trainable_params, 0);
  EXPECT_EQ(with_image.vision.tower_activation_bytes, 3 * 336 * 336 * 4);
  EXPECT_EQ(with_image.gpu.saved_activation_bytes - longer_text.gpu.saved_activation_bytes, 3 * 336 * 336 * 4);
  EXPECT_EQ(TermBytes(with_image, "weights"), TermBytes(longer_text, "weights"));
  // The tower (303,507,456) and projector (21,004,288) are held in bf16 either way.
  EXPECT_EQ(with_image.vision.tower_params, with_image.params.vision + with_image.params.projector);
  EXPECT_EQ(with_image.vision.tower_weight_bytes, 2 * with_image.vision.tower_params);
}

TEST(VisionMemory, TrainedTowerAddsGradientsStatesAndSavedTensors) {
  const Result frozen = RunLlava("{\"method\": \"full\", \"seq_len\": 1024, \"images_per_sample\": 2}");
  const Result trained = RunLlava("{\"method\": \"full\", \"seq_len\": 1024, \"images_per_sample\": 2, "
                             "\"freeze_vision_tower\": false, \"freeze_multi_modal_projector\": false}");
  const int64_t tower = trained.vision.tower_params;
  EXPECT_EQ(trained.vision.tower_trainable_params, tower);
  EXPECT_EQ(trained.trainable_params - frozen.trainable_params, tower);
  EXPECT_EQ(trained.gpu.gradient_bytes - frozen.gpu.gradient_bytes, 2 * tower);  // bf16 gradients
  EXPECT_GT(trained.gpu.optimizer_state_bytes, frozen.gpu.optimizer_state_bytes);
  // Gradient checkpointing (the default) keeps each of the 24 CLIP blocks' inputs: 577 x 1024 x 2 B
  // per image, with the pixels (fp32 in the batch, bf16 saved) and the post LayerNorm; the projector
  // saves 4 x 577 x 1024 x 2 B.
  const int64_t per_image = 3 * 336 * 336 * 4 + 24 * 577 * 1024 * 2 + 3 * 336 * 336 * 2 + (577 * 1024 * 2 + 8 * 577) + 4 * 577 * 1024 * 2;
  EXPECT_EQ(trained.vision.tower_activation_bytes, 2 * per_image);
  EXPECT_GT(trained.gpu.peak_allocated_bytes, frozen.gpu.peak_allocated_bytes);
}

TEST(VisionMemory, TextOnlyModelsHaveNoVisionResult) {
  auto sc = ParseScenario("{\"model\": \"meta-llama/Llama-3.1-8B\", \"mode\": \"train\", \"train\": {\"images_per_sample\": 3}}");
  ASSERT_TRUE(sc.ok());
  const Result r = Estimate(sc.value());
  EXPECT_FALSE(r.vision.present);
  bool warned = false;
  for (const Issue& w : r.warnings) warned |= w.code == "no_effect" && w.field_path == "train.images_per_sample";
  EXPECT_TRUE(warned);
  auto plain = ParseScenario("{\"model\": \"meta-llama/Llama-3.1-8B\", \"mode\": \"train\"}");
  EXPECT_EQ(Estimate(plain.value()).gpu.peak_allocated_bytes, r.gpu.peak_allocated_bytes);
}

// The largest images the validator accepts, every one through a trained eager tower: the byte
// counts go through checked arithmetic, so the estimate is refused as too_large instead of wrapping.
TEST(VisionMemory, HostileImageSizesAreRefusedNotWrapped) {
  auto sc = ParseScenario(R"({"model": "Qwen/Qwen2.5-VL-7B-Instruct", "mode": "train", "train": {"method": "full",
      "attention": "eager", "gradient_checkpointing": false, "images_per_sample": 4096, "image_height": 65536,
      "image_width": 65536, "image_max_pixels": 4294967296, "freeze_vision_tower": false}})");
  ASSERT_TRUE(sc.ok()) << sc.errors()[0].message;
  const Result r = Estimate(sc.value());
  ASSERT_FALSE(r.errors.empty());
  EXPECT_EQ(r.errors[0].code, "too_large");
}

}  // namespace
}  // namespace vramplan
