// IBM Granite 3.x: the dense decoder (transformers models/granite/modeling_granite.py,
// GraniteAttention / GraniteMLP / GraniteDecoderLayer: the Llama layout) and the MoE decoder
// (models/granitemoe/modeling_granitemoe.py, GraniteMoeMoE with GraniteMoeTopKGating and two
// GraniteMoeParallelExperts). embedding_multiplier, residual_multiplier, attention_multiplier and
// logits_scaling scale activations and add no weight.
#include "model/families/builders.h"
#include "model/families/llama_like.h"

namespace vramplan::families {
namespace {

// GraniteConfig (configuration_granite.py): attention_bias on q/k/v/o, mlp_bias on the MLP,
// tie_word_embeddings false unless set (the Granite 3.x configs set it true).
void GraniteVariant(ConfigReader& c, int64_t, LlamaLikeVariant* v) {
  v->layer.qkv_bias = c.Bool("attention_bias", false);
  v->layer.o_bias = v->layer.qkv_bias;
  v->layer.mlp_bias = c.Bool("mlp_bias", false);
}

}  // namespace

Expected<ModelSpec> BuildGranite(ConfigReader& c, ModelSpec spec) { return BuildLlamaLike(c, std::move(spec), GraniteVariant); }

}  // namespace vramplan::families
