#include "model/families/deepseek_v4_layers.h"

#include <string>

namespace vramplan::families {
namespace {

// Reads a per-layer list that must cover at least `layers` entries; DeepseekV4Config keeps the
// first num_hidden_layers (`list(self.layer_types[:n])`). Returns the list as given (MTP entries
// may follow); empty when absent or invalid (an error is recorded for the latter).
const Json* PerLayerList(ConfigReader& c, const char* key, int64_t layers) {
  auto it = c.raw().find(key);
  if (it == c.raw().end() || it->is_null()) return nullptr;
  if (!it->is_array() || static_cast<int64_t>(it->size()) < layers) {
    io::AddError(c.errors(), "wrong_type", io::JoinPath(c.path(), key),
                 std::string(key) + " must be a list with at least one entry per layer (" + std::to_string(layers) + ")");
    return nullptr;
  }
  return &*it;
}

int64_t Rate(ConfigReader& c, const char* legacy_key, const char* type, int64_t fallback) {
  if (auto v = c.Int({legacy_key}, 1)) return *v;  // compress_rate_csa / compress_rate_hca fold in last
  auto rates = c.raw().find("compress_rates");
  if (rates != c.raw().end() && rates->is_object()) {
    auto r = rates->find(type);
    if (r != rates->end() && r->is_number_integer() && r->get<int64_t>() > 0) return r->get<int64_t>();
  }
  return fallback;
}

}  // namespace

V4LayerPlan ReadV4LayerPlan(ConfigReader& c, int64_t layers, int64_t mtp) {
  V4LayerPlan p;
  p.csa_rate = Rate(c, "compress_rate_csa", "compressed_sparse_attention", p.csa_rate);
  p.hca_rate = Rate(c, "compress_rate_hca", "heavily_compressed_attention", p.hca_rate);
  const size_t total = static_cast<size_t>(layers + mtp);
  p.attention.assign(total, V4Attention::kSliding);
  p.hash.assign(total, false);

  if (const Json* types = PerLayerList(c, "layer_types", layers)) {
    const std::string at = io::JoinPath(c.path(), "layer_types");
    for (size_t i = 0; i < types->size() && i < total; ++i) {
      const Json& t = (*types)[i];
      const std::string s = t.is_string() ? t.get<std::string>() : "";
      if (s == "sliding_attention") p.attention[i] = V4Attention::kSliding;
      else if (s == "compressed_sparse_attention") p.attention[i] = V4Attention::kCsa;
      else if (s == "heavily_compressed_attention") p.attention[i] = V4Attention::kHca;
      else {
        io::AddError(c.errors(), "invalid_value", at,
                     "layer_types entries must be sliding_attention, compressed_sparse_attention or heavily_compressed_attention, got " + io::Describe(t));
        return p;
      }
    }
  } else if (const Json* ratios = PerLayerList(c, "compress_ratios", layers)) {
    // _COMPRESS_RATIO_TO_LAYER_TYPE: 0 sliding, 4 compressed sparse, 128 heavily compressed.
    const std::string at = io::JoinPath(c.path(), "compress_ratios");
    for (size_t i = 0; i < ratios->size() && i < total; ++i) {
      const Json& r = (*ratios)[i];
      const int64_t v = r.is_number_integer() ? r.get<int64_t>() : -1;
      if (v == 0) p.attention[i] = V4Attention::kSliding;
      else if (v == 4) p.attention[i] = V4Attention::kCsa;
      else if (v == 128) p.attention[i] = V4Attention::kHca;
      else {
        io::AddError(c.errors(), "invalid_value", at, "compress_ratios entries must be 0, 4 or 128, got " + io::Describe(r));
        return p;
      }
    }
  } else if (c.errors()->empty()) {
    for (int64_t i = 0; i < layers; ++i) {
      p.attention[static_cast<size_t>(i)] = i < 2 || (i - 2) % 2 == 0 ? V4Attention::kHca : V4Attention::kCsa;
    }
  }

  if (const Json* mlp = PerLayerList(c, "mlp_layer_types", layers)) {
    const std::string at = io::JoinPath(c.path(), "mlp_layer_types");
    for (size_t i = 0; i < mlp->size() && i < total; ++i) {
      const Json& t = (*mlp)[i];
      const std::string s = t.is_string() ? t.get<std::string>() : "";
      if (s != "hash_moe" && s != "moe") {
        io::AddError(c.errors(), "invalid_value", at, "mlp_layer_types entries must be \"hash_moe\" or \"moe\", got " + io::Describe(t));
        return p;
      }
      p.hash[i] = s == "hash_moe";
    }
  } else if (c.errors()->empty()) {
    const int64_t n_hash = c.Int({"num_hash_layers"}).value_or(3);
    for (int64_t i = 0; i < layers && i < n_hash; ++i) p.hash[static_cast<size_t>(i)] = true;
  }
  return p;
}

}  // namespace vramplan::families
