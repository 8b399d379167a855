// ERNIE 4.5 (transformers models/ernie4_5/modular_ernie4_5.py, Ernie4_5Config; and
// models/ernie4_5_moe/modular_ernie4_5_moe.py, Ernie4_5_MoeConfig). The dense model is the Llama
// layout with every linear's bias from `use_bias` and tied embeddings by default. The MoE model
// adds, on layers moe_layer_start_index..moe_layer_end_index that are a multiple of
// moe_layer_interval (counting from 1), Ernie4_5_MoeSparseMoeBlock: a float32 router "gate"
// Linear(h, moe_num_experts), the correction bias moe_statics.e_score_correction_bias [1, E],
// experts gate/up/down of moe_intermediate_size, and moe_num_shared_experts shared experts as one
// Ernie4_5_MoeMLP of moe_intermediate_size x moe_num_shared_experts. The checkpoint's MTP weights
// are not loaded (_keys_to_ignore_on_load_unexpected = ["mtp"]).
#include "model/families/builders.h"
#include "model/families/llama_like.h"

namespace vramplan::families {
namespace {

void Ernie45Variant(ConfigReader& c, int64_t, LlamaLikeVariant* v) {
  const bool bias = c.Bool("use_bias", false);
  v->layer.qkv_bias = bias;
  v->layer.o_bias = bias;
  v->layer.mlp_bias = bias;
  v->tied_default = true;  // Ernie4_5Config(tie_word_embeddings=True)
}

}  // namespace

Expected<ModelSpec> BuildErnie45(ConfigReader& c, ModelSpec spec) { return BuildLlamaLike(c, std::move(spec), Ernie45Variant); }

Expected<ModelSpec> BuildErnie45Moe(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  CheckDims(c, m, true);
  // Ernie4_5_MoeConfig defaults (ERNIE-4.5-21B-A3B): 64 experts, top 6, 2 shared experts,
  // moe_intermediate_size 1536, MoE from layer 1 to the last layer (moe_layer_end_index -1).
  const int64_t experts = c.Int({"moe_num_experts", "num_experts"}, 1, kMaxHeadsOrExperts).value_or(64);
  const int64_t top_k = c.Int({"moe_k", "num_experts_per_tok"}, 1, kMaxHeadsOrExperts).value_or(6);
  CheckTopK(c, "moe_k", top_k, experts);
  const int64_t moe_inter = c.Int({"moe_intermediate_size"}, 1).value_or(1536);
  const int64_t shared = c.Int({"moe_num_shared_experts"}, 0, kMaxHeadsOrExperts).value_or(2);
  const int64_t start = c.Int({"moe_layer_start_index"}, 0, 4096).value_or(1);
  const int64_t end_raw = c.Int({"moe_layer_end_index"}, -1, 4096).value_or(-1);
  const int64_t end = end_raw < 0 ? m.layers - 1 : end_raw;
  const int64_t interval = c.Int({"moe_layer_interval"}, 1, 4096).value_or(1);
  const bool bias = c.Bool("use_bias", false);
  const ActivationFn act = ParseActivation(c.String("hidden_act", "silu"));
  if (!c.errors()->empty()) return *c.errors();
  LlamaLikeOptions o;
  o.qkv_bias = o.o_bias = o.mlp_bias = bias;
  spec.lm_head_bias = bias;  // Ernie4_5_MoeForCausalLM: lm_head Linear(h, vocab, bias=use_bias)
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", true), NormKind::kRmsNorm, false);
  BuildLayers(&spec, m.layers, [&](int64_t i) {
    LayerKind k = LlamaLikeLayer(m, o, act, 0);
    if ((i + 1) % interval != 0 || i < start || i > end) return k;
    k.linears.resize(4);  // q/k/v/o; the dense MLP makes way for router + experts
    AddLinear(&k, "gate", LinearSlot::kRouter, m.h, experts, false);
    k.extra_router_params = experts;  // moe_statics.e_score_correction_bias
    AddGatedMlp(&k, m.h, moe_inter, bias, GatedMlpOwner::kExperts, experts);
    if (shared > 0) AddGatedMlp(&k, m.h, moe_inter * shared, bias, GatedMlpOwner::kSharedExperts);
    SetMoeMlp(&k, moe_inter, experts, top_k, moe_inter * shared);
    return k;
  });
  return spec;
}

}  // namespace vramplan::families
