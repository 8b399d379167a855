// MiniMax-Text-01 and MiniMax-M1 (transformers models/minimax/modeling_minimax.py, model_type
// "minimax"; the Hub's remote code, model_type "minimax_text_01" / "minimax_m1", and vLLM
// model_executor/models/minimax_text_01.py read the same weights): Lightning (linear) attention
// layers interleaved with softmax attention, chosen per layer by layer_types
// ("linear_attention" / "full_attention") or the remote code's attn_type_list (0 lightning,
// 1 softmax; vLLM MiniMaxText01Model reads either). Every layer has a MoE block: router "gate" and
// num_local_experts SwiGLU experts w1 / w3 / w2 of intermediate_size (transformers fuses them in
// MiniMaxExperts gate_up_proj / down_proj, the same count), no shared expert in any release.
// The alpha / beta residual scales add no weight; the softmax layers rotate rotary_dim of head_dim.
#include "model/families/builders.h"
#include "model/families/mixer_kit.h"

namespace vramplan::families {

Expected<ModelSpec> BuildMiniMaxText01(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  CheckDims(c, m, true);
  const int64_t experts = c.Required({"num_local_experts", "num_experts"}, 1, kMaxHeadsOrExperts);
  const int64_t top_k = c.Required({"num_experts_per_tok"}, 1, kMaxHeadsOrExperts);
  CheckTopK(c, "num_experts_per_tok", top_k, experts);
  // MiniMaxConfig block_size (256): Lightning attention's block length in training and prefill.
  const int64_t block_size = c.Int({"block_size"}, 1, 1 << 20).value_or(256);
  // The remote code's shared expert (shared_intermediate_size > 0, an int or a per-layer list) is
  // in no release (all 0) and not in transformers' MiniMaxSparseMoeBlock: refused, not guessed.
  if (const auto it = c.raw().find("shared_intermediate_size"); it != c.raw().end()) {
    bool shared = it->is_number() && it->get<double>() > 0;
    if (it->is_array()) {
      for (const auto& v : *it) shared = shared || (v.is_number() && v.get<double>() > 0);
    }
    if (shared) {
      io::AddError(c.errors(), "unsupported", io::JoinPath(c.path(), "shared_intermediate_size"),
                   "MiniMax's shared expert (shared_intermediate_size > 0) is in no released checkpoint and is not modelled");
    }
  }
  std::optional<std::vector<std::string>> types;
  std::optional<std::vector<int64_t>> attn_types;
  if (m.layers > 0) {
    types = c.StringList("layer_types", m.layers);
    if (!types) attn_types = c.IntPerLayer("attn_type_list", m.layers, 0, 1);
  }
  if (c.Has("rotary_dim") && m.d > 0) {
    const int64_t rotary = c.Int({"rotary_dim"}, 0, m.d).value_or(m.d);
    spec.rope_fraction = static_cast<double>(rotary) / static_cast<double>(m.d);
  }
  spec.attention_dropout = c.Fraction("attention_dropout", 0.0, true);
  const ActivationFn act = ParseActivation(c.String("hidden_act", "silu"));
  const int64_t window = c.Int({"sliding_window"}, 0).value_or(0);
  if (!c.errors()->empty()) return *c.errors();
  const auto is_lightning = [&](int64_t i) {
    if (types) return (*types)[static_cast<size_t>(i)] == "linear_attention";
    if (attn_types) return (*attn_types)[static_cast<size_t>(i)] == 0;
    return i % 2 == 1;  // MiniMaxConfig's default layer_types: full attention on even layers
  };
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kRmsNorm, false);
  BuildLayers(&spec, m.layers, [&](int64_t i) {
    LayerKind k;
    if (is_lightning(i)) {
      // MiniMaxLightningAttention uses num_attention_heads and head_dim (no KV heads).
      AddLightning(&k, m.h, m.a, m.d, block_size);
    } else {
      // MiniMaxAttention: q/k/v/o without bias, GQA.
      AddLinear(&k, "q_proj", LinearSlot::kQ, m.h, m.a * m.d, false);
      AddLinear(&k, "k_proj", LinearSlot::kK, m.h, m.kv * m.d, false);
      AddLinear(&k, "v_proj", LinearSlot::kV, m.h, m.kv * m.d, false);
      AddLinear(&k, "o_proj", LinearSlot::kO, m.a * m.d, m.h, false);
      SetAttention(&k, m, window);
    }
    AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, false);
    AddNorm(&k, "post_attention_layernorm", NormSlot::kPreMlp, m.h, false);
    AddLinear(&k, "gate", LinearSlot::kRouter, m.h, experts, false);
    AddGatedMlp(&k, m.h, m.inter, false, GatedMlpOwner::kExperts, experts, GatedNames{"w1", "w3", "w2"});
    SetDenseMlp(&k, MlpKind::kGated, act, m.inter);
    SetMoeMlp(&k, m.inter, experts, top_k, 0);
    // MiniMaxTopKRouter: softmax, top-k, renormalised over the selected experts.
    k.mlp.norm_topk_prob = true;
    return k;
  });
  return spec;
}

}  // namespace vramplan::families
