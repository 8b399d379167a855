// The fixed-size state a linear-attention, Mamba or short-conv layer keeps per sequence, as each
// engine allocates it (ModelSpec RecurrentGeometry; docs/inference.md "Recurrent state"):
//   vLLM (vllm/model_executor/layers/mamba/mamba_utils.py MambaStateShapeCalculator,
//     MambaStateDtypeCalculator): conv state (conv_kernel - 1) x conv channels / tp and the SSM /
//     delta-rule state (Mamba-2: heads / tp x head_dim x d_state; GDN: v_heads / tp x v_dim x k_dim;
//     Mamba-1: inner / tp x d_state; LFM2's short conv: none, short_conv_state_shape), both in the
//     model dtype (mamba_cache_dtype and mamba_ssm_cache_dtype "auto"); Mamba-2 groups that tp
//     does not divide are replicated up to tp (extra_groups_for_head_shards); Kimi Delta Attention
//     (kda_state_shape / kda_state_dtype): conv states for q, k and v of (conv_kernel - 1) x
//     heads x head_dim / tp each in the model dtype and a heads / tp x head_dim x head_dim
//     recurrent state in float32; MiniMax's Lightning attention (linear_attention_state_shape /
//     linear_attention_state_dtype, as vllm/model_executor/models/minimax_text_01.py
//     MiniMaxText01ForCausalLM.get_mamba_state_shape_from_config asks for it): num_heads // tp x
//     head_dim x head_dim in the model dtype, no conv state;
//   llama.cpp (src/llama-memory-recurrent.cpp, r_l / s_l per layer): n_embd_r = (d_conv - 1) x conv
//     channels (LFM2: n_embd x (n_shortconv_l_cache - 1); Kimi Linear: 3 x (d_conv - 1) x n_head x
//     n_embd_head_kda) and n_embd_s = d_state x d_inner (0 for LFM2; Kimi Linear: n_embd_head_kda^2
//     x n_head, src/llama-hparams.cpp n_embd_s), both F32, one row per sequence (n_seq_max);
//   transformers (modeling_qwen3_next.py Qwen3NextDynamicCache, modeling_nemotron_h.py /
//     modeling_jamba.py HybridMambaAttentionDynamicCache, modeling_lfm2.py Lfm2HybridConvCache,
//     which also gives each attention layer a conv state, unused, counted too; Kimi Linear's
//     modeling_kimi_linear.py cache): conv_states keep the full conv_kernel columns in the model
//     dtype; ssm_states in the model dtype, Gated DeltaNet's and KDA's recurrent state in float32
//     (torch_chunk_gated_delta_rule / fla chunk_gated_delta_rule and torch_chunk_kda / fla
//     chunk_kda return it in float32); MiniMax (modeling_minimax.py MiniMaxCache linear cache): the
//     heads x head_dim x head_dim K^T V state in the model dtype (zeros(...).to(value_states)).
//   llama.cpp has no MiniMax-Text-01 architecture: its engine warns would_not_start
//     (engine_llama_cpp.cpp) and counts the Lightning state as an F32 s_l row.
#pragma once

#include <cstdint>
#include <string>

#include "vramplan/model_spec.h"
#include "vramplan/scenario.h"

namespace vramplan {

struct RecurrentState {
  int64_t layers = 0;               // layers with a recurrent mixer
  int64_t conv_bytes = 0;           // conv state of one sequence, all those layers, one GPU
  int64_t ssm_bytes = 0;            // SSM / delta-rule state of one sequence, all those layers, one GPU
  int64_t largest_layer_bytes = 0;  // one layer's conv + SSM state (vLLM's MambaSpec page)
  int64_t BytesPerSequence() const { return conv_bytes + ssm_bytes; }
};

// One layer's conv + SSM state of one sequence; `dtype_bytes`: the model's compute dtype (2 for
// bf16/fp16, 4 for fp32).
int64_t RecurrentLayerBytes(const RecurrentGeometry& r, Engine engine, int64_t tp, int64_t dtype_bytes);

RecurrentState RecurrentStateOf(const ModelSpec& m, Engine engine, int64_t tp, int64_t dtype_bytes);

// "36 layers x (conv 24,576 + state 1,048,576) B = 37.6 MiB per sequence".
std::string RecurrentStateExplain(const RecurrentState& st);

}  // namespace vramplan
