// Helpers shared by the core tests: fixture files and preset models.
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/catalog.h"
#include "vramplan/estimate.h"

namespace vramplan::testing_support {

// Parses tests/fixtures/<relative_path> (a discarded value when missing or invalid).
inline nlohmann::json LoadFixture(const std::string& relative_path) {
  std::ifstream in(std::string(VRAMPLAN_FIXTURES_DIR) + "/" + relative_path);
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str(), nullptr, false);
}

// The resolved spec of a preset (a failed expectation and an empty model when unknown).
inline const ModelSpec& PresetSpec(const char* id) {
  const PresetEntry* p = FindPreset(id);
  EXPECT_NE(p, nullptr) << id;
  static const ModelSpec empty;
  return p ? p->spec : empty;
}

// The estimate of a scenario given as JSON text: a failed expectation naming the first error, and
// an empty result, when it does not parse.
inline Result EstimateText(const std::string& json) {
  auto s = ParseScenario(json);
  EXPECT_TRUE(s.ok()) << json << (s.ok() ? "" : " -> " + s.errors()[0].message);
  return s.ok() ? Estimate(s.value()) : Result{};
}

// Bytes of the breakdown term `key`, or `missing` when the list has none.
inline int64_t TermBytes(const std::vector<Term>& terms, std::string_view key, int64_t missing = -1) {
  for (const auto& t : terms) {
    if (t.key == key) return t.bytes;
  }
  return missing;
}

// Whether the result carries a warning with this code on this field path.
inline bool HasWarning(const Result& r, std::string_view code, std::string_view field_path) {
  for (const auto& w : r.warnings) {
    if (w.code == code && w.field_path == field_path) return true;
  }
  return false;
}

// Bytes of a per-GPU breakdown term (-1 when absent).
inline int64_t GpuTerm(const Result& r, std::string_view key) { return TermBytes(r.gpu.breakdown, key); }

}  // namespace vramplan::testing_support
