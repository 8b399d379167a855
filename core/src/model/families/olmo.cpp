// OLMo 2 (transformers modeling_olmo2.py): the Llama-style layer with RMSNorms on the attention
// and MLP outputs only (no pre-norms) and RMSNorm over all q / k heads together. OLMo 3
// (modeling_olmo3.py, Olmo3DecoderLayer) is the same layer with sliding-window attention on the
// layers layer_types names (vLLM serves it with its Olmo2ForCausalLM class).
#include "model/families/builders.h"
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

Expected<ModelSpec> BuildExaone4(ConfigReader& c, ModelSpec spec) { return BuildLlamaLike(c, std::move(spec), Exaone4Variant); }
Expected<ModelSpec> BuildOlmo2(ConfigReader& c, ModelSpec spec) { return BuildLlamaLike(c, std::move(spec), Olmo2Variant); }
Expected<ModelSpec> BuildOlmo3(ConfigReader& c, ModelSpec spec) { return BuildLlamaLike(c, std::move(spec), Olmo3Variant); }

}  // namespace vramplan::families
