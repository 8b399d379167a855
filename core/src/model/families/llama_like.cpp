// Llama and its close relatives (transformers modeling_llama.py, modeling_mistral.py,
// modeling_qwen2.py, modeling_qwen3.py): q/k/v/o attention, a gated MLP, RMSNorms; and the
// reader for an unknown model_type, which is read the same way.
#include "model/families/llama_like.h"

#include "model/families/builders.h"

namespace vramplan::families {

LayerKind LlamaLikeLayer(const Dims& m, const LlamaLikeOptions& o, ActivationFn act, int64_t window) {
  LayerKind k;
  AddQkvo(&k, m, o.qkv_bias, o.o_bias);
  AddGatedMlp(&k, m.h, m.inter, o.mlp_bias, GatedMlpOwner::kDense);
  if (o.pre_norms_gemma) {
    AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, false);
    AddNorm(&k, "pre_feedforward_layernorm", NormSlot::kPreMlp, m.h, false);
  } else if (o.post_norms_only) {
    AddNorm(&k, "post_attention_layernorm", NormSlot::kPostAttention, m.h, false);
    AddNorm(&k, "post_feedforward_layernorm", NormSlot::kPostMlp, m.h, false);
  } else {
    AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, false);
    // Llama's post_attention_layernorm normalizes the MLP input; Gemma 2/3's the attention output.
    AddNorm(&k, "post_attention_layernorm", o.sandwich_norms ? NormSlot::kPostAttention : NormSlot::kPreMlp, m.h, false);
    if (o.sandwich_norms) {
      AddNorm(&k, "pre_feedforward_layernorm", NormSlot::kPreMlp, m.h, false);
      AddNorm(&k, "post_feedforward_layernorm", NormSlot::kPostMlp, m.h, false);
    }
  }
  if (o.head_qk_norm) {
    AddNorm(&k, "q_norm", NormSlot::kQPerHead, m.d, false);
    AddNorm(&k, "k_norm", NormSlot::kKPerHead, m.d, false);
  }
  if (o.full_qk_norm) {
    AddNorm(&k, "q_norm", NormSlot::kQ, m.a * m.d, false);
    AddNorm(&k, "k_norm", NormSlot::kK, m.kv * m.d, false);
  }
  SetAttention(&k, m, window);
  SetDenseMlp(&k, MlpKind::kGated, act, m.inter);
  return k;
}

Expected<ModelSpec> BuildLlamaLike(ConfigReader& c, ModelSpec spec, VariantReader read_variant) {
  Dims m = ReadDims(c);
  CheckDims(c, m, true);
  LlamaLikeVariant v;
  int64_t window = c.Int({"sliding_window"}, 0).value_or(0);
  v.activation = c.String("hidden_act", "silu");
  read_variant(c, window, &v);
  if (!c.errors()->empty()) return *c.errors();
  ActivationFn act = ParseActivation(v.activation);
  spec.attention_dropout = c.Fraction("attention_dropout", v.attention_dropout_default, true);
  spec.hidden_dropout = v.hidden_dropout;
  std::vector<bool> sliding = SlidingFlags(c, m.layers, v.sliding_rule);
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", v.tied_default), NormKind::kRmsNorm, false);
  BuildLayers(&spec, m.layers, [&](int64_t i) {
    return LlamaLikeLayer(m, v.layer, act, sliding[static_cast<size_t>(i)] ? window : 0);
  });
  if (!c.errors()->empty()) return *c.errors();
  return spec;
}

namespace {

// LlamaConfig: attention_bias covers q/k/v and o; mlp_bias the MLP.
void LlamaVariant(ConfigReader& c, int64_t, LlamaLikeVariant* v) {
  v->layer.qkv_bias = c.Bool("attention_bias", false);
  v->layer.o_bias = v->layer.qkv_bias;
  v->layer.mlp_bias = c.Bool("mlp_bias", false);
}

// MistralConfig: one sliding window on every layer when set.
void MistralVariant(ConfigReader&, int64_t window, LlamaLikeVariant* v) {
  v->sliding_rule = [window](int64_t) { return window > 0; };
}

// Qwen2: q/k/v always carry a bias; sliding windows (when enabled) from max_window_layers on.
void Qwen2Variant(ConfigReader& c, int64_t window, LlamaLikeVariant* v) {
  v->layer.qkv_bias = true;
  bool use_sw = c.Bool("use_sliding_window", false);
  int64_t max_window_layers = c.Int({"max_window_layers"}, 0).value_or(28);
  v->sliding_rule = [=](int64_t i) { return use_sw && window > 0 && i >= max_window_layers; };
}

// Qwen3: attention_bias on q/k/v/o, RMSNorm(head_dim) on q and k.
void Qwen3Variant(ConfigReader& c, int64_t window, LlamaLikeVariant* v) {
  v->layer.qkv_bias = c.Bool("attention_bias", false);
  v->layer.o_bias = v->layer.qkv_bias;
  v->layer.head_qk_norm = true;
  bool use_sw = c.Bool("use_sliding_window", false);
  int64_t max_window_layers = c.Int({"max_window_layers"}, 0).value_or(28);
  v->sliding_rule = [=](int64_t i) { return use_sw && window > 0 && i >= max_window_layers; };
}

// SeedOssConfig (transformers configuration_seed_oss.py, modeling_seed_oss.py SeedOssAttention):
// attention_bias on q/k/v, attention_out_bias on o_proj, mlp_bias on the MLP. Training applies
// residual_dropout to o_proj's and down_proj's outputs (SeedOssAttention.forward, SeedOssMLP.forward,
// nn.functional.dropout before each residual add: one mask each, as GPT-2's resid_pdrop) and
// attention_dropout to the probabilities; both default to 0.1 in SeedOssConfig.
void SeedOssVariant(ConfigReader& c, int64_t, LlamaLikeVariant* v) {
  v->layer.qkv_bias = c.Bool("attention_bias", true);
  v->layer.o_bias = c.Bool("attention_out_bias", false);
  v->layer.mlp_bias = c.Bool("mlp_bias", false);
  v->attention_dropout_default = 0.1;
  v->hidden_dropout = c.Fraction("residual_dropout", 0.1, true);
}

}  // namespace

Expected<ModelSpec> BuildSeedOss(ConfigReader& c, ModelSpec spec) { return BuildLlamaLike(c, std::move(spec), SeedOssVariant); }
Expected<ModelSpec> BuildLlama(ConfigReader& c, ModelSpec spec) { return BuildLlamaLike(c, std::move(spec), LlamaVariant); }
Expected<ModelSpec> BuildMistral(ConfigReader& c, ModelSpec spec) { return BuildLlamaLike(c, std::move(spec), MistralVariant); }
Expected<ModelSpec> BuildQwen2(ConfigReader& c, ModelSpec spec) { return BuildLlamaLike(c, std::move(spec), Qwen2Variant); }
Expected<ModelSpec> BuildQwen3(ConfigReader& c, ModelSpec spec) { return BuildLlamaLike(c, std::move(spec), Qwen3Variant); }

}  // namespace vramplan::families
