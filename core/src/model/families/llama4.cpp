// Llama 4's text decoder (transformers models/llama4/modeling_llama4.py, Llama4TextConfig; the
// text_config of the multimodal llama4 wrapper, whose vision tower model/vision_tower.cpp counts).
// Llama4TextAttention: q/k/v/o with attention_bias; the qk_norm of use_qk_norm is
// Llama4TextL2Norm, which has no weight. Layers in moe_layers (default every
// interleave_moe_layer_step-th layer, counting from 1) hold Llama4TextMoe: a router Linear(h, E)
// without bias, Llama4TextExperts as fused parameters (gate_up_proj [E, h, 2I], down_proj
// [E, I, h]: not nn.Linear, so not LoRA targets) and a shared_expert Llama4TextMLP of
// intermediate_size; the other layers a Llama4TextMLP of intermediate_size_mlp. Layers with RoPE
// (no_rope_layers[i] = 1; by default all but every no_rope_layer_interval-th) use chunked local
// attention of attention_chunk_size tokens (create_chunked_causal_mask); the NoPE layers attend
// globally and skip the rotary embedding (Llama4TextAttention.forward: `if self.use_rope`). The
// cache of a chunked layer: transformers holds it like a window of attention_chunk_size (the cache
// classes map "chunked_attention" to the sliding layer with sliding_window = attention_chunk_size),
// llama.cpp as its SWA cache (LLAMA_SWA_TYPE_CHUNKED), vLLM as ChunkedLocalAttentionSpec
// (inference/vllm_kv_groups.h).
#include <algorithm>

#include "model/families/builders.h"
#include "model/families/layer_kit.h"

namespace vramplan::families {

Expected<ModelSpec> BuildLlama4Text(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  CheckDims(c, m, true);
  const int64_t experts = c.Int({"num_local_experts"}, 1, kMaxHeadsOrExperts).value_or(16);
  const int64_t top_k = c.Int({"num_experts_per_tok"}, 1, kMaxHeadsOrExperts).value_or(1);
  CheckTopK(c, "num_experts_per_tok", top_k, experts);
  const int64_t dense_inter = c.Int({"intermediate_size_mlp"}, 1).value_or(16384);
  const int64_t step = c.Int({"interleave_moe_layer_step"}, 1, 4096).value_or(1);
  const int64_t nope_interval = c.Int({"no_rope_layer_interval"}, 1, 4096).value_or(4);
  const int64_t chunk = c.Int({"attention_chunk_size"}, 0).value_or(8192);
  const bool bias = c.Bool("attention_bias", false);
  const ActivationFn act = ParseActivation(c.String("hidden_act", "silu"));
  std::vector<int64_t> moe_layers = m.layers > 0 && c.Has("moe_layers") ? c.LayerList("moe_layers", m.layers) : std::vector<int64_t>{};
  if (!c.Has("moe_layers")) {
    for (int64_t i = step - 1; i < m.layers; i += step) moe_layers.push_back(i);
  }
  // no_rope_layers: 1 = RoPE (chunked attention), 0 = NoPE (global); empty means the default.
  std::vector<bool> rope(static_cast<size_t>(std::max<int64_t>(m.layers, 0)));
  for (int64_t i = 0; i < m.layers; ++i) rope[static_cast<size_t>(i)] = (i + 1) % nope_interval != 0;
  auto nr = c.raw().find("no_rope_layers");
  if (nr != c.raw().end() && nr->is_array() && static_cast<int64_t>(nr->size()) == m.layers) {
    for (int64_t i = 0; i < m.layers; ++i) rope[static_cast<size_t>(i)] = (*nr)[static_cast<size_t>(i)].is_number() && (*nr)[static_cast<size_t>(i)].get<double>() != 0;
  }
  // transformers >= 4.54 writes the same as layer_types: "chunked_attention" / "full_attention".
  if (auto types = c.StringList("layer_types", m.layers)) {
    for (int64_t i = 0; i < m.layers; ++i) rope[static_cast<size_t>(i)] = (*types)[static_cast<size_t>(i)] == "chunked_attention";
  }
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kRmsNorm, false);
  BuildLayers(&spec, m.layers, [&](int64_t i) {
    LayerKind k;
    AddQkvo(&k, m, bias, bias);
    AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, false);
    AddNorm(&k, "post_attention_layernorm", NormSlot::kPreMlp, m.h, false);
    SetAttention(&k, m, rope[static_cast<size_t>(i)] ? chunk : 0);
    k.attention.chunked = rope[static_cast<size_t>(i)] && chunk > 0;
    k.attention.no_rope = !rope[static_cast<size_t>(i)];
    if (std::find(moe_layers.begin(), moe_layers.end(), i) == moe_layers.end()) {
      AddGatedMlp(&k, m.h, dense_inter, false, GatedMlpOwner::kDense);
      SetDenseMlp(&k, MlpKind::kGated, act, dense_inter);
      return k;
    }
    AddLinear(&k, "router", LinearSlot::kRouter, m.h, experts, false);
    AddLinear(&k, "gate_up_proj", LinearSlot::kExpertGateUp, m.h, 2 * m.inter, false, experts, false);
    AddLinear(&k, "down_proj", LinearSlot::kExpertDown, m.inter, m.h, false, experts, false);
    AddGatedMlp(&k, m.h, m.inter, false, GatedMlpOwner::kSharedExperts);
    SetDenseMlp(&k, MlpKind::kGated, act, m.inter);
    SetMoeMlp(&k, m.inter, experts, top_k, m.inter);
    return k;
  });
  if (chunk > 0) {
    spec.notes.push_back("Llama 4's RoPE layers attend within chunks of attention_chunk_size (" + std::to_string(chunk) +
                         ") tokens: transformers and llama.cpp hold their KV cache like a window of that size, vLLM pages it as chunked local attention");
  }
  return spec;
}

}  // namespace vramplan::families
