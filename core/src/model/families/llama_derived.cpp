// Decoders transformers builds from Llama's modules with a change that the Llama reader would
// count wrong or place wrong: Helium (kyutai; models/helium/modular_helium.py).
#include "model/families/builders.h"
#include "model/families/llama_like.h"

namespace vramplan::families {
namespace {

// HeliumAttention (LlamaAttention with o_proj rebuilt bias=False): attention_bias reaches q/k/v
// only; HeliumMLP is LlamaMLP (mlp_bias); HeliumRMSNorm has a weight; HeliumForCausalLM is
// GemmaForCausalLM, which ties lm_head only when tie_word_embeddings (HeliumConfig: false). The
// interleaved rotary layout changes no weight.
void HeliumVariant(ConfigReader& c, int64_t, LlamaLikeVariant* v) {
  v->layer.qkv_bias = c.Bool("attention_bias", false);
  v->layer.o_bias = false;
  v->layer.mlp_bias = c.Bool("mlp_bias", false);
}

}  // namespace

Expected<ModelSpec> BuildHelium(ConfigReader& c, ModelSpec spec) { return BuildLlamaLike(c, std::move(spec), HeliumVariant); }

}  // namespace vramplan::families
