// The per-layer RoPE cos/sin caches of older transformers (framework.rope_cache_per_layer).
//
// transformers <= 4.41 MistralRotaryEmbedding (and MixtralRotaryEmbedding, copied from it) build
// cos_cached / sin_cached buffers of max_position_embeddings x rotary_dim in __init__
// (`_set_cos_sin_cache(seq_len=max_position_embeddings, ..., dtype=torch.get_default_dtype())`),
// and every attention layer owns its own rotary module, so a model holds 2 x L of them for the whole
// run. transformers#30642 ("Add torch.compile for Mistral", released in 4.42) replaced them with a
// per-step computation from inv_freq. from_pretrained sets the default dtype to torch_dtype while
// the modules are built, so the caches are in the load dtype; PEFT's prepare_model_for_kbit_training
// upcasts parameters, not buffers, so a QLoRA model's caches stay 16-bit.
#pragma once

#include <cstdint>

#include "train/precision.h"
#include "vramplan/model_spec.h"
#include "vramplan/scenario.h"

namespace vramplan {

// Bytes of the caches on the device (0 for a model without RoPE or without max_position_embeddings).
int64_t PerLayerRopeCacheBytes(const ModelSpec& model, const TrainConfig& train, const PrecisionModel& prec);

}  // namespace vramplan
