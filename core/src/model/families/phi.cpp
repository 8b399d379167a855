// Phi-2 (transformers modeling_phi.py: q/k/v with biases, "dense" output, fc1/fc2 GELU MLP,
// parallel residual, one LayerNorm per layer, lm_head with bias) and Phi-3/Phi-4
// (modeling_phi3.py: fused qkv_proj and gate_up_proj, RMSNorms).
#include "model/families/builders.h"
#include "model/families/layer_kit.h"

namespace vramplan::families {

Expected<ModelSpec> BuildPhi(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  CheckDims(c, m, true);
  bool qk_layernorm = c.Bool("qk_layernorm", false);
  ActivationFn act = ParseActivation(c.String("hidden_act", "gelu_new"));
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kLayerNorm, true, "final_layernorm");
  spec.lm_head_bias = true;  // PhiForCausalLM: nn.Linear(hidden, vocab, bias=True)
  spec.attention_dropout = c.Fraction("attention_dropout", 0.0, true);
  spec.hidden_dropout = c.Fraction("resid_pdrop", 0.0, true);
  spec.embedding_dropout = c.Fraction("embd_pdrop", 0.0, true);
  spec.rope_fraction = c.Fraction("partial_rotary_factor", 0.5, false);
  if (!c.errors()->empty()) return *c.errors();
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k;
    AddLinear(&k, "q_proj", LinearSlot::kQ, m.h, m.a * m.d, true);
    AddLinear(&k, "k_proj", LinearSlot::kK, m.h, m.kv * m.d, true);
    AddLinear(&k, "v_proj", LinearSlot::kV, m.h, m.kv * m.d, true);
    AddLinear(&k, "dense", LinearSlot::kO, m.a * m.d, m.h, true);
    AddPlainMlp(&k, m.h, m.inter, act, true, {"fc1", "fc2"});
    AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, true);
    if (qk_layernorm) {
      AddNorm(&k, "q_layernorm", NormSlot::kQPerHead, m.d, true);
      AddNorm(&k, "k_layernorm", NormSlot::kKPerHead, m.d, true);
    }
    k.parallel_residual = true;
    SetAttention(&k, m, 0);
    return k;
  });
  return spec;
}

Expected<ModelSpec> BuildPhi3(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  CheckDims(c, m, true);
  int64_t window = c.Int({"sliding_window"}, 0).value_or(0);
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kRmsNorm, false);
  spec.rope_fraction = c.Fraction("partial_rotary_factor", 1.0, false);
  if (!c.errors()->empty()) return *c.errors();
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k;
    AddLinear(&k, "qkv_proj", LinearSlot::kQkv, m.h, (m.a + 2 * m.kv) * m.d, false);
    AddLinear(&k, "o_proj", LinearSlot::kO, m.a * m.d, m.h, false);
    AddLinear(&k, "gate_up_proj", LinearSlot::kGateUp, m.h, 2 * m.inter, false);
    AddLinear(&k, "down_proj", LinearSlot::kDown, m.inter, m.h, false);
    AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, false);
    AddNorm(&k, "post_attention_layernorm", NormSlot::kPreMlp, m.h, false);
    SetAttention(&k, m, window);
    SetDenseMlp(&k, MlpKind::kGated, ActivationFn::kSilu, m.inter);
    return k;
  });
  return spec;
}

}  // namespace vramplan::families
