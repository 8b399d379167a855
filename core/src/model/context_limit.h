// The longest sequence a model is made for, derived from its config.json the way vLLM derives its
// default max_model_len (and refuses a longer one). The planner warns when a scenario asks for more
// and caps its "longest that fits" answers there (docs/limits.md, "The model's context limit").
#pragma once

#include <cstdint>
#include <string>

#include "io/json_reader.h"

namespace vramplan {

struct ContextLimit {
  int64_t tokens = 0;  // 0: the config names no length (the planner then applies no limit)
  std::string source;  // how it was derived, e.g. "original_max_position_embeddings 4,096 x yarn factor 40"
};

// vllm-project/vllm vllm/config.py _get_and_verify_max_len (v0.6 to v0.10; vllm/config/model.py
// and ModelArchConfigConvertorBase.derive_max_model_len_and_key since): the smallest of the length
// keys present, model_max_length over them when the config has it (Command-R), then rope scaling
// from `rope_scaling` (transformers v4) or `rope_parameters` (v5; one block or one per layer type):
// every rope type except su/longrope/llama3 multiplies by `factor`, yarn starting from
// original_max_position_embeddings; Gemma 3's length is already scaled. `model_type` is the
// decoder's (text_config's for a wrapper).
ContextLimit ContextLimitFromConfig(const io::Json& config, const std::string& model_type);

}  // namespace vramplan
