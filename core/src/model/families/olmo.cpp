// OLMo 1 (transformers modeling_olmo.py): the Llama layer with non-parametric LayerNorms.
// OLMo 2 (transformers modeling_olmo2.py): the Llama-style layer with RMSNorms on the attention
// and MLP outputs only (no pre-norms) and RMSNorm over all q / k heads together. OLMo 3
// (modeling_olmo3.py, Olmo3DecoderLayer) is the same layer with sliding-window attention on the
// layers layer_types names (vLLM serves it with its Olmo2ForCausalLM class).
#include "model/families/builders.h"
#include "model/families/layer_kit.h"
#include "model/families/llama_like.h"

#include <string>

namespace vramplan::families {
namespace {

void Olmo2Variant(ConfigReader& c, int64_t, LlamaLikeVariant* v) {
  v->layer.qkv_bias = c.Bool("attention_bias", false);
  v->layer.o_bias = v->layer.qkv_bias;
  v->layer.full_qk_norm = true;
  v->layer.post_norms_only = true;
}

// Olmo3Config (transformers configuration_olmo3.py): without layer_types, every fourth layer is
// full attention and the others slide over sliding_window tokens.
void Olmo3Variant(ConfigReader& c, int64_t window, LlamaLikeVariant* v) {
  Olmo2Variant(c, window, v);
  v->sliding_rule = [window](int64_t i) { return window > 0 && (i + 1) % 4 != 0; };
}

// EXAONE 4.0 (transformers modeling_exaone4.py, Exaone4DecoderLayer / Exaone4Attention): OLMo 2's
// norms on the attention and MLP outputs only, but RMSNorm(head_dim) per q / k head, no biases.
// Sliding layers from layer_types; without it Exaone4Config derives them from
// sliding_window_pattern: an integer N slides on every layer but each N-th, a string such as "LLLG"
// names each layer of the repeating period (L local, G global). Its global layers skip RoPE (NoPE),
// which changes no weight.
void Exaone4Variant(ConfigReader& c, int64_t window, LlamaLikeVariant* v) {
  v->layer.head_qk_norm = true;
  v->layer.post_norms_only = true;
  const bool named = c.IsString("sliding_window_pattern");
  const std::string pattern = named ? c.String("sliding_window_pattern", "") : "";
  const int64_t period = named ? 4 : c.Int({"sliding_window_pattern"}, 0, 1 << 20).value_or(4);
  v->sliding_rule = [window, pattern, period](int64_t i) {
    if (window <= 0) return false;
    if (!pattern.empty()) return pattern[static_cast<size_t>(i) % pattern.size()] == 'L';
    return period > 0 && (i + 1) % period != 0;
  };
}

}  // namespace

// OlmoForCausalLM (allenai/OLMo-1B-hf, OLMo-7B-hf, OLMo-7B-0424 / 0724-hf): embed_tokens,
// OlmoDecoderLayer x num_hidden_layers, norm, lm_head (tied with tie_word_embeddings; OlmoConfig
// default false). A layer: q_proj / k_proj / v_proj / o_proj with bias only with attention_bias
// (default false), SwiGLU gate_proj / up_proj / down_proj without bias, and input_layernorm /
// post_attention_layernorm that are OlmoLayerNorm: F.layer_norm in float32 with NO weight and NO
// bias (so is the final norm). clip_qkv clamps q / k / v in place and adds no weight.
Expected<ModelSpec> BuildOlmo(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  CheckDims(c, m, true);
  const bool bias = c.Bool("attention_bias", false);
  const ActivationFn act = ParseActivation(c.String("hidden_act", "silu"));
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kLayerNorm, false, "norm");
  spec.final_norm.has_weight = false;
  spec.attention_dropout = c.Fraction("attention_dropout", 0.0, true);
  if (!c.errors()->empty()) return *c.errors();
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k;
    AddQkvo(&k, m, bias, bias);
    AddGatedMlp(&k, m.h, m.inter, false, GatedMlpOwner::kDense);
    AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, false, false);
    AddNorm(&k, "post_attention_layernorm", NormSlot::kPreMlp, m.h, false, false);
    SetAttention(&k, m, 0);
    SetDenseMlp(&k, MlpKind::kGated, act, m.inter);
    return k;
  });
  return spec;
}

Expected<ModelSpec> BuildExaone4(ConfigReader& c, ModelSpec spec) { return BuildLlamaLike(c, std::move(spec), Exaone4Variant); }
Expected<ModelSpec> BuildOlmo2(ConfigReader& c, ModelSpec spec) { return BuildLlamaLike(c, std::move(spec), Olmo2Variant); }
Expected<ModelSpec> BuildOlmo3(ConfigReader& c, ModelSpec spec) { return BuildLlamaLike(c, std::move(spec), Olmo3Variant); }

}  // namespace vramplan::families
