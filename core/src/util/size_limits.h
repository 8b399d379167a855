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

// Empty when the scenario's estimate is representable; otherwise one "too_large" Issue.
Issues CheckSizeLimits(const Scenario& s);

// The same decision without building a message (used by every inverse-search probe).
bool WithinSizeLimits(const Scenario& s);

// The model alone: its parameter count times 4 B must stay within the limit (ParseHfConfigJson
// counts parameters without a scenario). `field_path` names the model ("model").
Issues CheckModelSizeLimits(const ModelSpec& m, const std::string& field_path);

// The refusal when the engines' checked arithmetic overflowed although the pre-flight passed
// (a shape it does not bound): names the mode's token fields.
Issue OverflowIssue(const Scenario& s);

}  // namespace vramplan
