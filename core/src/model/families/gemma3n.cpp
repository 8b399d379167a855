// Gemma 3n's text decoder (transformers models/gemma3n/modeling_gemma3n.py, Gemma3nTextConfig in
// configuration_gemma3n.py; the text_config of the multimodal gemma3n wrapper, google/gemma-3n-E2B /
// E4B). Gemma 4 borrowed its per-layer embeddings and KV-shared layers (gemma4.cpp); the rest is its own.
//
// Gemma3nTextModel: embed_tokens [vocab_size, h]; per-layer embeddings embed_tokens_per_layer
// [vocab_size_per_layer_input, layers x p], per_layer_model_projection Linear(h, layers x p) and
// per_layer_projection_norm RMSNorm(p) (p = hidden_size_per_layer_input); AltUp's
// altup_projections and altup_unembed_projections, altup_num_inputs - 1 Linear(h, h) each; the final
// norm; lm_head tied to embed_tokens (Gemma3nForCausalLM._tied_weights_keys).
// Gemma3nTextDecoderLayer: Gemma3nTextAttention's q/k/v/o_proj (attention_bias), q_norm / k_norm
// RMSNorm(head_dim), v_norm without weight; Gemma3nTextMLP gate/up/down of intermediate_size[layer]
// (a list: MatFormer widths); the four sandwich norms; Gemma3nTextAltUp (correct_output_scale [h],
// correction_coefs Linear(n, n), prediction_coefs Linear(n, n^2), modality_router Linear(h, n),
// router_norm [h], n = altup_num_inputs); Gemma3nTextLaurelBlock (linear_left Linear(h, r),
// linear_right Linear(r, h), post_laurel_norm [h], r = laurel_rank); per_layer_input_gate
// Linear(h, p), per_layer_projection Linear(p, h), post_per_layer_input_norm [h]. No linear has a
// bias unless attention_bias. Every buffer is non-persistent (embed_scale, router_input_scale,
// per_layer_projection_scale, per_layer_input_scale, v_norm's weight): none is stored.
// KV sharing: the last num_kv_shared_layers layers read, when a cache is passed, the K/V of the last
// earlier layer of their type (Gemma3nTextAttention.kv_shared_layer_index) and cache nothing. Unlike
// Gemma 4 they still build k_proj / v_proj / k_norm, which the model holds and, without a cache
// (training), runs: they stay here as weights.
// activation_sparsity_pattern (Gemma3nTextMLP._gaussian_topk on the first layers) adds no weight.
#include <optional>
#include <string>
#include <vector>

#include "model/families/builders.h"
#include "model/families/layer_kit.h"
#include "util/checked_math.h"

namespace vramplan::families {
namespace {

struct Gemma3nText {
  Dims m;  // m.inter unused: intermediate_size is per layer
  std::vector<int64_t> inter;
  int64_t window = 512, shared = 15, ple = 256, ple_vocab = 262144, altup = 4, laurel = 64;
  bool bias = false;
  ActivationFn act = ActivationFn::kGeluTanh;
  std::vector<bool> sliding;
};

Gemma3nText Read(ConfigReader& c) {
  Gemma3nText g;
  // ReadDims would read intermediate_size as one integer; Gemma3nTextConfig takes one or a list.
  // The defaults are Gemma3nTextConfig.__init__'s (the E4B decoder).
  Dims& m = g.m;
  m.h = c.Int({"hidden_size"}, 1).value_or(2048);
  m.layers = c.Int({"num_hidden_layers"}, 1, 4096).value_or(35);
  m.a = c.Int({"num_attention_heads"}, 1, kMaxHeadsOrExperts).value_or(8);
  m.kv = c.Int({"num_key_value_heads"}, 1, kMaxHeadsOrExperts).value_or(2);
  m.d = c.Int({"head_dim"}, 1, kMaxHeadsOrExperts).value_or(256);
  m.vocab = c.Int({"vocab_size"}, 1).value_or(262400);
  if (!c.errors()->empty()) return g;
  CheckDims(c, m, false);
  std::optional<std::vector<int64_t>> inter = c.IntPerLayer("intermediate_size", m.layers, 1, int64_t{1} << 40);
  g.inter = inter ? *inter : std::vector<int64_t>(static_cast<size_t>(m.layers), 16384);
  g.window = c.Int({"sliding_window"}, 0).value_or(512);
  g.shared = c.Int({"num_kv_shared_layers"}, 0, m.layers).value_or(15);
  g.ple = c.Int({"hidden_size_per_layer_input"}, 0).value_or(256);
  g.ple_vocab = c.Int({"vocab_size_per_layer_input"}, 0).value_or(262144);
  g.altup = c.Int({"altup_num_inputs"}, 1, 64).value_or(4);
  g.laurel = c.Int({"laurel_rank"}, 0).value_or(64);
  g.bias = c.Bool("attention_bias", false);
  g.act = ParseActivation(c.String("hidden_activation", "gelu_pytorch_tanh"));
  // Gemma3nTextConfig: without layer_types, every fifth layer is full attention.
  g.sliding = SlidingFlags(c, m.layers, [](int64_t i) { return (i + 1) % 5 != 0; });
  return g;
}

LayerKind Layer(const Gemma3nText& g, int64_t i) {
  const Dims& m = g.m;
  LayerKind k;
  AddQkvo(&k, m, g.bias, g.bias);
  AddNorm(&k, "q_norm", NormSlot::kQPerHead, m.d, false);
  AddNorm(&k, "k_norm", NormSlot::kKPerHead, m.d, false);
  AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, false);
  AddNorm(&k, "post_attention_layernorm", NormSlot::kPostAttention, m.h, false);
  AddNorm(&k, "pre_feedforward_layernorm", NormSlot::kPreMlp, m.h, false);
  AddNorm(&k, "post_feedforward_layernorm", NormSlot::kPostMlp, m.h, false);
  SetAttention(&k, m, g.sliding[static_cast<size_t>(i)] ? g.window : 0);
  k.attention.kv_shared = g.shared > 0 && i >= m.layers - g.shared;
  // AltUp, LAuReL and the per-layer-input gate and projection, kept as extra weights like Gemma 4's
  // per-layer inputs (no LoRA target, no tensor-parallel split: they are n, r or p wide).
  const int64_t n = g.altup;
  const int64_t altup = m.h + n * n + n * n * n + m.h * n + m.h;
  const int64_t laurel = 2 * m.h * g.laurel + m.h;
  const int64_t per_layer = 2 * m.h * g.ple + m.h;
  k.extra_attention_params = altup + laurel + per_layer;
  const int64_t inter = g.inter[static_cast<size_t>(i)];
  AddGatedMlp(&k, m.h, inter, false, GatedMlpOwner::kDense);
  SetDenseMlp(&k, MlpKind::kGated, g.act, inter);
  return k;
}

}  // namespace

Expected<ModelSpec> BuildGemma3nText(ConfigReader& c, ModelSpec spec) {
  Gemma3nText g = Read(c);
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, g.m, c.Bool("tie_word_embeddings", true), NormKind::kRmsNorm, false);
  // Three config widths multiplied: checked (util/checked_math.h), as pasted configs can be hostile.
  const int64_t width = checked::Mul(g.m.layers, g.ple);
  const int64_t per_layer_embeddings =
      checked::Add(checked::Add(checked::Mul(g.ple_vocab, width), checked::Mul(g.m.h, width)), g.ple);
  const int64_t altup_projections = checked::Mul(checked::Mul(2 * (g.altup - 1), g.m.h), g.m.h);
  spec.extra_embedding_params = checked::Add(per_layer_embeddings, altup_projections);
  BuildLayers(&spec, g.m.layers, [&](int64_t i) { return Layer(g, i); });
  if (g.shared > 0) {
    spec.notes.push_back("Gemma 3n's last " + std::to_string(g.shared) +
                         " layers reuse the K/V of earlier layers when decoding with a cache (num_kv_shared_layers): they "
                         "cache nothing; their k_proj / v_proj / k_norm are still weights of the model");
  }
  spec.notes.push_back("Gemma 3n's per-layer embeddings (embed_tokens_per_layer, per_layer_model_projection) and AltUp's "
                       "altup_projections / altup_unembed_projections count in by_module.embedding; AltUp, LAuReL and the "
                       "per-layer-input gate of each layer count in by_module.attention and are not LoRA targets here");
  spec.approximations.training =
      "Gemma 3n's training activations follow a Gemma-style decoder layer: AltUp's altup_num_inputs stacked hidden-state "
      "streams (predict / correct and their router), the LAuReL low-rank branch, the per-layer-input gate and projection, "
      "and the activation-sparsity statistics of the first layers (activation_sparsity_pattern) are not walked";
  return spec;
}

}  // namespace vramplan::families
