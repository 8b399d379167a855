// The core op table (CallCoreOp, vramplan/api.h): every op but plan, import and export. The page's
// WASM module binds only this table, so the linker leaves the planner and the launch-config code
// (reached only through those three rows of the full table, api/ops.cpp) out of vramplan.wasm;
// they live in the on-demand vramplan-full module (wasm/CMakeLists.txt, docs/api.md).
#include <array>

#include "api/op_table.h"
#include "vramplan/api.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace api {

std::string EstimateOp(std::string_view request) { return EstimateJson(request); }
std::string EstimateFastOp(std::string_view request) {
  EstimateOptions options;
  options.inverse = false;
  return EstimateJson(request, options);
}
std::string SummaryOp(std::string_view request) { return EstimateSummaryJson(request); }
std::string PresetsOp(std::string_view) { return ListPresetsJson(); }
std::string GpusOp(std::string_view) { return ListGpusJson(); }
std::string SchemaOp(std::string_view) { return SchemaJson(); }
std::string ParseConfigOp(std::string_view request) { return ParseHfConfigJson(request); }
std::string VersionOp(std::string_view) { return VersionString(); }

}  // namespace api

namespace {

const std::array<api::Op, 8> kCoreOps = {{
    {"estimate", &api::EstimateOp, nullptr, false},
    {"estimate_fast", &api::EstimateFastOp, nullptr, false},
    {"summary", &api::SummaryOp, nullptr, false},
    {"presets", &api::PresetsOp, "presets", false},
    {"gpus", &api::GpusOp, "gpus", false},
    {"schema", &api::SchemaOp, "schema", false},
    {"parse_config", &api::ParseConfigOp, nullptr, false},
    {"version", &api::VersionOp, "version", true},
}};

const api::OpTable kCoreTable = {kCoreOps.data(), kCoreOps.size(),
                                 "(plan, import and export are in the full table: CallOp, the CLI, the vramplan-full WASM module)"};

}  // namespace

std::string CallCoreOp(std::string_view name, std::string_view request_json) { return api::CallOpIn(kCoreTable, name, request_json); }
std::string CallCoreOpPayload(std::string_view name, std::string_view request_json) {
  return api::CallOpPayloadIn(kCoreTable, name, request_json);
}
std::vector<std::string> CoreOpNames() { return api::OpNamesIn(kCoreTable); }

}  // namespace vramplan
