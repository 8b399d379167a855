// SmolLM3 (transformers modeling_smollm3.py, SmolLM3Config): the Llama layout with q/k/v/o biases
// from attention_bias, tied embeddings by default, and NoPE layers (no_rope_layers: 0 = no rotary
// embedding on that layer). Skipping RoPE changes no parameter; the activation walk still counts
// the rotary tensors of those layers (a few T x h per NoPE layer, noted on the model).
#include "model/families/builders.h"
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
  if (out.ok() && c.Has("no_rope_layers")) {
    out.value().notes.push_back("NoPE layers (no_rope_layers) skip the rotary embedding; the activation walk counts them as rotary layers");
  }
  return out;
}

}  // namespace vramplan::families
