// Thin Embind shim: strings in, strings out. The core returns errors as values
// ({"ok":false,"errors":[...]}), so nothing here can throw into JavaScript.
#include <string>

#include <emscripten/bind.h>

#include "vramplan/estimate.h"

namespace {

std::string Estimate(const std::string& scenario_json) { return vramplan::EstimateJson(scenario_json); }
// The full result without the inverse searches (what fits: max batch/sequence/context...), for
// redrawing on every keystroke; the page asks for those in a worker.
std::string EstimateFast(const std::string& scenario_json) {
  vramplan::EstimateOptions options;
  options.inverse = false;
  return vramplan::EstimateJson(scenario_json, options);
}
std::string EstimateSummary(const std::string& scenario_json) { return vramplan::EstimateSummaryJson(scenario_json); }
std::string ListPresets() { return vramplan::ListPresetsJson(); }
std::string ListGpus() { return vramplan::ListGpusJson(); }
std::string ParseHfConfig(const std::string& config_json) { return vramplan::ParseHfConfigJson(config_json); }
std::string Schema() { return vramplan::SchemaJson(); }
std::string Version() { return vramplan::VersionString(); }

}  // namespace

EMSCRIPTEN_BINDINGS(vramplan) {
  emscripten::function("estimate", &Estimate);
  emscripten::function("estimateSummary", &EstimateSummary);
  emscripten::function("estimateFast", &EstimateFast);
  emscripten::function("listPresets", &ListPresets);
  emscripten::function("listGpus", &ListGpus);
  emscripten::function("parseHfConfig", &ParseHfConfig);
  emscripten::function("schema", &Schema);
  emscripten::function("version", &Version);
}
