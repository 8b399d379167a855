#include "model/gemma4_towers.h"

#include "model/families/config_reader.h"

namespace vramplan {
namespace {

// Gemma4ClippableLinear is Linear(in, out, bias=False); with use_clipped_linears it also registers
// four scalar clamp bounds, which the Hub checkpoints do not store: Gemma 4 E2B's and E4B's Hub
// totals (5,123,178,051 and 7,996,156,490) are matched exactly without them (16 x 7 vision and
// 12 x 10 audio linears would add 928 to each).
int64_t Linear(int64_t in, int64_t out) { return in * out; }

// Gemma4VisionModel (Gemma4VisionConfig defaults): Gemma4VisionPatchEmbedder input_proj
// Linear(3 p^2, h) + position_embedding_table [2, position_embedding_size, h]; num_hidden_layers
// Gemma4VisionEncoderLayer = q/k/v/o projections (heads x head_dim, kv heads), q_norm / k_norm
// RMSNorm(head_dim) (v_norm has no weight), four RMSNorm(h) and a gated MLP of intermediate_size;
// with standardize the std_bias / std_scale buffers [h]. The pooler has no weights.
int64_t Vision(families::ConfigReader& v) {
  const int64_t h = v.Int({"hidden_size"}).value_or(768);
  const int64_t inter = v.Int({"intermediate_size"}).value_or(3072);
  const int64_t layers = v.Int({"num_hidden_layers"}).value_or(16);
  const int64_t heads = v.Int({"num_attention_heads"}, 1).value_or(12);
  const int64_t kv = v.Int({"num_key_value_heads"}, 1).value_or(12);
  const int64_t d = v.Int({"head_dim"}, 1).value_or(64);
  const int64_t patch = v.Int({"patch_size"}, 1).value_or(16);
  const int64_t positions = v.Int({"position_embedding_size"}, 1).value_or(10240);
  const int64_t layer = Linear(h, heads * d) + 2 * Linear(h, kv * d) + Linear(heads * d, h) + 2 * d + 4 * h +
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
int64_t Audio(families::ConfigReader& a, int64_t* out_dims) {
  const int64_t h = a.Int({"hidden_size"}).value_or(1024);
  const int64_t layers = a.Int({"num_hidden_layers"}).value_or(12);
  const int64_t heads = a.Int({"num_attention_heads"}, 1).value_or(8);
  const int64_t kernel = a.Int({"conv_kernel_size"}, 1).value_or(5);
  *out_dims = a.Int({"output_proj_dims"}, 1).value_or(1536);
  int64_t c0 = 128, c1 = 32;
  auto ch = a.raw().find("subsampling_conv_channels");
  if (ch != a.raw().end() && ch->is_array() && ch->size() == 2 && (*ch)[0].is_number_integer() && (*ch)[1].is_number_integer()) {
    c0 = (*ch)[0].get<int64_t>();
    c1 = (*ch)[1].get<int64_t>();
  }
  const int64_t subsample = c0 * 9 + c0 + c1 * c0 * 9 + c1 + Linear(c0 / 4 * c1, h);
  const int64_t feed_forward = Linear(h, 4 * h) + Linear(4 * h, h) + 2 * h;
  const int64_t attention = 5 * Linear(h, h) + h / heads;
  const int64_t light_conv = Linear(h, 2 * h) + Linear(h, h) + h * kernel + 2 * h;
  const int64_t layer = 2 * feed_forward + attention + light_conv + 3 * h;
  return subsample + layers * layer + Linear(h, *out_dims) + *out_dims;
}

}  // namespace

// Gemma4Model: embed_vision / embed_audio are Gemma4MultimodalEmbedder = embedding_projection
// Linear(tower width, text hidden) after an RMSNorm without weight; the tower width is the vision
// hidden_size, or the audio output_proj_dims.
VisionTowerParams CountGemma4Towers(const nlohmann::json& config, const std::string& path, int64_t text_hidden,
                                    Issues* errors) {
  VisionTowerParams p;
  auto vc = config.find("vision_config");
  if (vc != config.end() && vc->is_object()) {
    families::ConfigReader v(*vc, io::JoinPath(path, "vision_config"), errors);
    p.vision = Vision(v);
    p.projector += Linear(v.Int({"hidden_size"}).value_or(768), text_hidden);
  }
  auto ac = config.find("audio_config");
  if (ac != config.end() && ac->is_object()) {
    families::ConfigReader a(*ac, io::JoinPath(path, "audio_config"), errors);
    int64_t out_dims = 0;
    p.audio = Audio(a, &out_dims);
    p.projector += Linear(out_dims, text_hidden);
  }
  return p;
}

}  // namespace vramplan
