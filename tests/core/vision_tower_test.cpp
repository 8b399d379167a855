// Vision-language wrappers: the vision tower and projector counted from vision_config
// (model/vision_tower.cpp) into params.vision / projector and checkpoint_total, the text decoder
// alone in params.total; wrappers whose tower is not counted keep the text_model_only warning.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/hf_config.h"
#include "test_support.h"
#include "vramplan/model_spec.h"

namespace vramplan {
namespace vision_tower_test {

using nlohmann::json;

json Qwen25VlVision(int64_t out_hidden) {
  return {{"depth", 32},           {"hidden_size", 1280},       {"intermediate_size", 3420},
          {"num_heads", 16},       {"in_chans", 3},             {"out_hidden_size", out_hidden},
          {"patch_size", 14},      {"spatial_merge_size", 2},   {"temporal_patch_size", 2}};
}

json Qwen25Vl7bText() {
  return {{"hidden_size", 3584},        {"intermediate_size", 18944}, {"num_hidden_layers", 28},
          {"num_attention_heads", 28},  {"num_key_value_heads", 4},   {"vocab_size", 152064},
          {"tie_word_embeddings", false}, {"rms_norm_eps", 1e-6}};
}

TEST(VisionTower, Qwen25VlFlatConfigCountsTowerAndMerger) {
  json cfg = Qwen25Vl7bText();
  cfg["model_type"] = "qwen2_5_vl";
  cfg["vision_config"] = Qwen25VlVision(3584);
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(spec.ok()) << spec.errors()[0].message;
  EXPECT_TRUE(warnings.empty()) << warnings[0].message;
  const ParamCounts c = CountParams(spec.value());
  // patch_embed 3*2*14*14*1280 = 1,505,280 + 32 blocks x 19,702,200 (torchinfo of the model).
  EXPECT_EQ(c.vision, 1505280 + 32 * 19702200LL);
  // merger: ln_q 1,280 + Linear(5120, 5120) + Linear(5120, 3584), with biases.
  EXPECT_EQ(c.projector, 1280 + 5120 * 5120 + 5120 + 5120 * 3584 + 3584);
  EXPECT_EQ(c.total, 7615616512);             // the text decoder
  EXPECT_EQ(c.checkpoint_total, 8292166656);  // Hub total of Qwen/Qwen2.5-VL-7B-Instruct
}

TEST(VisionTower, Qwen25VlTextConfigLayoutReadsTheSame) {
  // transformers >= 4.52 writes the decoder under text_config (model_type qwen2_5_vl_text).
  json text = Qwen25Vl7bText();
  text["model_type"] = "qwen2_5_vl_text";
  json cfg = {{"model_type", "qwen2_5_vl"}, {"text_config", text}, {"vision_config", Qwen25VlVision(3584)}};
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(spec.ok()) << spec.errors()[0].message;
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(CountParams(spec.value()).checkpoint_total, 8292166656);
}

// Hostile shapes: the merger Linear(h m^2, h m^2) of the largest widths the reader accepts (2^24)
// is 2^144 parameters. The count saturates (model/tower_count.h) and the config is refused with an
// error naming vision_config, instead of a wrapped int64 (undefined behaviour, found by the fuzzer).
TEST(VisionTower, HostileTowerShapesAreRefusedNotWrapped) {
  json cfg = Qwen25Vl7bText();
  cfg["model_type"] = "qwen2_5_vl";
  cfg["vision_config"] = Qwen25VlVision(3584);
  cfg["vision_config"]["hidden_size"] = int64_t{1} << 24;
  cfg["vision_config"]["spatial_merge_size"] = int64_t{1} << 24;
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.errors()[0].code, "too_large");
  EXPECT_EQ(spec.errors()[0].field_path, "model.vision_config");
}

TEST(VisionTower, Gemma3SiglipAndProjector) {
  json cfg = {{"model_type", "gemma3"},
              {"text_config", {{"model_type", "gemma3_text"}, {"hidden_size", 2560}, {"intermediate_size", 10240},
                               {"num_hidden_layers", 34}, {"num_attention_heads", 8}, {"num_key_value_heads", 4},
                               {"head_dim", 256}, {"vocab_size", 262208}}},
              {"vision_config", {{"hidden_size", 1152}, {"image_size", 896}, {"intermediate_size", 4304},
                                 {"model_type", "siglip_vision_model"}, {"num_attention_heads", 16},
                                 {"num_hidden_layers", 27}, {"patch_size", 14}, {"vision_use_head", false}}}};
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(spec.ok());
  EXPECT_TRUE(warnings.empty());
  const ParamCounts c = CountParams(spec.value());
  // patch Conv2d 3*14*14*1152 + 1152, 4096 positions, 27 layers of 15,239,504, post_layernorm.
  EXPECT_EQ(c.vision, 678528 + 4096 * 1152 + 27 * 15239504LL + 2 * 1152);
  EXPECT_EQ(c.projector, 1152 * 2560 + 1152);  // mm_input_projection_weight + mm_soft_emb_norm
  EXPECT_EQ(c.checkpoint_total - c.total, 419816304);
}

TEST(VisionTower, Mistral3PixtralAndProjector) {
  json cfg = {{"model_type", "mistral3"},
              {"multimodal_projector_bias", false},
              {"spatial_merge_size", 2},
              {"text_config", {{"model_type", "mistral"}, {"hidden_size", 5120}, {"intermediate_size", 32768},
                               {"num_hidden_layers", 40}, {"num_attention_heads", 32}, {"num_key_value_heads", 8},
                               {"head_dim", 128}, {"vocab_size", 131072}}},
              {"vision_config", {{"model_type", "pixtral"}, {"hidden_size", 1024}, {"intermediate_size", 4096},
                                 {"num_hidden_layers", 24}, {"num_attention_heads", 16}, {"patch_size", 14}}}};
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(spec.ok());
  EXPECT_TRUE(warnings.empty());
  const ParamCounts c = CountParams(spec.value());
  EXPECT_EQ(c.vision, 3 * 14 * 14 * 1024 + 1024 + 24 * 16779264LL);  // patch_conv, ln_pre, 24 layers
  // norm + merging_layer (4096 -> 1024) + linear_1 (1024 -> 5120) + linear_2 (5120 -> 5120), no biases.
  EXPECT_EQ(c.projector, 1024 + 4096 * 1024 + 1024 * 5120 + 5120 * 5120);
  EXPECT_EQ(c.checkpoint_total, 24011361280);  // Mistral-Small-3.1-24B
}

// LLaVA with its CLIP tower (CLIPVisionModel + LlavaMultiModalProjector); LLaVA-NeXT adds image_newline.
TEST(VisionTower, LlavaCountsClipAndProjector) {
  json cfg = {{"model_type", "llava"},
              {"text_config", {{"model_type", "llama"}, {"hidden_size", 64}, {"intermediate_size", 128},
                               {"num_hidden_layers", 2}, {"num_attention_heads", 4}, {"vocab_size", 100}}},
              {"vision_config", {{"model_type", "clip_vision_model"}, {"hidden_size", 1024}, {"intermediate_size", 4096},
                                 {"num_hidden_layers", 24}, {"image_size", 336}, {"patch_size", 14}}}};
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(spec.ok());
  EXPECT_TRUE(warnings.empty());
  // class + patch conv + 577 positions, pre/post LayerNorm, 24 layers (llava-1.5-7b's CLIP ViT-L/14-336).
  EXPECT_EQ(CountParams(spec.value()).vision, 303507456);
  EXPECT_EQ(CountParams(spec.value()).projector, 1024 * 64 + 64 + 64 * 64 + 64);
  cfg["model_type"] = "llava_next";
  spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(CountParams(spec.value()).projector, 1024 * 64 + 64 + 64 * 64 + 64 + 64);
}

// Gemma 4 E2B (model/gemma4_towers.cpp): the towers' defaults are Gemma4VisionConfig's and
// Gemma4AudioConfig's (configuration_gemma4.py), which describe google/gemma-4-e2b-it.
TEST(VisionTower, Gemma4E2bVisionAudioAndEmbedders) {
  json text = {{"model_type", "gemma4_text"}, {"hidden_size", 1536}, {"intermediate_size", 6144},
               {"num_hidden_layers", 35}, {"num_attention_heads", 8}, {"num_key_value_heads", 1},
               {"head_dim", 256}, {"global_head_dim", 512}, {"vocab_size", 262144},
               {"num_kv_shared_layers", 20}, {"hidden_size_per_layer_input", 256}, {"use_double_wide_mlp", true},
               {"sliding_window", 512}};
  json layer_types = json::array();
  for (int i = 0; i < 35; ++i) layer_types.push_back(i % 5 == 4 ? "full_attention" : "sliding_attention");
  text["layer_types"] = layer_types;
  json cfg = {{"model_type", "gemma4"},
              {"text_config", text},
              {"vision_config", {{"model_type", "gemma4_vision"}, {"use_clipped_linears", true}}},
              {"audio_config", {{"model_type", "gemma4_audio"}}}};
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(spec.ok()) << spec.errors()[0].message;
  EXPECT_TRUE(warnings.empty()) << warnings[0].message;
  const ParamCounts c = CountParams(spec.value());
  // patch input_proj 768 x 768 + position table 2 x 10240 x 768 + 16 layers x 9,440,384
  // (q/k/v/o 4 x 768 x 768, q/k norms 2 x 64, four norms 4 x 768, MLP 3 x 768 x 3072).
  EXPECT_EQ(c.vision, 589824 + 15728640 + 16 * 9440384LL);
  // subsampling 1,152 + 128 + 36,864 + 32 + input_proj 1024 x 1024, 12 conformer layers of
  // 25,180,288 (feed-forward 2 x 8,390,656, attention 5 x 1,048,576 + 128, light conv 3,152,896,
  // norms 3,072), output_proj 1024 x 1536 + 1536.
  EXPECT_EQ(c.audio, 1152 + 128 + 36864 + 32 + 1048576 + 12 * 25180288LL + 1572864 + 1536);
  EXPECT_EQ(c.projector, 768 * 1536 + 1536 * 1536);  // embed_vision, embed_audio
  // 20 KV-shared layers x (k_proj + v_proj 2 x 1536 x 256 (512 on the 4 full ones) + k_norm)
  EXPECT_EQ(c.unloaded, 16 * (2 * 1536 * 256 + 256) + 4 * (2 * 1536 * 512 + 512));
  EXPECT_EQ(c.total, 4628569379);
  EXPECT_EQ(c.checkpoint_total, 5123178051);  // Hub total of google/gemma-4-E2B-it
}

// Gemma 4 31B / 26B-A4B: the larger tower of transformers convert_gemma4_weights.py
// _LARGE_MODEL_VISION_CONFIG (hidden 1152, MLP 4304, 27 layers, 16 heads of 72, no clipped linears,
// standardize). Expected numbers counted by hand from Gemma4VisionModel's tensor shapes; their sums
// with the text decoders give the Hub totals exactly (tests/fixtures/param_counts.json).
TEST(VisionTower, Gemma4LargeTowerAndEmbedder) {
  json text = {{"model_type", "gemma4_text"}, {"hidden_size", 5376}, {"intermediate_size", 21504},
               {"num_hidden_layers", 60}, {"num_attention_heads", 32}, {"num_key_value_heads", 16},
               {"num_global_key_value_heads", 4}, {"attention_k_eq_v", true}, {"head_dim", 256},
               {"global_head_dim", 512}, {"vocab_size", 262144}, {"sliding_window", 1024}};
  json vision = {{"model_type", "gemma4_vision"}, {"hidden_size", 1152}, {"intermediate_size", 4304},
                 {"num_hidden_layers", 27}, {"num_attention_heads", 16}, {"num_key_value_heads", 16},
                 {"head_dim", 72}, {"standardize", true}, {"use_clipped_linears", false}};
  json cfg = {{"model_type", "gemma4"}, {"text_config", text}, {"vision_config", vision}};
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(spec.ok()) << spec.errors()[0].message;
  EXPECT_TRUE(warnings.empty()) << warnings[0].message;
  const ParamCounts c = CountParams(spec.value());
  // patch input_proj (3 x 16 x 16) x 1152 = 884,736 + position table 2 x 10240 x 1152 = 23,592,960
  // + 27 layers x 20,187,792 (q/k/v/o 4 x 1152 x 1152, q/k norms 2 x 72, four norms 4 x 1152,
  // MLP 3 x 1152 x 4304) + std_bias / std_scale 2 x 1152 = 569,550,384.
  EXPECT_EQ(c.vision, 884736 + 23592960 + 27 * 20187792LL + 2 * 1152);
  EXPECT_EQ(c.vision, 569550384);
  EXPECT_EQ(c.audio, 0);
  EXPECT_EQ(c.projector, 1152 * 5376);  // embed_vision.embedding_projection
  EXPECT_EQ(c.total, 30697345340);      // the text decoder (fixture row of google/gemma-4-31B-it)
  EXPECT_EQ(c.checkpoint_total, 31273088876);  // Hub total of google/gemma-4-31B-it
}

// Qwen3.5 (transformers models/qwen3_5/modular_qwen3_5.py): Qwen3_5VisionModel is Qwen3-VL's tower
// with `del self.deepstack_merger_list`, so only the final merger is a projector, even where a
// config lists deepstack_visual_indexes. The Hub's Qwen3.5-27B tower (depth 27, hidden 1152)
// worked by hand from Qwen3VLVisionModel's modules.
TEST(VisionTower, Qwen35TowerHasNoDeepstackMergers) {
  const json table = testing_support::LoadFixture("param_counts.json");
  json cfg;
  for (const auto& row : table["models"]) {
    if (row["id"] == "Qwen/Qwen3.5-27B") cfg = row["config"];
  }
  ASSERT_TRUE(cfg.is_object());
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(spec.ok()) << spec.errors()[0].message;
  EXPECT_TRUE(warnings.empty());
  const int64_t h = 1152, inter = 4304, merged = 4 * h, out = 5120;
  // patch_embed Conv3d(3, h, [2, 16, 16]) with bias + pos_embed 2304 x h + 27 blocks (two
  // LayerNorms, qkv and proj with biases, linear_fc1 / fc2 with biases).
  const int64_t block = 2 * 2 * h + (h * 3 * h + 3 * h) + (h * h + h) + (h * inter + inter) + (inter * h + h);
  const ParamCounts c = CountParams(spec.value());
  EXPECT_EQ(c.vision, 3 * 2 * 16 * 16 * h + h + 2304 * h + 27 * block);
  EXPECT_EQ(c.vision, 415891440);  // the same tower as Qwen3-VL-8B's fixture row
  // merger: norm LayerNorm(h), linear_fc1 Linear(4h, 4h), linear_fc2 Linear(4h, 5120), biases.
  EXPECT_EQ(c.projector, 2 * h + merged * merged + merged + merged * out + out);
  EXPECT_EQ(spec.value().vision.kind, VisionKind::kQwen3Vl);
  EXPECT_EQ(spec.value().model_type, "qwen3_5_text");
  json listed = cfg;
  listed["vision_config"]["deepstack_visual_indexes"] = {8, 16, 24};
  auto again = ModelSpecFromHfConfig(listed, "model", &warnings);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(CountParams(again.value()).projector, c.projector);
  // A text_config without model_type reads as the wrapper's default text config (Qwen3_5Config).
  json untyped = cfg;
  untyped["text_config"].erase("model_type");
  auto third = ModelSpecFromHfConfig(untyped, "model", &warnings);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(CountParams(third.value()).checkpoint_total, 27781427952);
}

// Qwen2-VL-2B (transformers modeling_qwen2_vl.py): a LayerNorm tower with a quick_gelu MLP of
// embed_dim x mlp_ratio and a PatchMerger to vision_config.hidden_size; the Hub's flat layout and
// the text_config layout (model_type qwen2_vl_text) read the same Qwen2 decoder.
TEST(VisionTower, Qwen2VlTowerMergerAndBothLayouts) {
  const json vision = {{"depth", 32},       {"embed_dim", 1280},         {"mlp_ratio", 4},
                       {"num_heads", 16},   {"in_chans", 3},             {"hidden_size", 1536},
                       {"patch_size", 14},  {"spatial_merge_size", 2},   {"temporal_patch_size", 2}};
  const json text = {{"hidden_size", 1536},       {"intermediate_size", 8960}, {"num_hidden_layers", 28},
                     {"num_attention_heads", 12}, {"num_key_value_heads", 2},  {"vocab_size", 151936},
                     {"tie_word_embeddings", true}};
  json flat = text;
  flat["model_type"] = "qwen2_vl";
  flat["vision_config"] = vision;
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(flat, "model", &warnings);
  ASSERT_TRUE(spec.ok()) << spec.errors()[0].message;
  EXPECT_TRUE(warnings.empty());
  const ParamCounts c = CountParams(spec.value());
  // patch_embed 3 x 2 x 14 x 14 x 1280 + 32 x (two LayerNorm(1280) 5,120 + qkv 4,919,040 + proj
  // 1,639,680 + fc1 6,558,720 + fc2 6,554,880).
  EXPECT_EQ(c.vision, 1505280 + 32 * 19677440LL);
  // ln_q LayerNorm(1280) with bias + Linear(5120, 5120) + Linear(5120, 1536), with biases.
  EXPECT_EQ(c.projector, 2 * 1280 + 5120 * 5120 + 5120 + 5120 * 1536 + 1536);
  EXPECT_EQ(c.total, 1543714304);
  EXPECT_EQ(c.checkpoint_total, 2208985600);  // Hub total of Qwen/Qwen2-VL-2B-Instruct
  json nested = {{"model_type", "qwen2_vl"}, {"text_config", text}, {"vision_config", vision}};
  nested["text_config"]["model_type"] = "qwen2_vl_text";
  auto again = ModelSpecFromHfConfig(nested, "model", &warnings);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(CountParams(again.value()).checkpoint_total, 2208985600);
  // mlp_ratio is a float in Qwen2VLVisionConfig: int(1280 x 2.5) = 3200.
  flat["vision_config"]["mlp_ratio"] = 2.5;
  auto ratio = ModelSpecFromHfConfig(flat, "model", &warnings);
  ASSERT_TRUE(ratio.ok());
  EXPECT_EQ(CountParams(ratio.value()).vision, 1505280 + 32 * (5120 + 4919040 + 1639680 + 1280 * 3200 + 3200 + 3200 * 1280 + 1280LL));
  flat["vision_config"]["mlp_ratio"] = "4";
  EXPECT_FALSE(ModelSpecFromHfConfig(flat, "model", &warnings).ok());
}

// SmolVLM-256M (Idefics3ForConditionalGeneration): Idefics3VisionTransformer and the connector's
// Linear(768 x 4^2, 576, bias=False); a text_config without model_type is Idefics3Config's llama.
TEST(VisionTower, Idefics3TowerAndConnector) {
  json cfg = {{"model_type", "idefics3"},
              {"scale_factor", 4},
              {"text_config", {{"hidden_size", 576}, {"intermediate_size", 1536}, {"num_hidden_layers", 30},
                               {"num_attention_heads", 9}, {"num_key_value_heads", 3}, {"vocab_size", 49280}}},
              {"vision_config", {{"hidden_size", 768}, {"image_size", 512}, {"intermediate_size", 3072},
                                 {"num_attention_heads", 12}, {"num_hidden_layers", 12}, {"patch_size", 16}}}};
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(spec.ok()) << spec.errors()[0].message;
  EXPECT_TRUE(warnings.empty());
  const ParamCounts c = CountParams(spec.value());
  EXPECT_EQ(c.vision, 86433024);     // a public per-module table of SmolVLM: model.vision_model
  EXPECT_EQ(c.projector, 7077888);   // 12,288 x 576
  EXPECT_EQ(c.checkpoint_total, 256484928);
  cfg["model_type"] = "smolvlm";     // SmolVLM2: the same classes (models/smolvlm/modular_smolvlm.py)
  auto smol = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(smol.ok());
  EXPECT_EQ(CountParams(smol.value()).checkpoint_total, 256484928);
}

// PaliGemma: SigLIP without the pooling head and a projector to the top-level projection_dim
// (PaliGemmaConfig writes it into vision_config, whatever vision_config says); a text_config
// without model_type is PaliGemmaConfig's gemma.
TEST(VisionTower, PaliGemmaProjectorReadsTheTopLevelProjectionDim) {
  json cfg = {{"model_type", "paligemma"},
              {"projection_dim", 2048},
              {"text_config", {{"hidden_size", 2048}, {"intermediate_size", 16384}, {"num_hidden_layers", 18},
                               {"num_attention_heads", 8}, {"num_key_value_heads", 1}, {"vocab_size", 257216}}},
              {"vision_config", {{"hidden_size", 1152}, {"intermediate_size", 4304}, {"num_attention_heads", 16},
                                 {"num_hidden_layers", 27}, {"patch_size", 14}, {"projection_dim", 999},
                                 {"vision_use_head", false}}}};
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(spec.ok()) << spec.errors()[0].message;
  EXPECT_TRUE(warnings.empty());
  const ParamCounts c = CountParams(spec.value());
  EXPECT_EQ(c.vision, 412442352);  // a public module print of paligemma-3b-mix-224: vision_tower
  EXPECT_EQ(c.projector, 1152 * 2048 + 2048);
  EXPECT_EQ(c.total, 2508662784);
  EXPECT_EQ(c.checkpoint_total, 2923466480);
}

// LLaVA-Interleave (llava with a SigLIP tower, 26 layers kept, no pooling head): the measured total
// of llava-hf/llava-interleave-qwen-0.5b-hf (LlavaForConditionalGeneration, a public run: 864,031,264)
// = Qwen1.5-0.5B with vocab 152,000 (464,053,248, tied) + SiglipVisionModel 397,747,744 + projector
// 1152 -> 1024 -> 1024 with biases 2,230,272. LLaVA-NeXT keeps CLIP only.
TEST(VisionTower, LlavaWithASiglipTower) {
  json cfg = {{"model_type", "llava"},
              {"vision_feature_layer", -1},
              {"vision_feature_select_strategy", "full"},
              {"text_config", {{"model_type", "qwen2"}, {"hidden_size", 1024}, {"intermediate_size", 2816},
                               {"num_hidden_layers", 24}, {"num_attention_heads", 16}, {"num_key_value_heads", 16},
                               {"vocab_size", 152000}, {"tie_word_embeddings", true}}},
              {"vision_config", {{"model_type", "siglip_vision_model"}, {"hidden_size", 1152}, {"image_size", 384},
                                 {"intermediate_size", 4304}, {"num_attention_heads", 16}, {"num_hidden_layers", 26},
                                 {"patch_size", 14}, {"vision_use_head", false}}}};
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(spec.ok()) << spec.errors()[0].message;
  EXPECT_TRUE(warnings.empty());
  const ParamCounts c = CountParams(spec.value());
  // patch Conv2d with bias 678,528 + 27^2 x 1152 positions 839,808 + 26 x 15,239,504 + post_layernorm 2,304.
  EXPECT_EQ(c.vision, 397747744);
  EXPECT_EQ(c.projector, 1152 * 1024 + 1024 + 1024 * 1024 + 1024);
  EXPECT_EQ(c.checkpoint_total, 864031264);
  EXPECT_EQ(spec.value().vision.kind, VisionKind::kSiglip);
  EXPECT_EQ(spec.value().vision.tokens_per_image, 729);  // "full": all 27 x 27 patches
  cfg["vision_feature_select_strategy"] = "default";     // [:, 1:] drops a patch (no CLS to drop)
  auto def = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(def.ok());
  EXPECT_EQ(def.value().vision.tokens_per_image, 728);
  cfg["model_type"] = "llava_next";
  auto next = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(CountParams(next.value()).vision, 0);
}

// InternVL (-hf, InternVLForConditionalGeneration): InternVLVisionModel and InternVLMultiModalProjector
// (modeling_internvl.py), worked by hand. InternVL3-1B's ViT-300M: cls_token 1,024 + patch Conv2d with
// bias 603,136 + (32^2 + 1) positions x 1,024 + 24 layers x 12,598,272 (q/k/v with bias, projection_layer
// with bias, fc1 / fc2 with bias, two LayerNorms, lambda_1 / lambda_2), no final norm (use_mean_pooling);
// projector LayerNorm(4,096) + Linear(4,096, 896) + Linear(896, 896) with biases. A text_config without
// model_type is InternVLConfig's qwen2.
TEST(VisionTower, InternVlTowerAndProjector) {
  json cfg = {{"model_type", "internvl"},
              {"downsample_ratio", 0.5},
              {"text_config", {{"hidden_size", 896}, {"intermediate_size", 4864}, {"num_hidden_layers", 24},
                               {"num_attention_heads", 14}, {"num_key_value_heads", 2}, {"vocab_size", 151674},
                               {"tie_word_embeddings", false}}},
              {"vision_config", {{"model_type", "internvl_vision"}, {"attention_bias", true}, {"hidden_size", 1024},
                                 {"image_size", {448, 448}}, {"intermediate_size", 4096}, {"norm_type", "layer_norm"},
                                 {"num_attention_heads", 16}, {"num_hidden_layers", 24}, {"patch_size", {14, 14}},
                                 {"use_qk_norm", false}}}};
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(spec.ok()) << spec.errors()[0].message;
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(spec.value().model_type, "qwen2");
  const ParamCounts c = CountParams(spec.value());
  EXPECT_EQ(c.vision, 1024 + 603136 + 1025 * 1024 + 24 * 12598272);
  EXPECT_EQ(c.vision, 304012288);
  EXPECT_EQ(c.projector, 2 * 4096 + 4096 * 896 + 896 + 896 * 896 + 896);
  EXPECT_EQ(c.checkpoint_total, c.total + 304012288 + 4482816);
  EXPECT_EQ(spec.value().vision.kind, VisionKind::kInternVl);
  EXPECT_EQ(spec.value().vision.merge, 2);
  EXPECT_FALSE(spec.value().vision.rms_norm);
  // Integer sizes read like the pairs (InternVLVisionConfig.__post_init__ makes a pair of an integer).
  cfg["vision_config"]["image_size"] = 448;
  cfg["vision_config"]["patch_size"] = 14;
  auto ints = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(ints.ok());
  EXPECT_EQ(CountParams(ints.value()).vision, 304012288);
  // InternViT-6B's layout (vit_6b_config of OpenGVLab's -hf converter): RMSNorm, q/k RMSNorm(h), no q/k/v bias;
  // a final LayerNorm only without mean pooling; a mask token only with use_mask_token.
  cfg["vision_config"] = {{"attention_bias", false}, {"hidden_size", 3200}, {"intermediate_size", 12800},
                          {"norm_type", "rms_norm"}, {"num_attention_heads", 25}, {"num_hidden_layers", 45},
                          {"use_qk_norm", true}, {"use_mean_pooling", false}, {"use_mask_token", true}};
  auto six = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(six.ok()) << six.errors()[0].message;
  const int64_t h = 3200, layer = 3 * h * h + (h * h + h) + 2 * h + (h * 12800 + 12800) + (12800 * h + h) + 2 * h + 2 * h;
  EXPECT_EQ(CountParams(six.value()).vision, 2 * h + (3 * 14 * 14 * h + h) + 1025 * h + 45 * layer + 2 * h);
  EXPECT_TRUE(six.value().vision.rms_norm);
  cfg["downsample_ratio"] = 2.0;  // int(1 / 2) = 0 would size LayerNorm(0): refused
  auto bad = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.errors()[0].field_path, "model.downsample_ratio");
}

// GLM-4.1V (glm4v) and GLM-4.5V (glm4v_moe): Glm4vVisionModel, worked by hand; the blocks' MLP is
// out_hidden_size wide, the merger's intermediate_size. The text_config reads as GLM-4-0414 (q/k/v
// always with bias in Glm4vTextAttention) or GLM-4.5's MoE decoder.
TEST(VisionTower, Glm4vTowerAndMerger) {
  json vision = {{"depth", 24}, {"hidden_size", 1536}, {"image_size", 336}, {"intermediate_size", 13696}, {"num_heads", 12},
                 {"out_hidden_size", 4096}, {"patch_size", 14}, {"spatial_merge_size", 2}, {"temporal_patch_size", 2}};
  json cfg = {{"model_type", "glm4v"},
              {"text_config", {{"model_type", "glm4v_text"}, {"hidden_size", 4096}, {"intermediate_size", 13696},
                               {"num_hidden_layers", 40}, {"num_attention_heads", 32}, {"num_key_value_heads", 2},
                               {"vocab_size", 151552}, {"attention_bias", false}}},
              {"vision_config", vision}};
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(spec.ok()) << spec.errors()[0].message;
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(spec.value().model_type, "glm4");
  const ParamCounts c = CountParams(spec.value());
  const int64_t block = 2 * 1536 + 1536 * 4608 + 1536 * 1536 + 3 * 1536 * 4096;
  EXPECT_EQ(c.vision, 576 * 1536 + (3 * 2 * 14 * 14 * 1536 + 1536) + 24 * block + 2 * 1536);
  EXPECT_EQ(c.projector, (1536 * 4 * 4096 + 4096) + 4096 * 4096 + 2 * 4096 + 3 * 4096 * 13696);
  EXPECT_EQ(c.total, 9400279040);  // attention_bias false in the config, bias in Glm4vTextAttention: counted
  EXPECT_EQ(c.checkpoint_total, 10292777472);
  EXPECT_EQ(spec.value().vision.kind, VisionKind::kGlm4v);
  EXPECT_EQ(spec.value().vision.intermediate, 4096);
  vision["attention_bias"] = true;  // qkv bias: 24 x 4,608 more
  cfg["vision_config"] = vision;
  auto biased = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(biased.ok());
  EXPECT_EQ(CountParams(biased.value()).vision, c.vision + 24 * 4608);
}

// Gemma 3n (model/gemma3n_towers.cpp) with a small text decoder: MobileNetV5-300M is fixed by the
// architecture name (294,126,912: the numel sum of timm.create_model("mobilenetv5_300m_enc")'s
// parameters, timm commit aa4b5850); the audio tower and the embedders follow the sub-configs.
TEST(VisionTower, Gemma3nMobileNetAudioAndEmbedders) {
  json text = {{"model_type", "gemma3n_text"}, {"hidden_size", 64}, {"intermediate_size", 128}, {"num_hidden_layers", 2},
               {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"head_dim", 16}, {"vocab_size", 100},
               {"vocab_size_per_layer_input", 50}, {"hidden_size_per_layer_input", 8}, {"num_kv_shared_layers", 0}};
  json audio = {{"model_type", "gemma3n_audio"}, {"hidden_size", 32}, {"conf_num_attention_heads", 4},
                {"conf_num_hidden_layers", 2}, {"conf_conv_kernel_size", 3}, {"input_feat_size", 16},
                {"sscp_conv_channel_size", {8, 4}}, {"vocab_size", 10}};
  json cfg = {{"model_type", "gemma3n"},
              {"text_config", text},
              {"vision_config", {{"model_type", "gemma3n_vision"}, {"architecture", "mobilenetv5_300m_enc"}, {"vocab_size", 10}}},
              {"audio_config", audio}};
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(spec.ok()) << spec.errors()[0].message;
  EXPECT_TRUE(warnings.empty()) << warnings[0].message;
  const ParamCounts c = CountParams(spec.value());
  EXPECT_EQ(c.vision, 294126912);
  // SSCP: conv_0 1 x 8 x 3 x 3 + norm 8, conv_1 8 x 4 x 9 + norm 4; mel bins 16 -> 8 -> 4, so
  // input_proj_linear 4 x 4 x 32 = 512. A block: feed-forwards 2 x (2 x 32 x 128 + 2 x 32) = 16,512,
  // attention q/k/v/pos_proj 4 x 32 x 32 + post 32 x 32 + per_dim_scale 8 + 2 norms 64 = 5,192,
  // light conv 2 norms 64 + 32 x 64 + depthwise 32 x 3 + 32 x 32 = 3,232, norm 32: 24,968.
  EXPECT_EQ(c.audio, 72 + 8 + 288 + 4 + 512 + 2 * 24968);
  // embed_vision 10 x 2048 + 2 x 2048 + 2048 x 64; embed_audio 10 x 32 + 2 x 32 + 32 x 64.
  EXPECT_EQ(c.projector, (20480 + 4096 + 131072) + (320 + 64 + 2048));
  EXPECT_EQ(c.checkpoint_total, c.total + c.vision + c.audio + c.projector);
  EXPECT_EQ(spec.value().vision.kind, VisionKind::kGemma3n);
  EXPECT_EQ(spec.value().vision.tokens_per_image, 256);
  // Another MobileNetV5 (or extra timm model_args): the shapes are unknown, so the text_model_only reading.
  cfg["vision_config"]["architecture"] = "mobilenetv5_base";
  warnings.clear();
  auto other = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(other.ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].code, "text_model_only");
  EXPECT_EQ(CountParams(other.value()).checkpoint_total, CountParams(other.value()).total);
  // Malformed SSCP shapes are errors naming the key.
  cfg["vision_config"]["architecture"] = "mobilenetv5_300m_enc";
  cfg["audio_config"]["sscp_conv_kernel_size"] = {3, 3};
  auto bad = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.errors()[0].field_path, "model.audio_config.sscp_conv_kernel_size");
}

// LLaVA-OneVision (llava_onevision): SiglipVisionModel + LlavaOnevisionMultiModalProjector + image_newline
// over a Qwen2 text_config, worked by hand (modeling_llava_onevision.py). The SigLIP so400m tower
// (26 layers, no head) is 397,747,744, the figure the LLaVA-Interleave-Qwen-0.5B row's measured total
// fixes; Qwen2-0.5B's decoder with the onevision vocabulary (152,000, tied) is Qwen2-0.5B's published
// 494,032,768 + 64 x 896 more embedding rows.
TEST(VisionTower, LlavaOnevisionSiglipMlpAndNewline) {
  json cfg = {{"model_type", "llava_onevision"},
              {"vision_feature_layer", -1},
              {"vision_feature_select_strategy", "full"},
              {"text_config", {{"model_type", "qwen2"}, {"hidden_size", 896}, {"intermediate_size", 4864},
                               {"num_hidden_layers", 24}, {"num_attention_heads", 14}, {"num_key_value_heads", 2},
                               {"tie_word_embeddings", true}, {"vocab_size", 152000}}},
              {"vision_config", {{"model_type", "siglip_vision_model"}, {"hidden_size", 1152}, {"image_size", 384},
                                 {"intermediate_size", 4304}, {"num_attention_heads", 16}, {"num_hidden_layers", 26},
                                 {"patch_size", 14}, {"vision_use_head", false}}}};
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(spec.ok()) << spec.errors()[0].message;
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(spec.value().model_type, "qwen2");
  const ParamCounts c = CountParams(spec.value());
  EXPECT_EQ(c.vision, 397747744);
  // linear_1 1152 -> 896 and linear_2 896 -> 896 with biases, image_newline [896].
  EXPECT_EQ(c.projector, (1152 * 896 + 896) + (896 * 896 + 896) + 896);
  EXPECT_EQ(c.total, 494032768 + 64 * 896);
  EXPECT_EQ(c.checkpoint_total, 494032768 + 64 * 896 + 397747744 + 1837696);
  EXPECT_EQ(spec.value().vision.kind, VisionKind::kLlavaOnevision);
  EXPECT_EQ(spec.value().vision.max_tiles, 6);  // LlavaOnevisionConfig's default grid: 1..6 tiles a side
  // No text_config model_type: LlavaOnevisionConfig's default Qwen2; multimodal_projector_bias false drops 2 x 896.
  cfg["text_config"].erase("model_type");
  cfg["multimodal_projector_bias"] = false;
  auto plain = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(plain.ok()) << plain.errors()[0].message;
  EXPECT_EQ(CountParams(plain.value()).projector, c.projector - 2 * 896);
  // A CLIP tower is not counted: the text_model_only reading.
  cfg["vision_config"]["model_type"] = "clip_vision_model";
  warnings.clear();
  auto clip = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(clip.ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].code, "text_model_only");
}

// LFM2-VL: the tower keeps vision_feature_layer + 1 layers (the Hub's Lfm2VlModel slices encoder.layers);
// projector_use_layernorm false (LFM2.5-VL) drops the projector's LayerNorm; "lfm2_vl" reads as "lfm2-vl".
TEST(VisionTower, Lfm2VlLayersAndProjector) {
  nlohmann::json table = testing_support::LoadFixture("param_counts.json");
  json cfg;
  for (const auto& row : table["models"]) {
    if (row["id"] == "LiquidAI/LFM2-VL-1.6B") cfg = row["config"];
  }
  ASSERT_TRUE(cfg.is_object());
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(spec.ok()) << spec.errors()[0].message;
  const ParamCounts c = CountParams(spec.value());
  const int64_t layer = 15239504;  // so400m: 2 LayerNorms, q/k/v/out and fc1/fc2 with biases
  EXPECT_EQ(c.vision, (768 * 1152 + 1152) + 256 * 1152 + 26 * layer + 2 * 1152);
  EXPECT_EQ(spec.value().vision.layers, 26);
  cfg["vision_feature_layer"] = -1;  // every layer kept
  cfg["model_type"] = "lfm2_vl";
  cfg["projector_use_layernorm"] = false;
  auto all = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(CountParams(all.value()).vision, c.vision + layer);
  EXPECT_EQ(CountParams(all.value()).projector, c.projector - 2 * 4608);
  EXPECT_TRUE(warnings.empty());
}

json RowConfig(const char* id) {
  nlohmann::json table = testing_support::LoadFixture("param_counts.json");
  for (const auto& row : table["models"]) {
    if (row["id"] == id) return row["config"];
  }
  return json();
}

// Kimi-VL (the Hub's modeling_kimi_vl.py): MoonViT and KimiVLMultiModalProjector worked by hand; the
// text_config read as deepseek_v3 (also when it names no model_type: KimiVLConfig's DeepseekV3Config).
TEST(VisionTower, KimiVlMoonVitAndProjector) {
  json cfg = RowConfig("moonshotai/Kimi-VL-A3B-Instruct");
  ASSERT_TRUE(cfg.is_object());
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(spec.ok()) << spec.errors()[0].message;
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(spec.value().model_type, "deepseek_v3");
  const ParamCounts c = CountParams(spec.value());
  // Layer: norm0 / norm1 LayerNorm(1152), wqkv 1152 -> 3456 and wo 1152 -> 1152 with biases, fc0 / fc1 with biases.
  const int64_t layer = 2 * 2 * 1152 + (1152 * 3456 + 3456) + (1152 * 1152 + 1152) + (1152 * 4304 + 4304) + (4304 * 1152 + 1152);
  EXPECT_EQ(layer, 15239504);
  // patch Conv2d(3, 1152, 14) with bias, pos_emb [64, 64, 1152], 27 layers, final_layernorm.
  EXPECT_EQ(c.vision, (3 * 14 * 14 * 1152 + 1152) + 64 * 64 * 1152 + 27 * layer + 2 * 1152);
  // pre_norm LayerNorm(1152), linear_1 4608 -> 4608 and linear_2 4608 -> 2048 with biases.
  EXPECT_EQ(c.projector, 2 * 1152 + (4608 * 4608 + 4608) + (4608 * 2048 + 2048));
  EXPECT_EQ(c.checkpoint_total, c.total + c.vision + c.projector);
  EXPECT_EQ(spec.value().vision.kind, VisionKind::kKimiVl);
  EXPECT_EQ(spec.value().vision.merge, 2);
  cfg["text_config"].erase("model_type");
  auto plain = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain.value().model_type, "deepseek_v3");
  EXPECT_EQ(CountParams(plain.value()).total, c.total);
  // A merge kernel that is not a square pair of small integers is refused by name.
  for (const json& bad : {json::array({2, 3}), json::array({2}), json("2x2")}) {
    json b = cfg;
    b["vision_config"]["merge_kernel_size"] = bad;
    auto refused = ModelSpecFromHfConfig(b, "model", &warnings);
    ASSERT_FALSE(refused.ok()) << bad.dump();
    EXPECT_EQ(refused.errors()[0].field_path, "model.vision_config.merge_kernel_size");
  }
  // Another tower keeps the text_model_only reading.
  cfg["vision_config"]["model_type"] = "siglip_vision_model";
  warnings.clear();
  auto other = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(other.ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].code, "text_model_only");
}

// Aya Vision (modeling_aya_vision.py): SiglipVisionModel and AyaVisionMultiModalProjector (LayerNorm
// over the 2 x 2 shuffled features, linear_1 to alignment_intermediate_size, SwiGLU halves, linear_2).
TEST(VisionTower, AyaVisionSiglipAndSwiGluProjector) {
  json cfg = RowConfig("CohereLabs/aya-vision-8b");
  ASSERT_TRUE(cfg.is_object());
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(spec.ok()) << spec.errors()[0].message;
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(spec.value().model_type, "cohere2");
  const ParamCounts c = CountParams(spec.value());
  // patch Conv2d(3, 1152, 14) with bias, (364 / 14)^2 = 676 positions, 27 so400m layers, post_layernorm, no head.
  EXPECT_EQ(c.vision, (3 * 14 * 14 * 1152 + 1152) + 676 * 1152 + 27 * int64_t{15239504} + 2 * 1152);
  EXPECT_EQ(c.projector, 2 * 4608 + (4608 * 28672 + 28672) + (14336 * 4096 + 4096));
  EXPECT_EQ(spec.value().vision.kind, VisionKind::kAyaVision);
  // No alignment_intermediate_size: getattr's default, the text hidden size (4096).
  cfg.erase("alignment_intermediate_size");
  cfg["text_config"].erase("model_type");  // AyaVisionConfig's default text model: cohere2
  auto plain = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain.value().model_type, "cohere2");
  EXPECT_EQ(CountParams(plain.value()).projector, 2 * 4608 + (4608 * 4096 + 4096) + (2048 * 4096 + 4096));
  // A CLIP tower is not counted.
  cfg["vision_config"]["model_type"] = "clip_vision_model";
  warnings.clear();
  auto clip = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(clip.ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].code, "text_model_only");
}

TEST(VisionTower, OtherWrappersKeepTheTextOnlyWarning) {
  json cfg = {{"model_type", "molmo"},
              {"text_config", {{"model_type", "llama"}, {"hidden_size", 64}, {"intermediate_size", 128},
                               {"num_hidden_layers", 2}, {"num_attention_heads", 4}, {"vocab_size", 100}}},
              {"vision_config", {{"model_type", "siglip_vision_model"}, {"hidden_size", 1024}}}};
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  ASSERT_TRUE(spec.ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].code, "text_model_only");
  const ParamCounts c = CountParams(spec.value());
  EXPECT_EQ(c.vision, 0);
  EXPECT_EQ(c.checkpoint_total, c.total);
}

}  // namespace
}  // namespace vramplan
