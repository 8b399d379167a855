// Helpers shared by the core tests: fixture files and preset models.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/catalog.h"

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

}  // namespace vramplan::testing_support
