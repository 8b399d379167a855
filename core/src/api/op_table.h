// One row of an op table and what every table does with it: find the op, run it, wrap its payload
// in the envelope, and name the allowed ops when the op is unknown. Two tables use it: the full one
// (api/ops.cpp: CallOp, the CLI and the tests) and the core one (api/core_ops.cpp: CallCoreOp,
// the page's WASM module), which leaves out the planner and the launch-config code so that a
// module linking only CallCoreOp does not carry them.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace vramplan::api {

struct Op {
  const char* name;
  std::string (*run)(std::string_view request);
  // The key the payload goes under in the envelope; nullptr when the reply is the envelope itself.
  const char* payload_key;
  bool payload_is_text;  // the payload is a plain string (quoted in the envelope)
};

struct OpTable {
  const Op* ops;
  std::size_t count;
  // Extra words for the unknown-op message (which module has what is missing here); may be empty.
  const char* unknown_op_hint;
};

// CallOp / CallOpPayload / OpNames (vramplan/api.h) over the given table.
std::string CallOpIn(const OpTable& table, std::string_view name, std::string_view request_json);
std::string CallOpPayloadIn(const OpTable& table, std::string_view name, std::string_view request_json);
std::vector<std::string> OpNamesIn(const OpTable& table);

// The core ops' functions (api/core_ops.cpp), named so that the full table lists the same ones.
std::string EstimateOp(std::string_view request);
std::string EstimateFastOp(std::string_view request);
std::string SummaryOp(std::string_view request);
std::string PresetsOp(std::string_view request);
std::string GpusOp(std::string_view request);
std::string SchemaOp(std::string_view request);
std::string ParseConfigOp(std::string_view request);
std::string VersionOp(std::string_view request);

}  // namespace vramplan::api
