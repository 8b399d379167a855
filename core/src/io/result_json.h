// Result and scenario serialization internals.
#pragma once

#include <string>

#include "vramplan/result.h"
#include "vramplan/scenario.h"

namespace vramplan {

std::string ModelSummaryJson(const ModelSpec& m);  // a JSON object
std::string ParamsJson(const ParamCounts& c);      // a JSON object
std::string ErrorsToJson(const Issues& errors);
// The normalized scenario, as echoed under "scenario" in every result (a JSON object).
std::string ScenarioToJson(const Scenario& s);

}  // namespace vramplan
