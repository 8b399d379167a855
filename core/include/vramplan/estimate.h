// The one entry point. EstimateJson is the canonical serialized API (CLI, WASM and tests all call
// it); Estimate is its typed twin for callers that already hold a Scenario (plan search, tables).
#pragma once

#include <string>
#include <string_view>

#include "vramplan/error.h"
#include "vramplan/result.h"
#include "vramplan/scenario.h"

namespace vramplan {

// Parses and validates a scenario document (schema v1). Never throws.
Expected<Scenario> ParseScenario(std::string_view scenario_json);

// Computes the result of a validated scenario. Pure and deterministic. Validation bounds each
// field alone; a combination whose byte counts would exceed 2^62 B on one device (docs/schema.md,
// "Size limits") is refused here: the Result then carries one Issue in `errors` (code
// "too_large", the field to lower, the fields whose product is too large), every number is zero
// and gpu.fits is false. EstimateJson and EstimateSummaryJson return it as {"ok": false, "errors"}.
Result Estimate(const Scenario& scenario);

// JSON in, JSON out: {"ok":true, ...result} or {"ok":false,"errors":[{code,field_path,message}]}.
std::string EstimateJson(std::string_view scenario_json);

struct EstimateOptions;
// EstimateJson with options (e.g. without the inverse searches, for interactive redraws).
std::string EstimateJson(std::string_view scenario_json, const EstimateOptions& options);

// The totals only, for tables that run many estimates (the page's methods x sizes matrix):
// {"ok", "peak_allocated_bytes", "reserved_bytes", "device_total_bytes", "capacity_bytes",
//  "headroom_bytes", "fits", "peak_phase", "params_total", "trainable_params"}. Same numbers as
// EstimateJson; skips explain strings, the timeline text and the inference inverse searches.
std::string EstimateSummaryJson(std::string_view scenario_json);

struct EstimateOptions {
  bool explain = true;        // explain strings and timeline labels
  bool inverse = true;        // max micro-batch / sequence (training); max context / batch / format / GPUs (inference)
};
Result Estimate(const Scenario& scenario, const EstimateOptions& options);

// Serializes a Result (with the normalized scenario echoed under "scenario").
std::string ResultToJson(const Scenario& scenario, const Result& result);

// Helpers exposed to the CLI and the page.
std::string ListPresetsJson();   // [{id, display_name, family, size_label, params}]
std::string ListGpusJson();      // the GPU catalogue
std::string ParseHfConfigJson(std::string_view config_json);  // {"ok", model summary, params} or errors
std::string SchemaJson();        // JSON Schema of the scenario document
std::string VersionString();

}  // namespace vramplan
