#include "model/catalog.h"

#include <algorithm>

#include "model/hf_config.h"

extern const unsigned char vramplan_presets_json[];
extern const unsigned long long vramplan_presets_json_size;
extern const unsigned char vramplan_gpus_json[];
extern const unsigned long long vramplan_gpus_json_size;

namespace vramplan {
namespace {

using nlohmann::json;

std::string StringOr(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int64_t IntOr(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

double NumberOr(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

}  // namespace

const json& PresetsDocument() {
  static const json doc = json::parse(reinterpret_cast<const char*>(vramplan_presets_json), reinterpret_cast<const char*>(vramplan_presets_json) + vramplan_presets_json_size, nullptr, false);
  return doc;
}

const json& GpusDocument() {
  static const json doc = json::parse(reinterpret_cast<const char*>(vramplan_gpus_json), reinterpret_cast<const char*>(vramplan_gpus_json) + vramplan_gpus_json_size, nullptr, false);
  return doc;
}

const std::vector<PresetEntry>& Presets() {
  static const std::vector<PresetEntry> presets = [] {
    std::vector<PresetEntry> out;
    const json& doc = PresetsDocument();
    auto models = doc.find("models");
    if (models == doc.end() || !models->is_array()) return out;
    for (const auto& m : *models) {
      auto cfg = m.find("config");
      if (cfg == m.end() || !cfg->is_object()) continue;
      PresetEntry e;
      e.id = StringOr(m, "id");
      e.display_name = StringOr(m, "display_name");
      e.family = StringOr(m, "family");
      e.size_label = StringOr(m, "size_label");
      e.ladder = StringOr(m, "ladder");
      e.params = IntOr(m, "params");
      e.config = &*cfg;
      Issues warnings;
      auto spec = ModelSpecFromHfConfig(*cfg, "model", &warnings);
      if (!spec.ok()) continue;  // a broken preset is caught by presets_test, never shown
      e.spec = std::move(spec.value());
      if (auto ck = m.find("checkpoint"); ck != m.end()) ApplyCheckpointFacts(*ck, &e.spec);
      e.spec.display_name = e.display_name;
      out.push_back(std::move(e));
    }
    return out;
  }();
  return presets;
}

const PresetEntry* FindPreset(std::string_view id) {
  for (const auto& p : Presets()) {
    if (p.id == id) return &p;
  }
  return nullptr;
}

std::vector<std::string> PresetIds() {
  std::vector<std::string> ids;
  for (const auto& p : Presets()) ids.push_back(p.id);
  return ids;
}

const std::vector<GpuEntry>& Gpus() {
  static const std::vector<GpuEntry> gpus = [] {
    std::vector<GpuEntry> out;
    const json& doc = GpusDocument();
    auto list = doc.find("gpus");
    if (list == doc.end() || !list->is_array()) return out;
    for (const auto& g : *list) {
      GpuEntry e;
      e.id = StringOr(g, "id");
      e.name = StringOr(g, "name");
      e.vendor = StringOr(g, "vendor");
      e.segment = StringOr(g, "segment");
      e.arch = StringOr(g, "arch");
      e.memory_bytes = IntOr(g, "memory_bytes");
      e.usable_memory_bytes = IntOr(g, "usable_memory_bytes");
      e.bandwidth_gb_s = NumberOr(g, "bandwidth_gb_s");
      e.bf16_tflops = NumberOr(g, "bf16_dense_tflops");
      e.fp16_tflops = NumberOr(g, "fp16_dense_tflops");
      e.source = StringOr(g, "source");
      out.push_back(std::move(e));
    }
    return out;
  }();
  return gpus;
}

const GpuEntry* FindGpu(std::string_view id) {
  for (const auto& g : Gpus()) {
    if (g.id == id) return &g;
  }
  return nullptr;
}

std::vector<std::string> GpuIds() {
  std::vector<std::string> ids;
  for (const auto& g : Gpus()) ids.push_back(g.id);
  return ids;
}

}  // namespace vramplan
