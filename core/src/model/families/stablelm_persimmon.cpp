// StableLM (transformers models/stablelm/modeling_stablelm.py: StableLM-3B-4E1T, StableLM 2 1.6B /
// 12B, StableLM Zephyr) and Persimmon (models/persimmon/modeling_persimmon.py): the two Llama-era
// decoders with LayerNorms carrying a bias, partial rotary and q / k norms.
#include <string>

#include "model/families/builders.h"
#include "model/families/layer_kit.h"

namespace vramplan::families {

// StableLmForCausalLM: embed_tokens, StableLmDecoderLayer x num_hidden_layers, norm, untied lm_head
// (StableLmConfig: tie_word_embeddings false, partial_rotary_factor 0.25). A layer:
//   self_attn q_proj / k_proj / v_proj (h -> heads x d, kv x d) with bias only when use_qkv_bias,
//   o_proj without bias; with qk_layernorm, q_layernorm / k_layernorm are
//   StableLmLayerNormPerHead: one nn.LayerNorm(head_dim, bias=False) PER HEAD (a ModuleList of
//   num_heads, resp. num_key_value_heads), so heads x d weights: counted as one norm over all q
//   (k) heads, whose elements and tensor-parallel split are the same;
//   mlp gate_proj / up_proj / down_proj without bias (StableLmMLP, act hidden_act: SiLU);
//   input_layernorm LayerNorm(h) with bias, and post_attention_layernorm only when NOT
//   use_parallel_residual (StableLM 2 12B runs attention and MLP in parallel off one norm).
Expected<ModelSpec> BuildStableLm(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  CheckDims(c, m, true);
  const bool qkv_bias = c.Bool("use_qkv_bias", false);
  const bool qk_norm = c.Bool("qk_layernorm", false);
  const bool parallel = c.Bool("use_parallel_residual", false);
  const ActivationFn act = ParseActivation(c.String("hidden_act", "silu"));
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kLayerNorm, true, "norm");
  // The remote-code StableLMEpochConfig (model_type "stablelm_epoch": stablelm-3b-4e1t and
  // stable-code-3b before their conversion) names the rotary fraction rope_pct (default 0.25) and the
  // norm epsilon norm_eps; its StableLMEpochForCausalLM has the same parameters under the same names.
  const bool epoch = spec.model_type == "stablelm_epoch";
  spec.rope_fraction = epoch && !c.Has("partial_rotary_factor") ? c.Fraction("rope_pct", 0.25, false)
                                                                 : c.Fraction("partial_rotary_factor", 0.25, false);
  spec.attention_dropout = c.Fraction("attention_dropout", 0.0, true);
  spec.hidden_dropout = c.Fraction("hidden_dropout", 0.0, true);
  if (!c.errors()->empty()) return *c.errors();
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k;
    AddQkvo(&k, m, qkv_bias, false);
    AddGatedMlp(&k, m.h, m.inter, false, GatedMlpOwner::kDense);
    AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, true);
    if (!parallel) AddNorm(&k, "post_attention_layernorm", NormSlot::kPreMlp, m.h, true);
    if (qk_norm) {
      AddNorm(&k, "q_layernorm", NormSlot::kQ, m.a * m.d, false);
      AddNorm(&k, "k_layernorm", NormSlot::kK, m.kv * m.d, false);
    }
    k.parallel_residual = parallel;
    SetAttention(&k, m, 0);
    SetDenseMlp(&k, MlpKind::kGated, act, m.inter);
    return k;
  });
  return spec;
}

// PersimmonForCausalLM (adept/persimmon-8b-base / -chat): embed_tokens, PersimmonDecoderLayer x
// num_hidden_layers, final_layernorm (LayerNorm with bias), untied lm_head without bias. A layer:
//   self_attn.query_key_value h -> 3h and dense h -> h, both with bias; with qk_layernorm (default
//   true) q_layernorm / k_layernorm = nn.LayerNorm(head_dim) with weight and bias, ONE per layer
//   shared by every head; rotary on partial_rotary_factor (0.5) of each head;
//   mlp.dense_h_to_4h / dense_4h_to_h with bias, act hidden_act: relu2 (ReLUSquaredActivation:
//   relu, then square; relu saves its output, which square reuses, and the down projection saves
//   the square: one intermediate-wide tensor besides the down input, as the plain ReLU MLP walks);
//   input_layernorm and post_attention_layernorm with bias, sequential residual.
// PersimmonConfig: hidden_dropout / attention_dropout 0.0, tie_word_embeddings false.
Expected<ModelSpec> BuildPersimmon(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  CheckDims(c, m, true);
  const bool qk_norm = c.Bool("qk_layernorm", true);
  const std::string act_name = c.String("hidden_act", "relu2");
  const ActivationFn act = act_name == "relu2" ? ActivationFn::kRelu : ParseActivation(act_name);
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kLayerNorm, true, "final_layernorm");
  spec.rope_fraction = c.Fraction("partial_rotary_factor", 0.5, false);
  spec.attention_dropout = c.Fraction("attention_dropout", 0.0, true);
  spec.hidden_dropout = c.Fraction("hidden_dropout", 0.0, true);
  if (!c.errors()->empty()) return *c.errors();
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k;
    AddLinear(&k, "query_key_value", LinearSlot::kQkv, m.h, 3 * m.a * m.d, true);
    AddLinear(&k, "dense", LinearSlot::kO, m.a * m.d, m.h, true);
    AddPlainMlp(&k, m.h, m.inter, act, true, {"dense_h_to_4h", "dense_4h_to_h"});
    AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, true);
    AddNorm(&k, "post_attention_layernorm", NormSlot::kPreMlp, m.h, true);
    if (qk_norm) {
      AddNorm(&k, "q_layernorm", NormSlot::kQPerHead, m.d, true);
      AddNorm(&k, "k_layernorm", NormSlot::kKPerHead, m.d, true);
    }
    SetAttention(&k, m, 0);
    return k;
  });
  return spec;
}

}  // namespace vramplan::families
