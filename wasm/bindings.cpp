// Thin Embind shim of the page's module (vramplan.mjs + .wasm): strings in, strings out, through
// the core's op table without plan, import and export (CallCoreOp, vramplan/api.h), so the linker
// leaves the planner and the launch-config code out of the page's first download; those three ops
// are in the on-demand module (bindings_full.cpp). The core returns errors as values
// ({"ok":false,"errors":[...]}), so nothing here can throw into JavaScript.
#include <string>

#include <emscripten/bind.h>

#include "vramplan/api.h"

namespace {

// call(op, request_json) -> the op's JSON envelope: the one entry point.
std::string Call(const std::string& op, const std::string& request_json) { return vramplan::CallCoreOp(op, request_json); }

// The older names, kept for the page: each is one op of the table, replying as it always did
// (the listing ops' bare payloads: vramplan::CallCoreOpPayload).
std::string Estimate(const std::string& scenario_json) { return vramplan::CallCoreOpPayload("estimate", scenario_json); }
std::string EstimateFast(const std::string& scenario_json) { return vramplan::CallCoreOpPayload("estimate_fast", scenario_json); }
std::string EstimateSummary(const std::string& scenario_json) { return vramplan::CallCoreOpPayload("summary", scenario_json); }
std::string ListPresets() { return vramplan::CallCoreOpPayload("presets", ""); }
std::string ListGpus() { return vramplan::CallCoreOpPayload("gpus", ""); }
std::string ParseHfConfig(const std::string& config_json) { return vramplan::CallCoreOpPayload("parse_config", config_json); }
std::string Schema() { return vramplan::CallCoreOpPayload("schema", ""); }
std::string Version() { return vramplan::CallCoreOpPayload("version", ""); }

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
}
