// Llama 3.2 Vision's text decoder (transformers models/mllama/modeling_mllama.py, MllamaTextConfig;
// the text_config of the mllama wrapper, whose vision tower model/vision_tower.cpp counts).
// MllamaTextModel: embed_tokens has vocab_size + 8 rows (the image and padding tokens the lm_head
// does not predict); the layers in cross_attention_layers are MllamaCrossAttentionDecoderLayer:
// MllamaTextCrossAttention q/k/v/o (k and v read the projected vision states, already text
// hidden-wide), q_norm / k_norm RMSNorm(head_dim), cross_attn_attn_gate and cross_attn_mlp_gate
// (one element each), the Llama MLP and two RMSNorms; the others are MllamaSelfAttentionDecoderLayer,
// the Llama 3 layer.
#include <algorithm>

#include "model/families/builders.h"
#include "model/families/llama_like.h"

namespace vramplan::families {

Expected<ModelSpec> BuildMllamaText(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  CheckDims(c, m, true);
  const ActivationFn act = ParseActivation(c.String("hidden_act", "silu"));
  std::vector<int64_t> cross;
  if (m.layers > 0 && c.Has("cross_attention_layers")) cross = c.LayerList("cross_attention_layers", m.layers);
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kRmsNorm, false);
  spec.extra_embedding_params = 8 * m.h;  // MllamaTextModel: nn.Embedding(vocab_size + 8, hidden_size)
  BuildLayers(&spec, m.layers, [&](int64_t i) {
    LayerKind k = LlamaLikeLayer(m, LlamaLikeOptions{}, act, 0);
    if (std::find(cross.begin(), cross.end(), i) == cross.end()) return k;
    AddNorm(&k, "q_norm", NormSlot::kQPerHead, m.d, false);
    AddNorm(&k, "k_norm", NormSlot::kKPerHead, m.d, false);
    k.extra_attention_params = 2;  // cross_attn_attn_gate, cross_attn_mlp_gate
    k.attention.cross_attention = true;
    return k;
  });
  if (!cross.empty()) {
    spec.notes.push_back(
        "Llama 3.2 Vision's " + std::to_string(cross.size()) +
        " cross-attention layers attend to the image tokens: their K/V (per image, from the vision states) are not in "
        "the KV cache and their activations are walked as self-attention over the text (approximate)");
  }
  return spec;
}

}  // namespace vramplan::families
