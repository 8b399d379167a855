#include "model/gemma4_towers.h"

#include "model/families/config_reader.h"
#include "model/tower_count.h"

namespace vramplan {
namespace {

// Gemma4ClippableLinear is Linear(in, out, bias=False); with use_clipped_linears it also registers
// four scalar clamp bounds, which the Hub checkpoints do not store: Gemma 4 E2B's and E4B's Hub
// totals (5,123,178,051 and 7,996,156,490) are matched exactly without them (16 x 7 vision and
// 12 x 10 audio linears would add 928 to each).
Count Linear(Count in, Count out) { return in * out; }

// Gemma4VisionModel (Gemma4VisionConfig defaults): Gemma4VisionPatchEmbedder input_proj
// Linear(3 p^2, h) + position_embedding_table [2, position_embedding_size, h]; num_hidden_layers
// Gemma4VisionEncoderLayer = q/k/v/o projections (heads x head_dim, kv heads), q_norm / k_norm
// RMSNorm(head_dim) (v_norm has no weight), four RMSNorm(h) and a gated MLP of intermediate_size;
// with standardize the std_bias / std_scale buffers [h]. The pooler has no weights.
Count Vision(families::ConfigReader& v) {
  const Count h = v.Int({"hidden_size"}).value_or(768);
  const Count inter = v.Int({"intermediate_size"}).value_or(3072);
  const Count layers = v.Int({"num_hidden_layers"}).value_or(16);
  const Count heads = v.Int({"num_attention_heads"}, 1).value_or(12);
  const Count kv = v.Int({"num_key_value_heads"}, 1).value_or(12);
  const Count d = v.Int({"head_dim"}, 1).value_or(64);
  const Count patch = v.Int({"patch_size"}, 1).value_or(16);
  const Count positions = v.Int({"position_embedding_size"}, 1).value_or(10240);
  const Count layer = Linear(h, heads * d) + 2 * Linear(h, kv * d) + Linear(heads * d, h) + 2 * d + 4 * h +
                        2 * Linear(h, inter) + Linear(inter, h);
  return Linear(3 * patch * patch, h) + 2 * positions * h + layers * layer + (v.Bool("standardize", false) ? 2 * h : 0);
}

// Gemma4AudioModel (Gemma4AudioConfig defaults): subsample_conv_projection = two Conv2d 3x3 without
// bias (1 -> c0 -> c1 channels) each with a LayerNorm(c) without bias, and input_proj_linear
// Linear(c0 / 4 x c1, h); num_hidden_layers Gemma4AudioLayer = two Gemma4AudioFeedForward (Linear(h,
// 4h), Linear(4h, h), two RMSNorm(h)), Gemma4AudioAttention (q/k/v/post Linear(h, h),
// relative_k_proj Linear(h, h), per_dim_scale [h / heads]), Gemma4AudioLightConv1d (linear_start
// Linear(h, 2h), linear_end Linear(h, h), depthwise Conv1d weight [h, 1, conv_kernel_size], two
// RMSNorm(h)) and three RMSNorm(h); output_proj Linear(h, output_proj_dims) with bias. The
// positional encoding's inv_timescales and the softcap are non-persistent buffers.
Count Audio(families::ConfigReader& a, Count* out_dims) {
  const Count h = a.Int({"hidden_size"}).value_or(1024);
  const Count layers = a.Int({"num_hidden_layers"}).value_or(12);
  const Count heads = a.Int({"num_attention_heads"}, 1).value_or(8);
  const Count kernel = a.Int({"conv_kernel_size"}, 1).value_or(5);
  *out_dims = a.Int({"output_proj_dims"}, 1).value_or(1536);
  Count c0 = 128, c1 = 32;
  auto ch = a.raw().find("subsampling_conv_channels");
  if (ch != a.raw().end() && ch->is_array() && ch->size() == 2 && (*ch)[0].is_number_integer() && (*ch)[1].is_number_integer()) {
    // Widths like any other (families/config_reader.h kMaxDim): out of range is an error.
    for (size_t i = 0; i < 2; ++i) {
      const nlohmann::json& x = (*ch)[i];
      const bool in_range = x.is_number_unsigned() ? x.get<uint64_t>() <= uint64_t{families::kMaxDim}
                                                   : x.get<int64_t>() >= 1 && x.get<int64_t>() <= families::kMaxDim;
      if (!in_range) {
        io::AddError(a.errors(), "out_of_range", a.path() + ".subsampling_conv_channels",
                     a.path() + ".subsampling_conv_channels must hold two integers from 1 to " + std::to_string(families::kMaxDim));
        return 0;
      }
    }
    c0 = (*ch)[0].get<int64_t>();
    c1 = (*ch)[1].get<int64_t>();
  }
  const Count subsample = c0 * 9 + c0 + c1 * c0 * 9 + c1 + Linear(c0 / 4 * c1, h);
  const Count feed_forward = Linear(h, 4 * h) + Linear(4 * h, h) + 2 * h;
  const Count attention = 5 * Linear(h, h) + h / heads;
  const Count light_conv = Linear(h, 2 * h) + Linear(h, h) + h * kernel + 2 * h;
  const Count layer = 2 * feed_forward + attention + light_conv + 3 * h;
  return subsample + layers * layer + Linear(h, *out_dims) + *out_dims;
}

// Calls read(reader, sub_path) on config[key] when it is an object (a tower's own config).
template <class Read>
void ReadSubConfig(const nlohmann::json& config, const std::string& path, const char* key, Issues* errors, Read&& read) {
  auto it = config.find(key);
  if (it == config.end() || !it->is_object()) return;
  const std::string sub_path = io::JoinPath(path, key);
  families::ConfigReader reader(*it, sub_path, errors);
  read(reader, sub_path);
}

}  // namespace

// Gemma4Model: embed_vision / embed_audio are Gemma4MultimodalEmbedder = embedding_projection
// Linear(tower width, text hidden) after an RMSNorm without weight; the tower width is the vision
// hidden_size, or the audio output_proj_dims.
VisionTowerParams CountGemma4Towers(const nlohmann::json& config, const std::string& path, int64_t text_hidden,
                                    Issues* errors) {
  VisionTowerParams p;
  ReadSubConfig(config, path, "vision_config", errors, [&](families::ConfigReader& v, const std::string& vc_path) {
    p.vision = TowerParamsOrError(Vision(v), vc_path, errors);
    p.projector += TowerParamsOrError(Linear(v.Int({"hidden_size"}).value_or(768), text_hidden), vc_path, errors);
  });
  ReadSubConfig(config, path, "audio_config", errors, [&](families::ConfigReader& a, const std::string& ac_path) {
    Count out_dims = 0;
    p.audio = TowerParamsOrError(Audio(a, &out_dims), ac_path, errors);
    p.projector += TowerParamsOrError(Linear(out_dims, text_hidden), ac_path, errors);
  });
  return p;
}

// Gemma4UnifiedVisionEmbedder (transformers models/gemma4_unified, Gemma4UnifiedVisionConfig
// defaults; the same layers in vLLM gemma4_unified.py): patch_ln1 LayerNorm(P) with bias, patch_dense
// Linear(P, E) with bias, patch_ln2 LayerNorm(E), pos_embedding [mm_posemb_size, 2, E], pos_norm
// LayerNorm(E), where P = (patch_size x pooling_kernel_size)^2 x 3 raw pixels of a merged patch and
// E = mm_embed_dim. embed_vision Linear(E, text hidden) and embed_audio Linear(audio_embed_dim, text
// hidden) follow RMSNorms without weight (Gemma4MultimodalEmbedder). google/gemma-4-12B-it:
// 35,176,704 + 14,745,600 + 2,457,600 beside its text decoder, 11,959,730,224 in all (its Hub total).
VisionTowerParams CountGemma4UnifiedEmbedders(const nlohmann::json& config, const std::string& path, int64_t text_hidden,
                                              Issues* errors) {
  VisionTowerParams p;
  ReadSubConfig(config, path, "vision_config", errors, [&](families::ConfigReader& v, const std::string& vc_path) {
    const Count side = Count(v.Int({"patch_size"}, 1).value_or(16)) * Count(v.Int({"pooling_kernel_size"}, 1).value_or(3));
    const Count pixels = side * side * 3;
    const Count e = v.Int({"mm_embed_dim"}, 1).value_or(3840);
    const Count positions = v.Int({"mm_posemb_size"}, 1).value_or(1120);
    const Count embedder = 2 * pixels + Linear(pixels, e) + e + 2 * e + positions * 2 * e + 2 * e;
    p.vision = TowerParamsOrError(embedder, vc_path, errors);
    p.projector += TowerParamsOrError(Linear(e, text_hidden), vc_path, errors);
  });
  ReadSubConfig(config, path, "audio_config", errors, [&](families::ConfigReader& a, const std::string& ac_path) {
    p.projector += TowerParamsOrError(Linear(a.Int({"audio_embed_dim"}, 1).value_or(640), text_hidden), ac_path, errors);
  });
  return p;
}

}  // namespace vramplan
