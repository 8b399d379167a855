// Seed scenarios for the fuzzers: tests/fixtures/scenarios/fuzz_seeds.jsonl (one scenario per
// line, committed), plus every line of tests/golden/scenarios/*.jsonl that carries a "scenario" object when
// that directory exists (the golden-results suite), so the fuzzers start from every scenario
// whose full answer is pinned.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/json_access.h"

namespace vramplan::fuzzing {

// Appends the objects of a JSON-lines file (blank lines and lines starting with // skipped).
// With `key` non-empty, takes line[key] when it is an object instead of the line itself.
inline void ReadJsonLines(const std::filesystem::path& file, const std::string& key, std::vector<json>* out) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line.rfind("//", 0) == 0) continue;
    json j = ParseOrDiscard(line);
    if (j.is_discarded()) continue;
    if (key.empty()) {
      if (j.is_object()) out->push_back(std::move(j));
    } else if (const json* v = Member(j, key); v != nullptr && v->is_object()) {
      out->push_back(*v);
    }
  }
}

// fixtures_dir: tests/fixtures. The golden scenarios are in its sibling tests/golden/scenarios.
inline std::vector<json> LoadSeedScenarios(const std::string& fixtures_dir, size_t* golden_count = nullptr) {
  namespace fs = std::filesystem;
  std::vector<json> seeds;
  ReadJsonLines(fs::path(fixtures_dir) / "scenarios" / "fuzz_seeds.jsonl", "", &seeds);
  const size_t own = seeds.size();
  std::error_code ec;
  const fs::path golden = fs::path(fixtures_dir).parent_path() / "golden" / "scenarios";
  if (fs::is_directory(golden, ec)) {
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(golden, ec)) {
      if (entry.path().extension() == ".jsonl") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());  // a stable order: the same seed replays the same inputs
    for (const auto& f : files) ReadJsonLines(f, "scenario", &seeds);
  }
  if (golden_count != nullptr) *golden_count = seeds.size() - own;
  return seeds;
}

}  // namespace vramplan::fuzzing
