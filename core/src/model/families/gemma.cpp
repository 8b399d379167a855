// Gemma 1/2/3 and VaultGemma (transformers modeling_gemma.py, modeling_gemma2.py, modeling_gemma3.py,
// modular_vaultgemma.py): the Llama-style layer with tied embeddings by default, a tanh-GELU MLP
// (hidden_activation), and from Gemma 2 on sandwich norms and interleaved sliding-window layers.
#include "model/families/builders.h"
#include "model/families/llama_like.h"

namespace vramplan::families {
namespace {

void GemmaVariant(ConfigReader& c, int64_t, LlamaLikeVariant* v) {
  v->tied_default = true;
  v->activation = c.String("hidden_activation", c.String("hidden_act", "gelu_pytorch_tanh"));
}

void Gemma2Variant(ConfigReader& c, int64_t window, LlamaLikeVariant* v) {
  v->tied_default = true;
  v->layer.sandwich_norms = true;
  v->activation = c.String("hidden_activation", "gelu_pytorch_tanh");
  v->sliding_rule = [window](int64_t i) { return window > 0 && i % 2 == 0; };  // Gemma2DecoderLayer: not layer_idx % 2
}

void Gemma3TextVariant(ConfigReader& c, int64_t window, LlamaLikeVariant* v) {
  v->tied_default = true;
  v->layer.sandwich_norms = true;
  v->layer.head_qk_norm = true;
  v->activation = c.String("hidden_activation", "gelu_pytorch_tanh");
  int64_t pattern = c.Int({"sliding_window_pattern"}, 1).value_or(6);
  v->sliding_rule = [=](int64_t i) { return window > 0 && (i + 1) % pattern != 0; };
}

// VaultGemma (transformers models/vaultgemma/modular_vaultgemma.py): Gemma 2's attention (q/k/v/o
// with attention_bias), MLP and tied embeddings, but VaultGemmaDecoderLayer deletes
// post_attention_layernorm and post_feedforward_layernorm: two RMSNorms per layer. VaultGemmaConfig
// is Gemma2Config, whose layer_types default alternates sliding (even layers) and full attention;
// the released config lists every layer as full attention.
void VaultGemmaVariant(ConfigReader& c, int64_t window, LlamaLikeVariant* v) {
  v->tied_default = true;
  v->layer.pre_norms_gemma = true;
  v->layer.qkv_bias = c.Bool("attention_bias", false);
  v->layer.o_bias = v->layer.qkv_bias;
  v->activation = c.String("hidden_activation", "gelu_pytorch_tanh");
  v->sliding_rule = [window](int64_t i) { return window > 0 && i % 2 == 0; };
}

}  // namespace

Expected<ModelSpec> BuildVaultGemma(ConfigReader& c, ModelSpec spec) { return BuildLlamaLike(c, std::move(spec), VaultGemmaVariant); }
Expected<ModelSpec> BuildGemma(ConfigReader& c, ModelSpec spec) { return BuildLlamaLike(c, std::move(spec), GemmaVariant); }
Expected<ModelSpec> BuildGemma2(ConfigReader& c, ModelSpec spec) { return BuildLlamaLike(c, std::move(spec), Gemma2Variant); }
Expected<ModelSpec> BuildGemma3Text(ConfigReader& c, ModelSpec spec) { return BuildLlamaLike(c, std::move(spec), Gemma3TextVariant); }

}  // namespace vramplan::families
