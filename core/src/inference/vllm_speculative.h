// vLLM speculative decoding with the checkpoint's own multi-token-prediction (MTP) layers
// (`--speculative-config '{"method": "mtp", "num_speculative_tokens": N}'`). What it adds to a
// served model, from vllm-project/vllm:
//  * the draft model (vllm/config/speculative.py SpeculativeConfig.hf_config_override: the target's
//    config with architectures DeepSeekMTPModel / Glm4MoeMTPModel / Qwen3NextMTP / Qwen3_5MTP and
//    n_predict = num_nextn_predict_layers, or mtp_num_hidden_layers for Qwen3.5) builds every MTP
//    layer of the checkpoint, whatever N is (N > n_predict reuses them: spec_step_idx % n_predict,
//    deepseek_mtp.py DeepSeekMultiTokenPredictor.forward); each is one decoder layer like the
//    target's, enorm + hnorm + eh_proj (2h -> h) + shared_head.norm (deepseek_mtp.py
//    DeepSeekMultiTokenPredictorLayer at commit 03356f8c, glm4_moe_mtp.py at 028aedf6; Qwen3-Next:
//    pre_fc_norm_embedding + pre_fc_norm_hidden + fc + norm, qwen3_next_mtp.py at 055e47c2).
//    DeepSeek's and GLM's eh_proj is a plain nn.Linear (model dtype, whole on every rank);
//    Qwen3-Next's fc a ColumnParallelLinear under the model's quantization.
//  * its embed_tokens and lm_head / shared_head.head are built, then replaced by the target's
//    (vllm/v1/spec_decode/llm_base_proposer.py SpecDecodeBaseProposer._maybe_share_embeddings
//    (pipeline parallel 1) and _maybe_share_lm_head, "Detected MTP model. Sharing target model ...",
//    commit 00c4f22d): the load keeps no copy of either.
//  * the draft's attention layers register their own KV-cache specs; with the target's they are
//    grouped by kv_cache_utils (the draft must share the target's group:
//    SpecDecodeBaseProposer.validate_same_kv_cache_group), so every block holds a page for each
//    draft layer too: the per-token cost grows by the draft layers' K/V (MLA latent for DeepSeek-V3
//    and GLM-4.7-Flash / GLM-5, GQA K/V for GLM-4.5, Qwen3-Next's gated full attention).
//  * the scheduler allocates N lookahead slots per running request
//    (vllm/v1/core/sched/scheduler.py: allocate_slots(..., num_lookahead_tokens)).
// Not modelled (small beside the terms above; docs/inference.md says how small): the proposer's
// persistent buffers (speculative input ids, positions, hidden_states and inputs_embeds of
// max_num_batched_tokens x hidden), the draft's share of the profile run and of the CUDA graphs,
// and the rejection sampler's dummy run.
#pragma once

#include <cstdint>
#include <string>

#include "vramplan/error.h"
#include "vramplan/model_spec.h"
#include "vramplan/scenario.h"

namespace vramplan {

// The MTP drafter on one tensor-parallel rank.
struct VllmMtpDraft {
  int64_t layers = 0;            // MTP layers vLLM builds: all of the checkpoint's
  int64_t decoder_bytes = 0;     // their decoder layers, in the weight format, sharded as the target's
  int64_t projection_bytes = 0;  // eh_proj / fc (2h -> h) of every layer
  int64_t norm_bytes = 0;        // three h-wide norms per layer
  int64_t lookahead_tokens = 0;  // num_speculative_tokens: slots the scheduler adds per request
  int64_t WeightBytes() const { return decoder_bytes + projection_bytes + norm_bytes; }
  std::string explain;           // the weights' formula with the numbers plugged in
};

// Whether the scenario serves with MTP speculative decoding (vLLM, method "mtp").
bool VllmMtpOn(const Scenario& s);

// The drafter's weights and lookahead for scenario `s` on a rank of tensor-parallel degree `tp`.
// Requires VllmMtpOn(s) (CheckSpeculative passed).
VllmMtpDraft VllmMtpDraftOf(const Scenario& s, int64_t tp);

// `m` with the drafter's `layers` MTP layers appended to its decoder layers: what vLLM's KV-cache
// grouping sees (the target's attention layers and the draft's).
ModelSpec WithDraftLayers(const ModelSpec& m, int64_t layers);

// Refusals of inference.speculative for the resolved model: method "mtp" needs the vLLM V1 engine
// and a checkpoint with MTP layers of a layout modelled here; num_speculative_tokens above the
// layer count must be a multiple of it (speculative.py: "num_speculative_tokens ... must be
// divisible by n_predict").
void CheckSpeculative(const Scenario& s, Issues* errors);

}  // namespace vramplan
