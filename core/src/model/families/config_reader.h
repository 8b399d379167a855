// Typed reading of a Hugging Face config.json object for the family builders: aliases
// (hidden_size / n_embd), ranges, and errors that name the key. Unknown keys are fine (configs
// carry many: rope_scaling, torch_dtype, bos_token_id...), wrong types are errors.
#pragma once

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "io/json_reader.h"
#include "io/message_text.h"
#include "vramplan/error.h"

namespace vramplan::families {

using io::Json;

constexpr int64_t kMaxDim = int64_t{1} << 24;  // 16M: larger than any real width or vocab
// Head counts, head dims, expert counts, MLA ranks: real models use at most a few hundred (heads,
// experts) or a few thousand (ranks). Products of two such values stay below 2^32.
constexpr int64_t kMaxHeadsOrExperts = 65536;

// Reads typed keys from a config object; unknown keys are fine, wrong types are errors.
class ConfigReader {
 public:
  ConfigReader(const Json& cfg, std::string path, Issues* errors) : cfg_(cfg), path_(std::move(path)), errors_(errors) {}

  // The first present key among `keys` (aliases, e.g. hidden_size / n_embd); null counts as absent.
  std::optional<int64_t> Int(std::initializer_list<const char*> keys, int64_t min = 0, int64_t max = kMaxDim) {
    for (const char* key : keys) {
      auto it = cfg_.find(key);
      if (it == cfg_.end() || it->is_null()) continue;
      std::string p = io::JoinPath(path_, key);
      if (it->is_number_integer() || it->is_number_unsigned()) {
        if (it->is_number_unsigned() && it->get<uint64_t>() > static_cast<uint64_t>(max)) {
          io::AddError(errors_, "out_of_range", p, p + " must be an integer from " + std::to_string(min) + " to " + std::to_string(max) +
                                                       ", got " + std::to_string(it->get<uint64_t>()));
          return std::nullopt;
        }
        int64_t v = it->get<int64_t>();
        if (v < min || v > max) {
          io::AddError(errors_, "out_of_range", p, p + " must be an integer from " + std::to_string(min) + " to " + std::to_string(max) + ", got " + std::to_string(v));
          return std::nullopt;
        }
        return v;
      }
      if (it->is_number_float()) {
        double d = it->get<double>();
        if (std::isfinite(d) && d == std::floor(d) && d >= static_cast<double>(min) && d <= static_cast<double>(max)) {
          return static_cast<int64_t>(d);
        }
      }
      io::AddError(errors_, it->is_number() ? "out_of_range" : "wrong_type", p,
                   p + " must be an integer from " + std::to_string(min) + " to " + std::to_string(max) + ", got " +
                       io::Describe(*it) + " " + io::Preview(*it));
      return std::nullopt;
    }
    return std::nullopt;
  }

  int64_t Required(std::initializer_list<const char*> keys, int64_t min = 1, int64_t max = kMaxDim) {
    size_t before = errors_->size();
    std::optional<int64_t> v = Int(keys, min, max);
    if (v) return *v;
    if (errors_->size() == before) {
      std::string names;
      for (const char* k : keys) names += std::string(names.empty() ? "" : " or ") + "\"" + k + "\"";
      io::AddError(errors_, "missing_key", io::JoinPath(path_, *keys.begin()),
                   "the model config is missing the required key " + names);
    }
    return 0;
  }

  bool Bool(const char* key, bool fallback) {
    auto it = cfg_.find(key);
    if (it == cfg_.end() || it->is_null()) return fallback;
    if (it->is_boolean()) return it->get<bool>();
    std::string p = io::JoinPath(path_, key);
    io::AddError(errors_, "wrong_type", p, p + " must be true or false, got " + io::Describe(*it));
    return fallback;
  }

  // A fraction: a number in (0, 1] (`zero_allowed` false: rotary fractions) or [0, 1] (dropout
  // probabilities); `fallback` when absent.
  // Absent at the top, it is looked up in `rope_parameters`: transformers v5 configs keep
  // partial_rotary_factor there (modeling_rope_utils.py: rope_parameters.get("partial_rotary_factor")).
  double Fraction(const char* key, double fallback, bool zero_allowed) {
    auto it = cfg_.find(key);
    std::string p = io::JoinPath(path_, key);
    if (it == cfg_.end() || it->is_null()) {
      auto rope = cfg_.find("rope_parameters");
      if (rope == cfg_.end() || !rope->is_object()) return fallback;
      it = rope->find(key);
      if (it == rope->end() || it->is_null()) return fallback;
      p = io::JoinPath(io::JoinPath(path_, "rope_parameters"), key);
    }
    const std::string range = zero_allowed ? "[0, 1]" : "(0, 1]";
    if (!it->is_number()) {
      io::AddError(errors_, "wrong_type", p, p + " must be a number in " + range + ", got " + io::Describe(*it) + " " + io::Preview(*it));
      return fallback;
    }
    const double d = it->get<double>();
    if (!(d >= 0.0 && d <= 1.0) || (d == 0.0 && !zero_allowed)) {  // also refuses NaN
      io::AddError(errors_, "out_of_range", p, p + " must be a number in " + range + ", got " + io::Preview(*it));
      return fallback;
    }
    return d;
  }

  // An alias-aware Fraction for two key names: the first present one.
  double Fraction(const char* key, const char* alias, double fallback, bool zero_allowed) {
    return Has(key) ? Fraction(key, fallback, zero_allowed) : Fraction(alias, fallback, zero_allowed);
  }

  std::string String(const char* key, const std::string& fallback) {
    auto it = cfg_.find(key);
    if (it == cfg_.end() || it->is_null()) return fallback;
    if (it->is_string()) return it->get<std::string>();
    std::string p = io::JoinPath(path_, key);
    io::AddError(errors_, "wrong_type", p, p + " must be a string, got " + io::Describe(*it));
    return fallback;
  }

  // layer_types: ["sliding_attention", "full_attention", ...] (transformers >= 4.53).
  std::optional<std::vector<bool>> SlidingLayers(int64_t num_layers) {
    auto it = cfg_.find("layer_types");
    if (it == cfg_.end() || it->is_null()) return std::nullopt;
    std::string p = io::JoinPath(path_, "layer_types");
    if (!it->is_array() || static_cast<int64_t>(it->size()) != num_layers) {
      io::AddError(errors_, "wrong_type", p, p + " must be a list with one entry per layer (" + std::to_string(num_layers) + ")");
      return std::nullopt;
    }
    std::vector<bool> out;
    for (const auto& t : *it) {
      if (!t.is_string()) {
        io::AddError(errors_, "wrong_type", p, p + " entries must be strings such as \"sliding_attention\"");
        return std::nullopt;
      }
      const std::string& s = t.get_ref<const std::string&>();
      out.push_back(s == "sliding_attention" || s == "local" || s == "sliding");
    }
    return out;
  }

  // A list of layer indices in [0, num_layers) (e.g. mlp_only_layers); absent or null -> empty.
  std::vector<int64_t> LayerList(const char* key, int64_t num_layers) {
    std::vector<int64_t> out;
    auto it = cfg_.find(key);
    if (it == cfg_.end() || it->is_null()) return out;
    std::string p = io::JoinPath(path_, key);
    const std::string what = p + " must be a list of layer indices from 0 to " + std::to_string(num_layers - 1);
    if (!it->is_array()) {
      io::AddError(errors_, "wrong_type", p, what + ", got " + io::Describe(*it));
      return out;
    }
    for (size_t i = 0; i < it->size(); ++i) {
      const Json& v = (*it)[i];
      // is_number_unsigned first: get<int64_t>() would wrap one above 2^63-1.
      const bool in_range = v.is_number_unsigned() ? v.get<uint64_t>() < static_cast<uint64_t>(num_layers)
                                                   : v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() < num_layers;
      if (!in_range) {
        const std::string ip = p + "[" + std::to_string(i) + "]";
        io::AddError(errors_, v.is_number_integer() ? "out_of_range" : "wrong_type", ip, what + ", got " + io::Preview(v));
        return {};
      }
      out.push_back(v.get<int64_t>());
    }
    return out;
  }

  // An integer for every layer, or a list with one integer per layer (Hunyuan's num_experts,
  // moe_topk: `x if isinstance(x, int) else x[layer_idx]`); absent or null -> nullopt.
  std::optional<std::vector<int64_t>> IntPerLayer(const char* key, int64_t num_layers, int64_t min, int64_t max) {
    auto it = cfg_.find(key);
    if (it == cfg_.end() || it->is_null()) return std::nullopt;
    if (!it->is_array()) {
      std::optional<int64_t> v = Int({key}, min, max);
      if (!v) return std::nullopt;
      return std::vector<int64_t>(static_cast<size_t>(num_layers), *v);
    }
    const std::string p = io::JoinPath(path_, key);
    const std::string what = p + " must be an integer or a list of " + std::to_string(num_layers) + " integers from " +
                             std::to_string(min) + " to " + std::to_string(max);
    if (static_cast<int64_t>(it->size()) < num_layers) {
      io::AddError(errors_, "wrong_type", p, what + ", got " + std::to_string(it->size()) + " entries");
      return std::nullopt;
    }
    std::vector<int64_t> out;
    for (int64_t i = 0; i < num_layers; ++i) {
      const Json& v = (*it)[static_cast<size_t>(i)];
      // is_number_unsigned first: get<int64_t>() would wrap one above 2^63-1.
      bool ok = false;
      if (v.is_number_unsigned()) {
        ok = v.get<uint64_t>() <= static_cast<uint64_t>(max) && static_cast<int64_t>(v.get<uint64_t>()) >= min;
      } else if (v.is_number_integer()) {
        ok = v.get<int64_t>() >= min && v.get<int64_t>() <= max;
      }
      if (!ok) {
        io::AddError(errors_, v.is_number_integer() ? "out_of_range" : "wrong_type", p + "[" + std::to_string(i) + "]",
                     what + ", got " + io::Preview(v));
        return std::nullopt;
      }
      out.push_back(v.get<int64_t>());
    }
    return out;
  }

  // A list of `size` strings (layer_types, layers_block_type); absent or null -> nullopt.
  std::optional<std::vector<std::string>> StringList(const char* key, int64_t size) {
    auto it = cfg_.find(key);
    if (it == cfg_.end() || it->is_null()) return std::nullopt;
    std::string p = io::JoinPath(path_, key);
    if (!it->is_array() || static_cast<int64_t>(it->size()) != size) {
      io::AddError(errors_, "wrong_type", p, p + " must be a list with one entry per layer (" + std::to_string(size) + ")");
      return std::nullopt;
    }
    std::vector<std::string> out;
    for (const auto& t : *it) {
      if (!t.is_string()) {
        io::AddError(errors_, "wrong_type", p, p + " entries must be strings");
        return std::nullopt;
      }
      out.push_back(t.get<std::string>());
    }
    return out;
  }

  bool IsString(const char* key) const {
    auto it = cfg_.find(key);
    return it != cfg_.end() && it->is_string();
  }

  bool Has(const char* key) const {
    auto it = cfg_.find(key);
    return it != cfg_.end() && !it->is_null();
  }
  const std::string& path() const { return path_; }
  Issues* errors() { return errors_; }
  // The config object itself, for per-layer lists of another shape (Llama 4's no_rope_layers).
  const Json& raw() const { return cfg_; }

 private:
  const Json& cfg_;
  std::string path_;
  Issues* errors_;
};

}  // namespace vramplan::families
