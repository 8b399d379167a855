#include "model/gemma3n_towers.h"

#include <vector>

#include "model/families/config_reader.h"
#include "model/tower_count.h"

namespace vramplan {
namespace {

constexpr const char* kMobileNetV5 = "mobilenetv5_300m_enc";

// --- Vision: timm's MobileNetV5-300M encoder ---------------------------------------------------
// transformers builds the tower as AutoModel.from_config(vision_config) = TimmWrapperModel, i.e.
// timm.create_model(vision_config.architecture, pretrained=False, num_classes=0). The shapes are
// timm's (huggingface/pytorch-image-models timm/models/mobilenetv5.py _gen_mobilenet_v5 and
// MobileNetV5Encoder, _efficientnet_blocks.py EdgeResidual / UniversalInvertedResidual /
// MobileAttention, layers/attention2d.py MultiQueryAttention2d; commit aa4b5850, timm 1.0.29.dev0),
// not config keys: vision_config names only the architecture. Every norm is RmsNorm2d (a weight,
// no bias, no running statistics), every conv bias-free except the stem's; layer_scale_init_value
// 1e-5 gives each stage block (not the EdgeResidual ones, not the fusion adapter) a LayerScale2d
// gamma [out]. The model has no buffers, so the checkpoint stores exactly its parameters.
enum class Block : uint8_t { kEdge, kUir, kMqa };

// One row of the architecture definition, `repeat` times. kEdge: k x k expansion conv (in -> in
// x exp), norm, 1 x 1 projection, norm. kUir: optional depthwise conv of `start` on the input and
// of `mid` on the expanded width (0: none), each with its norm; 1 x 1 expansion and projection with
// norms. kMqa: norm; query 1 x 1 (in -> heads x key_dim); key and value 1 x 1 (in -> key_dim, one
// shared head), each after a 3 x 3 depthwise down-conv and its norm when kv_stride > 1; output
// 1 x 1 (heads x key_dim -> out).
struct Row {
  Block block;
  int repeat;
  int start, mid, exp;  // kEdge: start = kernel
  int out;
  int heads = 0, key_dim = 0, kv_stride = 1;
};

// mobilenetv5_300m_enc's four stages (_gen_mobilenet_v5's arch_def; er_ / uir_ / mqa_ strings
// written as rows: "uir_r1_a5_k0_s1_e4_c640" is {kUir, 1, 5, 0, 4, 640}). Stage 2's 14 attention
// blocks use kv_stride 2 ("_v2_"), stage 3's 19 none.
const std::vector<std::vector<Row>>& Stages() {
  static const std::vector<std::vector<Row>> kStages = {
      {{Block::kEdge, 1, 3, 0, 4, 128}, {Block::kEdge, 2, 3, 0, 4, 128}},
      {{Block::kUir, 1, 3, 5, 6, 256},
       {Block::kUir, 1, 5, 0, 4, 256},
       {Block::kUir, 1, 3, 0, 4, 256},
       {Block::kUir, 1, 5, 0, 4, 256},
       {Block::kUir, 1, 3, 0, 4, 256}},
      {{Block::kUir, 1, 5, 5, 6, 640}, {Block::kUir, 7, 5, 0, 4, 640}, {Block::kUir, 1, 0, 0, 1, 640}},
      {{Block::kUir, 1, 5, 5, 6, 1280}},
  };
  return kStages;
}

// The stage 2 and 3 tails: 14 and 19 pairs of an attention block and a plain UIR (e2).
struct Tail {
  int pairs, out, heads, key_dim, kv_stride;
};
constexpr Tail kTails[] = {{14, 640, 12, 64, 2}, {19, 1280, 16, 96, 1}};

Count Depthwise(Count c, Count k) { return c * k * k; }

Count BlockParams(const Row& r, Count in) {
  const Count out = r.out;
  switch (r.block) {
    case Block::kEdge: {
      const Count mid = in * r.exp;
      return in * r.start * r.start * mid + mid + mid * out + out;
    }
    case Block::kUir: {
      const Count mid = in * r.exp;
      Count n = in * mid + mid + mid * out + out + out;  // expansion, projection, their norms, layer scale
      if (r.start > 0) n += Depthwise(in, r.start) + in;
      if (r.mid > 0) n += Depthwise(mid, r.mid) + mid;
      return n;
    }
    case Block::kMqa: {
      const Count inner = Count(r.heads) * r.key_dim;
      const Count kv = (r.kv_stride > 1 ? Depthwise(in, 3) + in : Count(0)) + in * r.key_dim;
      return in + in * inner + 2 * kv + inner * out + out;
    }
  }
  return 0;
}

// conv_stem: Conv2d(3, 64, 3, bias) + RmsNorm2d(64); the stages; the multi-scale fusion adapter
// (msfa_indices (-2, -1): the last two stages' outputs concatenated, 640 + 1280 channels) = a UIR
// without depthwise convs or layer scale, expansion 2 (1920 -> 3840 -> 2048), and RmsNorm2d(2048).
// 294,126,912: what timm.create_model("mobilenetv5_300m_enc") holds (sum of numel over
// parameters(), no buffers), and with the text decoder, the audio tower and the embedders the Hub
// totals of google/gemma-3n-E2B-it / E4B-it exactly.
Count MobileNetV5() {
  Count in = 64;
  Count n = Count(3) * 9 * 64 + 64 + 64;
  std::vector<Count> stage_out;
  for (size_t s = 0; s < Stages().size(); ++s) {
    for (const Row& r : Stages()[s]) {
      for (int i = 0; i < r.repeat; ++i) {
        n += BlockParams(r, in);
        in = r.out;
      }
    }
    if (s >= 2) {
      const Tail& t = kTails[s - 2];
      const Row attention{Block::kMqa, 1, 0, 0, 0, t.out, t.heads, t.key_dim, t.kv_stride};
      const Row uir{Block::kUir, 1, 0, 0, 2, t.out};
      for (int i = 0; i < t.pairs; ++i) n += BlockParams(attention, in) + BlockParams(uir, in);
    }
    stage_out.push_back(in);
  }
  const Count fused = stage_out[2] + stage_out[3];
  const Count width = 2048;  // MobileNetV5Encoder.num_features, fixed (not vision_config.hidden_size)
  return n + fused * (2 * fused) + 2 * fused + 2 * fused * width + width + width;
}

// --- Audio: Gemma3nAudioEncoder (Gemma3nAudioConfig defaults) --------------------------------------
// subsample_conv_projection: conv_0 Conv2d(1, c0, k0) and conv_1 Conv2d(c0, c1, k1), no bias, each
// with a Gemma3nAudioCumulativeGroupNorm weight [c]; input_proj_linear Linear(c1 x f, h), f the
// mel bins after both convs ((f + 2 - kw) // sw + 1 each: the frequency axis is padded by 1 a
// side). conf_num_hidden_layers Gemma3nAudioConformerBlock = two Gemma3nAudioConformerFeedForward
// (pre / post RMSNorm(h), Linear(h, 4h), Linear(4h, h)), Gemma3nAudioConformerAttention
// (pre_attn_norm, q/k/v Linear(h, heads x d), relative_position_embedding.pos_proj Linear(h,
// heads x d), per_dim_scale [d], post Linear(h, h), post_norm; d = h / heads),
// Gemma3nAudioConformerLightConv1d (pre_layer_norm, linear_start Linear(h, 2h), depthwise Conv1d
// [h, 1, conf_conv_kernel_size], conv_norm, linear_end Linear(h, h)) and norm. No linear has a
// bias. The buffers (inv_timescales, q_scale, local_causal_valid_mask, softcap, gradient_clipping)
// are non-persistent and post_layer_scale a plain tensor attribute: none is stored.
struct Conv {
  int64_t out = 0, kh = 3, kw = 3, sw = 2;
};

// sscp_conv_channel_size [c0, c1], sscp_conv_kernel_size [[kh, kw] x 2], sscp_conv_stride_size
// [[sh, sw] x 2]; absent keys keep Gemma3nAudioConfig's defaults, malformed ones are errors.
bool ReadSscp(const nlohmann::json& a, const std::string& path, Conv* conv, Issues* errors) {
  auto bad = [&](const char* key, const std::string& what) {
    io::AddError(errors, "out_of_range", io::JoinPath(path, key), io::JoinPath(path, key) + " must be " + what);
    return false;
  };
  auto in_range = [](const nlohmann::json& x) {
    return x.is_number_integer() && (x.is_number_unsigned() ? x.get<uint64_t>() <= uint64_t{families::kMaxDim}
                                                            : x.get<int64_t>() >= 1 && x.get<int64_t>() <= families::kMaxDim);
  };
  auto ch = a.find("sscp_conv_channel_size");
  if (ch != a.end() && !ch->is_null()) {
    if (!ch->is_array() || ch->size() != 2 || !in_range((*ch)[0]) || !in_range((*ch)[1])) {
      return bad("sscp_conv_channel_size", "two integers from 1 to " + std::to_string(families::kMaxDim));
    }
    for (size_t i = 0; i < 2; ++i) conv[i].out = (*ch)[i].get<int64_t>();
  }
  for (const char* key : {"sscp_conv_kernel_size", "sscp_conv_stride_size"}) {
    auto it = a.find(key);
    if (it == a.end() || it->is_null()) continue;
    const bool ok = it->is_array() && it->size() == 2 && (*it)[0].is_array() && (*it)[0].size() == 2 && (*it)[1].is_array() &&
                    (*it)[1].size() == 2 && in_range((*it)[0][0]) && in_range((*it)[0][1]) && in_range((*it)[1][0]) &&
                    in_range((*it)[1][1]);
    if (!ok) return bad(key, "two [height, width] pairs of integers from 1 to " + std::to_string(families::kMaxDim));
    for (size_t i = 0; i < 2; ++i) {
      if (std::string(key) == "sscp_conv_kernel_size") {
        conv[i].kh = (*it)[i][0].get<int64_t>();
        conv[i].kw = (*it)[i][1].get<int64_t>();
      } else {
        conv[i].sw = (*it)[i][1].get<int64_t>();
      }
    }
  }
  return true;
}

Count AudioEncoder(families::ConfigReader& a, const std::string& path, Issues* errors) {
  const Count h = a.Int({"hidden_size"}, 1).value_or(1536);
  const Count heads = a.Int({"conf_num_attention_heads"}, 1, families::kMaxHeadsOrExperts).value_or(8);
  const Count layers = a.Int({"conf_num_hidden_layers"}, 0, 4096).value_or(12);
  const Count kernel = a.Int({"conf_conv_kernel_size"}, 1).value_or(5);
  int64_t f = a.Int({"input_feat_size"}, 1).value_or(128);
  Conv conv[2];
  conv[0].out = 128;
  conv[1].out = 32;
  if (!ReadSscp(a.raw(), path, conv, errors)) return 0;
  Count n = 0;
  int64_t in = 1;
  for (const Conv& c : conv) {
    f = f + 2 >= c.kw ? (f + 2 - c.kw) / c.sw + 1 : 0;
    n += Count(in) * c.out * c.kh * c.kw + c.out;
    in = c.out;
  }
  n += Count(conv[1].out) * f * h;
  const Count inner = heads * (h / heads);
  const Count feed_forward = 2 * h + 2 * (h * 4 * h);
  const Count attention = 2 * h + 4 * (h * inner) + h / heads + inner * h;
  const Count light_conv = 2 * h + h * 2 * h + h * kernel + h * h;
  return n + layers * (2 * feed_forward + attention + light_conv + h);
}

// Gemma3nMultimodalEmbedder: embedding [vocab_size, w], hard_embedding_norm and
// soft_embedding_norm RMSNorm(w), embedding_projection Linear(w, text hidden) without bias;
// embedding_post_projection_norm has no weight (with_scale=False). w is the sub-config's
// hidden_size.
Count Embedder(families::ConfigReader& c, int64_t width_default, int64_t text_hidden) {
  const Count w = c.Int({"hidden_size"}, 1).value_or(width_default);
  const Count vocab = c.Int({"vocab_size"}, 0).value_or(128);
  return vocab * w + 2 * w + w * text_hidden;
}

template <class Read>
void ReadSubConfig(const nlohmann::json& config, const std::string& path, const char* key, Issues* errors, Read&& read) {
  auto it = config.find(key);
  const nlohmann::json empty = nlohmann::json::object();
  const std::string sub_path = io::JoinPath(path, key);
  // Gemma3nConfig builds a default sub-config when the key is absent.
  families::ConfigReader reader(it != config.end() && it->is_object() ? *it : empty, sub_path, errors);
  read(reader, sub_path);
}

}  // namespace

bool Gemma3nVisionTowerKnown(const nlohmann::json& config) {
  auto vc = config.find("vision_config");
  if (vc == config.end() || !vc->is_object()) return false;
  auto arch = vc->find("architecture");
  if (arch != vc->end() && !arch->is_null() && !(arch->is_string() && arch->get<std::string>() == kMobileNetV5)) return false;
  auto args = vc->find("model_args");
  return args == vc->end() || args->is_null() || (args->is_object() && args->empty());
}

VisionTowerParams CountGemma3nTowers(const nlohmann::json& config, const std::string& path, int64_t text_hidden, Issues* errors) {
  VisionTowerParams p;
  ReadSubConfig(config, path, "vision_config", errors, [&](families::ConfigReader& v, const std::string& vc_path) {
    p.vision = TowerParamsOrError(MobileNetV5(), vc_path, errors);
    p.projector += TowerParamsOrError(Embedder(v, 2048, text_hidden), vc_path, errors);
  });
  ReadSubConfig(config, path, "audio_config", errors, [&](families::ConfigReader& a, const std::string& ac_path) {
    p.audio = TowerParamsOrError(AudioEncoder(a, ac_path, errors), ac_path, errors);
    p.projector += TowerParamsOrError(Embedder(a, 1536, text_hidden), ac_path, errors);
  });
  return p;
}

}  // namespace vramplan
