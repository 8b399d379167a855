// The estimate ops: parse -> prepare the model and GPU -> the pipeline (planner/simulate.h) -> JSON;
// and the listing ops of the op table (api/ops.cpp).
#include "vramplan/estimate.h"

#include "io/input_limits.h"
#include "io/json_reader.h"
#include "io/json_writer.h"
#include "io/result_json.h"
#include "io/scenario_json.h"
#include "model/catalog.h"
#include "model/hf_config.h"
#include "planner/prepared.h"
#include "planner/simulate.h"
#include "planner/peak_band.h"
#include "planner/verdict.h"
#include "scenario/fields.h"
#include "util/checked_math.h"
#include "util/size_limits.h"

extern const char vramplan_build_id[];

namespace vramplan {

Result Estimate(const Scenario& scenario) { return Estimate(scenario, EstimateOptions{}); }

namespace {

// A refused estimate: the errors, the GPU it was for, every number zero, fits false.
Result Refused(const Scenario& scenario, Issues errors) {
  Result r;
  r.gpu.id = scenario.gpu.id;
  r.gpu.name = scenario.gpu.name;
  r.gpu.capacity_bytes = scenario.gpu.memory_bytes;
  r.errors = std::move(errors);
  return r;
}

// The estimate of a validated scenario from its preparation: the pre-flight, then the pipeline
// (planner/simulate.h) under the overflow backstop.
Result EstimatePrepared(const Scenario& scenario, const Prepared& prepared, const EstimateOptions& options) {
  // Pre-flight: byte counts beyond 2^62 B are refused before any int64 arithmetic (util/size_limits.h).
  Issues too_large = CheckSizeLimits(scenario, prepared.sizes);
  if (!too_large.empty()) return Refused(scenario, std::move(too_large));
  // Backstop: the engines' checked arithmetic flags what the pre-flight did not bound. Inverse-search
  // probes keep their own overflows (they count as "does not fit").
  checked::OverflowScope overflow;
  Result r;
  r.params = prepared.params;
  r.gpu.id = scenario.gpu.id;
  r.gpu.name = scenario.gpu.name;
  r.gpu.capacity_bytes = scenario.gpu.memory_bytes;
  SimulateOptions simulate;
  simulate.explain = options.explain;
  simulate.inverse = options.inverse;
  simulate.warnings = true;
  simulate.ranks = true;
  Simulate(scenario, prepared, simulate, &r);
  if (overflow.overflowed()) return Refused(scenario, {OverflowIssue(scenario)});
  AddPeakBand(scenario, prepared, &r);
  r.verdict = VerdictOf(scenario, r);
  return r;
}

}  // namespace

Result Estimate(const Scenario& scenario, const EstimateOptions& options) {
  return EstimatePrepared(scenario, PrepareModel(scenario), options);
}

PreparedModel Prepare(const Scenario& scenario) {
  PreparedModel p;
  Prepared state = PrepareModel(scenario);
  state.model_fingerprint = ModelFingerprint(scenario.model);
  p.state_ = std::make_shared<const Prepared>(std::move(state));
  return p;
}

Result Estimate(const PreparedModel& prepared, const Scenario& scenario, const EstimateOptions& options) {
  if (prepared.state_ == nullptr || !PreparedFor(*prepared.state_, scenario)) return Estimate(scenario, options);
  return EstimatePrepared(scenario, *prepared.state_, options);
}

std::string EstimateSummaryJson(std::string_view scenario_json) {
  Issues warnings;
  Expected<Scenario> scenario = ParseScenarioWithWarnings(scenario_json, &warnings);
  if (!scenario.ok()) return ErrorsToJson(scenario.errors());
  EstimateOptions options;
  options.explain = false;
  options.inverse = false;
  Result r = Estimate(scenario.value(), options);
  if (!r.errors.empty()) return ErrorsToJson(r.errors);
  io::JsonWriter w;
  w.BeginObject().Field("ok", true).Field("peak_allocated_bytes", r.gpu.peak_allocated_bytes)
      .Field("reserved_bytes", r.gpu.reserved_bytes).Field("device_total_bytes", r.gpu.device_total_bytes)
      .Field("capacity_bytes", r.gpu.capacity_bytes).Field("headroom_bytes", r.gpu.headroom_bytes)
      .Field("fits", r.gpu.fits).Field("peak_phase", r.peak_phase).Field("params_total", r.params.total)
      .Field("trainable_params", r.trainable_params).Field("gpu", r.gpu.name).Field("verdict", r.verdict)
      .Field("kv_token_capacity", r.inference.kv_token_capacity).EndObject();
  return w.Take();
}

std::string EstimateJson(std::string_view scenario_json) { return EstimateJson(scenario_json, EstimateOptions{}); }

std::string EstimateJson(std::string_view scenario_json, const EstimateOptions& options) {
  Issues warnings;
  Expected<Scenario> scenario = ParseScenarioWithWarnings(scenario_json, &warnings);
  if (!scenario.ok()) return ErrorsToJson(scenario.errors());
  Result r = Estimate(scenario.value(), options);
  if (!r.errors.empty()) return ErrorsToJson(r.errors);
  r.warnings.insert(r.warnings.begin(), warnings.begin(), warnings.end());
  return ResultToJson(scenario.value(), r);
}

std::string ListPresetsJson() {
  io::Json out = io::Json::array();
  for (const auto& p : Presets()) {
    ParamCounts c = CountParams(p.spec);
    out.push_back({{"id", p.id},
                   {"display_name", p.display_name},
                   {"family", p.family},
                   {"size_label", p.size_label},
                   {"ladder", p.ladder},
                   {"model_type", p.spec.model_type},
                   {"params", c.total},
                   {"active_params", c.active_per_token}});
  }
  return io::Dump(out);
}

std::string ListGpusJson() {
  const io::Json& doc = GpusDocument();
  auto it = doc.find("gpus");
  return io::Dump(it != doc.end() ? *it : io::Json::array());
}

std::string ParseHfConfigJson(std::string_view config_json) {
  io::Json cfg;
  Issues errors;
  if (!io::ParseUserJson(config_json, "model", "config", &cfg, &errors)) return ErrorsToJson(errors);
  Issues warnings;
  Expected<ModelSpec> spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  if (!spec.ok()) {
    errors = spec.errors();
    io::CapIssues(&errors);
    return ErrorsToJson(errors);
  }
  Issues too_large = CheckModelSizeLimits(spec.value(), "model");
  if (!too_large.empty()) return ErrorsToJson(too_large);
  io::Json j;
  j["ok"] = true;
  j["model"] = io::Json::parse(ModelSummaryJson(spec.value()), nullptr, false);
  j["params"] = io::Json::parse(ParamsJson(CountParams(spec.value())), nullptr, false);
  io::Json w = io::Json::array();
  for (const auto& i : warnings) w.push_back({{"code", i.code}, {"field_path", i.field_path}, {"message", i.message}});
  j["warnings"] = w;
  return io::Dump(j);
}

// Generated from the field table (scenario/fields.h) once; docs/scenario.schema.json is a checked copy.
std::string SchemaJson() {
  static const std::string schema = fields::GenerateSchemaJson();
  return schema;
}

// Semantic version + a hash of the core's sources and data, so the page's tests can check that
// the WASM module and the native CLI they compare come from the same build.
std::string VersionString() { return std::string("0.1.0+") + vramplan_build_id; }

}  // namespace vramplan
