// Golden results: every scenario in tests/golden/scenarios/*.jsonl gives exactly the bytes checked
// in under tests/golden/expected/<group>/<name>.json (EstimateJson's output plus one newline, with
// the build id in "version" written as <build>). A mismatch names the first differing JSON path
// with both values. VRAMPLAN_UPDATE_GOLDEN=1 rewrites the expected files instead of comparing
// (scripts/rebaseline-golden); see tests/golden/README.md.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "vramplan/estimate.h"

namespace vramplan {
namespace golden_test {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kGoldenDir = VRAMPLAN_GOLDEN_DIR;

struct GoldenCase {
  std::string group;   // scenarios/<group>.jsonl
  std::string name;    // unique over all groups; the test's name
  std::string expect;  // the grid's intent: "ok", "warning" or "error"
  std::string text;    // the scenario document passed to EstimateJson, as written in the file
};

void PrintTo(const GoldenCase& c, std::ostream* os) { *os << c.name; }

bool UpdateMode() {
  const char* v = std::getenv("VRAMPLAN_UPDATE_GOLDEN");
  return v != nullptr && std::string(v) == "1";
}

bool ReadFile(const fs::path& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

fs::path ExpectedPath(const GoldenCase& c) { return kGoldenDir / "expected" / c.group / (c.name + ".json"); }

// Problems met while loading the scenario files; reported by GoldenSet.ScenarioFilesLoad.
std::vector<std::string>& LoadProblems() {
  static std::vector<std::string> problems;
  return problems;
}

std::vector<GoldenCase> LoadCases() {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(kGoldenDir / "scenarios", ec)) {
    if (entry.path().extension() == ".jsonl") files.push_back(entry.path());
  }
  if (ec) LoadProblems().push_back("cannot list " + (kGoldenDir / "scenarios").string() + ": " + ec.message());
  std::sort(files.begin(), files.end());
  std::vector<GoldenCase> cases;
  for (const auto& file : files) {
    std::string text;
    ReadFile(file, &text);
    std::istringstream lines(text);
    std::string line;
    int line_no = 0;
    while (std::getline(lines, line)) {
      ++line_no;
      const std::string where = file.filename().string() + ":" + std::to_string(line_no);
      json entry = json::parse(line, nullptr, false);
      if (!entry.is_object() || !entry.contains("name") || !entry["name"].is_string() || !entry.contains("expect")) {
        LoadProblems().push_back(where + ": not a {\"name\", \"expect\", \"scenario\" | \"text\"} line");
        continue;
      }
      GoldenCase c;
      c.group = file.stem().string();
      c.name = entry["name"].get<std::string>();
      c.expect = entry["expect"].is_string() ? entry["expect"].get<std::string>() : "";
      if (entry.contains("text") && entry["text"].is_string()) {
        c.text = entry["text"].get<std::string>();
      } else {
        // The scenario exactly as written (the generator puts it last): a re-serialized copy could
        // differ (1.0 vs 1), and inline configs are echoed as given. tests/wasm/golden.test.mjs
        // passes the same bytes.
        const std::string key = ", \"scenario\": ";
        const size_t at = line.find(key);
        if (at == std::string::npos || line.back() != '}') {
          LoadProblems().push_back(where + ": no \"scenario\" (written last) and no \"text\"");
        } else {
          c.text = line.substr(at + key.size(), line.size() - 1 - at - key.size());
          if (json::parse(c.text, nullptr, false) != entry["scenario"]) LoadProblems().push_back(where + ": \"scenario\" is not the last key");
        }
      }
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

const std::vector<GoldenCase>& Cases() {
  static const std::vector<GoldenCase> cases = LoadCases();
  return cases;
}

// The result names the build ("0.1.0+<12 hex>", a hash of the core's sources), which changes with
// every source edit; the golden files keep the semantic version and write the hash as <build>.
std::string NormalizeVersion(std::string out) {
  const std::string version = VersionString();
  const std::string needle = "\"version\":\"" + version + "\"";
  const size_t at = out.find(needle);
  if (at != std::string::npos) {
    const std::string semver = version.substr(0, version.find('+'));
    out.replace(at, needle.size(), "\"version\":\"" + semver + "+<build>\"");
  }
  return out;
}

std::string Shorten(const std::string& s, size_t limit = 300) {
  return s.size() <= limit ? s : s.substr(0, limit) + "... (" + std::to_string(s.size()) + " chars)";
}

std::string Show(const json* v) { return v == nullptr ? "(absent)" : Shorten(v->dump()); }

// Collects the JSON paths at which `want` and `got` differ (objects by key, arrays by index).
void CollectDifferences(const json* want, const json* got, const std::string& path, std::vector<std::string>* out) {
  const std::string here = path.empty() ? "(root)" : path;
  if (want != nullptr && got != nullptr && want->is_object() && got->is_object()) {
    std::set<std::string> keys;
    for (const auto& [k, v] : want->items()) keys.insert(k);
    for (const auto& [k, v] : got->items()) keys.insert(k);
    for (const auto& k : keys) {
      auto w = want->find(k);
      auto g = got->find(k);
      CollectDifferences(w == want->end() ? nullptr : &*w, g == got->end() ? nullptr : &*g, path.empty() ? k : path + "." + k, out);
    }
    return;
  }
  if (want != nullptr && got != nullptr && want->is_array() && got->is_array()) {
    const size_t n = std::max(want->size(), got->size());
    for (size_t i = 0; i < n; ++i) {
      CollectDifferences(i < want->size() ? &(*want)[i] : nullptr, i < got->size() ? &(*got)[i] : nullptr,
                         path + "[" + std::to_string(i) + "]", out);
    }
    return;
  }
  if (want != nullptr && got != nullptr && *want == *got && want->type() == got->type()) return;
  out->push_back(here + ": expected " + Show(want) + ", got " + Show(got));
}

// A readable account of how `got` differs from `want`: the differing JSON paths, or (when the
// parsed values agree) the first differing byte.
std::string DescribeDifference(const std::string& want, const std::string& got, size_t max_paths = 8) {
  json w = json::parse(want, nullptr, false);
  json g = json::parse(got, nullptr, false);
  std::vector<std::string> paths;
  if (!w.is_discarded() && !g.is_discarded()) CollectDifferences(&w, &g, "", &paths);
  std::ostringstream os;
  if (!paths.empty()) {
    os << paths.size() << " JSON path(s) differ; first:";
    for (size_t i = 0; i < paths.size() && i < max_paths; ++i) os << "\n  " << paths[i];
    if (paths.size() > max_paths) os << "\n  ...";
    return os.str();
  }
  size_t at = 0;
  while (at < want.size() && at < got.size() && want[at] == got[at]) ++at;
  const size_t from = at > 60 ? at - 60 : 0;
  os << "same JSON values, bytes differ at offset " << at << ":\n  expected ..." << Shorten(want.substr(from, 160))
     << "\n  got      ..." << Shorten(got.substr(from, 160));
  return os.str();
}

class GoldenResult : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(GoldenResult, Matches) {
  const GoldenCase& c = GetParam();
  const std::string got = NormalizeVersion(EstimateJson(c.text)) + "\n";

  // The grid's intent, independent of the expected bytes.
  json parsed = json::parse(got, nullptr, false);
  ASSERT_TRUE(parsed.is_object()) << "EstimateJson returned invalid JSON";
  const bool ok = parsed.value("ok", false);
  if (c.expect == "error") {
    EXPECT_FALSE(ok) << "the grid expects this scenario to be refused";
  } else {
    EXPECT_TRUE(ok) << "the grid expects an estimate: " << Shorten(parsed.contains("errors") ? parsed["errors"].dump() : got);
    if (c.expect == "warning") EXPECT_FALSE(parsed.value("warnings", json::array()).empty()) << "the grid expects a warning";
  }

  const fs::path path = ExpectedPath(c);
  std::string want;
  const bool have = ReadFile(path, &want);
  if (UpdateMode()) {
    if (have && want == got) return;
    fs::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << got;
    ASSERT_TRUE(out.good()) << "cannot write " << path;
    std::cout << "[golden] " << (have ? "rewrote " : "new ") << c.group << "/" << c.name
              << (have ? ": " + DescribeDifference(want, got, 4) : "") << "\n";
    return;
  }
  ASSERT_TRUE(have) << "no expected result " << path << "; run scripts/rebaseline-golden";
  if (want != got) {
    ADD_FAILURE() << "golden result differs for " << c.group << "/" << c.name << "\n  scenario: " << Shorten(c.text, 400) << "\n"
                  << DescribeDifference(want, got)
                  << "\nIf the change is intended, run scripts/rebaseline-golden, review the diff and state why in the commit message.";
  }
}

INSTANTIATE_TEST_SUITE_P(Golden, GoldenResult, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<GoldenCase>& info) { return info.param.name; });

TEST(GoldenSet, ScenarioFilesLoad) {
  for (const auto& p : LoadProblems()) ADD_FAILURE() << p;
  EXPECT_GE(Cases().size(), 300u) << "the golden set lost scenarios; regenerate with tests/golden/make_scenarios.py";
  std::set<std::string> names;
  for (const auto& c : Cases()) {
    EXPECT_TRUE(names.insert(c.name).second) << "duplicate scenario name " << c.name;
    EXPECT_TRUE(c.expect == "ok" || c.expect == "warning" || c.expect == "error") << c.name << ": expect \"" << c.expect << "\"";
  }
}

// Every expected file belongs to a scenario (a renamed or dropped scenario leaves none behind).
TEST(GoldenSet, NoOrphanExpectedFiles) {
  std::set<fs::path> wanted;
  for (const auto& c : Cases()) wanted.insert(ExpectedPath(c).lexically_normal());
  std::error_code ec;
  for (const auto& entry : fs::recursive_directory_iterator(kGoldenDir / "expected", ec)) {
    if (!entry.is_regular_file()) continue;
    const fs::path p = entry.path().lexically_normal();
    if (wanted.count(p)) continue;
    if (UpdateMode()) {
      fs::remove(p);
      std::cout << "[golden] removed " << fs::relative(p, kGoldenDir / "expected").string() << "\n";
    } else {
      ADD_FAILURE() << "expected file without a scenario: " << p << "; run scripts/rebaseline-golden";
    }
  }
}

// The difference report itself: paths, absent keys, array lengths and byte-only differences.
TEST(GoldenSet, DifferenceNamesThePath) {
  EXPECT_NE(DescribeDifference(R"({"a":{"b":[1,2]}})", R"({"a":{"b":[1,3]}})").find("a.b[1]: expected 2, got 3"), std::string::npos);
  EXPECT_NE(DescribeDifference(R"({"a":1})", R"({"a":1,"c":true})").find("c: expected (absent), got true"), std::string::npos);
  EXPECT_NE(DescribeDifference(R"({"t":[1]})", R"({"t":[]})").find("t[0]: expected 1, got (absent)"), std::string::npos);
  EXPECT_NE(DescribeDifference(R"({"a":1,"b":2})", R"({"b":2,"a":1})").find("bytes differ at offset 2"), std::string::npos);
  EXPECT_NE(DescribeDifference(R"({"a":1})", R"({"a":1.0})").find("a: expected 1, got 1.0"), std::string::npos);
  EXPECT_NE(NormalizeVersion("{\"ok\":true,\"schema\":1,\"version\":\"" + VersionString() + "\"}").find("+<build>\""), std::string::npos);
}

}  // namespace
}  // namespace vramplan
