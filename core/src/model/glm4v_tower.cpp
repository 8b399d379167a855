#include "model/glm4v_tower.h"

#include "model/families/config_reader.h"
#include "model/internvl_tower.h"
#include "model/tower_count.h"

namespace vramplan {
namespace {

Count Linear(Count in, Count out, bool bias) { return in * out + (bias ? out : 0); }

}  // namespace

// transformers models/glm4v/modeling_glm4v.py (Glm4vVisionConfig defaults, the same in
// Glm4vMoeVisionConfig), Glm4vVisionModel:
//   embeddings.position_embedding Embedding((image_size / patch_size)^2, h) (interpolated to the image);
//   patch_embed.proj Conv3d(in_channels, h, [temporal_patch_size, patch, patch]) with bias;
//   `depth` Glm4vVisionBlock = norm1 / norm2 RMSNorm(h), attn.qkv Linear(h, 3h) with bias only with
//     attention_bias (default false), attn.proj Linear(h, h) without bias, Glm4VisionMlp gate / up /
//     down of out_hidden_size (not intermediate_size) without bias;
//   post_conv_layernorm and post_layernorm RMSNorm(h); the rotary inv_freq is a non-persistent buffer;
//   downsample Conv2d(h, out_hidden_size, spatial_merge_size) with bias;
//   merger Glm4vVisionPatchMerger(out_hidden_size, intermediate_size) = proj Linear(o, o),
//     post_projection_norm LayerNorm(o) with bias, gate / up Linear(o, intermediate), down
//     Linear(intermediate, o), none of the linears with bias.
VisionTowerParams CountGlm4vTower(const nlohmann::json& config, const std::string& path, Issues* errors) {
  const nlohmann::json& vc = config.at("vision_config");
  const std::string vc_path = io::JoinPath(path, "vision_config");
  families::ConfigReader v(vc, vc_path, errors);
  const Count h = v.Int({"hidden_size"}).value_or(1536);
  const Count depth = v.Int({"depth"}).value_or(24);
  const Count out = v.Int({"out_hidden_size"}).value_or(4096);
  const Count inter = v.Int({"intermediate_size"}).value_or(13696);
  const Count channels = v.Int({"in_channels"}).value_or(3);
  const Count temporal = v.Int({"temporal_patch_size"}, 1).value_or(2);
  const Count merge = v.Int({"spatial_merge_size"}, 1).value_or(2);
  const bool qkv_bias = v.Bool("attention_bias", false);
  // image_size / patch_size: an integer or a pair in Glm4vMoeVisionConfig; the square grid of the first.
  const int64_t patch = VisionConfigSide(vc, "patch_size", 14);
  const Count side = VisionConfigSide(vc, "image_size", 336) / patch;
  const Count block = 2 * h + Linear(h, 3 * h, qkv_bias) + Linear(h, h, false) + 2 * Linear(h, out, false) + Linear(out, h, false);
  VisionTowerParams p;
  p.vision = TowerParamsOrError(side * side * h + Linear(channels * temporal * patch * patch, h, true) + depth * block + 2 * h, vc_path, errors);
  const Count merger = Linear(out, out, false) + 2 * out + 2 * Linear(out, inter, false) + Linear(inter, out, false);
  p.projector = TowerParamsOrError(Linear(h * merge * merge, out, true) + merger, vc_path, errors);
  return p;
}

}  // namespace vramplan
