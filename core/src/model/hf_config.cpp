#include "model/hf_config.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <optional>

#include "io/json_reader.h"
#include "io/message_text.h"

namespace vramplan {
namespace {

using io::Json;

constexpr int64_t kMaxDim = int64_t{1} << 24;  // 16M: larger than any real width or vocab
// Head counts, head dims, expert counts, MLA ranks: real models use at most a few hundred (heads,
// experts) or a few thousand (ranks). Products of two such values stay below 2^32.
constexpr int64_t kMaxHeadsOrExperts = 65536;

// Reads typed keys from a config object; unknown keys are fine, wrong types are errors.
class ConfigReader {
 public:
  ConfigReader(const Json& cfg, std::string path, Issues* errors) : cfg_(cfg), path_(std::move(path)), errors_(errors) {}

  // The first present key among `keys` (aliases, e.g. hidden_size / n_embd); null counts as absent.
  std::optional<int64_t> Int(std::initializer_list<const char*> keys, int64_t min = 0, int64_t max = kMaxDim) {
    for (const char* key : keys) {
      auto it = cfg_.find(key);
      if (it == cfg_.end() || it->is_null()) continue;
      std::string p = io::JoinPath(path_, key);
      if (it->is_number_integer() || it->is_number_unsigned()) {
        if (it->is_number_unsigned() && it->get<uint64_t>() > static_cast<uint64_t>(max)) {
          io::AddError(errors_, "out_of_range", p, p + " must be an integer from " + std::to_string(min) + " to " + std::to_string(max) +
                                                       ", got " + std::to_string(it->get<uint64_t>()));
          return std::nullopt;
        }
        int64_t v = it->get<int64_t>();
        if (v < min || v > max) {
          io::AddError(errors_, "out_of_range", p, p + " must be an integer from " + std::to_string(min) + " to " + std::to_string(max) + ", got " + std::to_string(v));
          return std::nullopt;
        }
        return v;
      }
      if (it->is_number_float()) {
        double d = it->get<double>();
        if (std::isfinite(d) && d == std::floor(d) && d >= static_cast<double>(min) && d <= static_cast<double>(max)) {
          return static_cast<int64_t>(d);
        }
      }
      io::AddError(errors_, it->is_number() ? "out_of_range" : "wrong_type", p,
                   p + " must be an integer from " + std::to_string(min) + " to " + std::to_string(max) + ", got " +
                       io::Describe(*it) + " " + io::Preview(*it));
      return std::nullopt;
    }
    return std::nullopt;
  }

  int64_t Required(std::initializer_list<const char*> keys, int64_t min = 1, int64_t max = kMaxDim) {
    size_t before = errors_->size();
    std::optional<int64_t> v = Int(keys, min, max);
    if (v) return *v;
    if (errors_->size() == before) {
      std::string names;
      for (const char* k : keys) names += std::string(names.empty() ? "" : " or ") + "\"" + k + "\"";
      io::AddError(errors_, "missing_key", io::JoinPath(path_, *keys.begin()),
                   "the model config is missing the required key " + names);
    }
    return 0;
  }

  bool Bool(const char* key, bool fallback) {
    auto it = cfg_.find(key);
    if (it == cfg_.end() || it->is_null()) return fallback;
    if (it->is_boolean()) return it->get<bool>();
    std::string p = io::JoinPath(path_, key);
    io::AddError(errors_, "wrong_type", p, p + " must be true or false, got " + io::Describe(*it));
    return fallback;
  }

  // A fraction: a number in (0, 1] (`zero_allowed` false: rotary fractions) or [0, 1] (dropout
  // probabilities); `fallback` when absent.
  double Fraction(const char* key, double fallback, bool zero_allowed) {
    auto it = cfg_.find(key);
    if (it == cfg_.end() || it->is_null()) return fallback;
    const std::string p = io::JoinPath(path_, key);
    const std::string range = zero_allowed ? "[0, 1]" : "(0, 1]";
    if (!it->is_number()) {
      io::AddError(errors_, "wrong_type", p, p + " must be a number in " + range + ", got " + io::Describe(*it) + " " + io::Preview(*it));
      return fallback;
    }
    const double d = it->get<double>();
    if (!(d >= 0.0 && d <= 1.0) || (d == 0.0 && !zero_allowed)) {  // also refuses NaN
      io::AddError(errors_, "out_of_range", p, p + " must be a number in " + range + ", got " + io::Preview(*it));
      return fallback;
    }
    return d;
  }

  // An alias-aware Fraction for two key names: the first present one.
  double Fraction(const char* key, const char* alias, double fallback, bool zero_allowed) {
    return Has(key) ? Fraction(key, fallback, zero_allowed) : Fraction(alias, fallback, zero_allowed);
  }

  std::string String(const char* key, const std::string& fallback) {
    auto it = cfg_.find(key);
    if (it == cfg_.end() || it->is_null()) return fallback;
    if (it->is_string()) return it->get<std::string>();
    std::string p = io::JoinPath(path_, key);
    io::AddError(errors_, "wrong_type", p, p + " must be a string, got " + io::Describe(*it));
    return fallback;
  }

  // layer_types: ["sliding_attention", "full_attention", ...] (transformers >= 4.53).
  std::optional<std::vector<bool>> SlidingLayers(int64_t num_layers) {
    auto it = cfg_.find("layer_types");
    if (it == cfg_.end() || it->is_null()) return std::nullopt;
    std::string p = io::JoinPath(path_, "layer_types");
    if (!it->is_array() || static_cast<int64_t>(it->size()) != num_layers) {
      io::AddError(errors_, "wrong_type", p, p + " must be a list with one entry per layer (" + std::to_string(num_layers) + ")");
      return std::nullopt;
    }
    std::vector<bool> out;
    for (const auto& t : *it) {
      if (!t.is_string()) {
        io::AddError(errors_, "wrong_type", p, p + " entries must be strings such as \"sliding_attention\"");
        return std::nullopt;
      }
      const std::string& s = t.get_ref<const std::string&>();
      out.push_back(s == "sliding_attention" || s == "local" || s == "sliding");
    }
    return out;
  }

  // A list of layer indices in [0, num_layers) (e.g. mlp_only_layers); absent or null -> empty.
  std::vector<int64_t> LayerList(const char* key, int64_t num_layers) {
    std::vector<int64_t> out;
    auto it = cfg_.find(key);
    if (it == cfg_.end() || it->is_null()) return out;
    std::string p = io::JoinPath(path_, key);
    const std::string what = p + " must be a list of layer indices from 0 to " + std::to_string(num_layers - 1);
    if (!it->is_array()) {
      io::AddError(errors_, "wrong_type", p, what + ", got " + io::Describe(*it));
      return out;
    }
    for (size_t i = 0; i < it->size(); ++i) {
      const Json& v = (*it)[i];
      // is_number_unsigned first: get<int64_t>() would wrap one above 2^63-1.
      const bool in_range = v.is_number_unsigned() ? v.get<uint64_t>() < static_cast<uint64_t>(num_layers)
                                                   : v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() < num_layers;
      if (!in_range) {
        const std::string ip = p + "[" + std::to_string(i) + "]";
        io::AddError(errors_, v.is_number_integer() ? "out_of_range" : "wrong_type", ip, what + ", got " + io::Preview(v));
        return {};
      }
      out.push_back(v.get<int64_t>());
    }
    return out;
  }

  bool Has(const char* key) const {
    auto it = cfg_.find(key);
    return it != cfg_.end() && !it->is_null();
  }
  const std::string& path() const { return path_; }
  Issues* errors() { return errors_; }

 private:
  const Json& cfg_;
  std::string path_;
  Issues* errors_;
};

ActivationFn ParseActivation(const std::string& name) {
  if (name == "silu" || name == "swish") return ActivationFn::kSilu;
  if (name == "gelu_new" || name == "gelu_fast") return ActivationFn::kGeluNew;
  if (name == "gelu_pytorch_tanh" || name == "gelu_tanh") return ActivationFn::kGeluTanh;
  if (name == "relu") return ActivationFn::kRelu;
  return ActivationFn::kGelu;
}

// Everything a standard decoder layer needs, read once per config.
struct Dims {
  int64_t h = 0, a = 0, kv = 0, d = 0, inter = 0, layers = 0, vocab = 0;
};

void AddLinear(LayerKind* k, std::string_view name, int64_t in, int64_t out, bool bias, ModuleRole role,
               int64_t copies = 1, bool lora_targetable = true) {
  k->linears.push_back(LinearSpec{name, in, out, bias, copies, role, lora_targetable});
}

void AddNorm(LayerKind* k, std::string_view name, int64_t dim, bool bias, bool has_weight = true) {
  k->norms.push_back(NormSpec{name, dim, bias, has_weight});
}

void AddQkvo(LayerKind* k, const Dims& m, bool qkv_bias, bool o_bias) {
  AddLinear(k, "q_proj", m.h, m.a * m.d, qkv_bias, ModuleRole::kAttention);
  AddLinear(k, "k_proj", m.h, m.kv * m.d, qkv_bias, ModuleRole::kAttention);
  AddLinear(k, "v_proj", m.h, m.kv * m.d, qkv_bias, ModuleRole::kAttention);
  AddLinear(k, "o_proj", m.a * m.d, m.h, o_bias, ModuleRole::kAttention);
}

void AddGatedMlp(LayerKind* k, int64_t h, int64_t inter, bool bias, ModuleRole role, int64_t copies = 1,
                 std::string_view gate = "gate_proj", std::string_view up = "up_proj", std::string_view down = "down_proj") {
  AddLinear(k, gate, h, inter, bias, role, copies);
  AddLinear(k, up, h, inter, bias, role, copies);
  AddLinear(k, down, inter, h, bias, role, copies);
}

void SetAttention(LayerKind* k, const Dims& m, int64_t window) {
  k->attention.num_heads = m.a;
  k->attention.num_kv_heads = m.kv;
  k->attention.head_dim = m.d;
  k->attention.v_head_dim = m.d;
  k->attention.sliding_window = window;
}

void SetDenseMlp(LayerKind* k, MlpKind kind, ActivationFn act, int64_t inter) {
  k->mlp.kind = kind;
  k->mlp.activation = act;
  k->mlp.intermediate = inter;
}

bool SameLinear(const LinearSpec& x, const LinearSpec& y) {
  return x.name == y.name && x.in_features == y.in_features && x.out_features == y.out_features && x.bias == y.bias &&
         x.copies == y.copies && x.role == y.role && x.lora_targetable == y.lora_targetable;
}

bool SameKind(const LayerKind& x, const LayerKind& y) {
  if (x.linears.size() != y.linears.size() || x.norms.size() != y.norms.size()) return false;
  for (size_t i = 0; i < x.linears.size(); ++i) {
    if (!SameLinear(x.linears[i], y.linears[i])) return false;
  }
  for (size_t i = 0; i < x.norms.size(); ++i) {
    const NormSpec &a = x.norms[i], &b = y.norms[i];
    if (a.name != b.name || a.dim != b.dim || a.bias != b.bias || a.has_weight != b.has_weight) return false;
  }
  const AttentionGeometry &p = x.attention, &q = y.attention;
  const MlpGeometry &u = x.mlp, &v = y.mlp;
  return x.extra_attention_params == y.extra_attention_params && x.extra_router_params == y.extra_router_params &&
         x.parallel_residual == y.parallel_residual && p.num_heads == q.num_heads && p.num_kv_heads == q.num_kv_heads &&
         p.head_dim == q.head_dim && p.v_head_dim == q.v_head_dim && p.sliding_window == q.sliding_window &&
         p.mla == q.mla && p.kv_lora_rank == q.kv_lora_rank && p.qk_rope_head_dim == q.qk_rope_head_dim &&
         p.q_lora_rank == q.q_lora_rank && u.kind == v.kind && u.activation == v.activation &&
         u.intermediate == v.intermediate && u.num_experts == v.num_experts &&
         u.experts_per_token == v.experts_per_token && u.shared_intermediate == v.shared_intermediate;
}

// Builds the layer list from a per-layer builder, storing each distinct kind once.
void BuildLayers(ModelSpec* spec, int64_t num_layers, const std::function<LayerKind(int64_t)>& build) {
  spec->num_layers = num_layers;
  spec->layer_kind.resize(static_cast<size_t>(num_layers));
  for (int64_t i = 0; i < num_layers; ++i) {
    LayerKind kind = build(i);
    size_t idx = 0;
    while (idx < spec->kinds.size() && !SameKind(spec->kinds[idx], kind)) ++idx;
    if (idx == spec->kinds.size()) spec->kinds.push_back(std::move(kind));
    spec->layer_kind[static_cast<size_t>(i)] = static_cast<uint8_t>(idx);
  }
}

// Reads the dimensions most decoders share. `d` defaults to h / a unless head_dim is given.
Dims ReadDims(ConfigReader& c) {
  Dims m;
  m.h = c.Required({"hidden_size", "n_embd", "d_model"});
  m.layers = c.Required({"num_hidden_layers", "n_layer", "num_layers"}, 1, 4096);
  m.a = c.Required({"num_attention_heads", "n_head", "num_heads"}, 1, kMaxHeadsOrExperts);
  m.vocab = c.Required({"vocab_size"});
  m.kv = c.Int({"num_key_value_heads", "num_kv_heads", "n_head_kv"}, 1, kMaxHeadsOrExperts).value_or(m.a);
  m.d = c.Int({"head_dim"}, 1, kMaxHeadsOrExperts).value_or(m.a > 0 ? m.h / m.a : 0);
  m.inter = c.Int({"intermediate_size", "n_inner", "ffn_hidden_size", "ffn_dim"}).value_or(0);
  return m;
}

void CheckDims(ConfigReader& c, const Dims& m, bool needs_intermediate) {
  if (c.errors()->empty() && m.kv > 0 && m.a % m.kv != 0) {
    io::AddError(c.errors(), "invalid_value", io::JoinPath(c.path(), "num_key_value_heads"),
                 "num_attention_heads (" + std::to_string(m.a) + ") must be a multiple of num_key_value_heads (" + std::to_string(m.kv) + ")");
  }
  if (c.errors()->empty() && !c.Has("head_dim") && m.a > 0 && m.h % m.a != 0) {
    io::AddError(c.errors(), "invalid_value", io::JoinPath(c.path(), "num_attention_heads"),
                 "hidden_size must be divisible by num_attention_heads when head_dim is not given");
  }
  if (c.errors()->empty() && needs_intermediate && m.inter <= 0) {
    io::AddError(c.errors(), "missing_key", io::JoinPath(c.path(), "intermediate_size"),
                 "the model config is missing the required key \"intermediate_size\"");
  }
}

// transformers' routers take torch.topk(router_logits, top_k) over the routed experts: top_k
// above their number fails there, and `active_per_token` would exceed `total` here.
void CheckTopK(ConfigReader& c, const char* key, int64_t top_k, int64_t experts) {
  if (top_k <= experts || experts <= 0 || top_k <= 0) return;
  const std::string p = io::JoinPath(c.path(), key);
  io::AddError(c.errors(), "out_of_range", p,
               p + " must be an integer from 1 to the number of routed experts (" + std::to_string(experts) + "), got " + std::to_string(top_k));
}

void FinishCommon(ModelSpec* spec, const Dims& m, bool tied, NormKind norm, bool norm_bias, std::string_view final_norm = "norm") {
  spec->vocab_size = m.vocab;
  spec->hidden_size = m.h;
  spec->tied_embeddings = tied;
  spec->norm_kind = norm;
  spec->final_norm = NormSpec{final_norm, m.h, norm_bias, true};
}

// Llama and its close relatives: llama, mistral, qwen2, qwen3, olmo2, gemma*, generic.
struct LlamaLikeOptions {
  bool qkv_bias = false;
  bool o_bias = false;
  bool mlp_bias = false;
  bool head_qk_norm = false;    // qwen3 / gemma3: RMSNorm(head_dim) on q and k
  bool full_qk_norm = false;    // olmo2: RMSNorm(heads*head_dim) on q, RMSNorm(kv*head_dim) on k
  int norms_per_layer = 2;      // gemma2/3: 4
  bool post_norms_only = false; // olmo2 names
};

LayerKind LlamaLikeLayer(const Dims& m, const LlamaLikeOptions& o, ActivationFn act, int64_t window) {
  LayerKind k;
  AddQkvo(&k, m, o.qkv_bias, o.o_bias);
  AddGatedMlp(&k, m.h, m.inter, o.mlp_bias, ModuleRole::kMlp);
  if (o.post_norms_only) {
    AddNorm(&k, "post_attention_layernorm", m.h, false);
    AddNorm(&k, "post_feedforward_layernorm", m.h, false);
  } else {
    AddNorm(&k, "input_layernorm", m.h, false);
    AddNorm(&k, "post_attention_layernorm", m.h, false);
    if (o.norms_per_layer == 4) {
      AddNorm(&k, "pre_feedforward_layernorm", m.h, false);
      AddNorm(&k, "post_feedforward_layernorm", m.h, false);
    }
  }
  if (o.head_qk_norm) {
    AddNorm(&k, "q_norm", m.d, false);
    AddNorm(&k, "k_norm", m.d, false);
  }
  if (o.full_qk_norm) {
    AddNorm(&k, "q_norm", m.a * m.d, false);
    AddNorm(&k, "k_norm", m.kv * m.d, false);
  }
  SetAttention(&k, m, window);
  SetDenseMlp(&k, MlpKind::kGated, act, m.inter);
  return k;
}

// Sliding-window flags per layer from layer_types, a pattern, or one window for all layers.
std::vector<bool> SlidingFlags(ConfigReader& c, int64_t layers, const std::function<bool(int64_t)>& default_rule) {
  if (auto lt = c.SlidingLayers(layers)) return *lt;
  std::vector<bool> flags(static_cast<size_t>(layers));
  for (int64_t i = 0; i < layers; ++i) flags[static_cast<size_t>(i)] = default_rule(i);
  return flags;
}

Expected<ModelSpec> BuildLlamaLike(ConfigReader& c, const std::string& type, ModelSpec spec) {
  Dims m = ReadDims(c);
  CheckDims(c, m, true);
  LlamaLikeOptions o;
  bool tied_default = false;
  int64_t window = c.Int({"sliding_window"}, 0).value_or(0);
  std::function<bool(int64_t)> sliding_rule = [](int64_t) { return false; };
  std::string act_name = c.String("hidden_act", "silu");
  if (type == "llama" || type == "generic") {
    o.qkv_bias = c.Bool("attention_bias", false);
    o.o_bias = o.qkv_bias;
    o.mlp_bias = c.Bool("mlp_bias", false);
  } else if (type == "mistral") {
    sliding_rule = [window](int64_t) { return window > 0; };
  } else if (type == "qwen2") {
    o.qkv_bias = true;
    bool use_sw = c.Bool("use_sliding_window", false);
    int64_t max_window_layers = c.Int({"max_window_layers"}, 0).value_or(28);
    sliding_rule = [=](int64_t i) { return use_sw && window > 0 && i >= max_window_layers; };
  } else if (type == "qwen3") {
    o.qkv_bias = c.Bool("attention_bias", false);
    o.o_bias = o.qkv_bias;
    o.head_qk_norm = true;
    bool use_sw = c.Bool("use_sliding_window", false);
    int64_t max_window_layers = c.Int({"max_window_layers"}, 0).value_or(28);
    sliding_rule = [=](int64_t i) { return use_sw && window > 0 && i >= max_window_layers; };
  } else if (type == "olmo2") {
    o.qkv_bias = c.Bool("attention_bias", false);
    o.o_bias = o.qkv_bias;
    o.full_qk_norm = true;
    o.post_norms_only = true;
  } else if (type == "gemma") {
    tied_default = true;
    act_name = c.String("hidden_activation", c.String("hidden_act", "gelu_pytorch_tanh"));
  } else if (type == "gemma2") {
    tied_default = true;
    o.norms_per_layer = 4;
    act_name = c.String("hidden_activation", "gelu_pytorch_tanh");
    sliding_rule = [window](int64_t i) { return window > 0 && i % 2 == 0; };  // Gemma2DecoderLayer: not layer_idx % 2
  } else if (type == "gemma3_text") {
    tied_default = true;
    o.norms_per_layer = 4;
    o.head_qk_norm = true;
    act_name = c.String("hidden_activation", "gelu_pytorch_tanh");
    int64_t pattern = c.Int({"sliding_window_pattern"}, 1).value_or(6);
    sliding_rule = [=](int64_t i) { return window > 0 && (i + 1) % pattern != 0; };
  }
  if (!c.errors()->empty()) return *c.errors();
  ActivationFn act = ParseActivation(act_name);
  spec.attention_dropout = c.Fraction("attention_dropout", 0.0, true);
  std::vector<bool> sliding = SlidingFlags(c, m.layers, sliding_rule);
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", tied_default), NormKind::kRmsNorm, false);
  BuildLayers(&spec, m.layers, [&](int64_t i) {
    return LlamaLikeLayer(m, o, act, sliding[static_cast<size_t>(i)] ? window : 0);
  });
  if (!c.errors()->empty()) return *c.errors();
  return spec;
}

// MoE families with Llama-style attention: mixtral, qwen2_moe, qwen3_moe.
Expected<ModelSpec> BuildMoe(ConfigReader& c, const std::string& type, ModelSpec spec) {
  Dims m = ReadDims(c);
  CheckDims(c, m, type != "qwen3_moe" && type != "qwen2_moe");
  int64_t window = c.Int({"sliding_window"}, 0).value_or(0);
  bool use_sw = type == "mixtral" ? window > 0 : c.Bool("use_sliding_window", false);
  int64_t experts = c.Required({"num_local_experts", "num_experts"}, 1, kMaxHeadsOrExperts);
  int64_t top_k = c.Required({"num_experts_per_tok"}, 1, kMaxHeadsOrExperts);
  CheckTopK(c, "num_experts_per_tok", top_k, experts);
  int64_t moe_inter = type == "mixtral" ? m.inter : c.Required({"moe_intermediate_size"});
  int64_t shared_inter = type == "qwen2_moe" ? c.Int({"shared_expert_intermediate_size"}).value_or(0) : 0;
  int64_t sparse_step = c.Int({"decoder_sparse_step"}, 1).value_or(1);
  // mlp_only_layers: dense layers inside a MoE model (qwen2_moe / qwen3_moe).
  std::vector<int64_t> mlp_only = m.layers > 0 ? c.LayerList("mlp_only_layers", m.layers) : std::vector<int64_t>{};
  LlamaLikeOptions o;
  o.qkv_bias = type == "qwen2_moe" ? true : c.Bool("attention_bias", false);
  o.o_bias = type == "qwen3_moe" && o.qkv_bias;
  o.head_qk_norm = type == "qwen3_moe";
  ActivationFn act = ParseActivation(c.String("hidden_act", "silu"));
  if (!c.errors()->empty()) return *c.errors();
  const auto is_moe_layer = [&](int64_t i) {
    return experts > 0 && (i + 1) % sparse_step == 0 && std::find(mlp_only.begin(), mlp_only.end(), i) == mlp_only.end();
  };
  for (int64_t i = 0; i < m.layers && m.inter <= 0; ++i) {
    if (is_moe_layer(i)) continue;
    // A dense layer (mlp_only_layers, decoder_sparse_step) is a gated MLP of intermediate_size.
    io::AddError(c.errors(), "missing_key", io::JoinPath(c.path(), "intermediate_size"),
                 "layer " + std::to_string(i) + " is a dense layer (mlp_only_layers / decoder_sparse_step): the config needs intermediate_size");
    return *c.errors();
  }
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kRmsNorm, false);
  BuildLayers(&spec, m.layers, [&](int64_t i) {
    bool moe_layer = is_moe_layer(i);
    LayerKind k = LlamaLikeLayer(m, o, act, use_sw ? window : 0);
    if (!moe_layer) return k;
    // Replace the dense MLP by router + experts (+ shared expert).
    k.linears.resize(4);
    if (type == "mixtral") {
      AddLinear(&k, "gate", m.h, experts, false, ModuleRole::kRouter);
      AddGatedMlp(&k, m.h, moe_inter, false, ModuleRole::kExperts, experts, "w1", "w3", "w2");
    } else {
      AddLinear(&k, "gate", m.h, experts, false, ModuleRole::kRouter);
      AddGatedMlp(&k, m.h, moe_inter, false, ModuleRole::kExperts, experts);
      if (shared_inter > 0) {
        AddGatedMlp(&k, m.h, shared_inter, false, ModuleRole::kSharedExperts);
        AddLinear(&k, "shared_expert_gate", m.h, 1, false, ModuleRole::kSharedExperts);
      }
    }
    k.mlp.intermediate = moe_inter;
    k.mlp.num_experts = experts;
    k.mlp.experts_per_token = top_k;
    k.mlp.shared_intermediate = shared_inter;
    return k;
  });
  return spec;
}

Expected<ModelSpec> BuildDeepseekV3(ConfigReader& c, const std::string& type, ModelSpec spec) {
  Dims m;
  m.h = c.Required({"hidden_size"});
  m.layers = c.Required({"num_hidden_layers"}, 1, 4096);
  m.a = c.Required({"num_attention_heads"}, 1, kMaxHeadsOrExperts);
  m.vocab = c.Required({"vocab_size"});
  m.inter = c.Required({"intermediate_size"});
  int64_t q_lora = c.Int({"q_lora_rank"}, 0, kMaxHeadsOrExperts).value_or(0);
  int64_t kv_lora = c.Required({"kv_lora_rank"}, 1, kMaxHeadsOrExperts);
  int64_t rope = c.Required({"qk_rope_head_dim"}, 1, kMaxHeadsOrExperts);
  int64_t nope = c.Required({"qk_nope_head_dim"}, 1, kMaxHeadsOrExperts);
  int64_t v_dim = c.Required({"v_head_dim"}, 1, kMaxHeadsOrExperts);
  int64_t experts = c.Required({"n_routed_experts"}, 1, kMaxHeadsOrExperts);
  int64_t top_k = c.Required({"num_experts_per_tok"}, 1, kMaxHeadsOrExperts);
  CheckTopK(c, "num_experts_per_tok", top_k, experts);
  int64_t moe_inter = c.Required({"moe_intermediate_size"});
  int64_t n_shared = c.Int({"n_shared_experts"}, 0, kMaxHeadsOrExperts).value_or(0);
  int64_t first_dense = c.Int({"first_k_dense_replace"}).value_or(0);
  int64_t freq = c.Int({"moe_layer_freq"}, 1).value_or(1);
  bool bias = c.Bool("attention_bias", false);
  // DeepSeek-V3 routes with a learned correction bias (topk_method "noaux_tc"); V2 does not.
  bool correction_bias = type == "deepseek_v3" || c.String("topk_method", "") == "noaux_tc";
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kRmsNorm, false);
  int64_t qk_dim = nope + rope;
  BuildLayers(&spec, m.layers, [&](int64_t i) {
    LayerKind k;
    if (q_lora > 0) {
      AddLinear(&k, "q_a_proj", m.h, q_lora, bias, ModuleRole::kAttention);
      AddLinear(&k, "q_b_proj", q_lora, m.a * qk_dim, false, ModuleRole::kAttention);
      AddNorm(&k, "q_a_layernorm", q_lora, false);
    } else {
      AddLinear(&k, "q_proj", m.h, m.a * qk_dim, false, ModuleRole::kAttention);
    }
    AddLinear(&k, "kv_a_proj_with_mqa", m.h, kv_lora + rope, bias, ModuleRole::kAttention);
    AddNorm(&k, "kv_a_layernorm", kv_lora, false);
    AddLinear(&k, "kv_b_proj", kv_lora, m.a * (nope + v_dim), false, ModuleRole::kAttention);
    AddLinear(&k, "o_proj", m.a * v_dim, m.h, bias, ModuleRole::kAttention);
    AddNorm(&k, "input_layernorm", m.h, false);
    AddNorm(&k, "post_attention_layernorm", m.h, false);
    k.attention.num_heads = m.a;
    k.attention.num_kv_heads = m.a;
    k.attention.head_dim = qk_dim;
    k.attention.v_head_dim = v_dim;
    k.attention.mla = true;
    k.attention.kv_lora_rank = kv_lora;
    k.attention.qk_rope_head_dim = rope;
    k.attention.qk_nope_head_dim = nope;
    k.attention.q_lora_rank = q_lora;
    k.mlp.kind = MlpKind::kGated;
    k.mlp.activation = ActivationFn::kSilu;
    bool moe_layer = experts > 0 && i >= first_dense && i % freq == 0;
    if (!moe_layer) {
      AddGatedMlp(&k, m.h, m.inter, false, ModuleRole::kMlp);
      k.mlp.intermediate = m.inter;
      return k;
    }
    AddLinear(&k, "gate", m.h, experts, false, ModuleRole::kRouter);
    if (correction_bias) k.extra_router_params = experts;
    AddGatedMlp(&k, m.h, moe_inter, false, ModuleRole::kExperts, experts);
    if (n_shared > 0) AddGatedMlp(&k, m.h, moe_inter * n_shared, false, ModuleRole::kSharedExperts);
    k.mlp.intermediate = moe_inter;
    k.mlp.num_experts = experts;
    k.mlp.experts_per_token = top_k;
    k.mlp.shared_intermediate = moe_inter * n_shared;
    return k;
  });
  if (c.Int({"num_nextn_predict_layers"}).value_or(0) > 0) {
    spec.notes.push_back("the checkpoint's multi-token-prediction layer(s) (num_nextn_predict_layers) are not loaded by transformers and not counted");
  }
  return spec;
}

Expected<ModelSpec> BuildGptOss(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  CheckDims(c, m, true);
  int64_t experts = c.Required({"num_local_experts", "num_experts"}, 1, kMaxHeadsOrExperts);
  // GptOssConfig: experts_per_token = 4 when absent; 0 routes nothing and is refused.
  int64_t top_k = c.Int({"num_experts_per_tok", "experts_per_token"}, 1, kMaxHeadsOrExperts).value_or(4);
  CheckTopK(c, c.Has("num_experts_per_tok") || !c.Has("experts_per_token") ? "num_experts_per_tok" : "experts_per_token", top_k, experts);
  int64_t window = c.Int({"sliding_window"}, 0).value_or(128);
  bool bias = c.Bool("attention_bias", true);
  if (!c.errors()->empty()) return *c.errors();
  std::vector<bool> sliding = SlidingFlags(c, m.layers, [](int64_t i) { return i % 2 == 0; });
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kRmsNorm, false);
  BuildLayers(&spec, m.layers, [&](int64_t i) {
    LayerKind k;
    AddQkvo(&k, m, bias, bias);
    k.extra_attention_params = m.a;  // attention sinks, one logit per head
    AddLinear(&k, "router", m.h, experts, true, ModuleRole::kRouter);
    // GptOssExperts stores fused parameters (not nn.Linear): gate_up_proj [E, h, 2I] + bias, down_proj [E, I, h] + bias.
    AddLinear(&k, "gate_up_proj", m.h, 2 * m.inter, true, ModuleRole::kExperts, experts, false);
    AddLinear(&k, "down_proj", m.inter, m.h, true, ModuleRole::kExperts, experts, false);
    AddNorm(&k, "input_layernorm", m.h, false);
    AddNorm(&k, "post_attention_layernorm", m.h, false);
    SetAttention(&k, m, sliding[static_cast<size_t>(i)] ? window : 0);
    k.mlp.kind = MlpKind::kGated;
    k.mlp.activation = ActivationFn::kSilu;
    k.mlp.intermediate = m.inter;
    k.mlp.num_experts = experts;
    k.mlp.experts_per_token = top_k;
    return k;
  });
  return spec;
}

Expected<ModelSpec> BuildPhi3(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  CheckDims(c, m, true);
  int64_t window = c.Int({"sliding_window"}, 0).value_or(0);
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kRmsNorm, false);
  spec.rope_fraction = c.Fraction("partial_rotary_factor", 1.0, false);
  if (!c.errors()->empty()) return *c.errors();
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k;
    AddLinear(&k, "qkv_proj", m.h, (m.a + 2 * m.kv) * m.d, false, ModuleRole::kAttention);
    AddLinear(&k, "o_proj", m.a * m.d, m.h, false, ModuleRole::kAttention);
    AddLinear(&k, "gate_up_proj", m.h, 2 * m.inter, false, ModuleRole::kMlp);
    AddLinear(&k, "down_proj", m.inter, m.h, false, ModuleRole::kMlp);
    AddNorm(&k, "input_layernorm", m.h, false);
    AddNorm(&k, "post_attention_layernorm", m.h, false);
    SetAttention(&k, m, window);
    SetDenseMlp(&k, MlpKind::kGated, ActivationFn::kSilu, m.inter);
    return k;
  });
  return spec;
}

// Qwen1 (model_type "qwen", remote code modeling_qwen.py): fused c_attn (h -> 3·heads·kv_channels,
// with bias), attention c_proj, MLP w1/w2 (h -> intermediate_size / 2 each; a1 * silu(a2)) and
// c_proj, RMSNorms ln_1/ln_2/ln_f, untied lm_head. Its loss runs on the logits without .float()
// (QWenLMHeadModel.forward).
Expected<ModelSpec> BuildQwen(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  m.d = c.Int({"kv_channels"}, 1, kMaxHeadsOrExperts).value_or(m.a > 0 ? m.h / m.a : 0);
  m.kv = m.a;
  CheckDims(c, m, true);
  if (c.errors()->empty() && m.inter < 2) {
    io::AddError(c.errors(), "out_of_range", io::JoinPath(c.path(), "intermediate_size"),
                 io::JoinPath(c.path(), "intermediate_size") + " must be at least 2 for Qwen (each of w1 and w2 gets intermediate_size / 2), got " +
                     std::to_string(m.inter));
  }
  m.inter /= 2;  // QWenMLP: config.intermediate_size // 2 per projection
  const bool bias = !c.Bool("no_bias", true);
  spec.rope_fraction = c.Fraction("rotary_pct", 1.0, false);
  spec.attention_dropout = c.Fraction("attn_dropout_prob", 0.0, true);
  spec.embedding_dropout = c.Fraction("emb_dropout_prob", 0.0, true);
  spec.softmax_fp32 = c.Bool("softmax_in_fp32", false);
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kRmsNorm, false, "ln_f");
  spec.loss_upcasts_logits = false;
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k;
    AddLinear(&k, "c_attn", m.h, 3 * m.a * m.d, true, ModuleRole::kAttention);
    AddLinear(&k, "c_proj", m.a * m.d, m.h, bias, ModuleRole::kAttention);
    AddLinear(&k, "w1", m.h, m.inter, bias, ModuleRole::kMlp);
    AddLinear(&k, "w2", m.h, m.inter, bias, ModuleRole::kMlp);
    AddLinear(&k, "c_proj", m.inter, m.h, bias, ModuleRole::kMlp);
    AddNorm(&k, "ln_1", m.h, false);
    AddNorm(&k, "ln_2", m.h, false);
    SetAttention(&k, m, 0);
    SetDenseMlp(&k, MlpKind::kGated, ActivationFn::kSilu, m.inter);
    return k;
  });
  return spec;
}

Expected<ModelSpec> BuildPhi(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  CheckDims(c, m, true);
  bool qk_layernorm = c.Bool("qk_layernorm", false);
  ActivationFn act = ParseActivation(c.String("hidden_act", "gelu_new"));
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kLayerNorm, true, "final_layernorm");
  spec.lm_head_bias = true;  // PhiForCausalLM: nn.Linear(hidden, vocab, bias=True)
  spec.attention_dropout = c.Fraction("attention_dropout", 0.0, true);
  spec.hidden_dropout = c.Fraction("resid_pdrop", 0.0, true);
  spec.embedding_dropout = c.Fraction("embd_pdrop", 0.0, true);
  spec.rope_fraction = c.Fraction("partial_rotary_factor", 0.5, false);
  if (!c.errors()->empty()) return *c.errors();
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k;
    AddLinear(&k, "q_proj", m.h, m.a * m.d, true, ModuleRole::kAttention);
    AddLinear(&k, "k_proj", m.h, m.kv * m.d, true, ModuleRole::kAttention);
    AddLinear(&k, "v_proj", m.h, m.kv * m.d, true, ModuleRole::kAttention);
    AddLinear(&k, "dense", m.a * m.d, m.h, true, ModuleRole::kAttention);
    AddLinear(&k, "fc1", m.h, m.inter, true, ModuleRole::kMlp);
    AddLinear(&k, "fc2", m.inter, m.h, true, ModuleRole::kMlp);
    AddNorm(&k, "input_layernorm", m.h, true);
    if (qk_layernorm) {
      AddNorm(&k, "q_layernorm", m.d, true);
      AddNorm(&k, "k_layernorm", m.d, true);
    }
    k.parallel_residual = true;
    SetAttention(&k, m, 0);
    SetDenseMlp(&k, MlpKind::kPlain, act, m.inter);
    return k;
  });
  return spec;
}

Expected<ModelSpec> BuildGpt2(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  if (m.inter == 0) m.inter = 4 * m.h;  // n_inner null -> 4 * n_embd
  CheckDims(c, m, true);
  // The registered causal-mask buffer is n_positions^2 bytes per layer: 2^20 positions keep it
  // (times 4096 layers) below 2^52 bytes; real GPT-2 checkpoints use 1024 to 8192.
  int64_t positions = c.Int({"n_positions", "max_position_embeddings"}, 1, int64_t{1} << 20).value_or(1024);
  ActivationFn act = ParseActivation(c.String("activation_function", "gelu_new"));
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", true), NormKind::kLayerNorm, true, "ln_f");
  spec.position_embedding_rows = positions;
  spec.rope_fraction = 0.0;
  spec.softmax_fp32 = false;
  spec.scale_is_tensor = true;
  spec.legacy_logits_upcast = false;
  spec.legacy_buffer_bytes_per_layer = positions * positions;  // registered `bias` (bool n_positions^2)
  // GPT2Config defaults: attn_pdrop = resid_pdrop = embd_pdrop = 0.1.
  spec.attention_dropout = c.Fraction("attn_pdrop", 0.1, true);
  spec.hidden_dropout = c.Fraction("resid_pdrop", 0.1, true);
  spec.embedding_dropout = c.Fraction("embd_pdrop", 0.1, true);
  if (!c.errors()->empty()) return *c.errors();
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k;
    AddLinear(&k, "c_attn", m.h, 3 * m.h, true, ModuleRole::kAttention);
    AddLinear(&k, "c_proj", m.h, m.h, true, ModuleRole::kAttention);
    AddLinear(&k, "c_fc", m.h, m.inter, true, ModuleRole::kMlp);
    AddLinear(&k, "c_proj", m.inter, m.h, true, ModuleRole::kMlp);
    AddNorm(&k, "ln_1", m.h, true);
    AddNorm(&k, "ln_2", m.h, true);
    SetAttention(&k, m, 0);
    SetDenseMlp(&k, MlpKind::kPlain, act, m.inter);
    return k;
  });
  return spec;
}

Expected<ModelSpec> BuildGptNeox(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  CheckDims(c, m, true);
  bool bias = c.Bool("attention_bias", true);
  bool parallel = c.Bool("use_parallel_residual", true);
  ActivationFn act = ParseActivation(c.String("hidden_act", "gelu"));
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kLayerNorm, true, "final_layer_norm");
  spec.rope_fraction = c.Fraction("rotary_pct", "partial_rotary_factor", 0.25, false);
  spec.attention_dropout = c.Fraction("attention_dropout", 0.0, true);
  spec.hidden_dropout = c.Fraction("hidden_dropout", 0.0, true);
  if (!c.errors()->empty()) return *c.errors();
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k;
    AddLinear(&k, "query_key_value", m.h, 3 * m.h, bias, ModuleRole::kAttention);
    AddLinear(&k, "dense", m.h, m.h, bias, ModuleRole::kAttention);
    AddLinear(&k, "dense_h_to_4h", m.h, m.inter, true, ModuleRole::kMlp);
    AddLinear(&k, "dense_4h_to_h", m.inter, m.h, true, ModuleRole::kMlp);
    AddNorm(&k, "input_layernorm", m.h, true);
    AddNorm(&k, "post_attention_layernorm", m.h, true);
    k.parallel_residual = parallel;
    SetAttention(&k, m, 0);
    SetDenseMlp(&k, MlpKind::kPlain, act, m.inter);
    return k;
  });
  return spec;
}

Expected<ModelSpec> BuildFalcon(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  bool new_arch = c.Bool("new_decoder_architecture", false);
  bool multi_query = c.Bool("multi_query", true);
  bool parallel = c.Bool("parallel_attn", true);
  bool bias = c.Bool("bias", false);
  m.kv = new_arch ? c.Int({"num_kv_heads", "n_head_kv"}, 1, kMaxHeadsOrExperts).value_or(m.a) : (multi_query ? 1 : m.a);
  if (m.inter == 0) m.inter = 4 * m.h;
  int64_t ln_parallel = c.Int({"num_ln_in_parallel_attn"}, 1, 2).value_or(2);
  CheckDims(c, m, true);
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", true), NormKind::kLayerNorm, true, "ln_f");
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k;
    AddLinear(&k, "query_key_value", m.h, (m.a + 2 * m.kv) * m.d, bias, ModuleRole::kAttention);
    AddLinear(&k, "dense", m.a * m.d, m.h, bias, ModuleRole::kAttention);
    AddLinear(&k, "dense_h_to_4h", m.h, m.inter, bias, ModuleRole::kMlp);
    AddLinear(&k, "dense_4h_to_h", m.inter, m.h, bias, ModuleRole::kMlp);
    if (new_arch && ln_parallel == 2) {
      AddNorm(&k, "ln_attn", m.h, true);
      AddNorm(&k, "ln_mlp", m.h, true);
    } else {
      AddNorm(&k, "input_layernorm", m.h, true);
      if (!new_arch && !parallel) AddNorm(&k, "post_attention_layernorm", m.h, true);
    }
    k.parallel_residual = new_arch || parallel;
    SetAttention(&k, m, 0);
    SetDenseMlp(&k, MlpKind::kPlain, ActivationFn::kGelu, m.inter);
    return k;
  });
  return spec;
}

const std::vector<std::string> kLlamaLike = {"llama", "mistral", "qwen2", "qwen3", "olmo2", "gemma", "gemma2", "gemma3_text"};

}  // namespace

const std::vector<std::string>& SupportedModelTypes() {
  static const std::vector<std::string> kTypes = {
      "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "gemma", "gemma2", "gemma3_text",
      "phi", "phi3", "gpt2", "gpt_neox", "falcon", "deepseek_v2", "deepseek_v3", "gpt_oss", "olmo2", "qwen"};
  return kTypes;
}

namespace {

Expected<ModelSpec> BuildSpec(const Json& config, const std::string& path, Issues* warnings);

}  // namespace

Expected<ModelSpec> ModelSpecFromHfConfig(const Json& config, const std::string& path, Issues* warnings) {
  Expected<ModelSpec> spec = BuildSpec(config, path, warnings);
  if (!spec.ok()) return spec;
  // Reject absurd sizes before any exact int64 arithmetic can overflow.
  double params = 0;
  for (uint8_t k : spec.value().layer_kind) {
    for (const auto& l : spec.value().kinds[k].linears) {
      params += static_cast<double>(l.in_features) * static_cast<double>(l.out_features) * static_cast<double>(l.copies);
    }
  }
  params += 2.0 * static_cast<double>(spec.value().vocab_size) * static_cast<double>(spec.value().hidden_size);
  if (params > 1e15) {
    return Issues{Issue{"out_of_range", path, "this config describes more than 10^15 parameters; check hidden_size, intermediate_size, num_hidden_layers and the expert counts"}};
  }
  if (spec.value().kinds.empty()) {
    return Issues{Issue{"invalid_value", path, "the model config has no decoder layers"}};
  }
  return spec;
}

namespace {

Expected<ModelSpec> BuildSpec(const Json& config, const std::string& path, Issues* warnings) {
  Issues errors;
  if (!config.is_object()) {
    return Issues{Issue{"wrong_type", path, path + " must be a preset id (string) or a config.json object, got " + io::Describe(config)}};
  }
  // Multimodal wrappers (gemma3, mistral3, llava...) keep the decoder under text_config.
  const Json* cfg = &config;
  std::string cfg_path = path;
  std::string type;
  {
    ConfigReader top(config, path, &errors);
    type = top.String("model_type", "");
    auto tc = config.find("text_config");
    if (tc != config.end() && tc->is_object() &&
        std::find(SupportedModelTypes().begin(), SupportedModelTypes().end(), type) == SupportedModelTypes().end()) {
      cfg = &*tc;
      cfg_path = io::JoinPath(path, "text_config");
      ConfigReader inner(*cfg, cfg_path, &errors);
      std::string outer = type;
      type = inner.String("model_type", "");
      if (type == "gemma3") type = "gemma3_text";
      warnings->push_back(Issue{"text_model_only", path, io::Quote(outer) + " is multimodal: only its text decoder (text_config, model_type " + io::Quote(type) + ") is counted; the vision tower is not"});
    }
    if (!errors.empty()) return errors;
  }
  ConfigReader c(*cfg, cfg_path, &errors);
  ModelSpec spec;
  spec.model_type = type;
  spec.max_position_embeddings = c.Int({"max_position_embeddings", "n_positions", "seq_length"}).value_or(0);
  {
    auto arch = cfg->find("architectures");
    if (arch != cfg->end() && arch->is_array() && !arch->empty() && (*arch)[0].is_string()) {
      spec.architecture = (*arch)[0].get<std::string>();
    }
  }
  if (!errors.empty()) return errors;
  if (type == "deepseek_v2" || type == "deepseek_v3" || type == "kimi_k2") return BuildDeepseekV3(c, type, std::move(spec));
  if (type == "mixtral" || type == "qwen2_moe" || type == "qwen3_moe") return BuildMoe(c, type, std::move(spec));
  if (type == "gpt_oss") return BuildGptOss(c, std::move(spec));
  if (type == "phi3") return BuildPhi3(c, std::move(spec));
  if (type == "qwen") return BuildQwen(c, std::move(spec));
  if (type == "phi") return BuildPhi(c, std::move(spec));
  if (type == "gpt2") return BuildGpt2(c, std::move(spec));
  if (type == "gpt_neox") return BuildGptNeox(c, std::move(spec));
  if (type == "falcon" || type == "RefinedWeb" || type == "RefinedWebModel") return BuildFalcon(c, std::move(spec));
  if (std::find(kLlamaLike.begin(), kLlamaLike.end(), type) != kLlamaLike.end()) return BuildLlamaLike(c, type, std::move(spec));
  warnings->push_back(Issue{"generic_model_type", io::JoinPath(cfg_path, "model_type"),
                            (type.empty() ? std::string("no model_type given") : "model_type " + io::Quote(type) + " has no dedicated reader") +
                                ": read as a Llama-style decoder (RMSNorm, SwiGLU, q/k/v/o); parameter counts may be off for this family"});
  return BuildLlamaLike(c, "generic", std::move(spec));
}

}  // namespace
}  // namespace vramplan
