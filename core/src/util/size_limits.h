// Pre-flight size check: whether every byte count of a scenario's estimate can be represented.
//
// The validator bounds each field on its own (tokens <= 2^24, batch <= 2^16, ...), but products of
// in-range fields can still leave int64: 1,000 sequences x 16,777,216 tokens of eager attention
// scores are ~1e22 B. Before estimating, the dominant products of the mode and engine are
// evaluated in floating point with the shapes and the largest coefficients of the real formulas
// (attention scores b x heads x s^2, logits b x s x V, KV cache tokens x bytes per token, saved
// activations tokens x layer widths, parameters x bytes per parameter, llama.cpp's KQ buffer
// heads x n_ctx x n_ubatch, ...). Their sum is an upper bound of the estimate's largest total; when
// it exceeds checked::kMaxDeviceBytes (2^62 B) the scenario is refused with code "too_large",
// the field to lower as field_path, and a message naming the fields whose product is too large.
// Within the limit every intermediate fits int64 with a factor-of-two headroom; the checked
// arithmetic of util/checked_math.h backs this up inside the engines.
#pragma once

#include <string>

#include "vramplan/error.h"
#include "vramplan/scenario.h"

namespace vramplan {

// Sizes of a model that the bounds multiply with the scenario's fields, summed or maximized over
// its layers (doubles: never overflowing). Measured once per model; inverse searches reuse it.
struct ModelSizes {
  double params = 0;         // every parameter; routed experts counted max(copies, top-k) times
  double max_linear = 0;     // largest in x out of one linear (dequantization buffers, casts)
  double max_in_in_out = 0;  // largest in x (in + out) (DoRA's eye(in) product)
  double lora_per_rank = 0;  // sum over layers of (in + 2 out) x copies of adaptable linears
  double token_io = 0;       // sum over layers of (in + out) x rows per token of every linear
  double token_linears = 0;  // sum over layers of rows per token of every linear (LoRA rank rows)
  double token_other = 0;    // sum over layers of attention, norm, MLP-activation and router widths
  double heads_layers = 0;   // sum over layers of attention heads (eager scores saved per layer)
  double max_heads = 0;
  double max_head_dim = 0;
  double kv_full = 0;        // K+V elements per token over all layers, heads decompressed
  double kv_latent = 0;      // ... with MLA's latent (vLLM, llama.cpp)
  double kv_max_layer = 0;   // largest K or V row of one layer (transformers' torch.cat copy)
  double kv_index_bytes = 0; // DSA indexer keys per token over all layers, bytes, any engine (inference/kv_cache.h)
  double max_index_heads = 0;  // DSA indexer heads (transformers' fp32 prefill scores)
  double max_inter = 0;      // largest MLP width a token runs through (MoE: I x top-k)
  double prefill_width = 0;  // transformers prefill: elements per token alive in one layer
  double vllm_width = 0;     // vLLM profile run: elements per batched token in one layer
  double layers = 0;
};

ModelSizes MeasureModel(const ModelSpec& m);

// Empty when the scenario's estimate is representable; otherwise one "too_large" Issue.
Issues CheckSizeLimits(const Scenario& s);
Issues CheckSizeLimits(const Scenario& s, const ModelSizes& sizes);  // sizes: MeasureModel(s.model)

// The same decision without building a message (used by every inverse-search probe); `sizes` must
// be MeasureModel(s.model).
bool WithinSizeLimits(const Scenario& s);
bool WithinSizeLimits(const Scenario& s, const ModelSizes& sizes);

// The model alone: its parameter count times 4 B must stay within the limit (ParseHfConfigJson
// counts parameters without a scenario). `field_path` names the model ("model").
Issues CheckModelSizeLimits(const ModelSpec& m, const std::string& field_path);

// The refusal when the engines' checked arithmetic overflowed although the pre-flight passed
// (a shape it does not bound): names the mode's token fields.
Issue OverflowIssue(const Scenario& s);

}  // namespace vramplan
