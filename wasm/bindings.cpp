// Thin Embind shim: strings in, strings out, through the core's op table (vramplan/api.h). The
// core returns errors as values ({"ok":false,"errors":[...]}), so nothing here can throw into
// JavaScript.
#include <string>

#include <emscripten/bind.h>

#include "vramplan/api.h"

namespace {

// call(op, request_json) -> the op's JSON envelope: the one entry point.
std::string Call(const std::string& op, const std::string& request_json) { return vramplan::CallOp(op, request_json); }

// The older names, kept for the page: each is one op of the table, replying as it always did
// (the listing ops' bare payloads: vramplan::CallOpPayload).
std::string Estimate(const std::string& scenario_json) { return vramplan::CallOpPayload("estimate", scenario_json); }
std::string EstimateFast(const std::string& scenario_json) { return vramplan::CallOpPayload("estimate_fast", scenario_json); }
std::string EstimateSummary(const std::string& scenario_json) { return vramplan::CallOpPayload("summary", scenario_json); }
std::string ListPresets() { return vramplan::CallOpPayload("presets", ""); }
std::string ListGpus() { return vramplan::CallOpPayload("gpus", ""); }
std::string ParseHfConfig(const std::string& config_json) { return vramplan::CallOpPayload("parse_config", config_json); }
std::string Schema() { return vramplan::CallOpPayload("schema", ""); }
std::string Version() { return vramplan::CallOpPayload("version", ""); }
// plan(request_json): the plans that make the job fit (vramplan/plan.h), the `plan` op's envelope.
std::string Plan(const std::string& request_json) { return vramplan::CallOp("plan", request_json); }

}  // namespace

EMSCRIPTEN_BINDINGS(vramplan) {
  emscripten::function("call", &Call);
  emscripten::function("estimate", &Estimate);
  emscripten::function("estimateSummary", &EstimateSummary);
  emscripten::function("estimateFast", &EstimateFast);
  emscripten::function("listPresets", &ListPresets);
  emscripten::function("listGpus", &ListGpus);
  emscripten::function("parseHfConfig", &ParseHfConfig);
  emscripten::function("schema", &Schema);
  emscripten::function("version", &Version);
  emscripten::function("plan", &Plan);
}
