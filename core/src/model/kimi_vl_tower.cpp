#include "model/kimi_vl_tower.h"

#include "model/families/config_reader.h"
#include "model/tower_count.h"

namespace vramplan {
namespace {

Count Linear(Count in, Count out, bool bias) { return in * out + (bias ? out : 0); }

bool KernelEntryOk(const nlohmann::json& v) { return v.is_number_integer() && v.get<int64_t>() >= 1 && v.get<int64_t>() <= 64; }

}  // namespace

int64_t KimiVlMergeKernel(const nlohmann::json& vision_config, size_t i) {
  auto it = vision_config.find("merge_kernel_size");
  if (it == vision_config.end() || !it->is_array() || it->size() != 2 || !KernelEntryOk((*it)[i])) return 2;
  return (*it)[i].get<int64_t>();
}

// Kimi-VL's remote modeling_kimi_vl.py (MoonViTConfig defaults in configuration_kimi_vl.py):
// MoonVitPretrainedModel =
//   patch_embed MoonVisionPatchEmbed: proj Conv2d(3, h, patch_size, stride patch_size) with bias,
//     pos_emb Learnable2DInterpPosEmb weight [init_pos_emb_height, init_pos_emb_width, h]
//     (interpolated to each image's grid);
//   encoder MoonVitEncoder: num_hidden_layers MoonVitEncoderLayer = norm0 / norm1 LayerNorm(h) with
//     bias, wqkv Linear(h, 3h) and wo Linear(h, h) with bias (attn_bias=True), mlp MLP2 fc0
//     Linear(h, intermediate_size) and fc1 Linear(intermediate_size, h) with bias (GELU tanh);
//     final_layernorm LayerNorm(h); Rope2DPosEmb keeps its freqs_cis as a plain attribute (no
//     parameter, no buffer); patch_merger (a reshape) has no weights.
// KimiVLMultiModalProjector: pre_norm LayerNorm(h), linear_1 Linear(h kh kw, h kh kw) and linear_2
//   Linear(h kh kw, text hidden), both with bias.
VisionTowerParams CountKimiVlTower(const nlohmann::json& config, const std::string& path, int64_t text_hidden, Issues* errors) {
  const nlohmann::json& vc = config.at("vision_config");
  const std::string vc_path = io::JoinPath(path, "vision_config");
  families::ConfigReader v(vc, vc_path, errors);
  const Count h = v.Int({"hidden_size"}, 1).value_or(1152);
  const Count inter = v.Int({"intermediate_size"}).value_or(4304);
  const Count layers = v.Int({"num_hidden_layers"}).value_or(27);
  const Count patch = v.Int({"patch_size"}, 1, 1024).value_or(14);
  const Count pos_h = v.Int({"init_pos_emb_height"}).value_or(64);
  const Count pos_w = v.Int({"init_pos_emb_width"}).value_or(64);
  auto mk = vc.find("merge_kernel_size");
  if (mk != vc.end() && !(mk->is_array() && mk->size() == 2 && KernelEntryOk((*mk)[0]) && KernelEntryOk((*mk)[1]))) {
    const std::string p = io::JoinPath(vc_path, "merge_kernel_size");
    io::AddError(errors, "invalid_value", p, p + " must be a pair of integers in [1, 64], got " + io::Preview(*mk));
  } else if (KimiVlMergeKernel(vc, 0) != KimiVlMergeKernel(vc, 1)) {
    // The image-token rule (model/image_tokens.cpp) reads one merge size; every released config is square.
    const std::string p = io::JoinPath(vc_path, "merge_kernel_size");
    io::AddError(errors, "invalid_value", p, p + " must be a square pair [k, k] (the image tokens read one merge size), got " + io::Preview(*mk));
  }
  const Count merged = h * KimiVlMergeKernel(vc, 0) * KimiVlMergeKernel(vc, 1);
  const Count layer = 2 * (2 * h) + Linear(h, 3 * h, true) + Linear(h, h, true) + Linear(h, inter, true) + Linear(inter, h, true);
  VisionTowerParams p;
  p.vision = TowerParamsOrError(Linear(3 * patch * patch, h, true) + pos_h * pos_w * h + layers * layer + 2 * h, vc_path, errors);
  p.projector = TowerParamsOrError(2 * h + Linear(merged, merged, true) + Linear(merged, text_hidden, true), vc_path, errors);
  return p;
}

}  // namespace vramplan
