// The model's context limit (ModelSpec::context_limit, model/context_limit.h) against what a
// scenario asks: the longest sequence it asks for, the warning when that is beyond the limit, and
// which bound ends a "longest that fits" search.
#pragma once

#include <cstdint>
#include <string>

#include "vramplan/result.h"
#include "vramplan/scenario.h"

namespace vramplan {

struct AskedLength {
  int64_t tokens = 0;
  std::string field;  // the scenario field that sets it
};

// Training: seq_len. Inference: prompt + new tokens; vLLM's max_model_len and llama.cpp's context
// per sequence (n_ctx / batch, llama_context's n_ctx_per_seq) where set larger.
AskedLength LongestSequenceAsked(const Scenario& s);

// True when the model has a context limit and the scenario asks for more.
bool ExceedsModelContext(const Scenario& s);

// Adds the exceeds_model_context warning (diagnostics/warning_codes.h) when ExceedsModelContext.
void WarnBeyondModelContext(const Scenario& s, Result* r);

// The upper end of a "longest that fits" search: the model's limit when it has one below `bound`.
int64_t CapAtModelContext(const ModelSpec& m, int64_t bound);

// What ended such a search that answered `answer` with upper end `hi` (from CapAtModelContext):
// "model_context" when it reached the model's limit, "input_limit" when it reached the scenario
// validator's token range, "memory" otherwise (the next length does not fit).
std::string SearchBound(const ModelSpec& m, int64_t answer, int64_t hi);

}  // namespace vramplan
