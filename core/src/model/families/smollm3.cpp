// SmolLM3 (transformers modeling_smollm3.py, SmolLM3Config): the Llama layout with q/k/v/o biases
// from attention_bias, tied embeddings by default, and NoPE layers (no_rope_layers: 0 = no rotary
// embedding on that layer; SmolLM3Config's default when absent is int((i + 1) %
// no_rope_layer_interval != 0), interval 4: every 4th layer NoPE). SmolLM3Attention.forward applies
// apply_rotary_pos_emb only `if self.use_rope`: skipping it changes no parameter, and the activation
// walk keeps that layer's q and k in the projection dtype (train/activations.cpp).
#include "model/families/builders.h"
#include "model/families/layer_kit.h"
#include "model/families/llama_like.h"

namespace vramplan::families {
namespace {

void SmolLm3Variant(ConfigReader& c, int64_t window, LlamaLikeVariant* v) {
  v->layer.qkv_bias = c.Bool("attention_bias", false);
  v->layer.o_bias = v->layer.qkv_bias;
  v->layer.mlp_bias = c.Bool("mlp_bias", false);
  v->tied_default = true;  // SmolLM3Config(tie_word_embeddings=True)
  // Sliding windows (use_sliding_window, off in the released models) as Qwen2 places them.
  const bool use_sw = c.Bool("use_sliding_window", false);
  const int64_t max_window_layers = c.Int({"max_window_layers"}, 0).value_or(28);
  v->sliding_rule = [=](int64_t i) { return use_sw && window > 0 && i >= max_window_layers; };
}

}  // namespace

Expected<ModelSpec> BuildSmolLm3(ConfigReader& c, ModelSpec spec) {
  Expected<ModelSpec> out = BuildLlamaLike(c, std::move(spec), SmolLm3Variant);
  if (!out.ok()) return out;
  ModelSpec& m = out.value();
  const int64_t layers = m.num_layers;
  const int64_t interval = c.Int({"no_rope_layer_interval"}, 1, 4096).value_or(4);
  std::vector<bool> no_rope(static_cast<size_t>(layers));
  for (int64_t i = 0; i < layers; ++i) no_rope[static_cast<size_t>(i)] = (i + 1) % interval == 0;
  auto nr = c.raw().find("no_rope_layers");
  if (nr != c.raw().end() && nr->is_array() && static_cast<int64_t>(nr->size()) == layers) {
    for (int64_t i = 0; i < layers; ++i) {
      const auto& v = (*nr)[static_cast<size_t>(i)];
      no_rope[static_cast<size_t>(i)] = v.is_number() && v.get<double>() == 0;
    }
  }
  EditLayerAttention(&m, [&](int64_t i, AttentionGeometry* a) { a->no_rope = no_rope[static_cast<size_t>(i)]; });
  return out;
}

}  // namespace vramplan::families
