// The full op table (vramplan/api.h): the core ops (api/core_ops.cpp) and the planner's and the
// launch configs' ops, in the order the CLI lists them. Each op is a function from the request
// text to its reply; the estimate ops and parse_config already reply with the envelope, the
// listing ops reply with a bare payload that CallOp wraps under its key (api/op_table.cpp).
#include "vramplan/api.h"

#include <array>

#include "api/op_table.h"
#include "launch/launch_ops.h"
#include "vramplan/plan.h"

namespace vramplan {
namespace {

// Every op of the table, one line each; the core rows are the core table's functions.
const std::array<api::Op, 11> kOps = {{
    {"estimate", &api::EstimateOp, nullptr, false},
    {"estimate_fast", &api::EstimateFastOp, nullptr, false},
    {"summary", &api::SummaryOp, nullptr, false},
    {"presets", &api::PresetsOp, "presets", false},
    {"gpus", &api::GpusOp, "gpus", false},
    {"schema", &api::SchemaOp, "schema", false},
    {"parse_config", &api::ParseConfigOp, nullptr, false},
    {"plan", &PlanJson, nullptr, false},
    {"version", &api::VersionOp, "version", true},
    {"import", &launch::ImportJson, nullptr, false},
    {"export", &launch::ExportJson, nullptr, false},
}};

const api::OpTable kTable = {kOps.data(), kOps.size(), nullptr};

}  // namespace

std::string CallOp(std::string_view name, std::string_view request_json) { return api::CallOpIn(kTable, name, request_json); }
std::string CallOpPayload(std::string_view name, std::string_view request_json) {
  return api::CallOpPayloadIn(kTable, name, request_json);
}
std::vector<std::string> OpNames() { return api::OpNamesIn(kTable); }

}  // namespace vramplan
