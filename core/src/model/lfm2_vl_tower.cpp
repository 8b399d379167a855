#include "model/lfm2_vl_tower.h"

#include "model/families/config_reader.h"
#include "model/tower_count.h"

namespace vramplan {
namespace {

Count Linear(Count in, Count out, bool bias) { return in * out + (bias ? out : 0); }

// An integer of `obj`, or `fallback` when absent or not an integer in [lo, hi].
int64_t IntIn(const nlohmann::json& obj, const char* key, int64_t fallback, int64_t lo, int64_t hi) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number_integer()) return fallback;
  const int64_t v = it->get<int64_t>();
  return v >= lo && v <= hi ? v : fallback;
}

}  // namespace

int64_t Lfm2VlTowerLayers(const nlohmann::json& config) {
  auto vc = config.find("vision_config");
  const int64_t layers = vc != config.end() && vc->is_object() ? IntIn(*vc, "num_hidden_layers", 12, 0, families::kMaxDim) : 12;
  const int64_t feature = IntIn(config, "vision_feature_layer", -1, -families::kMaxDim, families::kMaxDim);
  if (feature == -1) return layers;
  // Python's layers[: k] for k = feature + 1 (a negative k counts from the end).
  const int64_t k = feature + 1;
  const int64_t kept = k >= 0 ? k : layers + k;
  return kept < 0 ? 0 : (kept > layers ? layers : kept);
}

// transformers models/siglip2/modeling_siglip2.py (Siglip2VisionConfig defaults), Siglip2VisionModel:
//   embeddings.patch_embedding Linear(num_channels x patch^2, h) with bias (NaFlex: patches come
//     flattened), position_embedding Embedding(num_patches, h) (a sqrt(num_patches) grid resized
//     to each image);
//   encoder layers as SigLIP's: layer_norm1/2 LayerNorm(h), q/k/v/out_proj Linear(h, h) and
//     fc1 / fc2 of intermediate_size, all with bias;
//   post_layernorm LayerNorm(h); the attention-pooling head (probe, MultiheadAttention, LayerNorm,
//     MLP) only with vision_use_head (default true; the LFM2-VL configs say false).
// Lfm2VlMultiModalProjector: layer_norm LayerNorm(h f^2) with bias when projector_use_layernorm
// (default true; LFM2.5-VL's configs say false), linear_1 Linear(h f^2, projector_hidden_size)
// and linear_2 Linear(projector_hidden_size, text h), biases with projector_bias (default true);
// f = downsample_factor, the pixel unshuffle (no weights).
VisionTowerParams CountLfm2VlTower(const nlohmann::json& config, const std::string& path, int64_t text_hidden, Issues* errors) {
  const nlohmann::json& vc = config.at("vision_config");
  const std::string vc_path = io::JoinPath(path, "vision_config");
  families::ConfigReader v(vc, vc_path, errors);
  families::ConfigReader top(config, path, errors);
  const Count h = v.Int({"hidden_size"}).value_or(768);
  const Count inter = v.Int({"intermediate_size"}).value_or(3072);
  const Count channels = v.Int({"num_channels"}).value_or(3);
  const Count patch = v.Int({"patch_size"}, 1).value_or(16);
  const Count positions = v.Int({"num_patches"}, 1).value_or(256);
  const bool head = v.Bool("vision_use_head", true);
  const Count layers = Lfm2VlTowerLayers(config);
  const Count layer = 2 * (2 * h) + 4 * Linear(h, h, true) + Linear(h, inter, true) + Linear(inter, h, true);
  const Count mlp = Linear(h, inter, true) + Linear(inter, h, true);
  Count vision = Linear(channels * patch * patch, h, true) + positions * h + layers * layer + 2 * h;
  if (head) vision += h + Linear(h, 3 * h, true) + Linear(h, h, true) + 2 * h + mlp;
  const Count f = top.Int({"downsample_factor"}, 1, 64).value_or(2);
  const Count hidden = top.Int({"projector_hidden_size"}).value_or(2560);
  const bool bias = top.Bool("projector_bias", true);
  const Count in = h * f * f;
  const Count projector = (top.Bool("projector_use_layernorm", true) ? 2 * in : 0) + Linear(in, hidden, bias) + Linear(hidden, text_hidden, bias);
  VisionTowerParams p;
  p.vision = TowerParamsOrError(vision, vc_path, errors);
  p.projector = TowerParamsOrError(projector, path, errors);
  return p;
}

}  // namespace vramplan
