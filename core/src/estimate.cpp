// estimate(): parse -> dispatch to the training or inference engine -> device overheads -> JSON.
#include "vramplan/estimate.h"

#include "gpu/device_overhead.h"
#include "inference/inference.h"
#include "io/json_reader.h"
#include "io/result_json.h"
#include "io/scenario_json.h"
#include "model/catalog.h"
#include "model/hf_config.h"
#include "train/train_step.h"

extern const unsigned char vramplan_schema_json[];
extern const unsigned long long vramplan_schema_json_size;

namespace vramplan {

Result Estimate(const Scenario& scenario) {
  Result r;
  r.params = CountParams(scenario.model);
  r.gpu.id = scenario.gpu.id;
  r.gpu.name = scenario.gpu.name;
  r.gpu.capacity_bytes = scenario.gpu.memory_bytes;
  if (scenario.mode == Mode::kTrain) {
    EstimateTraining(scenario, &r);
  } else {
    EstimateInference(scenario, &r);
  }
  ApplyDeviceOverheads(scenario, &r);
  return r;
}

std::string EstimateJson(std::string_view scenario_json) {
  Issues warnings;
  Expected<Scenario> scenario = ParseScenarioWithWarnings(scenario_json, &warnings);
  if (!scenario.ok()) return ErrorsToJson(scenario.errors());
  Result r = Estimate(scenario.value());
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
  io::Json cfg = io::Json::parse(config_json.begin(), config_json.end(), nullptr, false);
  if (cfg.is_discarded()) return ErrorsToJson({Issue{"invalid_json", "model", "the config is not valid JSON"}});
  Issues warnings;
  Expected<ModelSpec> spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  if (!spec.ok()) return ErrorsToJson(spec.errors());
  io::Json j;
  j["ok"] = true;
  j["model"] = io::Json::parse(ModelSummaryJson(spec.value()), nullptr, false);
  j["params"] = io::Json::parse(ParamsJson(CountParams(spec.value())), nullptr, false);
  io::Json w = io::Json::array();
  for (const auto& i : warnings) w.push_back({{"code", i.code}, {"field_path", i.field_path}, {"message", i.message}});
  j["warnings"] = w;
  return io::Dump(j);
}

std::string SchemaJson() { return std::string(reinterpret_cast<const char*>(vramplan_schema_json), vramplan_schema_json_size); }

std::string VersionString() { return "0.1.0"; }

}  // namespace vramplan
