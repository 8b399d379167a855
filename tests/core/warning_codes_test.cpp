// The warning code table (core/src/diagnostics/warning_codes.cpp): one row per enumerator, stable
// snake_case names, the same list in docs/schema.md ("Warning codes"), and every warning that the
// golden scenarios raise uses a code from it.
#include "diagnostics/warning_codes.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "inference/inference.h"
#include "test_support.h"

namespace vramplan {
namespace warning_codes_test {

namespace fs = std::filesystem;

std::string ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::set<std::string> TableNames() {
  std::set<std::string> names;
  for (const WarningCodeInfo& info : WarningCodeTable()) names.insert(info.name);
  return names;
}

TEST(WarningCodes, OneRowPerEnumeratorInEnumOrderWithUniqueSnakeCaseNames) {
  const auto& table = WarningCodeTable();
  ASSERT_EQ(table.size(), static_cast<size_t>(WarningCode::kExceedsModelContext) + 1);
  std::set<std::string> seen;
  for (size_t i = 0; i < table.size(); ++i) {
    const std::string name = table[i].name;
    SCOPED_TRACE(name);
    EXPECT_EQ(static_cast<size_t>(table[i].code), i);
    EXPECT_TRUE(seen.insert(name).second) << "duplicate name";
    EXPECT_FALSE(name.empty());
    for (char ch : name) EXPECT_TRUE((ch >= 'a' && ch <= 'z') || ch == '_') << name;
    EXPECT_STRNE(table[i].meaning, "");
    EXPECT_EQ(WarningCodeName(table[i].code), name);
  }
  // The old catch-all is gone: a warning says what happened.
  EXPECT_EQ(seen.count("not_implemented"), 0u);
}

TEST(WarningCodes, MakeWarningCarriesTheStableName) {
  Issue w = MakeWarning(WarningCode::kWouldNotStart, "inference.max_model_len", "m");
  EXPECT_EQ(w.code, "would_not_start");
  EXPECT_EQ(w.field_path, "inference.max_model_len");
  EXPECT_EQ(w.message, "m");
}

// docs/schema.md, section "Warning codes": rows "| `code` | meaning | raised by |" in table order.
TEST(WarningCodes, SchemaDocListsExactlyTheTable) {
  const std::string doc = ReadText(fs::path(VRAMPLAN_DOCS_DIR) / "schema.md");
  const size_t start = doc.find("\n## Warning codes\n");
  ASSERT_NE(start, std::string::npos) << "docs/schema.md has no \"Warning codes\" section";
  const size_t end = doc.find("\n## ", start + 1);
  std::istringstream section(doc.substr(start, end - start));
  std::vector<std::pair<std::string, std::string>> rows;
  for (std::string line; std::getline(section, line);) {
    if (line.rfind("| `", 0) != 0) continue;
    const size_t name_end = line.find("` | ");
    ASSERT_NE(name_end, std::string::npos) << line;
    const size_t meaning_end = line.find(" | ", name_end + 4);
    ASSERT_NE(meaning_end, std::string::npos) << line;
    rows.emplace_back(line.substr(3, name_end - 3), line.substr(name_end + 4, meaning_end - name_end - 4));
  }
  const auto& table = WarningCodeTable();
  ASSERT_EQ(rows.size(), table.size());
  for (size_t i = 0; i < table.size(); ++i) {
    EXPECT_EQ(rows[i].first, table[i].name) << "row " << i;
    EXPECT_EQ(rows[i].second, table[i].meaning) << table[i].name;
  }
}

// Every warning in the golden results (the full results of ~460 scenarios over every mode, method,
// engine and parallel set-up) has a code from the table; together with the typed-only code below,
// every code of the table is raised by something (no dead codes).
TEST(WarningCodes, EveryRaisedCodeIsInTheTableAndEveryCodeIsRaised) {
  const std::set<std::string> names = TableNames();
  std::map<std::string, std::string> raised;  // code -> one scenario that raises it
  int files = 0;
  for (const auto& group : fs::directory_iterator(fs::path(VRAMPLAN_GOLDEN_DIR) / "expected")) {
    for (const auto& file : fs::directory_iterator(group.path())) {
      nlohmann::json j = nlohmann::json::parse(ReadText(file.path()), nullptr, false);
      ASSERT_FALSE(j.is_discarded()) << file.path();
      ++files;
      if (!j.contains("warnings")) continue;
      for (const auto& w : j["warnings"]) {
        const std::string code = w.value("code", "");
        EXPECT_EQ(names.count(code), 1u) << file.path().filename() << ": warning code " << code << " is not in the table";
        raised.emplace(code, file.path().filename().string());
      }
    }
  }
  EXPECT_GT(files, 400);

  // not_estimated is reachable only through the typed API (the JSON reader refuses such input).
  Scenario s;
  s.mode = Mode::kInference;
  Result r = Estimate(s);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0].code, "not_estimated");
  raised.emplace(r.warnings[0].code, "typed Scenario{} in inference mode");

  for (const std::string& name : names) EXPECT_EQ(raised.count(name), 1u) << name << " is raised by no golden scenario";
}

// Each engine's refusals are would_not_start, not a generic code (vLLM: kv_cache_utils.py,
// check_enough_kv_cache_memory; llama.cpp: llama-context.cpp, quantized V cache needs flash_attn).
TEST(WarningCodes, EnginesThatWouldNotStartSaySo) {
  Result vllm = testing_support::EstimateText(
      R"({"model":"meta-llama/Llama-3.1-8B","mode":"inference","gpu":"rtx-4090-24gb",)"
      R"("inference":{"engine":"vllm","max_model_len":131072}})");
  EXPECT_TRUE(testing_support::HasWarning(vllm, "would_not_start", "inference.max_model_len") ||
              testing_support::HasWarning(vllm, "would_not_start", "inference.gpu_memory_utilization"));
  Result llama = testing_support::EstimateText(
      R"({"model":"meta-llama/Llama-3.1-8B","mode":"inference",)"
      R"("inference":{"engine":"llama_cpp","weights":"gguf_q4_0","kv_cache":"int4","flash_attn":false}})");
  EXPECT_TRUE(testing_support::HasWarning(llama, "would_not_start", "inference.flash_attn"));
}

}  // namespace
}  // namespace vramplan
