// Cohere's Command models: Command-R / R+ (transformers models/cohere/modular_cohere.py,
// CohereAttention / CohereMLP / CohereDecoderLayer) and Command R7B / Command A
// (models/cohere2/modular_cohere2.py). One LayerNorm without bias per layer (CohereLayerNorm: a
// weight only) feeds attention and the SwiGLU MLP side by side (parallel residual); q/k/v/o carry a
// bias with attention_bias; the final norm is the same LayerNorm; tied embeddings by default.
// logit_scale multiplies the logits and adds no weight.
#include "model/families/builders.h"
#include "model/families/layer_kit.h"

namespace vramplan::families {
namespace {

// The Cohere decoder layer. `qk_norm`: CohereAttention's use_qk_norm, a CohereLayerNorm of shape
// (heads, head_dim) on q and (kv heads, head_dim) on k: one weight per head and channel,
// normalized over head_dim.
LayerKind CohereLayer(const Dims& m, bool attention_bias, bool qk_norm, ActivationFn act, int64_t window) {
  LayerKind k;
  AddQkvo(&k, m, attention_bias, attention_bias);
  AddGatedMlp(&k, m.h, m.inter, false, GatedMlpOwner::kDense);
  AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, false);
  if (qk_norm) {
    AddNorm(&k, "q_norm", NormSlot::kQ, m.a * m.d, false);
    AddNorm(&k, "k_norm", NormSlot::kK, m.kv * m.d, false);
  }
  k.parallel_residual = true;
  SetAttention(&k, m, window);
  SetDenseMlp(&k, MlpKind::kGated, act, m.inter);
  return k;
}

}  // namespace

// CohereConfig (configuration_cohere.py): attention_bias false, use_qk_norm false,
// tie_word_embeddings true; head_dim = hidden_size / num_attention_heads (LlamaAttention).
Expected<ModelSpec> BuildCohere(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  CheckDims(c, m, true);
  const bool attention_bias = c.Bool("attention_bias", false);
  const bool qk_norm = c.Bool("use_qk_norm", false);
  const ActivationFn act = ParseActivation(c.String("hidden_act", "silu"));
  spec.attention_dropout = c.Fraction("attention_dropout", 0.0, true);
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", true), NormKind::kLayerNorm, false);
  BuildLayers(&spec, m.layers, [&](int64_t) { return CohereLayer(m, attention_bias, qk_norm, act, 0); });
  return spec;
}

// Cohere2Config (configuration_cohere2.py): the Cohere layer without q/k norms; head_dim is always
// hidden_size / num_attention_heads (set in __post_init__, a head_dim key is overwritten). Sliding
// layers from layer_types, else from sliding_window_pattern (default 4): every layer slides over
// sliding_window (default 4096) tokens but each pattern-th, which attends globally without RoPE.
Expected<ModelSpec> BuildCohere2(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  m.d = m.a > 0 ? m.h / m.a : 0;
  if (c.errors()->empty() && m.a > 0 && m.h % m.a != 0) {
    io::AddError(c.errors(), "invalid_value", io::JoinPath(c.path(), "num_attention_heads"),
                 "hidden_size must be divisible by num_attention_heads (Cohere2Config sets head_dim = hidden_size / num_attention_heads)");
  }
  CheckDims(c, m, true);
  const bool attention_bias = c.Bool("attention_bias", false);
  const int64_t window = c.Int({"sliding_window"}, 0).value_or(4096);
  const int64_t period = c.Int({"sliding_window_pattern"}, 1, 1 << 20).value_or(4);
  const ActivationFn act = ParseActivation(c.String("hidden_act", "silu"));
  spec.attention_dropout = c.Fraction("attention_dropout", 0.0, true);
  if (!c.errors()->empty()) return *c.errors();
  const std::vector<bool> sliding = SlidingFlags(c, m.layers, [period](int64_t i) { return (i + 1) % period != 0; });
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", true), NormKind::kLayerNorm, false);
  BuildLayers(&spec, m.layers, [&](int64_t i) {
    return CohereLayer(m, attention_bias, false, act, sliding[static_cast<size_t>(i)] ? window : 0);
  });
  return spec;
}

}  // namespace vramplan::families
