#include "model/context_limit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

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

// The rope blocks vLLM scales by: transformers v4's `rope_scaling`, or v5's `rope_parameters`,
// which is one block or, for models with several attention types, a block per layer type
// ({"full_attention": {...}, "sliding_attention": {...}}; vLLM is_rope_parameters_nested).
std::vector<const io::Json*> RopeBlocks(const io::Json& config) {
  std::vector<const io::Json*> blocks;
  for (const char* key : {"rope_scaling", "rope_parameters"}) {
    auto it = config.find(key);
    if (it == config.end() || !it->is_object() || it->empty()) continue;
    const bool nested = std::all_of(it->begin(), it->end(), [](const io::Json& v) { return v.is_object(); });
    if (nested) {
      for (const io::Json& block : *it) blocks.push_back(&block);
    } else {
      blocks.push_back(&*it);
    }
    break;  // v4 configs carry rope_scaling; vLLM's patch_rope_parameters copies it to rope_parameters
  }
  return blocks;
}

// Every rope type but su / longrope / llama3 multiplies by its factor (the last block's, as vLLM
// assumes one factor for all layer types); yarn starts from original_max_position_embeddings.
void ApplyRopeScaling(const std::vector<const io::Json*>& blocks, double& derived, std::string& source) {
  double factor = 1.0;
  std::string scaled_type;
  for (const io::Json* rope : blocks) {
    std::string type;  // vLLM's patch_rope_scaling maps the legacy "type" key to "rope_type"
    for (const char* k : {"rope_type", "type"}) {
      auto t = rope->find(k);
      if (t != rope->end() && t->is_string()) {
        type = t->get<std::string>();
        break;
      }
    }
    if (type.empty() || type == "su" || type == "longrope" || type == "llama3") continue;
    const double f = Number(*rope, "factor");
    if (!std::isnan(f)) factor = f, scaled_type = type;  // rope_type "default" has no factor
    if (type == "yarn") {
      const double original = Number(*rope, "original_max_position_embeddings");
      if (!std::isnan(original)) derived = original, source = "original_max_position_embeddings " + Plain(original);
    }
  }
  if (factor != 1.0) {
    derived *= factor;
    source += " x " + scaled_type + " factor " + Plain(factor);
  }
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
  // Command-R / Cohere2 name their real length in model_max_length (8,192 positions, 131,072
  // model_max_length in c4ai-command-r-v01): vLLM takes it over the smaller keys.
  const double model_max_length = Number(config, "model_max_length");
  if (!std::isnan(model_max_length)) derived = model_max_length, out.source = "model_max_length " + Plain(derived);
  if (model_type.find("gemma3") == std::string::npos) ApplyRopeScaling(RopeBlocks(config), derived, out.source);
  constexpr double kMax = 9.0e15;
  out.tokens = derived >= kMax ? static_cast<int64_t>(kMax) : static_cast<int64_t>(derived);
  if (out.tokens <= 0) out = ContextLimit{};
  return out;
}

}  // namespace vramplan
