// The op table (vramplan/api.h). Each op is a function from the request text to its reply; the
// estimate ops and parse_config already reply with the envelope, the listing ops reply with a bare
// payload that CallOp wraps under its key.
#include "vramplan/api.h"

#include <array>

#include "io/json_writer.h"
#include "io/message_text.h"
#include "io/result_json.h"
#include "launch/launch_ops.h"
#include "vramplan/estimate.h"
#include "vramplan/plan.h"

namespace vramplan {
namespace {

struct Op {
  const char* name;
  std::string (*run)(std::string_view request);
  // The key the payload goes under in the envelope; nullptr when the reply is the envelope itself.
  const char* payload_key;
  bool payload_is_text;  // the payload is a plain string (quoted in the envelope)
};

std::string EstimateFast(std::string_view request) {
  EstimateOptions options;
  options.inverse = false;
  return EstimateJson(request, options);
}

// Every op of the table, one line each.
const std::array<Op, 11> kOps = {{
    {"estimate", [](std::string_view r) { return EstimateJson(r); }, nullptr, false},
    {"estimate_fast", &EstimateFast, nullptr, false},
    {"summary", &EstimateSummaryJson, nullptr, false},
    {"presets", [](std::string_view) { return ListPresetsJson(); }, "presets", false},
    {"gpus", [](std::string_view) { return ListGpusJson(); }, "gpus", false},
    {"schema", [](std::string_view) { return SchemaJson(); }, "schema", false},
    {"parse_config", &ParseHfConfigJson, nullptr, false},
    {"plan", &PlanJson, nullptr, false},
    {"version", [](std::string_view) { return VersionString(); }, "version", true},
    {"import", &launch::ImportJson, nullptr, false},
    {"export", &launch::ExportJson, nullptr, false},
}};

const Op* FindOp(std::string_view name) {
  for (const Op& op : kOps) {
    if (name == op.name) return &op;
  }
  return nullptr;
}

std::string UnknownOp(std::string_view name) {
  std::string allowed;
  for (const Op& op : kOps) allowed += std::string(allowed.empty() ? "" : ", ") + op.name;
  return ErrorsToJson({Issue{"unknown_op", "op", "unknown op " + io::Quote(name, 80) + "; the ops are: " + allowed}});
}

}  // namespace

std::string CallOp(std::string_view name, std::string_view request_json) {
  const Op* op = FindOp(name);
  if (op == nullptr) return UnknownOp(name);
  std::string payload = op->run(request_json);
  if (op->payload_key == nullptr) return payload;
  if (op->payload_is_text) {
    io::JsonWriter w;
    w.BeginObject().Field("ok", true).Field(op->payload_key, payload).EndObject();
    return w.Take();
  }
  // The payload is already JSON: spliced in, not parsed again.
  std::string out;
  out.reserve(payload.size() + 32);
  out += "{\"ok\":true,\"";
  out += op->payload_key;
  out += "\":";
  out += payload;
  out += '}';
  return out;
}

std::string CallOpPayload(std::string_view name, std::string_view request_json) {
  const Op* op = FindOp(name);
  if (op == nullptr) return UnknownOp(name);
  return op->run(request_json);
}

std::vector<std::string> OpNames() {
  std::vector<std::string> names;
  for (const Op& op : kOps) names.emplace_back(op.name);
  return names;
}

}  // namespace vramplan
