// OLMo 2 (transformers modeling_olmo2.py): the Llama-style layer with RMSNorms on the attention
// and MLP outputs only (no pre-norms) and RMSNorm over all q / k heads together.
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

}  // namespace

Expected<ModelSpec> BuildOlmo2(ConfigReader& c, ModelSpec spec) { return BuildLlamaLike(c, std::move(spec), Olmo2Variant); }

}  // namespace vramplan::families
