// BitNet b1.58 (Microsoft; transformers models/bitnet/modular_bitnet.py, BitNetForCausalLM): the
// Llama decoder with two more RMSNorms per layer, both without bias:
// - BitNetAttention (LlamaAttention: q/k/v/o, bias with attention_bias) normalizes the attention
//   output with attn_sub_norm, RMSNorm(hidden_size), before o_proj;
// - BitNetMLP (GemmaMLP: gate_proj / up_proj / down_proj without bias) normalizes
//   act(gate) * up with ffn_sub_norm, RMSNorm(intermediate_size), before down_proj.
// BitNetConfig defaults: hidden_act "relu2", tie_word_embeddings false (microsoft/bitnet-b1.58-2B-4T
// sets true). relu2 has no saved-tensor model of its own: the activation walk takes it as GELU
// (relu saves its output, the square reads that same tensor: one T x I tensor either way).
// The packed checkpoint (quantization_config "bitnet", offline) stores each linear four ternary
// values per element plus a scale: hf_config.cpp sets CheckpointLayout::ternary_packed_linears
// and params.checkpoint_total counts the stored elements; params.total counts the weights they
// encode, the bf16 master checkpoint's count.
#include "model/families/builders.h"
#include "model/families/layer_kit.h"

namespace vramplan::families {

Expected<ModelSpec> BuildBitNet(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  CheckDims(c, m, true);
  const bool attention_bias = c.Bool("attention_bias", false);
  const ActivationFn act = ParseActivation(c.String("hidden_act", "relu2"));
  spec.attention_dropout = c.Fraction("attention_dropout", 0.0, true);
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kRmsNorm, false);
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k;
    AddQkvo(&k, m, attention_bias, attention_bias);
    AddGatedMlp(&k, m.h, m.inter, false, GatedMlpOwner::kDense);
    AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, false);
    AddNorm(&k, "post_attention_layernorm", NormSlot::kPreMlp, m.h, false);
    AddNorm(&k, "attn_sub_norm", NormSlot::kAttentionSub, m.h, false);
    AddNorm(&k, "ffn_sub_norm", NormSlot::kMlpSub, m.inter, false);
    SetAttention(&k, m, 0);
    SetDenseMlp(&k, MlpKind::kGated, act, m.inter);
    return k;
  });
  return spec;
}

}  // namespace vramplan::families
