// Our inference numbers against published measurements (tests/fixtures/inference/*.json, each row
// with its source quote). Tolerances are the ones documented in docs/accuracy_inference.md:
//  * engine-printed buffers (weights, KV, GGUF sizes): 1% (2% for llama.cpp compute buffers and
//    for vLLM's load-time peak, which includes loader transients);
//  * transformers total peak vs torch.cuda.max_memory_allocated: median <= 2%, every row <= 6%
//    except rows flagged `known_outlier` (reason in the fixture).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <vector>

#include <gtest/gtest.h>

#include "test_support.h"
#include <nlohmann/json.hpp>

#include "inference/kv_cache.h"
#include "model/catalog.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace inference_validation_test {

using nlohmann::json;

json LoadFixture(const std::string& name) { return testing_support::LoadFixture("inference/" + name); }

Result RunRow(const json& scenario) { return testing_support::EstimateText(scenario.dump()); }

// Absent terms count as 0 here (a CPU list without weights holds none).
int64_t Term(const std::vector<vramplan::Term>& terms, const std::string& key) { return testing_support::TermBytes(terms, key, 0); }

double Expected(const json& row) {
  if (row.contains("expected_mib")) return row["expected_mib"].get<double>() * (1 << 20);
  return row["expected_gib"].get<double>() * (1LL << 30);
}

TEST(InferenceValidation, LlamaCppBuffersMatchLogs) {
  json doc = LoadFixture("engine_logs.json");
  ASSERT_TRUE(doc.is_object());
  int checked = 0;
  for (const auto& row : doc["llama_cpp"]) {
    json inf = {{"engine", "llama_cpp"}, {"weights", row["weights"]}, {"n_ctx", row.value("n_ctx", 4096)},
                {"n_ubatch", row.value("n_ubatch", 512)}, {"flash_attn", row.value("flash_attn", false)},
                {"n_gpu_layers", row.value("n_gpu_layers", -1)}};
    Result r = RunRow({{"model", row["model"]}, {"mode", "inference"}, {"inference", inf}});
    std::string q = row["quantity"];
    int64_t got = 0;
    if (q == "model_size") got = Term(r.gpu.breakdown, "weights") + Term(r.cpu.breakdown, "weights");
    if (q == "cpu_weights") got = Term(r.cpu.breakdown, "weights");
    if (q == "gpu_weights") got = Term(r.gpu.breakdown, "weights");
    if (q == "gpu_kv") got = Term(r.gpu.breakdown, "kv_cache");
    if (q == "cpu_kv") got = Term(r.cpu.breakdown, "kv_cache");
    if (q == "gpu_compute") got = Term(r.gpu.breakdown, "activations");
    double want = Expected(row);
    EXPECT_NEAR(got, want, want * row["tolerance"].get<double>())
        << row["id"].get<std::string>() << ": " << row["quote"].get<std::string>() << " (" << row["source"].get<std::string>() << ")";
    ++checked;
  }
  EXPECT_GE(checked, 10);
}

TEST(InferenceValidation, VllmBuffersMatchLogs) {
  json doc = LoadFixture("engine_logs.json");
  ASSERT_TRUE(doc.is_object());
  for (const auto& row : doc["vllm"]) {
    std::string q = row["quantity"];
    std::string id = row["id"];
    if (q == "weights") {
      json inf = {{"engine", "vllm"}, {"weights", row["weights"]}};
      json par = {{"tp", row["tp"]}, {"gpus", row["tp"]}};
      Result r = RunRow({{"model", row["model"]}, {"mode", "inference"}, {"inference", inf}, {"parallel", par}});
      double want = Expected(row);
      EXPECT_NEAR(Term(r.gpu.breakdown, "weights"), want, want * row["tolerance"].get<double>()) << id << ": " << row["quote"].get<std::string>();
    } else if (q == "kv_tokens_from_available") {
      const PresetEntry* p = FindPreset(row["model"].get<std::string>());
      ASSERT_NE(p, nullptr);
      auto groups = KvGroups(p->spec, Engine::kVllm, row["tp"].get<int64_t>());
      KvElementSize e = ResolveKvDtype(KvDtype::kAuto, WeightFormat::kBf16, Engine::kVllm);
      int64_t block = row["block_size"].get<int64_t>();
      int64_t page = 0;
      for (const auto& g : groups) page += g.layers * KvLayerBytes(g, e, block);
      int64_t avail = static_cast<int64_t>(row["available_gib"].get<double>() * (1LL << 30));
      double tokens = static_cast<double>(avail / page * block);
      double want = row["expected_tokens"].get<double>();
      EXPECT_NEAR(tokens, want, want * row["tolerance"].get<double>()) << id << ": " << row["quote"].get<std::string>();
    }
  }
}

TEST(InferenceValidation, TransformersGenerateMatchesQwenBenchmark) {
  json doc = LoadFixture("qwen25_speed_benchmark.json");
  ASSERT_TRUE(doc.is_object());
  std::vector<double> errors;
  for (const auto& row : doc["rows"]) {
    json inf = {{"engine", "transformers"}, {"weights", row["weights"]}, {"prompt_len", row["prompt_len"]},
                {"new_tokens", row["new_tokens"]}, {"batch_size", row["batch_size"]}, {"attention", row["attention"]}};
    int64_t gpus = row["gpus"].get<int64_t>();
    Result r = RunRow({{"model", row["model"]}, {"mode", "inference"}, {"inference", inf}, {"gpu", row["gpu"]}, {"parallel", {{"gpus", gpus}}}});
    // The benchmark sums max_memory_allocated over the GPUs device_map="auto" used.
    double got = static_cast<double>(r.gpu.peak_allocated_bytes) * gpus / (1LL << 30);
    double want = row["measured_gib"].get<double>();
    double err = std::fabs(got - want) / want;
    std::string id = row["id"];
    if (row.contains("known_outlier")) {
      EXPECT_LT(err, 0.35) << id;
      continue;
    }
    errors.push_back(err);
    EXPECT_LT(err, 0.06) << id << ": estimated " << got << " GiB vs measured " << want << " GiB (" << row["quote"].get<std::string>() << ")";
  }
  ASSERT_GE(errors.size(), 80u);
  std::sort(errors.begin(), errors.end());
  EXPECT_LE(errors[errors.size() / 2], 0.02) << "median error";
}

}  // namespace
}  // namespace vramplan
