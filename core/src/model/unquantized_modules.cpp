#include "model/unquantized_modules.h"

namespace vramplan {
namespace {

constexpr size_t kMaxEntries = 4096;
constexpr size_t kMaxEntryLength = 200;

// '*' matches any run (including dots); everything else literally.
bool Glob(const char* p, const char* s) {
  if (*p == '\0') return *s == '\0';
  if (*p == '*') {
    for (const char* t = s;; ++t) {
      if (Glob(p + 1, t)) return true;
      if (*t == '\0') return false;
    }
  }
  return *s != '\0' && *p == *s && Glob(p + 1, s + 1);
}

}  // namespace

std::vector<std::string> UnquantizedModulesFromConfig(const io::Json& config) {
  std::vector<std::string> out;
  if (!config.is_object()) return out;
  auto q = config.find("quantization_config");
  if (q == config.end() || !q->is_object()) return out;
  for (const char* key : {"modules_to_not_convert", "ignored_layers", "ignore"}) {
    auto list = q->find(key);
    if (list == q->end() || !list->is_array()) continue;
    for (const auto& e : *list) {
      if (!e.is_string() || out.size() >= kMaxEntries) continue;
      std::string name = e.get<std::string>();
      if (name.empty() || name.size() > kMaxEntryLength || name.rfind("re:", 0) == 0) continue;
      out.push_back(std::move(name));
    }
  }
  return out;
}

std::string QuantizationMethodFromConfig(const io::Json& config) {
  if (!config.is_object()) return "";
  auto q = config.find("quantization_config");
  if (q == config.end() || !q->is_object()) return "";
  auto m = q->find("quant_method");
  return m != q->end() && m->is_string() && m->get_ref<const std::string&>().size() <= 64 ? m->get<std::string>() : "";
}

bool ListDescribesFormat(const std::string& method, WeightFormat f) {
  using W = WeightFormat;
  if (method == "fp8" || method == "fbgemm_fp8") return f == W::kFp8;
  if (method == "mxfp4") return f == W::kMxfp4;
  if (method == "gptq") return f == W::kGptq4 || f == W::kGptq8;
  if (method == "awq") return f == W::kAwq4;
  if (method == "bitsandbytes") return f == W::kInt8 || f == W::kNf4;
  return true;
}

std::string LinearModulePath(int64_t layer, const LinearSpec& l) {
  std::string parent;
  switch (l.role) {
    case ModuleRole::kAttention: parent = "self_attn"; break;
    case ModuleRole::kExperts: parent = "mlp.experts"; break;
    case ModuleRole::kSharedExperts: parent = "mlp.shared_experts"; break;
    default: parent = "mlp"; break;
  }
  return "model.layers." + std::to_string(layer) + "." + parent + "." + std::string(l.name);
}

bool KeptUnquantized(const std::vector<std::string>& entries, const std::string& path) {
  for (const std::string& e : entries) {
    if (e.find('*') == std::string::npos) {
      if (path.find(e) != std::string::npos) return true;
      continue;
    }
    // The whole path, or a prefix that ends where a module name ends.
    for (size_t end = path.find('.'); ; end = path.find('.', end + 1)) {
      const std::string prefix = end == std::string::npos ? path : path.substr(0, end);
      if (Glob(e.c_str(), prefix.c_str())) return true;
      if (end == std::string::npos) break;
    }
  }
  return false;
}

}  // namespace vramplan
