// Decoders transformers builds from Llama's modules with a change that the Llama reader would
// count wrong or place wrong: Helium (kyutai; models/helium/modular_helium.py) and CWM (Meta's
// Code World Model; models/cwm/modular_cwm.py).
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

// CwmAttention: Qwen2Attention with q/k/v rebuilt bias=False (and Qwen2's o_proj without bias);
// CwmConfig deletes attention_bias. The layers follow layer_types; without it CwmConfig makes
// every fourth layer (i % 4 == 0) full attention and the others slide over sliding_window (8192).
void CwmVariant(ConfigReader& c, int64_t window, LlamaLikeVariant* v) {
  v->layer.mlp_bias = c.Bool("mlp_bias", false);
  v->sliding_rule = [window](int64_t i) { return window > 0 && i % 4 != 0; };
}

}  // namespace

Expected<ModelSpec> BuildHelium(ConfigReader& c, ModelSpec spec) { return BuildLlamaLike(c, std::move(spec), HeliumVariant); }
Expected<ModelSpec> BuildCwm(ConfigReader& c, ModelSpec spec) { return BuildLlamaLike(c, std::move(spec), CwmVariant); }

}  // namespace vramplan::families
