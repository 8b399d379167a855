// ModelSpec: the architecture of a decoder-only LLM, resolved from a Hugging Face config.json.
// It lists every weight-bearing module with HF's own module names, so that parameter counting,
// LoRA target matching, quantization, freezing and the activation simulation all walk the same
// structure. Layers are stored as a few distinct LayerKinds plus a per-layer index (a 61-layer
// DeepSeek-V3 has 2 kinds, a 62-layer Gemma 3 has 2): estimates stay O(kinds), not O(layers).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vramplan {

// Which bucket of the parameter breakdown a module belongs to.
enum class ModuleRole { kEmbedding, kAttention, kMlp, kExperts, kSharedExperts, kRouter, kNorm, kLmHead };

enum class NormKind { kRmsNorm, kLayerNorm };
enum class MlpKind { kGated, kPlain };  // gated: act(gate(x)) * up(x) -> down; plain: fc_out(act(fc_in(x)))
// kGeluNew: transformers' NewGELUActivation, written in Python ops (gelu_new, gelu_fast), which
// saves four T x I tensors for backward instead of F.gelu's one.
enum class ActivationFn { kSilu, kGelu, kGeluTanh, kGeluNew, kRelu };

// A linear layer (nn.Linear or GPT-2's Conv1D). `copies` > 1 for routed experts stored per expert.
struct LinearSpec {
  std::string_view name;  // HF module name, e.g. "q_proj", "c_attn", "query_key_value", "w1"
  int64_t in_features = 0;
  int64_t out_features = 0;
  bool bias = false;
  int64_t copies = 1;  // number of experts holding this linear (1 for dense modules)
  ModuleRole role = ModuleRole::kAttention;
  bool lora_targetable = true;  // false for fused expert tensors that are not nn.Linear (gpt-oss)
  int64_t Params() const { return copies * (in_features * out_features + (bias ? out_features : 0)); }
};

// The attention block's output projection: Llama "o_proj", GPT-NeoX/Phi "dense", GPT-2's square
// attention "c_proj". One definition for the activation walk, the backward gradient order and the
// GGUF tensor categories.
inline bool IsAttentionOutputProjection(const LinearSpec& l) {
  return l.role == ModuleRole::kAttention &&
         (l.name == "o_proj" || l.name == "dense" || (l.name == "c_proj" && l.in_features == l.out_features));
}

// The MLP's (or an expert's) last linear: "down_proj", Mixtral "w2", "fc2", NeoX "dense_4h_to_h",
// GPT-2's MLP "c_proj".
inline bool IsMlpDownProjection(const LinearSpec& l) {
  // Mixtral's experts call it w2; Qwen1's dense MLP uses w2 as an input projection.
  return l.name == "down_proj" || (l.name == "w2" && l.role == ModuleRole::kExperts) || l.name == "fc2" || l.name == "dense_4h_to_h" ||
         (l.name == "c_proj" && l.role == ModuleRole::kMlp);
}

struct NormSpec {
  std::string_view name;
  int64_t dim = 0;
  bool bias = false;        // LayerNorm with bias
  bool has_weight = true;   // OLMo-1 uses parameter-free LayerNorm
  int64_t Params() const { return has_weight ? dim * (bias ? 2 : 1) : 0; }
};

struct AttentionGeometry {
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;        // q/k head dim (for MLA: qk_nope + qk_rope)
  int64_t v_head_dim = 0;      // value head dim (== head_dim except MLA)
  int64_t sliding_window = 0;  // 0 = full attention on this layer
  // Multi-head latent attention (DeepSeek-V2/V3): the KV cache holds kv_lora_rank + qk_rope_head_dim.
  bool mla = false;
  int64_t kv_lora_rank = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t q_lora_rank = 0;
};

struct MlpGeometry {
  MlpKind kind = MlpKind::kGated;
  ActivationFn activation = ActivationFn::kSilu;
  int64_t intermediate = 0;  // dense MLP width, or per-expert width for MoE
  // MoE (num_experts == 0 means dense)
  int64_t num_experts = 0;
  int64_t experts_per_token = 0;
  int64_t shared_intermediate = 0;  // total width of the shared expert(s), 0 if none
};

struct LayerKind {
  std::vector<LinearSpec> linears;
  std::vector<NormSpec> norms;
  int64_t extra_attention_params = 0;  // gpt-oss attention sinks (one per head)
  int64_t extra_router_params = 0;     // DeepSeek-V3 e_score_correction_bias
  AttentionGeometry attention;
  MlpGeometry mlp;
  bool parallel_residual = false;  // attention and MLP read the same input (Phi-2, GPT-NeoX, Falcon)
};

struct ModelSpec {
  std::string model_type;      // as in config.json ("llama", "qwen3_moe", ...)
  std::string architecture;    // config "architectures"[0] if present
  std::string display_name;
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t num_layers = 0;
  int64_t max_position_embeddings = 0;
  int64_t position_embedding_rows = 0;  // learned absolute positions (GPT-2 wpe), 0 for RoPE
  bool tied_embeddings = false;
  bool lm_head_bias = false;  // Phi-2
  NormKind norm_kind = NormKind::kRmsNorm;
  NormSpec final_norm;
  double rope_fraction = 1.0;  // partial rotary factor
  // Training-time dropout probabilities from the config (GPT-2 family defaults to 0.1; most
  // current LLMs to 0). Each active dropout saves a 1-byte mask per element for backward.
  double attention_dropout = 0.0;  // on the attention probabilities
  double hidden_dropout = 0.0;     // on the attention and MLP outputs
  double embedding_dropout = 0.0;
  // Eager-attention details that differ by family (transformers modeling code):
  bool softmax_fp32 = true;         // softmax(..., dtype=float32) (Llama family) vs in the scores dtype (GPT-2)
  bool scale_is_tensor = false;     // scores / torch.full([], sqrt(d)) in the scores dtype (GPT-2) vs a python float
  bool legacy_logits_upcast = true; // transformers <= 4.45 called logits.float() before the loss (not GPT-2)
  bool loss_upcasts_logits = true;  // false: the model's own (remote) code runs the loss on the logits as they are (Qwen1)
  int64_t legacy_buffer_bytes_per_layer = 0;  // transformers <= 4.45 GPT-2: causal-mask `bias` buffer (bool)
  std::vector<LayerKind> kinds;
  std::vector<uint8_t> layer_kind;  // size num_layers: index into kinds
  std::vector<std::string> notes;   // facts worth telling the user (e.g. MTP layer not counted)
};

// Exact parameter counts (each tied tensor counted once), by breakdown bucket.
struct ParamCounts {
  int64_t embedding = 0;  // token (+ position) embeddings
  int64_t attention = 0;
  int64_t mlp = 0;
  int64_t experts = 0;         // routed experts
  int64_t shared_experts = 0;
  int64_t router = 0;
  int64_t norms = 0;
  int64_t lm_head = 0;  // 0 when tied
  int64_t total = 0;
  int64_t active_per_token = 0;  // MoE: parameters touched per token (top-k experts)
};

ParamCounts CountParams(const ModelSpec& spec);

// Per-layer parameter count of one kind (all linears, norms and extras).
int64_t LayerKindParams(const LayerKind& kind);

}  // namespace vramplan
