#include "model/vision_tower.h"

#include "model/families/config_reader.h"
#include "model/families/registry.h"
#include "model/gemma3n_towers.h"
#include "model/gemma4_towers.h"
#include "model/glm4v_tower.h"
#include "model/internvl_tower.h"
#include "model/kimi_vl_tower.h"
#include "model/lfm2_vl_tower.h"
#include "model/tower_count.h"

namespace vramplan {
namespace {

// A tower and its projector, before TowerParamsOrError turns them into VisionTowerParams.
struct TowerCounts {
  Count vision, projector;
};

Count Linear(Count in, Count out, bool bias) { return in * out + (bias ? out : 0); }

// One encoder layer of the SigLIP / CLIP / Llama 4 vision towers: two LayerNorm(h) with bias,
// q/k/v/out projections Linear(h, h) with bias, and a two-layer MLP of width `inter` with bias.
Count VitEncoderLayer(Count h, Count inter) {
  return 2 * (2 * h) + 4 * Linear(h, h, true) + Linear(h, inter, true) + Linear(inter, h, true);
}

// Qwen2VLVisionBlock's MLP width: int(embed_dim x mlp_ratio) (mlp_ratio a number, default 4).
int64_t Qwen2VlMlpWidth(const nlohmann::json& vision_config, int64_t embed_dim, const std::string& vc_path, Issues* errors) {
  auto it = vision_config.find("mlp_ratio");
  if (it == vision_config.end() || it->is_null()) return embed_dim * 4;
  const double ratio = it->is_number() ? it->get<double>() : -1.0;
  if (!(ratio > 0.0 && ratio <= 64.0)) {
    const std::string p = io::JoinPath(vc_path, "mlp_ratio");
    io::AddError(errors, "out_of_range", p, p + " must be a number in (0, 64], got " + io::Preview(*it));
    return 0;
  }
  return static_cast<int64_t>(static_cast<double>(embed_dim) * ratio);
}

// transformers models/qwen2_5_vl/modeling_qwen2_5_vl.py, Qwen2_5_VisionTransformerPretrainedModel:
// patch_embed Qwen2_5_VisionPatchEmbed = Conv3d(in_channels, hidden, kernel [temporal_patch_size,
// patch_size, patch_size], bias=False); `depth` Qwen2_5_VLVisionBlock = norm1/norm2 Qwen2RMSNorm(hidden),
// Qwen2_5_VLVisionAttention qkv Linear(h, 3h) + proj Linear(h, h) with biases, Qwen2_5_VLMLP(bias=True)
// gate/up/down of intermediate_size; merger Qwen2_5_VLPatchMerger = ln_q Qwen2RMSNorm(hidden) and
// mlp Linear(hidden * merge^2, hidden * merge^2), GELU, Linear(hidden * merge^2, out_hidden_size),
// with biases. The rotary inv_freq is a non-persistent buffer. The merger is the projector here.
TowerCounts Qwen25Vl(families::ConfigReader& v) {
  const Count h = v.Required({"hidden_size", "embed_dim"});
  const Count depth = v.Required({"depth"});
  const Count inter = v.Required({"intermediate_size"});
  const Count out = v.Required({"out_hidden_size"});
  const Count channels = v.Int({"in_channels", "in_chans"}).value_or(3);
  const Count patch = v.Int({"patch_size", "spatial_patch_size"}).value_or(14);
  const Count temporal = v.Int({"temporal_patch_size"}).value_or(2);
  const Count merge = v.Int({"spatial_merge_size"}).value_or(2);
  const Count block = 2 * h + Linear(h, 3 * h, true) + Linear(h, h, true) + 2 * Linear(h, inter, true) +
                        Linear(inter, h, true);
  const Count merged = h * merge * merge;
  return {channels * temporal * patch * patch * h + depth * block, h + Linear(merged, merged, true) + Linear(merged, out, true)};
}

// transformers models/qwen2_vl/modeling_qwen2_vl.py (commit 00b676f), Qwen2VisionTransformerPretrainedModel
// (Qwen2VLVisionConfig defaults): patch_embed PatchEmbed = Conv3d(in_channels, embed_dim,
// [temporal_patch_size, patch, patch], bias=False); `depth` Qwen2VLVisionBlock = norm1 / norm2
// LayerNorm(embed_dim) with bias, VisionAttention qkv Linear(e, 3e) + proj Linear(e, e) with biases,
// VisionMlp fc1 / fc2 of int(embed_dim x mlp_ratio) with biases (quick_gelu, not gated); merger
// PatchMerger = ln_q LayerNorm(embed_dim) + mlp Linear(e m^2, e m^2), GELU, Linear(e m^2, hidden_size)
// with biases, where vision_config.hidden_size is the text decoder's width. The Hub configs spell
// in_channels "in_chans", which Qwen2VLVisionConfig ignores (its in_channels default is 3 either way).
TowerCounts Qwen2Vl(families::ConfigReader& v, const nlohmann::json& vision_config, const std::string& vc_path, Issues* errors) {
  const Count e = v.Int({"embed_dim"}).value_or(1280);
  const Count depth = v.Int({"depth"}).value_or(32);
  const Count out = v.Int({"hidden_size"}).value_or(3584);
  const Count channels = v.Int({"in_channels"}).value_or(3);
  const Count patch = v.Int({"patch_size"}, 1).value_or(14);
  const Count temporal = v.Int({"temporal_patch_size"}, 1).value_or(2);
  const Count merge = v.Int({"spatial_merge_size"}, 1).value_or(2);
  const Count inter = Qwen2VlMlpWidth(vision_config, e.get(), vc_path, errors);
  const Count block = 2 * (2 * e) + Linear(e, 3 * e, true) + Linear(e, e, true) + Linear(e, inter, true) + Linear(inter, e, true);
  const Count merged = e * merge * merge;
  return {channels * temporal * patch * patch * e + depth * block, 2 * e + Linear(merged, merged, true) + Linear(merged, out, true)};
}

// transformers models/siglip/modeling_siglip.py, SiglipVisionTransformer (defaults of
// SiglipVisionConfig): SiglipVisionEmbeddings patch_embedding Conv2d(num_channels, h, patch, bias)
// + position_embedding Embedding((image_size / patch_size)^2, h); num_hidden_layers
// SiglipEncoderLayer = layer_norm1/2 LayerNorm(h), q/k/v/out_proj Linear(h, h) with bias, SiglipMLP
// fc1/fc2 with bias; post_layernorm; SiglipMultiheadAttentionPoolingHead when vision_use_head
// (probe, nn.MultiheadAttention in_proj 3h x h + out_proj, layernorm, SiglipMLP).
Count Siglip(families::ConfigReader& v) {
  const Count h = v.Int({"hidden_size"}).value_or(768);
  const Count inter = v.Int({"intermediate_size"}).value_or(3072);
  const Count layers = v.Int({"num_hidden_layers"}).value_or(12);
  const Count channels = v.Int({"num_channels"}).value_or(3);
  const Count image = v.Int({"image_size"}, 1).value_or(224);
  const Count patch = v.Int({"patch_size"}, 1).value_or(16);
  const bool head = v.Bool("vision_use_head", true);
  const Count mlp = Linear(h, inter, true) + Linear(inter, h, true);
  const Count side = image / patch;
  Count n = channels * patch * patch * h + h + side * side * h;
  n += layers * VitEncoderLayer(h, inter);
  n += 2 * h;
  if (head) n += h + Linear(h, 3 * h, true) + Linear(h, h, true) + 2 * h + mlp;
  return n;
}

// transformers models/idefics3/modeling_idefics3.py, Idefics3VisionTransformer (Idefics3VisionConfig
// defaults; SmolVLM's SmolVLMVisionTransformer in models/smolvlm is the same module set):
// Idefics3VisionEmbeddings patch_embedding Conv2d(num_channels, h, patch, bias) + position_embedding
// Embedding((image_size / patch_size)^2, h); num_hidden_layers Idefics3EncoderLayer = layer_norm1/2
// LayerNorm(h), q/k/v/out_proj Linear(h, h) with bias, fc1/fc2 of intermediate_size with bias;
// post_layernorm LayerNorm(h). No CLS token, no pooling head.
Count Idefics3Vision(families::ConfigReader& v) {
  const Count h = v.Int({"hidden_size"}).value_or(1152);
  const Count inter = v.Int({"intermediate_size"}).value_or(3072);
  const Count layers = v.Int({"num_hidden_layers"}).value_or(12);
  const Count channels = v.Int({"num_channels"}).value_or(3);
  const Count image = v.Int({"image_size"}, 1).value_or(224);
  const Count patch = v.Int({"patch_size"}, 1).value_or(32);
  const Count side = image / patch;
  return channels * patch * patch * h + h + side * side * h + layers * VitEncoderLayer(h, inter) + 2 * h;
}

// transformers models/pixtral/modeling_pixtral.py, PixtralVisionModel (PixtralVisionConfig
// defaults): patch_conv Conv2d(num_channels, h, patch, bias=False), ln_pre RMSNorm(h),
// num_hidden_layers PixtralAttentionLayer = attention_norm / ffn_norm RMSNorm(h), q/k/v/o_proj
// Linear(h, h) and PixtralMLP gate/up/down of intermediate_size, all without bias; the rotary
// inv_freq is a non-persistent buffer.
Count Pixtral(families::ConfigReader& v) {
  const Count h = v.Int({"hidden_size"}).value_or(1024);
  const Count inter = v.Int({"intermediate_size"}).value_or(4096);
  const Count layers = v.Int({"num_hidden_layers"}).value_or(24);
  const Count channels = v.Int({"num_channels"}).value_or(3);
  const Count patch = v.Int({"patch_size"}, 1).value_or(16);
  return channels * patch * patch * h + h + layers * (2 * h + 4 * h * h + 3 * h * inter);
}

// transformers models/llama4/modeling_llama4.py, Llama4VisionModel (Llama4VisionConfig defaults):
// patch_embedding Llama4UnfoldConvolution = Linear(num_channels x patch^2, h, bias=False),
// class_embedding [h], positional_embedding_vlm [(image_size / patch_size)^2 + 1, h],
// layernorm_pre / layernorm_post LayerNorm(h); num_hidden_layers Llama4VisionEncoderLayer =
// q/k/v/o_proj Linear(h, h) with bias, Llama4VisionMLP fc1 / fc2 of intermediate_size with bias,
// input_layernorm / post_attention_layernorm LayerNorm(h); vision_adapter
// Llama4VisionPixelShuffleMLP whose Llama4VisionMLP2 is fc1 Linear(intermediate_size,
// projector_input_dim) + fc2 Linear(projector_input_dim, projector_output_dim), no biases.
Count Llama4Vision(families::ConfigReader& v) {
  const Count h = v.Int({"hidden_size"}).value_or(768);
  const Count inter = v.Int({"intermediate_size"}).value_or(5632);
  const Count layers = v.Int({"num_hidden_layers"}).value_or(34);
  const Count channels = v.Int({"num_channels"}).value_or(3);
  const Count image = v.Int({"image_size"}, 1).value_or(448);
  const Count patch = v.Int({"patch_size"}, 1).value_or(14);
  const Count proj_in = v.Int({"projector_input_dim"}).value_or(4096);
  const Count proj_out = v.Int({"projector_output_dim"}).value_or(4096);
  const Count side = image / patch;
  Count n = channels * patch * patch * h + h + (side * side + 1) * h + 2 * (2 * h);
  n += layers * VitEncoderLayer(h, inter);
  n += Linear(inter, proj_in, false) + Linear(proj_in, proj_out, false);
  return n;
}

// transformers models/qwen3_vl/modeling_qwen3_vl.py, Qwen3VLVisionModel (also Qwen3-VL-MoE's):
// patch_embed Qwen3VLVisionPatchEmbed = Conv3d(in_channels, h, [temporal_patch_size, patch, patch],
// bias=True); pos_embed Embedding(num_position_embeddings, h); `depth` Qwen3VLVisionBlock = norm1 /
// norm2 LayerNorm(h), attn qkv Linear(h, 3h) + proj Linear(h, h) with biases, Qwen3VLVisionMLP
// linear_fc1 / linear_fc2 of intermediate_size with biases. The projector: merger
// Qwen3VLVisionPatchMerger = norm LayerNorm(h), linear_fc1 Linear(h m^2, h m^2), linear_fc2
// Linear(h m^2, out_hidden_size), with biases; and one deepstack merger per
// deepstack_visual_indexes entry, the same but with its norm over h m^2 (use_postshuffle_norm).
// Qwen3.5 (transformers models/qwen3_5/modular_qwen3_5.py Qwen3_5VisionModel, also Qwen3.5-MoE's)
// is this tower with `del self.deepstack_merger_list`: no deepstack mergers whatever the config
// lists (`deepstack` false).
TowerCounts Qwen3Vl(families::ConfigReader& v, const nlohmann::json& vision_config, bool deepstack_mergers) {
  const Count h = v.Int({"hidden_size"}).value_or(1152);
  const Count depth = v.Int({"depth"}).value_or(27);
  const Count inter = v.Int({"intermediate_size"}).value_or(4304);
  const Count out = v.Int({"out_hidden_size"}).value_or(3584);
  const Count channels = v.Int({"in_channels"}).value_or(3);
  const Count patch = v.Int({"patch_size"}, 1).value_or(16);
  const Count temporal = v.Int({"temporal_patch_size"}, 1).value_or(2);
  const Count merge = v.Int({"spatial_merge_size"}, 1).value_or(2);
  const Count positions = v.Int({"num_position_embeddings"}).value_or(2304);
  auto ds = vision_config.find("deepstack_visual_indexes");
  const Count deepstack = !deepstack_mergers ? 0 : ds != vision_config.end() && ds->is_array() ? static_cast<int64_t>(ds->size()) : 3;
  const Count merged = h * merge * merge;
  const Count block = 2 * (2 * h) + Linear(h, 3 * h, true) + Linear(h, h, true) + Linear(h, inter, true) + Linear(inter, h, true);
  const Count merger_linears = Linear(merged, merged, true) + Linear(merged, out, true);
  return {Linear(channels * temporal * patch * patch, h, true) + positions * h + depth * block,
          2 * h + merger_linears + deepstack * (2 * merged + merger_linears)};
}

// transformers models/clip/modeling_clip.py, CLIPVisionModel (CLIPVisionConfig defaults): embeddings
// class_embedding [h], patch_embedding Conv2d(num_channels, h, patch, bias=False),
// position_embedding Embedding((image_size / patch_size)^2 + 1, h); pre_layrnorm LayerNorm(h);
// num_hidden_layers CLIPEncoderLayer = q/k/v/out_proj Linear(h, h) with bias, layer_norm1 / 2,
// CLIPMLP fc1 / fc2 of intermediate_size with bias; post_layernorm. LLaVA checkpoints store every
// layer, also those after vision_feature_layer.
Count ClipVision(families::ConfigReader& v) {
  const Count h = v.Int({"hidden_size"}).value_or(768);
  const Count inter = v.Int({"intermediate_size"}).value_or(3072);
  const Count layers = v.Int({"num_hidden_layers"}).value_or(12);
  const Count channels = v.Int({"num_channels"}).value_or(3);
  const Count image = v.Int({"image_size"}, 1).value_or(224);
  const Count patch = v.Int({"patch_size"}, 1).value_or(32);
  const Count side = image / patch;
  Count n = h + channels * patch * patch * h + (side * side + 1) * h + 2 * h;
  n += layers * VitEncoderLayer(h, inter);
  return n + 2 * h;
}

// transformers models/mllama/modeling_mllama.py, MllamaVisionModel (MllamaVisionConfig defaults):
// patch_embedding Conv2d(num_channels, h, patch, bias=False), class_embedding [h],
// gated_positional_embedding (gate [1], embedding [P, h], tile_embedding Embedding(R + 1, tiles x P
// x h)) with P = (image_size / patch_size)^2 + 1 and R = len(supported_aspect_ratios) (the
// max_aspect_ratio_id), pre_ and post_tile_positional_embedding (Embedding(R + 1, tiles x h) and a
// gate each), layernorm_pre / layernorm_post, and num_hidden_layers + num_global_layers
// MllamaVisionEncoderLayer: q/k/v/o Linear(h, h) without bias, fc1 / fc2 with biases, two
// LayerNorms; the global layers add gate_attn and gate_ffn.
Count MllamaVision(families::ConfigReader& v) {
  const Count h = v.Int({"hidden_size"}).value_or(1280);
  const Count inter = v.Int({"intermediate_size"}).value_or(5120);
  const Count layers = v.Int({"num_hidden_layers"}).value_or(32);
  const Count global = v.Int({"num_global_layers"}).value_or(8);
  const Count channels = v.Int({"num_channels"}).value_or(3);
  const Count image = v.Int({"image_size"}, 1).value_or(448);
  const Count patch = v.Int({"patch_size"}, 1).value_or(14);
  const int64_t tiles = v.Int({"max_num_tiles"}, 1, 64).value_or(4);
  // MllamaVisionConfig: supported_aspect_ratios defaults to every (w, h) tile grid with w x h <= max_num_tiles.
  Count ratios = 0;
  auto sr = v.raw().find("supported_aspect_ratios");
  if (sr != v.raw().end() && sr->is_array()) {
    ratios = static_cast<int64_t>(sr->size());
  } else {
    for (int64_t w = 1; w <= tiles; ++w) ratios += tiles / w;
  }
  const Count side = image / patch;
  const Count positions = side * side + 1;
  const Count layer = 4 * Linear(h, h, false) + Linear(h, inter, true) + Linear(inter, h, true) + 2 * (2 * h);
  Count n = channels * patch * patch * h + h;
  n += 1 + positions * h + (ratios + 1) * tiles * positions * h;
  n += 2 * ((ratios + 1) * tiles * h + 1);
  n += 2 * (2 * h);
  return n + (layers + global) * layer + 2 * global;
}

}  // namespace

bool VisionTowerCounted(const std::string& wrapper_type, const nlohmann::json& config) {
  for (const char* t : {"qwen2_vl", "qwen2_5_vl", "gemma3", "mistral3", "llama4", "qwen3_vl", "qwen3_vl_moe", "qwen3_5", "qwen3_5_moe", "gemma4",
                        "gemma4_unified", "mllama", "idefics3", "smolvlm",
                        "paligemma", "internvl", "glm4v", "glm4v_moe"}) {
    if (wrapper_type == t) return true;
  }
  // Gemma 3n: when vision_config names the MobileNetV5 the count knows (model/gemma3n_towers.h).
  if (wrapper_type == "gemma3n") return Gemma3nVisionTowerKnown(config);
  if (wrapper_type == "llava_onevision") return LlavaOnevisionSiglipTower(config);
  if (wrapper_type == "lfm2-vl" || wrapper_type == "lfm2_vl") return true;
  // KimiVLConfig builds vision_config as MoonViTConfig, AyaVisionConfig as a siglip_vision_model when
  // it names no model_type; another tower keeps the text_model_only reading.
  if (wrapper_type == "kimi_vl") return VisionConfigTypeIs(config, "moonvit");
  if (wrapper_type == "aya_vision") return VisionConfigTypeIs(config, "siglip_vision_model");
  if (wrapper_type != "llava" && wrapper_type != "llava_next") return false;
  auto vc = config.find("vision_config");
  if (vc == config.end() || !vc->is_object()) return false;
  auto mt = vc->find("model_type");
  if (mt == vc->end() || (mt->is_string() && mt->get<std::string>() == "clip_vision_model")) return true;
  // LLaVA (not LLaVA-NeXT's tiles) with a SigLIP tower: LLaVA-Interleave.
  return wrapper_type == "llava" && mt->is_string() && mt->get<std::string>() == "siglip_vision_model";
}

bool VisionConfigTypeIs(const nlohmann::json& config, const char* model_type) {
  auto vc = config.find("vision_config");
  if (vc == config.end() || !vc->is_object()) return false;
  auto mt = vc->find("model_type");
  return mt == vc->end() || (mt->is_string() && mt->get<std::string>() == model_type);
}

bool LlavaSiglipTower(const nlohmann::json& config) {
  auto vc = config.find("vision_config");
  if (vc == config.end() || !vc->is_object()) return false;
  auto mt = vc->find("model_type");
  return mt != vc->end() && mt->is_string() && mt->get<std::string>() == "siglip_vision_model";
}

bool LlavaOnevisionSiglipTower(const nlohmann::json& config) {
  // LlavaOnevisionConfig (configuration_llava_onevision.py) builds vision_config as a
  // siglip_vision_model when it names no model_type; other towers keep the text_model_only reading.
  auto vc = config.find("vision_config");
  if (vc == config.end() || !vc->is_object()) return false;
  auto mt = vc->find("model_type");
  return mt == vc->end() || (mt->is_string() && mt->get<std::string>() == "siglip_vision_model");
}

std::optional<VisionTowerParams> CountVisionTower(const std::string& wrapper_type, const nlohmann::json& config,
                                                  const std::string& path, int64_t text_hidden, Issues* errors) {
  auto vc = config.find("vision_config");
  if (vc == config.end() || !vc->is_object()) return std::nullopt;
  const std::string vc_path = io::JoinPath(path, "vision_config");
  families::ConfigReader v(*vc, vc_path, errors);
  const auto checked = [&](Count c) { return TowerParamsOrError(c, vc_path, errors); };
  const auto params = [&](TowerCounts t) {
    VisionTowerParams p;
    p.vision = checked(t.vision);
    p.projector = checked(t.projector);
    return p;
  };
  if (wrapper_type == "qwen2_vl") return params(Qwen2Vl(v, *vc, vc_path, errors));
  if (wrapper_type == "qwen2_5_vl") return params(Qwen25Vl(v));
  if (wrapper_type == "gemma3n") {
    const families::TowerCount count = families::Gemma3nTowerCount();
    return count != nullptr ? count(config, path, text_hidden, errors) : VisionTowerParams{};
  }
  if (wrapper_type == "gemma4") return CountGemma4Towers(config, path, text_hidden, errors);
  if (wrapper_type == "gemma4_unified") return CountGemma4UnifiedEmbedders(config, path, text_hidden, errors);
  if (wrapper_type == "lfm2-vl" || wrapper_type == "lfm2_vl") return CountLfm2VlTower(config, path, text_hidden, errors);
  if (wrapper_type == "internvl") return CountInternVlTower(config, path, text_hidden, errors);
  if (wrapper_type == "glm4v" || wrapper_type == "glm4v_moe") return CountGlm4vTower(config, path, errors);
  if (wrapper_type == "kimi_vl") return CountKimiVlTower(config, path, text_hidden, errors);
  if (wrapper_type == "aya_vision") {
    // transformers models/aya_vision/modeling_aya_vision.py (v4.50+): vision_tower =
    // AutoModel.from_config(vision_config), a SiglipVisionModel (the Hub configs: so400m, 27 layers,
    // 364 px, vision_use_head false; post_layernorm is stored and run, its output unused with
    // vision_feature_layer -1); AyaVisionMultiModalProjector over the pixel-shuffled features =
    // layernorm LayerNorm(vision h f^2), linear_1 Linear(vision h f^2, A), SwiGLU over A's two halves,
    // linear_2 Linear(A / 2, text h), with biases; f = downsample_factor (AyaVisionConfig default 2),
    // A = alignment_intermediate_size (getattr default: text_config.hidden_size).
    VisionTowerParams p;
    p.vision = checked(Siglip(v));
    families::ConfigReader top(config, path, errors);
    const Count vh = v.Int({"hidden_size"}).value_or(768);
    const Count f = top.Int({"downsample_factor"}, 1, 64).value_or(2);
    const Count a = top.Int({"alignment_intermediate_size"}, 2).value_or(text_hidden);
    const Count shuffled = vh * f * f;
    p.projector = checked(2 * shuffled + Linear(shuffled, a, true) + Linear(a / 2, text_hidden, true));
    return p;
  }
  if (wrapper_type == "mllama") {
    // MllamaForConditionalGeneration.multi_modal_projector: Linear(vision_output_dim, text h, bias=True).
    VisionTowerParams p;
    p.vision = checked(MllamaVision(v));
    p.projector = checked(Linear(v.Int({"vision_output_dim"}).value_or(7680), text_hidden, true));
    return p;
  }
  if (wrapper_type == "gemma3") {
    // transformers models/gemma3/modeling_gemma3.py, Gemma3MultiModalProjector:
    // mm_input_projection_weight (vision hidden x text hidden) and mm_soft_emb_norm
    // Gemma3RMSNorm(vision hidden); the AvgPool2d has no weights.
    VisionTowerParams p;
    p.vision = checked(Siglip(v));
    const Count vh = v.Int({"hidden_size"}).value_or(768);
    p.projector = checked(vh * text_hidden + vh);
    return p;
  }
  if (wrapper_type == "mistral3") {
    // transformers models/mistral3/modeling_mistral3.py, Mistral3MultiModalProjector: norm
    // RMSNorm(vision h), patch_merger.merging_layer Linear(h m^2, h, bias=False), linear_1
    // Linear(h x feature layers, text h) and linear_2 Linear(text h, text h), with biases when
    // multimodal_projector_bias (Mistral3Config default false).
    VisionTowerParams p;
    p.vision = checked(Pixtral(v));
    families::ConfigReader top(config, path, errors);
    const Count vh = v.Int({"hidden_size"}).value_or(1024);
    const Count merge = top.Int({"spatial_merge_size"}, 1).value_or(2);
    const bool bias = top.Bool("multimodal_projector_bias", false);
    auto fl = config.find("vision_feature_layer");
    const Count feature_layers = fl != config.end() && fl->is_array() ? static_cast<int64_t>(fl->size()) : 1;
    p.projector = checked(vh + Linear(vh * merge * merge, vh, false) + Linear(vh * feature_layers, text_hidden, bias) +
                  Linear(text_hidden, text_hidden, bias));
    return p;
  }
  if (wrapper_type == "idefics3" || wrapper_type == "smolvlm") {
    // Idefics3Connector (modeling_idefics3.py; SmolVLMConnector likewise): the pixel shuffle folds
    // scale_factor^2 patches into one vector (no weights), then modality_projection
    // Idefics3SimpleMLP proj = Linear(vision h x scale_factor^2, text h, bias=False).
    VisionTowerParams p;
    p.vision = checked(Idefics3Vision(v));
    families::ConfigReader top(config, path, errors);
    const Count vh = v.Int({"hidden_size"}).value_or(1152);
    const Count scale = top.Int({"scale_factor"}, 1, 64).value_or(2);
    p.projector = checked(vh * scale * scale * text_hidden);
    return p;
  }
  if (wrapper_type == "paligemma") {
    // transformers models/paligemma/modeling_paligemma.py: vision_tower SiglipVisionModel (the Hub
    // configs set vision_use_head false), multi_modal_projector PaliGemmaMultiModalProjector linear =
    // Linear(vision h, projection_dim, bias=True); PaliGemmaConfig.__init__ overwrites
    // vision_config.projection_dim with its own top-level projection_dim (default 2048).
    VisionTowerParams p;
    p.vision = checked(Siglip(v));
    families::ConfigReader top(config, path, errors);
    const Count vh = v.Int({"hidden_size"}).value_or(768);
    p.projector = checked(Linear(vh, top.Int({"projection_dim"}).value_or(2048), true));
    return p;
  }
  if (wrapper_type == "qwen3_vl" || wrapper_type == "qwen3_vl_moe") return params(Qwen3Vl(v, *vc, true));
  if (wrapper_type == "qwen3_5" || wrapper_type == "qwen3_5_moe") return params(Qwen3Vl(v, *vc, false));
  if (wrapper_type == "llava" || wrapper_type == "llava_next") {
    // transformers models/llava/modeling_llava.py, LlavaMultiModalProjector: linear_1 Linear(vision h
    // x feature layers, text h) + linear_2 Linear(text h, text h), with biases unless
    // multimodal_projector_bias is false; LLaVA-NeXT (modeling_llava_next.py) adds image_newline [text h].
    // LlavaModel.vision_tower = AutoModel.from_config(vision_config): CLIPVisionModel, or
    // SiglipVisionModel for a siglip_vision_model vision_config (LLaVA-Interleave).
    VisionTowerParams p;
    p.vision = checked(LlavaSiglipTower(config) ? Siglip(v) : ClipVision(v));
    families::ConfigReader top(config, path, errors);
    const Count vh = v.Int({"hidden_size"}).value_or(768);
    const bool bias = top.Bool("multimodal_projector_bias", true);
    auto fl = config.find("vision_feature_layer");
    const Count feature_layers = fl != config.end() && fl->is_array() ? static_cast<int64_t>(fl->size()) : 1;
    p.projector = checked(Linear(vh * feature_layers, text_hidden, bias) + Linear(text_hidden, text_hidden, bias));
    if (wrapper_type == "llava_next") p.projector = checked(Count(p.projector) + text_hidden);
    return p;
  }
  if (wrapper_type == "llava_onevision") {
    // transformers models/llava_onevision/modeling_llava_onevision.py, LlavaOnevisionModel:
    // vision_tower SiglipVisionModel (the Hub configs: so400m, 26 layers, vision_use_head false),
    // multi_modal_projector LlavaOnevisionMultiModalProjector = linear_1 Linear(vision h x feature
    // layers, text h) + GELU + linear_2 Linear(text h, text h), biases unless
    // multimodal_projector_bias is false (default true), and image_newline, a parameter [text h]
    // (the projector here: it is the vision side's only other weight).
    VisionTowerParams p;
    p.vision = checked(Siglip(v));
    families::ConfigReader top(config, path, errors);
    const Count vh = v.Int({"hidden_size"}).value_or(768);
    const bool bias = top.Bool("multimodal_projector_bias", true);
    auto fl = config.find("vision_feature_layer");
    const Count feature_layers = fl != config.end() && fl->is_array() ? static_cast<int64_t>(fl->size()) : 1;
    p.projector = checked(Linear(vh * feature_layers, text_hidden, bias) + Linear(text_hidden, text_hidden, bias) + text_hidden);
    return p;
  }
  if (wrapper_type == "llama4") {
    // Llama4MultiModalProjector: linear_1 Linear(vision_output_dim, text hidden), bias only with
    // multi_modal_projector_bias (vision_config; false in the released models).
    VisionTowerParams p;
    p.vision = checked(Llama4Vision(v));
    const Count out = v.Int({"vision_output_dim"}).value_or(7680);
    p.projector = checked(Linear(out, text_hidden, v.Bool("multi_modal_projector_bias", false)));
    return p;
  }
  return std::nullopt;
}

}  // namespace vramplan
