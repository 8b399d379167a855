// The op table: the one serialized entry point of the core. The CLI (core/cli), the WASM binding
// (wasm/bindings.cpp: call(op, json)) and the tests all run the same ops through it.
//
//   CallOp(op, request_json) -> {"ok": true, ...}
//                             | {"ok": false, "errors": [{"code", "field_path", "message"}]}
//
//   op             request            reply (besides "ok": true)
//   estimate       scenario (v1)      the full result: every term, explain strings, timeline, the
//                                     inverse answers (max micro-batch/sequence; max context/batch,
//                                     smallest format, fewest GPUs), the normalized scenario
//   estimate_fast  scenario           the same without the inverse searches (for keystrokes)
//   summary        scenario           the totals only (peak_allocated_bytes, reserved_bytes,
//                                     device_total_bytes, capacity_bytes, headroom_bytes, fits,
//                                     peak_phase, params_total, trainable_params, gpu)
//   presets        ignored            "presets": [{id, display_name, family, size_label, ...}]
//   gpus           ignored            "gpus": the GPU catalogue
//   schema         ignored            "schema": the scenario's JSON Schema
//   parse_config   HF config.json     "model", "params", "warnings"
//   version        ignored            "version": "0.1.0+<build id>"
//   import         {"format": "auto"  "format" (the one read), "scenario" (without "model" when the
//                   | name, "text"}   config names no preset), "complete", "notes": [{status, key,
//                                     message}]: read / default / ignored / unsupported / model / extra
//   export         {"to": name,       "format", "text" (the config to launch; what the format cannot
//                   "scenario"}       express rides in a "vramplan" comment or member), "notes"
//                  Formats: vllm, llama_cpp, llamafactory, axolotl, deepspeed, hf, accelerate, torchtune
//                  (docs/planner.md, "Formats and their keys").
//
// An unknown op is an error value (code "unknown_op", field_path "op") naming the allowed ops; a
// request that is not valid JSON is the op's own error value (code "invalid_json"). Nothing throws.
// docs/api.md describes each op.
//
// The core table (CallCoreOp) is the same minus plan, import and export: what the page's WASM
// module (vramplan.wasm) binds, so that its first download carries neither the planner nor the
// launch-config code; the on-demand vramplan-full module binds CallOp (wasm/CMakeLists.txt). An
// op the core table lacks is its unknown_op error, which says where the op is.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace vramplan {

// Runs one op of the table on a JSON request and returns its JSON envelope.
std::string CallOp(std::string_view op, std::string_view request_json);

// The op's reply as the binding's older names return it: the same envelope for the estimate ops
// and parse_config, the bare payload for the listing ops (the presets and GPU arrays, the schema
// document, the version string, unquoted). An unknown op returns CallOp's error envelope.
std::string CallOpPayload(std::string_view op, std::string_view request_json);

// The op names, in table order.
std::vector<std::string> OpNames();

// CallOp, CallOpPayload and OpNames over the core table: every op but plan, import and export,
// each replying exactly as through CallOp.
std::string CallCoreOp(std::string_view op, std::string_view request_json);
std::string CallCoreOpPayload(std::string_view op, std::string_view request_json);
std::vector<std::string> CoreOpNames();

}  // namespace vramplan
