#include "model/structural_keys.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "io/message_text.h"

namespace vramplan {
namespace {

using io::Json;

struct KeyRule {
  std::string_view key;
  bool prefix;  // `key` is a prefix ("linear_")
  std::string_view what;
};

// Keys named by the architectures released since the generic readers were written (transformers
// configuration_qwen3_next.py, configuration_nemotron_h.py, configuration_jamba.py,
// configuration_falcon_h1.py, configuration_granitemoehybrid.py, configuration_llama4.py,
// configuration_deepseek_v3.py / DeepSeek-V3.2's config.json, configuration_minimax.py,
// configuration_ernie4_5_moe.py, the VLM wrappers).
constexpr std::array<KeyRule, 33> kRules{{
    {"linear_", true, "linear attention (Gated DeltaNet / Lightning) layers"},
    {"full_attention_interval", false, "linear attention interleaved with full attention"},
    {"attn_type_list", false, "linear attention interleaved with full attention"},
    {"mamba_", true, "state-space (Mamba) layers"},
    {"ssm_", true, "state-space (Mamba) layers"},
    {"hybrid_override_pattern", false, "a hybrid Mamba / attention / MoE layer pattern"},
    {"layers_block_type", false, "a hybrid layer pattern"},
    {"attn_layer_period", false, "attention layers interleaved with state-space layers"},
    {"attn_layer_offset", false, "attention layers interleaved with state-space layers"},
    {"expert_layer_period", false, "MoE layers every n-th layer"},
    {"expert_layer_offset", false, "MoE layers every n-th layer"},
    {"conv_kernel", false, "short convolutions (state-space or linear-attention layers)"},
    {"d_conv", false, "short convolutions (state-space layers)"},
    {"state_size", false, "a recurrent state (state-space layers)"},
    {"time_step_rank", false, "state-space layers"},
    {"vision_config", false, "a vision tower"},
    {"audio_config", false, "an audio tower"},
    {"text_config", false, "a multimodal wrapper"},
    {"num_nextn_predict_layers", false, "multi-token-prediction layers"},
    {"mtp_", true, "multi-token-prediction layers"},
    {"num_mtp_modules", false, "multi-token-prediction layers"},
    {"use_mtp", false, "multi-token-prediction layers"},
    {"index_", true, "a sparse-attention indexer (DeepSeek sparse attention)"},
    {"kv_lora_rank", false, "multi-head latent attention"},
    {"q_lora_rank", false, "multi-head latent attention"},
    {"qk_rope_head_dim", false, "multi-head latent attention"},
    {"attention_chunk_size", false, "chunked attention"},
    {"sliding_window_pattern", false, "a sliding / global layer pattern"},
    {"interleave_moe_layer_step", false, "MoE layers interleaved with dense layers"},
    {"moe_", true, "mixture-of-experts settings beyond the standard keys"},
    {"num_shared_experts", false, "shared experts"},
    {"shared_expert_gate", false, "a gated shared expert"},
    {"use_qk_norm", false, "q / k normalization"},
}};

// The standard MoE keys the generic MoE reader reads (families/generic_moe.cpp), and MoE keys that
// configure routing or the training loss, not the stored modules.
constexpr std::array<std::string_view, 17> kUnderstood{{
    "num_experts", "num_local_experts", "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size",
    "n_shared_experts", "shared_expert_intermediate_size", "first_k_dense_replace", "decoder_sparse_step",
    "mlp_only_layers", "moe_layer_freq", "norm_topk_prob", "router_aux_loss_coef", "output_router_logits",
    "routed_scaling_factor", "topk_group", "n_group",
}};

bool ConfiguresNothing(const Json& v) {
  return v.is_null() || (v.is_boolean() && !v.get<bool>()) || (v.is_number() && v.get<double>() == 0.0) ||
         ((v.is_array() || v.is_object() || v.is_string()) && v.empty());
}

// layer_types entries the readers understand (families/config_reader.h SlidingLayers).
bool AttentionLayerType(const Json& t) {
  if (!t.is_string()) return false;
  const std::string& s = t.get_ref<const std::string&>();
  return s == "full_attention" || s == "sliding_attention" || s == "attention" || s == "global" || s == "local" ||
         s == "sliding";
}

}  // namespace

std::vector<UnreadKey> UnreadStructuralKeys(const Json& cfg, const std::string& path) {
  std::vector<UnreadKey> out;
  if (!cfg.is_object()) return out;
  for (auto it = cfg.begin(); it != cfg.end(); ++it) {
    const std::string& key = it.key();
    if (ConfiguresNothing(*it)) continue;
    if (std::find(kUnderstood.begin(), kUnderstood.end(), key) != kUnderstood.end()) continue;
    if (key == "layer_types") {
      if (it->is_array() && !std::all_of(it->begin(), it->end(), AttentionLayerType)) {
        out.push_back({io::JoinPath(path, key), "layer kinds other than full / sliding attention"});
      }
      continue;
    }
    for (const KeyRule& r : kRules) {
      const bool match = r.prefix ? key.compare(0, r.key.size(), r.key) == 0 : key == r.key;
      if (!match) continue;
      out.push_back({io::JoinPath(path, key), std::string(r.what)});
      break;
    }
  }
  return out;
}

bool HasStandardMoeKeys(const Json& cfg) {
  if (!cfg.is_object()) return false;
  for (const char* key : {"num_experts", "num_local_experts", "n_routed_experts"}) {
    auto it = cfg.find(key);
    if (it != cfg.end() && it->is_number() && it->get<double>() > 0) return true;
  }
  return false;
}

}  // namespace vramplan
