// The on-demand module's Embind shim (build-wasm/site/vramplan-full.mjs + .wasm): every op of the
// core's table through call(op, json), as the CLI's `vramplan call`, including plan, import and
// export, which the page's module (bindings.cpp) leaves out to keep the first download small.
// Loaded by web/full-core.js for the launch-config box and the worker's planner.
#include <string>

#include <emscripten/bind.h>

#include "vramplan/api.h"

namespace {

std::string Call(const std::string& op, const std::string& request_json) { return vramplan::CallOp(op, request_json); }
// plan(request_json): the `plan` op's envelope (the name the page module had before the split).
std::string Plan(const std::string& request_json) { return vramplan::CallOp("plan", request_json); }
std::string Version() { return vramplan::CallOpPayload("version", ""); }

}  // namespace

EMSCRIPTEN_BINDINGS(vramplan_full) {
  emscripten::function("call", &Call);
  emscripten::function("plan", &Plan);
  emscripten::function("version", &Version);
}
