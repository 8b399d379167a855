// The pieces every family builder assembles layers from: the dimensions most decoders share, the
// linears and norms with their slots, and the layer list that stores each distinct kind once.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "model/families/config_reader.h"
#include "vramplan/model_spec.h"

namespace vramplan::families {

// Everything a standard decoder layer needs, read once per config.
struct Dims {
  int64_t h = 0, a = 0, kv = 0, d = 0, inter = 0, layers = 0, vocab = 0;
};

// Reads the dimensions most decoders share. `d` defaults to h / a unless head_dim is given.
Dims ReadDims(ConfigReader& c);
// Head divisibility and (when `needs_intermediate`) a positive intermediate_size.
void CheckDims(ConfigReader& c, const Dims& m, bool needs_intermediate);
// Mixture-of-experts families whose dense layers are SwiGLU MLPs of intermediate_size (Qwen3-Next's
// mlp_only_layers, Kimi Linear's first_k_dense_replace): an error at intermediate_size naming the
// first dense layer when it is not positive. False when it added one.
bool CheckDenseIntermediate(ConfigReader& c, const Dims& m, const std::function<bool(int64_t)>& is_moe_layer);
// transformers' routers take torch.topk(router_logits, top_k) over the routed experts: top_k
// above their number fails there, and `active_per_token` would exceed `total` here.
void CheckTopK(ConfigReader& c, const char* key, int64_t top_k, int64_t experts);

ActivationFn ParseActivation(const std::string& name);

// The breakdown bucket of a slot.
ModuleRole RoleOf(LinearSlot slot);
// How tensor parallelism splits a slot in Megatron-LM and vLLM (vllm/model_executor/models/
// llama.py, deepseek_v2.py, qwen2_moe.py, gpt2.py, falcon.py...): q/k/v, gate and up are
// column-parallel, o and down row-parallel, routers and MLA's low-rank q_a / kv_a replicated,
// routed experts placed whole (FusedMoE).
ParallelStyle DefaultParallelStyle(LinearSlot slot);

// Appends a linear; its role and parallel style follow from the slot.
void AddLinear(LayerKind* k, std::string_view name, LinearSlot slot, int64_t in, int64_t out, bool bias,
               int64_t copies = 1, bool lora_targetable = true);
void AddNorm(LayerKind* k, std::string_view name, NormSlot slot, int64_t dim, bool bias, bool has_weight = true);
// q_proj, k_proj, v_proj, o_proj.
void AddQkvo(LayerKind* k, const Dims& m, bool qkv_bias, bool o_bias);

// The names of a gated MLP's three linears (Llama's, or Mixtral's experts w1 / w3 / w2).
struct GatedNames {
  std::string_view gate = "gate_proj", up = "up_proj", down = "down_proj";
};
enum class GatedMlpOwner { kDense, kExperts, kSharedExperts };
void AddGatedMlp(LayerKind* k, int64_t h, int64_t inter, bool bias, GatedMlpOwner owner, int64_t copies = 1,
                 GatedNames names = {});
// A dense non-gated MLP (GPT-2 / NeoX / BLOOM / OPT / Phi-2 ...): up (h -> inter), the activation,
// down (inter -> h), both with `bias`, under the family's HF names.
struct PlainNames {
  std::string_view up = "up_proj", down = "down_proj";
};
void AddPlainMlp(LayerKind* k, int64_t h, int64_t inter, ActivationFn act, bool bias, PlainNames names = {});

// Multi-head latent attention (remote modeling_deepseek.py DeepseekV2Attention / DeepseekV3Attention,
// also Kimi Linear's full-attention layers): q_proj, or q_a_proj + q_a_layernorm + q_b_proj when
// q_lora > 0; kv_a_proj_with_mqa (h -> kv_lora + rope), kv_a_layernorm, kv_b_proj (kv_lora ->
// heads x (nope + v_dim)), o_proj; and the layer's MLA geometry (the KV cache holds kv_lora + rope).
struct MlaDims {
  int64_t heads = 0, q_lora = 0, kv_lora = 0, rope = 0, nope = 0, v_dim = 0;
  bool bias = false;  // attention_bias: q_a_proj, kv_a_proj_with_mqa and o_proj
};
void AddMlaAttention(LayerKind* k, int64_t h, const MlaDims& d);
// The GPT-NeoX block's modules, which BLOOM shares name for name: query_key_value (h -> 3h) and
// dense with `attention_bias`, dense_h_to_4h / dense_4h_to_h with bias, input_layernorm and
// post_attention_layernorm with bias, full attention and a non-gated MLP of `act`.
LayerKind NeoxStyleLayer(const Dims& m, bool attention_bias, bool parallel_residual, ActivationFn act);

void SetAttention(LayerKind* k, const Dims& m, int64_t window);
void SetDenseMlp(LayerKind* k, MlpKind kind, ActivationFn act, int64_t inter);
// A MoE layer's geometry: the per-expert width, the routed experts, how many each token takes, and
// the shared experts' total width (0 if none). The MLP kind and activation are SetDenseMlp's.
void SetMoeMlp(LayerKind* k, int64_t expert_inter, int64_t experts, int64_t top_k, int64_t shared_inter = 0);

// Builds the layer list from a per-layer builder, storing each distinct kind once.
void BuildLayers(ModelSpec* spec, int64_t num_layers, const std::function<LayerKind(int64_t)>& build);
// Re-kinds every layer after `edit` changed its attention geometry (SmolLM3's NoPE layers, read
// after the shared Llama builder ran).
void EditLayerAttention(ModelSpec* spec, const std::function<void(int64_t, AttentionGeometry*)>& edit);

void FinishCommon(ModelSpec* spec, const Dims& m, bool tied, NormKind norm, bool norm_bias, std::string_view final_norm = "norm");

// Sliding-window flags per layer from layer_types, else `default_rule`.
std::vector<bool> SlidingFlags(ConfigReader& c, int64_t layers, const std::function<bool(int64_t)>& default_rule);

// num_nextn_predict_layers (Qwen3-Next / Qwen3.5: mtp_num_hidden_layers; `default_layers` when
// neither is set): the checkpoint's multi-token-prediction layers (DeepSeek-V3 layout,
// modeling_deepseek.py / vLLM deepseek_mtp.py: one decoder layer like the last full-attention one,
// enorm, hnorm, eh_proj, shared_head.norm, and with `stores_embeddings` its own embed_tokens and
// shared_head.head; Qwen3-Next's fc and pre-fc norms have the same counts). transformers does not
// load them: they count in checkpoint_total only.
void AddMtpLayers(ConfigReader& c, ModelSpec* spec, bool stores_embeddings, int64_t default_layers = 0);

}  // namespace vramplan::families
