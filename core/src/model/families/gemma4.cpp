// Gemma 4's text decoder (transformers models/gemma4/modeling_gemma4.py, Gemma4TextConfig; the
// text_config of the multimodal gemma4 wrapper, whose vision and audio towers
// model/gemma4_towers.cpp counts). Gemma 4 12B's text_config (gemma4_unified_text, transformers
// models/gemma4_unified) is the same decoder without MoE and per-layer embeddings
// (convert_gemma4_unified_weights.py: "identical to the standard Gemma4 conversion (minus MoE and PLE)").
//
// Gemma4TextAttention: sliding layers use head_dim and num_key_value_heads; full-attention layers
// use global_head_dim (512 unless given) and, with attention_k_eq_v, num_global_key_value_heads and
// no v_proj (the values are the keys before k_norm). q_norm / k_norm are RMSNorm(head dim); v_norm
// has no weight. The last num_kv_shared_layers layers read the K/V of the last earlier layer of
// their type: they have no k_proj / v_proj / k_norm (the checkpoint still stores them; transformers
// drops them as _keys_to_ignore_on_load_unexpected) and cache nothing.
// Gemma4TextDecoderLayer: the Gemma 3 sandwich norms, a tanh-GELU Gemma4TextMLP (twice as wide on
// KV-shared layers when use_double_wide_mlp), a persistent layer_scalar buffer of one element, and
// with enable_moe_block a router (RMSNorm without weight, proj Linear(h, E), scale [h],
// per_expert_scale [E]) and Gemma4TextExperts (fused gate_up_proj [E, 2I, h] and down_proj [E, h, I]:
// not nn.Linear, not LoRA targets) beside the dense MLP, with three more norms.
// Per-layer embeddings (hidden_size_per_layer_input > 0, E2B / E4B): Gemma4TextModel's
// embed_tokens_per_layer [vocab_size_per_layer_input, layers x p], per_layer_model_projection
// Linear(h, layers x p) and per_layer_projection_norm RMSNorm(p); each layer's
// per_layer_input_gate Linear(h, p), per_layer_projection Linear(p, h) and post_per_layer_input_norm.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "model/families/builders.h"
#include "model/families/layer_kit.h"
#include "util/checked_math.h"

namespace vramplan::families {
namespace {

struct Gemma4Text {
  Dims m;
  int64_t global_head_dim = 512, global_kv = 0, window = 512, shared = 0, ple = 0, ple_vocab = 0;
  int64_t experts = 0, top_k = 0, expert_inter = 0;
  bool k_eq_v = false, double_wide = false, moe = false, bias = false;
  ActivationFn act = ActivationFn::kGeluTanh;
  std::vector<bool> full;  // full attention per layer
  // per_layer_config overrides per layer (0: none): head_dim and num_key_value_heads.
  std::vector<int64_t> head_dim_at, kv_at;
};

// per_layer_config, the form transformers (5.15 on) saves instead of global_head_dim /
// num_global_key_value_heads: Gemma4TextConfig.__post_init__ (and Gemma4UnifiedTextConfig's)
// turns those into {layer index: {"head_dim": global_head_dim, "num_key_value_heads": ...}} for every
// full-attention layer, and to_dict writes the indices as zero-padded strings ("05"). Returns the
// layers it names (the full-attention ones), or nothing when the config has no per_layer_config.
std::optional<std::vector<bool>> ReadPerLayerConfig(ConfigReader& c, Gemma4Text* g) {
  auto plc = c.raw().find("per_layer_config");
  if (plc == c.raw().end() || plc->is_null()) return std::nullopt;
  const std::string path = io::JoinPath(c.path(), "per_layer_config");
  if (!plc->is_object()) {
    io::AddError(c.errors(), "wrong_type", path, path + " must be an object of layer index -> {head_dim, num_key_value_heads}");
    return std::nullopt;
  }
  const size_t n = static_cast<size_t>(g->m.layers);
  std::vector<bool> named(n, false);
  g->head_dim_at.assign(n, 0);
  g->kv_at.assign(n, 0);
  for (const auto& [key, entry] : plc->items()) {
    const std::string entry_path = io::JoinPath(path, key);
    int64_t index = -1;
    if (!key.empty() && key.size() <= 6 && std::all_of(key.begin(), key.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
      index = std::stoll(key);
    }
    if (index < 0 || index >= g->m.layers || !entry.is_object()) {
      io::AddError(c.errors(), "invalid_value", entry_path,
                   entry_path + ": per_layer_config keys must be layer indices below num_hidden_layers (" +
                       std::to_string(g->m.layers) + "), each with an object of overrides");
      continue;
    }
    ConfigReader e(entry, entry_path, c.errors());
    const size_t i = static_cast<size_t>(index);
    named[i] = true;
    g->head_dim_at[i] = e.Int({"head_dim"}, 1, kMaxHeadsOrExperts).value_or(0);
    g->kv_at[i] = e.Int({"num_key_value_heads"}, 1, kMaxHeadsOrExperts).value_or(0);
  }
  return named;
}

Gemma4Text Read(ConfigReader& c) {
  Gemma4Text g;
  g.m = ReadDims(c);
  CheckDims(c, g.m, true);
  g.global_head_dim = c.Int({"global_head_dim"}, 1, kMaxHeadsOrExperts).value_or(512);
  g.global_kv = c.Int({"num_global_key_value_heads"}, 1, kMaxHeadsOrExperts).value_or(0);
  g.k_eq_v = c.Bool("attention_k_eq_v", false);
  g.window = c.Int({"sliding_window"}, 0).value_or(512);
  g.shared = c.Int({"num_kv_shared_layers"}, 0, 4096).value_or(0);
  g.double_wide = c.Bool("use_double_wide_mlp", false);
  g.ple = c.Int({"hidden_size_per_layer_input"}, 0).value_or(0);
  g.ple_vocab = c.Int({"vocab_size_per_layer_input"}, 0).value_or(262144);  // 0 where unused (Gemma 4 12B)
  g.moe = c.Bool("enable_moe_block", false);
  g.bias = c.Bool("attention_bias", false);
  g.act = ParseActivation(c.String("hidden_activation", "gelu_pytorch_tanh"));
  if (g.moe) {
    g.experts = c.Required({"num_experts"}, 1, kMaxHeadsOrExperts);
    g.top_k = c.Required({"top_k_experts"}, 1, kMaxHeadsOrExperts);
    g.expert_inter = c.Required({"moe_intermediate_size"});
    CheckTopK(c, "top_k_experts", g.top_k, g.experts);
  }
  // Gemma4TextConfig.__post_init__: 5 sliding layers then one full by default; the last layer is
  // always full attention. Without layer_types, a saved per_layer_config names the full layers.
  std::optional<std::vector<bool>> named = c.errors()->empty() ? ReadPerLayerConfig(c, &g) : std::nullopt;
  auto layer_types = c.raw().find("layer_types");
  const bool has_layer_types = layer_types != c.raw().end() && !layer_types->is_null();
  std::vector<bool> sliding = SlidingFlags(c, g.m.layers, [&](int64_t i) {
    if (named && !has_layer_types) return !(*named)[static_cast<size_t>(i)];
    return (i + 1) % 6 != 0;
  });
  g.full.assign(sliding.size(), false);
  for (size_t i = 0; i < sliding.size(); ++i) g.full[i] = !sliding[i];
  if (!g.full.empty()) g.full.back() = true;
  return g;
}

// One layer: its kind, and the weights the checkpoint stores for it that the model does not hold.
LayerKind Layer(const Gemma4Text& g, int64_t i, int64_t* unloaded) {
  const Dims& m = g.m;
  const bool full = g.full[static_cast<size_t>(i)];
  const bool shared = g.shared > 0 && i >= m.layers - g.shared;
  const bool k_is_v = g.k_eq_v && full;
  Dims d = m;
  d.d = full && g.global_head_dim > 0 ? g.global_head_dim : m.d;
  if (k_is_v && g.global_kv > 0) d.kv = g.global_kv;
  const size_t at = static_cast<size_t>(i);
  if (at < g.head_dim_at.size() && g.head_dim_at[at] > 0) d.d = g.head_dim_at[at];
  if (at < g.kv_at.size() && g.kv_at[at] > 0) d.kv = g.kv_at[at];
  LayerKind k;
  AddLinear(&k, "q_proj", LinearSlot::kQ, m.h, m.a * d.d, g.bias);
  const int64_t kv_weights = m.h * d.kv * d.d * (k_is_v ? 1 : 2) + (g.bias ? d.kv * d.d * (k_is_v ? 1 : 2) : 0) + d.d;
  if (shared) {
    *unloaded += kv_weights;
  } else {
    AddLinear(&k, "k_proj", LinearSlot::kK, m.h, d.kv * d.d, g.bias);
    if (!k_is_v) AddLinear(&k, "v_proj", LinearSlot::kV, m.h, d.kv * d.d, g.bias);
  }
  AddLinear(&k, "o_proj", LinearSlot::kO, m.a * d.d, m.h, g.bias);
  AddNorm(&k, "q_norm", NormSlot::kQPerHead, d.d, false);
  if (!shared) AddNorm(&k, "k_norm", NormSlot::kKPerHead, d.d, false);
  AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, false);
  AddNorm(&k, "post_attention_layernorm", NormSlot::kPostAttention, m.h, false);
  AddNorm(&k, "pre_feedforward_layernorm", NormSlot::kPreMlp, m.h, false);
  AddNorm(&k, "post_feedforward_layernorm", NormSlot::kPostMlp, m.h, false);
  SetAttention(&k, d, full ? 0 : g.window);
  k.attention.kv_shared = shared;
  // layer_scalar (a persistent buffer, stored in the checkpoint); with per-layer embeddings
  // per_layer_input_gate, per_layer_projection and post_per_layer_input_norm, kept here as extra
  // weights (no LoRA target, no tensor-parallel split: they are p = 256 wide).
  k.extra_attention_params = 1 + (g.ple > 0 ? 2 * m.h * g.ple + m.h : 0);
  const int64_t inter = m.inter * (g.double_wide && shared ? 2 : 1);
  if (!g.moe) {
    AddGatedMlp(&k, m.h, inter, false, GatedMlpOwner::kDense);
    SetDenseMlp(&k, MlpKind::kGated, g.act, inter);
    return k;
  }
  // The dense MLP runs on every token beside the routed experts, like a shared expert.
  AddGatedMlp(&k, m.h, inter, false, GatedMlpOwner::kSharedExperts);
  AddLinear(&k, "router.proj", LinearSlot::kRouter, m.h, g.experts, false);
  k.extra_router_params = m.h + g.experts;  // router.scale, router.per_expert_scale
  AddLinear(&k, "experts.gate_up_proj", LinearSlot::kExpertGateUp, m.h, 2 * g.expert_inter, false, g.experts, false);
  AddLinear(&k, "experts.down_proj", LinearSlot::kExpertDown, g.expert_inter, m.h, false, g.experts, false);
  AddNorm(&k, "pre_feedforward_layernorm_2", NormSlot::kPreMlp, m.h, false);
  AddNorm(&k, "post_feedforward_layernorm_1", NormSlot::kPostMlp, m.h, false);
  AddNorm(&k, "post_feedforward_layernorm_2", NormSlot::kPostMlp, m.h, false);
  SetDenseMlp(&k, MlpKind::kGated, g.act, g.expert_inter);
  SetMoeMlp(&k, g.expert_inter, g.experts, g.top_k, inter);
  return k;
}

}  // namespace

Expected<ModelSpec> BuildGemma4Text(ConfigReader& c, ModelSpec spec) {
  Gemma4Text g = Read(c);
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, g.m, c.Bool("tie_word_embeddings", true), NormKind::kRmsNorm, false);
  if (g.ple > 0) {
    // Three config widths multiplied: checked (util/checked_math.h), as pasted configs can be hostile.
    const int64_t width = checked::Mul(g.m.layers, g.ple);
    spec.extra_embedding_params = checked::Add(checked::Add(checked::Mul(g.ple_vocab, width), checked::Mul(g.m.h, width)), g.ple);
  }
  int64_t unloaded = 0;
  BuildLayers(&spec, g.m.layers, [&](int64_t i) { return Layer(g, i, &unloaded); });
  spec.checkpoint.unloaded_params = unloaded;
  if (g.shared > 0) {
    spec.notes.push_back("Gemma 4's last " + std::to_string(g.shared) +
                         " layers reuse the K/V of earlier layers (num_kv_shared_layers): they cache nothing; the checkpoint "
                         "still stores their k_proj / v_proj / k_norm, counted in params.checkpoint_total and by_module.unloaded");
  }
  if (g.ple > 0) {
    spec.notes.push_back("Gemma 4's per-layer embeddings (embed_tokens_per_layer, per_layer_model_projection) count in "
                         "by_module.embedding and are held in 16-bit like the token embedding");
  }
  return spec;
}

}  // namespace vramplan::families
