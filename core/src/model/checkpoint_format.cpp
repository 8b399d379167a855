#include "model/checkpoint_format.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <initializer_list>
#include <string>

namespace vramplan {
namespace {

using io::Json;

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string Text(const Json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() && it->get_ref<const std::string&>().size() <= 64 ? it->get<std::string>() : std::string();
}

int64_t Integer(const Json& obj, std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    auto it = obj.find(key);
    if (it != obj.end() && it->is_number_integer()) return it->get<int64_t>();
  }
  return 0;
}

bool Flag(const Json& obj, std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    auto it = obj.find(key);
    if (it != obj.end() && it->is_boolean() && it->get<bool>()) return true;
  }
  return false;
}

// compressed-tensors (llm-compressor): config_groups.<group>.weights {num_bits, type}; the first
// group with a weight scheme decides (vLLM CompressedTensorsConfig._get_scheme_from_parts).
CheckpointFormat CompressedTensors(const Json& qc) {
  CheckpointFormat f;
  f.description = "compressed-tensors";
  auto groups = qc.find("config_groups");
  if (groups == qc.end() || !groups->is_object()) return f;
  for (const Json& group : *groups) {
    if (!group.is_object()) continue;
    auto w = group.find("weights");
    if (w == group.end() || !w->is_object()) continue;
    const int64_t bits = Integer(*w, {"num_bits"});
    const std::string type = Lower(Text(*w, "type"));
    f.description += ", " + std::to_string(bits) + "-bit " + (type.empty() ? "int" : type) + " weights";
    if (bits == 8 && type == "float") f.weights = "fp8";
    if (bits == 8 && (type == "int" || type.empty())) f.weights = "int8";
    if (bits == 4 && (type == "int" || type.empty())) f.weights = "gptq_4bit";
    return f;
  }
  return f;
}

}  // namespace

CheckpointFormat CheckpointFormatFromConfig(const Json& config) {
  CheckpointFormat f;
  if (!config.is_object()) return f;
  auto q = config.find("quantization_config");
  if (q == config.end() || !q->is_object()) return f;
  const std::string method = Lower(Text(*q, "quant_method"));
  if (method == "bitnet") return f;
  if (method == "compressed-tensors") return CompressedTensors(*q);
  const int64_t bits = Integer(*q, {"bits", "w_bit"});
  f.description = method.empty() ? std::string("an unnamed method") : method;
  if (bits > 0) f.description += ", " + std::to_string(bits) + "-bit";
  if (method == "awq" && bits == 4) f.weights = "awq_4bit";
  if (method == "gptq" && bits == 4) f.weights = "gptq_4bit";
  if (method == "gptq" && bits == 8) f.weights = "gptq_8bit";
  if (method == "fp8" || method == "fbgemm_fp8") f.weights = "fp8";
  if (method == "modelopt" && Lower(Text(*q, "quant_algo")) == "fp8") f.weights = "fp8";
  if (method == "mxfp4") f.weights = "mxfp4";
  if (method == "bitsandbytes") {
    // BitsAndBytesConfig serializes load_in_4bit / load_in_8bit (older files: _load_in_4bit).
    if (Flag(*q, {"load_in_4bit", "_load_in_4bit"})) f.weights = "nf4", f.description += ", 4-bit";
    else if (Flag(*q, {"load_in_8bit", "_load_in_8bit"})) f.weights = "int8", f.description += ", 8-bit";
  }
  return f;
}

}  // namespace vramplan
