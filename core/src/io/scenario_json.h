// Scenario parsing internals shared by estimate.cpp (which also needs the parse warnings).
#pragma once

#include <string_view>

#include "vramplan/error.h"
#include "vramplan/scenario.h"

namespace vramplan {

// Like ParseScenario, and also collects non-fatal warnings (e.g. a generic model_type).
Expected<Scenario> ParseScenarioWithWarnings(std::string_view text, Issues* warnings);

// The cross-field checks the reader runs once every field is read (train, parallel, against the
// model), for a typed scenario whose fields each hold an allowed value (the planner's variants).
Issues ValidateCombination(const Scenario& s);

}  // namespace vramplan
