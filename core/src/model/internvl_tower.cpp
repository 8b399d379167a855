#include "model/internvl_tower.h"

#include <cmath>

#include "model/families/config_reader.h"
#include "model/tower_count.h"

namespace vramplan {
namespace {

Count Linear(Count in, Count out, bool bias) { return in * out + (bias ? out : 0); }

// transformers models/internvl/modeling_internvl.py (InternVLVisionConfig defaults in
// configuration_internvl.py): InternVLVisionModel =
//   embeddings: cls_token [h], mask_token [h] only with use_mask_token (default false),
//     patch_embeddings.projection Conv2d(num_channels, h, patch) with bias, position_embeddings
//     [(H / ph) (W / pw) + 1, h] with use_absolute_position_embeddings (default true);
//   num_hidden_layers InternVLVisionLayer: q/k/v_proj Linear(h, h) with bias only with
//     attention_bias (default false; the InternViT-300M configs say true), projection_layer
//     Linear(h, h) with bias, q_norm / k_norm RMSNorm(h) with use_qk_norm (InternViT-6B),
//     InternVLVisionMLP fc1 / fc2 of intermediate_size with bias, layernorm_before / _after
//     (NORM2FN[norm_type]: nn.LayerNorm with bias, or InternVLVisionRMSNorm with a weight only),
//     layer-scale lambda_1 / lambda_2 [h];
//   layernorm: nn.Identity with use_mean_pooling (default true), else LayerNorm(h).
Count Vision(families::ConfigReader& v, const nlohmann::json& vc) {
  const Count h = v.Int({"hidden_size"}).value_or(1024);
  const Count inter = v.Int({"intermediate_size"}).value_or(4096);
  const Count layers = v.Int({"num_hidden_layers"}).value_or(24);
  const Count channels = v.Int({"num_channels"}).value_or(3);
  const bool rms = v.String("norm_type", "layer_norm") == "rms_norm";
  const bool qkv_bias = v.Bool("attention_bias", false);
  const bool qk_norm = v.Bool("use_qk_norm", false);
  const auto pair = [&](const char* key, size_t i, int64_t fallback) {
    auto it = vc.find(key);
    if (it != vc.end() && it->is_array() && it->size() == 2 && (*it)[i].is_number_integer() && (*it)[i].get<int64_t>() >= 1 &&
        (*it)[i].get<int64_t>() <= families::kMaxDim) {
      return (*it)[i].get<int64_t>();
    }
    return VisionConfigSide(vc, key, fallback);
  };
  const Count patches = Count(pair("image_size", 0, 448) / pair("patch_size", 0, 14)) * Count(pair("image_size", 1, 448) / pair("patch_size", 1, 14));
  const Count norm = rms ? h : 2 * h;
  const Count layer = 3 * Linear(h, h, qkv_bias) + Linear(h, h, true) + (qk_norm ? 2 * h : 0) + Linear(h, inter, true) +
                      Linear(inter, h, true) + 2 * norm + 2 * h;
  Count n = h + (v.Bool("use_mask_token", false) ? h : 0) + channels * pair("patch_size", 0, 14) * pair("patch_size", 1, 14) * h + h;
  if (v.Bool("use_absolute_position_embeddings", true)) n += (patches + 1) * h;
  n += layers * layer;
  if (!v.Bool("use_mean_pooling", true)) n += 2 * h;
  return n;
}

}  // namespace

int64_t VisionConfigSide(const nlohmann::json& vision_config, const char* key, int64_t fallback) {
  auto it = vision_config.find(key);
  if (it == vision_config.end()) return fallback;
  const nlohmann::json& x = it->is_array() && !it->empty() ? (*it)[0] : *it;
  if (!x.is_number_integer()) return fallback;
  const int64_t v = x.get<int64_t>();
  return v >= 1 && v <= families::kMaxDim ? v : fallback;
}

int64_t InternVlShuffle(const nlohmann::json& config) {
  auto it = config.find("downsample_ratio");
  if (it == config.end() || it->is_null()) return 2;  // InternVLConfig downsample_ratio 0.5
  const double r = it->is_number() ? it->get<double>() : -1.0;
  if (!(r > 0.0 && r <= 1.0)) return 0;
  return static_cast<int64_t>(1.0 / r);  // Python's int(): truncation
}

VisionTowerParams CountInternVlTower(const nlohmann::json& config, const std::string& path, int64_t text_hidden, Issues* errors) {
  VisionTowerParams p;
  const nlohmann::json& vc = config.at("vision_config");
  const std::string vc_path = io::JoinPath(path, "vision_config");
  families::ConfigReader v(vc, vc_path, errors);
  p.vision = TowerParamsOrError(Vision(v, vc), vc_path, errors);
  const int64_t r = InternVlShuffle(config);
  if (r < 1) {
    const std::string at = io::JoinPath(path, "downsample_ratio");
    io::AddError(errors, "out_of_range", at, at + " must be a number in (0, 1], got " + io::Preview(config.at("downsample_ratio")));
    return p;
  }
  // InternVLMultiModalProjector: layer_norm LayerNorm(h r^2) with bias, linear_1 Linear(h r^2,
  // text h) and linear_2 Linear(text h, text h) with biases (projector_hidden_act between them).
  const Count in = Count(v.Int({"hidden_size"}).value_or(1024)) * r * r;
  p.projector = TowerParamsOrError(2 * in + Linear(in, text_hidden, true) + Linear(text_hidden, text_hidden, true), vc_path, errors);
  return p;
}

}  // namespace vramplan
