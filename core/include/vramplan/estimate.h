// The estimate. The serialized API is the op table (vramplan/api.h: CallOp("estimate", json), used
// by the CLI, the WASM binding and the tests); EstimateJson and the other *Json helpers below are
// its ops. Estimate is the typed twin for callers that already hold a Scenario, and
// Prepare + Estimate(prepared, ...) the staged form for callers that estimate one model many times
// (the planner, tables): docs/api.md.
#pragma once

#include <memory>
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

// ---- The staged estimator. Everything that depends on the model and the GPU alone (parameter
// counts, the size bounds, the GPU's catalogue facts, the weight bytes per format, the torchtune
// load replay) is prepared once; each Estimate(prepared, ...) then runs only what depends on
// batch, sequence, method, precision and parallel degrees. Results are identical to
// Estimate(scenario, options).
struct Prepared;  // core/src/planner/prepared.h
class PreparedModel {
 public:
  PreparedModel() = default;
  bool empty() const { return state_ == nullptr; }

 private:
  friend PreparedModel Prepare(const Scenario& scenario);
  friend Result Estimate(const PreparedModel& prepared, const Scenario& scenario, const EstimateOptions& options);
  std::shared_ptr<const Prepared> state_;
};

// Prepares `scenario`'s model and GPU. The preparation keeps caches that fill as estimates use
// them: use one PreparedModel from one thread at a time (copies share it; prepare one per thread).
PreparedModel Prepare(const Scenario& scenario);

// `scenario` varies anything but the model and the GPU (batch, sequence, method, precision,
// parallel degrees, engine...). A scenario of another model or GPU (found by a structural
// fingerprint) is estimated from a fresh preparation: still right, only slower.
Result Estimate(const PreparedModel& prepared, const Scenario& scenario, const EstimateOptions& options = EstimateOptions{});

// Serializes a Result (with the normalized scenario echoed under "scenario").
std::string ResultToJson(const Scenario& scenario, const Result& result);

// Helpers exposed to the CLI and the page.
std::string ListPresetsJson();   // [{id, display_name, family, size_label, params}]
std::string ListGpusJson();      // the GPU catalogue
std::string ParseHfConfigJson(std::string_view config_json);  // {"ok", model summary, params} or errors
std::string SchemaJson();        // JSON Schema of the scenario document
std::string VersionString();

}  // namespace vramplan
