// GPT-2 (transformers modeling_gpt2.py: Conv1D c_attn / c_proj / c_fc / c_proj, learned position
// embeddings, dropout defaults 0.1), GPT-NeoX (modeling_gpt_neox.py) and Falcon
// (modeling_falcon.py): fused query_key_value, LayerNorms with bias, plain GELU MLPs, parallel
// residuals. A GPT-2 config with the standard MoE keys is Megatron-LM's MoE GPT (BuildGpt2).
#include "model/families/builders.h"
#include "model/families/layer_kit.h"

namespace vramplan::families {

Expected<ModelSpec> BuildGpt2(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  if (m.inter == 0) m.inter = 4 * m.h;  // n_inner null -> 4 * n_embd
  CheckDims(c, m, true);
  // The registered causal-mask buffer is n_positions^2 bytes per layer: 2^20 positions keep it
  // (times 4096 layers) below 2^52 bytes; real GPT-2 checkpoints use 1024 to 8192.
  int64_t positions = c.Int({"n_positions", "max_position_embeddings"}, 1, int64_t{1} << 20).value_or(1024);
  ActivationFn act = ParseActivation(c.String("activation_function", "gelu_new"));
  // Megatron-LM's MoE GPT (megatron/core/models/gpt/gpt_layer_specs.py with --num-experts; commit
  // d98e8a64dd): the GPT-2 layout with every MLP replaced by a router (TopKRouter.weight, experts x
  // h, no bias: megatron/core/transformer/moe/router.py Router.__init__) and routed experts that are
  // Megatron's default NON-gated MLPs, fc1 h -> moe_ffn_hidden_size and fc2 back (experts.py
  // TEGroupedMLP / SequentialMLP without --swiglu). num_local_experts / num_experts,
  // num_experts_per_tok and moe_intermediate_size (default: the dense width) name them as in
  // transformers' MoE configs; add_bias_linear false is Megatron's --disable-bias-linear (no bias on
  // any linear; the LayerNorms keep theirs).
  const int64_t experts = c.Int({"num_local_experts", "num_experts"}, 0, kMaxHeadsOrExperts).value_or(0);
  const int64_t top_k = experts > 0 ? c.Required({"num_experts_per_tok"}, 1, kMaxHeadsOrExperts) : 0;
  if (experts > 0) CheckTopK(c, "num_experts_per_tok", top_k, experts);
  const int64_t moe_inter = c.Int({"moe_intermediate_size"}, 1).value_or(m.inter);
  const bool bias = c.Bool("add_bias_linear", true);
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", true), NormKind::kLayerNorm, true, "ln_f");
  spec.position_embedding_rows = positions;
  spec.rope_fraction = 0.0;
  spec.softmax_fp32 = false;
  spec.scale_is_tensor = true;
  spec.legacy_logits_upcast = false;
  spec.legacy_buffer_bytes_per_layer = positions * positions;  // registered `bias` (bool n_positions^2)
  // GPT2Config defaults: attn_pdrop = resid_pdrop = embd_pdrop = 0.1.
  spec.attention_dropout = c.Fraction("attn_pdrop", 0.1, true);
  spec.hidden_dropout = c.Fraction("resid_pdrop", 0.1, true);
  spec.embedding_dropout = c.Fraction("embd_pdrop", 0.1, true);
  if (!c.errors()->empty()) return *c.errors();
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k;
    AddLinear(&k, "c_attn", LinearSlot::kQkv, m.h, 3 * m.h, bias);
    AddLinear(&k, "c_proj", LinearSlot::kO, m.h, m.h, bias);
    AddNorm(&k, "ln_1", NormSlot::kPreAttention, m.h, true);
    AddNorm(&k, "ln_2", NormSlot::kPreMlp, m.h, true);
    SetAttention(&k, m, 0);
    SetDenseMlp(&k, MlpKind::kPlain, act, m.inter);
    if (experts == 0) {
      AddLinear(&k, "c_fc", LinearSlot::kUp, m.h, m.inter, bias);
      AddLinear(&k, "c_proj", LinearSlot::kDown, m.inter, m.h, bias);
      return k;
    }
    AddLinear(&k, "router", LinearSlot::kRouter, m.h, experts, false);
    AddLinear(&k, "c_fc", LinearSlot::kExpertUp, m.h, moe_inter, bias, experts);
    AddLinear(&k, "c_proj", LinearSlot::kExpertDown, moe_inter, m.h, bias, experts);
    SetMoeMlp(&k, moe_inter, experts, top_k);
    return k;
  });
  return spec;
}

Expected<ModelSpec> BuildGptNeox(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  CheckDims(c, m, true);
  bool bias = c.Bool("attention_bias", true);
  bool parallel = c.Bool("use_parallel_residual", true);
  ActivationFn act = ParseActivation(c.String("hidden_act", "gelu"));
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kLayerNorm, true, "final_layer_norm");
  spec.rope_fraction = c.Fraction("rotary_pct", "partial_rotary_factor", 0.25, false);
  spec.attention_dropout = c.Fraction("attention_dropout", 0.0, true);
  spec.hidden_dropout = c.Fraction("hidden_dropout", 0.0, true);
  if (!c.errors()->empty()) return *c.errors();
  BuildLayers(&spec, m.layers, [&](int64_t) { return NeoxStyleLayer(m, bias, parallel, act); });
  return spec;
}

Expected<ModelSpec> BuildFalcon(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  bool new_arch = c.Bool("new_decoder_architecture", false);
  bool multi_query = c.Bool("multi_query", true);
  bool parallel = c.Bool("parallel_attn", true);
  bool bias = c.Bool("bias", false);
  m.kv = new_arch ? c.Int({"num_kv_heads", "n_head_kv"}, 1, kMaxHeadsOrExperts).value_or(m.a) : (multi_query ? 1 : m.a);
  if (m.inter == 0) m.inter = 4 * m.h;
  int64_t ln_parallel = c.Int({"num_ln_in_parallel_attn"}, 1, 2).value_or(2);
  CheckDims(c, m, true);
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", true), NormKind::kLayerNorm, true, "ln_f");
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k;
    AddLinear(&k, "query_key_value", LinearSlot::kQkv, m.h, (m.a + 2 * m.kv) * m.d, bias);
    AddLinear(&k, "dense", LinearSlot::kO, m.a * m.d, m.h, bias);
    AddPlainMlp(&k, m.h, m.inter, ActivationFn::kGelu, bias, {"dense_h_to_4h", "dense_4h_to_h"});
    if (new_arch && ln_parallel == 2) {
      AddNorm(&k, "ln_attn", NormSlot::kPreAttention, m.h, true);
      AddNorm(&k, "ln_mlp", NormSlot::kPreMlp, m.h, true);
    } else {
      AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, true);
      if (!new_arch && !parallel) AddNorm(&k, "post_attention_layernorm", NormSlot::kPreMlp, m.h, true);
    }
    k.parallel_residual = new_arch || parallel;
    SetAttention(&k, m, 0);
    return k;
  });
  return spec;
}

}  // namespace vramplan::families
