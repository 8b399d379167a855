// Decoders with grouped-query attention and DeepSeek-style mixture-of-experts layers: a router
// (with or without a learned correction bias), routed experts, shared experts, and dense layers
// before first_k_dense_replace / outside the MoE layer rule. GLM-4.5 / 4.6 (glm4_moe) and the
// generic reader for an unknown model_type with the standard MoE keys share it.
#pragma once

#include "model/families/layer_kit.h"
#include "model/families/llama_like.h"

namespace vramplan::families {

struct GqaMoeVariant {
  LlamaLikeOptions attention;       // biases and q/k norms
  bool correction_bias = false;     // the router's e_score_correction_bias (one per expert)
  bool mtp_stores_embeddings = false;  // num_nextn_predict_layers: the MTP layers' own embed/head copies
  GatedNames expert_names;          // MiniMax-M2's experts are w1 / w3 / w2
  // DeepseekV3DecoderLayer (dots1): only first_k_dense_replace places the dense layers;
  // moe_layer_freq / decoder_sparse_step / mlp_only_layers are not read.
  bool first_k_dense_only = false;
  // Dots1Config: sliding windows from layer_types, else on the layers from max_window_layers on
  // when sliding_window is set (Qwen2's rule without use_sliding_window).
  bool max_window_layers_sliding = false;
};

Expected<ModelSpec> BuildGqaMoe(ConfigReader& c, ModelSpec spec, const GqaMoeVariant& v);

}  // namespace vramplan::families
