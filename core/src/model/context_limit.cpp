#include "model/context_limit.h"

#include <cmath>
#include <limits>

#include "format.h"

namespace vramplan {
namespace {

// A positive finite number under `key`, or NaN.
double Number(const io::Json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return std::nan("");
  const double v = it->get<double>();
  return std::isfinite(v) && v > 0 ? v : std::nan("");
}

std::string Plain(double v) {
  if (v == std::floor(v) && v < 9e15) return WithCommas(static_cast<int64_t>(v));
  std::string s = std::to_string(v);
  while (!s.empty() && s.back() == '0') s.pop_back();
  return s;
}

}  // namespace

ContextLimit ContextLimitFromConfig(const io::Json& config, const std::string& model_type) {
  ContextLimit out;
  if (!config.is_object()) return out;
  // vLLM's possible_keys, in its order; the smallest present wins.
  static const char* const kKeys[] = {"max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
                                      "max_target_positions", "max_sequence_length", "max_seq_length", "seq_len"};
  double derived = std::numeric_limits<double>::infinity();
  std::string key_used;
  for (const char* key : kKeys) {
    const double v = Number(config, key);
    if (!std::isnan(v) && v < derived) derived = v, key_used = key;
  }
  if (std::isinf(derived)) {
    // Falcon's config.json names no length; transformers' FalconConfig defaults
    // max_position_embeddings to 2048 (configuration_falcon.py), which vLLM reads.
    if (model_type != "falcon") return out;
    derived = 2048, key_used = "max_position_embeddings (FalconConfig default)";
  }
  out.source = key_used + " " + Plain(derived);
  auto rope = config.find("rope_scaling");
  if (rope != config.end() && rope->is_object() && model_type.find("gemma3") == std::string::npos) {
    // vLLM's patch_rope_scaling maps the legacy "type" key to "rope_type".
    std::string type;
    for (const char* k : {"rope_type", "type"}) {
      auto t = rope->find(k);
      if (t != rope->end() && t->is_string()) {
        type = t->get<std::string>();
        break;
      }
    }
    if (!type.empty() && type != "su" && type != "longrope" && type != "llama3") {
      double factor = Number(*rope, "factor");
      if (std::isnan(factor)) factor = 1.0;  // rope_type "default" has no factor
      if (type == "yarn") {
        const double original = Number(*rope, "original_max_position_embeddings");
        if (!std::isnan(original)) derived = original, out.source = "original_max_position_embeddings " + Plain(original);
      }
      if (factor != 1.0) {
        derived *= factor;
        out.source += " x " + type + " factor " + Plain(factor);
      }
    }
  }
  constexpr double kMax = 9.0e15;
  out.tokens = derived >= kMax ? static_cast<int64_t>(kMax) : static_cast<int64_t>(derived);
  if (out.tokens <= 0) out = ContextLimit{};
  return out;
}

}  // namespace vramplan
