// estimate(): parse -> dispatch to the training or inference engine -> device overheads -> JSON.
#include "vramplan/estimate.h"

#include "gpu/device_overhead.h"
#include "inference/inference.h"
#include "io/input_limits.h"
#include "io/json_reader.h"
#include "io/json_writer.h"
#include "io/result_json.h"
#include "io/scenario_json.h"
#include "model/catalog.h"
#include "model/hf_config.h"
#include "scenario/fields.h"
#include "parallel/shard.h"
#include "parallel/topology.h"
#include "train/train_step.h"
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

}  // namespace

Result Estimate(const Scenario& scenario, const EstimateOptions& options) {
  // Pre-flight: byte counts beyond 2^62 B are refused before any int64 arithmetic (util/size_limits.h).
  Issues too_large = CheckSizeLimits(scenario);
  if (!too_large.empty()) return Refused(scenario, std::move(too_large));
  // Backstop: the engines' checked arithmetic flags what the pre-flight did not bound. Inverse-search
  // probes keep their own overflows (they count as "does not fit").
  checked::OverflowScope overflow;
  Result r;
  r.params = CountParams(scenario.model);
  r.gpu.id = scenario.gpu.id;
  r.gpu.name = scenario.gpu.name;
  r.gpu.capacity_bytes = scenario.gpu.memory_bytes;
  // The topology, validated by the reader, gives the distinct rank roles (parallel/topology.h).
  // Every rank of a job is alike today: its one role is estimated once, and that estimate is
  // `gpu`, `cpu` and `timeline`. Roles that differ (pipeline stages, expert ranks) will each be
  // estimated through their own shard, and `gpu` will be the worst of them (WorstRank).
  const Topology topology = TopologyOf(scenario);
  const RankRole& role = topology.roles.front();
  const RankShard shard = ShardFor(scenario, topology, role);
  if (scenario.mode == Mode::kTrain) {
    EstimateTraining(scenario, shard, &r, options.explain);
    if (options.inverse) SolveTrainingCapacity(scenario, &r);
  } else {
    EstimateInference(scenario, shard, &r, options.inverse);
  }
  ApplyDeviceOverheads(scenario, &r, options.explain);
  r.ranks.push_back(RankResultOf(role, r));  // gpu == WorstRank(r.ranks): the one role
  r.cpu.node_processes = topology.host_processes_per_node;
  r.cpu.node_bytes = HostBytesPerNode(topology, r.ranks);
  if (overflow.overflowed()) return Refused(scenario, {OverflowIssue(scenario)});
  return r;
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
      .Field("trainable_params", r.trainable_params).Field("gpu", r.gpu.name).EndObject();
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
