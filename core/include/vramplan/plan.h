// The planner's serialized entry points: the `plan` op (vramplan/api.h), `vramplan plan FILE` and
// `vramplan check FILE`. docs/planner.md describes the request, the reply and the search.
//
// Request: a scenario document, or {"scenario": {...}, "budget": {...}, "levers": {...},
// "min_headroom_bytes": N, "max_plans": N, "rank_by": "balanced" | "fidelity" | "cost"}.
// Reply: {"ok": true, "fits_as_is", "estimate", "plans": [{"changes", "scenario", "estimate",
// "cost", "fidelity", "levers", "gave_up", "why", "step_time"}], "fewest_gpus", "other_gpus",
// "search", "notes"}, best plan first; or {"ok": false, "errors": [...]}.
#pragma once

#include <string>
#include <string_view>

namespace vramplan {

std::string PlanJson(std::string_view request_json);

// The pre-launch guard: exit code 0 when the scenario fits as it is, 1 when it does not (the
// report then lists the best plans), 2 when the input is not a valid request; `report` is text
// for a terminal.
struct CheckOutcome {
  int exit_code = 2;
  std::string report;
};
CheckOutcome CheckScenario(std::string_view request_json);

}  // namespace vramplan
