// The op-table mechanics shared by the full and the core tables (api/op_table.h).
#include "api/op_table.h"

#include "io/json_writer.h"
#include "io/message_text.h"
#include "io/result_json.h"

namespace vramplan::api {
namespace {

const Op* FindOp(const OpTable& table, std::string_view name) {
  for (std::size_t i = 0; i < table.count; ++i) {
    if (name == table.ops[i].name) return &table.ops[i];
  }
  return nullptr;
}

std::string UnknownOp(const OpTable& table, std::string_view name) {
  std::string allowed;
  for (std::size_t i = 0; i < table.count; ++i) allowed += std::string(allowed.empty() ? "" : ", ") + table.ops[i].name;
  std::string message = "unknown op " + io::Quote(name, 80) + "; the ops are: " + allowed;
  if (table.unknown_op_hint != nullptr && *table.unknown_op_hint != '\0') message += std::string(" ") + table.unknown_op_hint;
  return ErrorsToJson({Issue{"unknown_op", "op", message}});
}

}  // namespace

std::string CallOpIn(const OpTable& table, std::string_view name, std::string_view request_json) {
  const Op* op = FindOp(table, name);
  if (op == nullptr) return UnknownOp(table, name);
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

std::string CallOpPayloadIn(const OpTable& table, std::string_view name, std::string_view request_json) {
  const Op* op = FindOp(table, name);
  if (op == nullptr) return UnknownOp(table, name);
  return op->run(request_json);
}

std::vector<std::string> OpNamesIn(const OpTable& table) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < table.count; ++i) names.emplace_back(table.ops[i].name);
  return names;
}

}  // namespace vramplan::api
