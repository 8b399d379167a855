// The Llama-style decoder layer (q/k/v/o, gated MLP, RMSNorms) and its per-family variants: the
// builder shared by llama, mistral, qwen2, qwen3, gemma*, olmo2 and unknown model types, and the
// attention half of the MoE families.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "model/families/layer_kit.h"

namespace vramplan::families {

struct LlamaLikeOptions {
  bool qkv_bias = false;
  bool o_bias = false;
  bool mlp_bias = false;
  bool head_qk_norm = false;     // qwen3 / gemma3: RMSNorm(head_dim) on q and k
  bool full_qk_norm = false;     // olmo2: RMSNorm(heads*head_dim) on q, RMSNorm(kv*head_dim) on k
  bool sandwich_norms = false;   // gemma2/3: pre- and post-norms around attention and MLP
  bool post_norms_only = false;  // olmo2: norms on the block outputs only
  bool pre_norms_gemma = false;  // vaultgemma: Gemma 2's input_layernorm and pre_feedforward_layernorm only
};

LayerKind LlamaLikeLayer(const Dims& m, const LlamaLikeOptions& o, ActivationFn act, int64_t window);

// What a family changes in the Llama-style builder, read from the config (after the dimensions,
// `sliding_window` and `hidden_act`, which every variant reads first).
struct LlamaLikeVariant {
  LlamaLikeOptions layer;
  bool tied_default = false;
  std::string activation;                       // starts as hidden_act (default "silu")
  double attention_dropout_default = 0.0;       // the config class's default when attention_dropout is absent
  double hidden_dropout = 0.0;                  // dropout on the attention and MLP outputs before each residual add
  std::function<bool(int64_t)> sliding_rule = [](int64_t) { return false; };
};
using VariantReader = void (*)(ConfigReader& c, int64_t window, LlamaLikeVariant* v);

Expected<ModelSpec> BuildLlamaLike(ConfigReader& c, ModelSpec spec, VariantReader read_variant);

}  // namespace vramplan::families
