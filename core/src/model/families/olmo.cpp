// OLMo 2 (transformers modeling_olmo2.py): the Llama-style layer with RMSNorms on the attention
// and MLP outputs only (no pre-norms) and RMSNorm over all q / k heads together. OLMo 3
// (modeling_olmo3.py, Olmo3DecoderLayer) is the same layer with sliding-window attention on the
// layers layer_types names (vLLM serves it with its Olmo2ForCausalLM class).
#include "model/families/builders.h"
#include "model/families/llama_like.h"

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

}  // namespace

Expected<ModelSpec> BuildOlmo2(ConfigReader& c, ModelSpec spec) { return BuildLlamaLike(c, std::move(spec), Olmo2Variant); }
Expected<ModelSpec> BuildOlmo3(ConfigReader& c, ModelSpec spec) { return BuildLlamaLike(c, std::move(spec), Olmo3Variant); }

}  // namespace vramplan::families
