// Result and scenario serialization internals.
#pragma once

#include <string>

#include "io/json_reader.h"
#include "vramplan/result.h"
#include "vramplan/scenario.h"

namespace vramplan {

io::Json ScenarioToJsonValue(const Scenario& s);
io::Json ModelSummaryJson(const ModelSpec& m);
io::Json ParamsJson(const ParamCounts& c);
std::string ErrorsToJson(const Issues& errors);

}  // namespace vramplan
