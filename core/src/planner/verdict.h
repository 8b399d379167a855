// The verdict of an estimate (Result::verdict): one word that the page's badge and the CLI's
// verdict line both read, so that "fits" never stands for an answer with a catch.
#pragma once

#include <string>

#include "vramplan/result.h"
#include "vramplan/scenario.h"

namespace vramplan {

// In order of precedence: "does_not_fit" (the device total exceeds the GPU, or the inference engine
// would not start: vLLM with no room for one max_model_len request), "exceeds_model_context"
// (planner/context_limit_check.h), "fits_queued" (fewer than batch_size sequences run at once),
// "fits".
std::string VerdictOf(const Scenario& s, const Result& r);

}  // namespace vramplan
