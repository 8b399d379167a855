// vLLM's start-up overheads (inference/vllm_overheads.cpp) and the whole vLLM estimate against the
// components vLLM's own start-up logs print (tests/fixtures/inference/vllm_startup_logs.json, each
// row with its source and quote). Tolerances and the median / worst figures are in
// docs/accuracy_inference.md ("vLLM start-up logs"); components a row flags in `outliers` (with the
// reason) are printed, not asserted.
#include "inference/vllm_overheads.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_support.h"

namespace vramplan {
namespace vllm_overheads_test {

using nlohmann::json;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

TEST(VllmOverheads, CapturedGraphSizesFollowEachRelease) {
  // V0: [1, 2, 4] + 8..256 step 8 (max_num_seqs 256) = 35; [1, 2, 4, 8] for 8 sequences.
  EXPECT_EQ(VllmCapturedGraphs(VllmVersion::kV0Engine, 256), 35);
  EXPECT_EQ(VllmCapturedGraphs(VllmVersion::kV0Engine, 8), 4);
  // V1 0.8-0.10: [1, 2, 4] + 8..512 step 8 = 67 whatever max_num_seqs (the 0.10.1 config prints them).
  EXPECT_EQ(VllmCapturedGraphs(VllmVersion::kV1_0_8To0_20, 256), 67);
  // 0.21+: up to min(2 x max_num_seqs, 512), step 16 above 256: 3 + 31 + 17 = 51; 8 sequences -> [1, 2, 4, 8, 16].
  EXPECT_EQ(VllmCapturedGraphs(VllmVersion::kV0_21Plus, 256), 51);
  EXPECT_EQ(VllmCapturedGraphs(VllmVersion::kV0_21Plus, 8), 5);
  EXPECT_EQ(VllmCapturedGraphs(VllmVersion::kV0_21Plus, 1), 2);
}

TEST(VllmOverheads, DefaultBatchedTokensByEngineGeneration) {
  const int64_t gib = 1LL << 30;
  EXPECT_EQ(VllmDefaultBatchedTokens(VllmVersion::kV0Engine, 24 * gib, 10000), 10000);   // no chunked prefill
  EXPECT_EQ(VllmDefaultBatchedTokens(VllmVersion::kV0Engine, 24 * gib, 1024), 2048);
  EXPECT_EQ(VllmDefaultBatchedTokens(VllmVersion::kV0Engine, 80 * gib, 131072), 2048);  // > 32K: chunked prefill
  EXPECT_EQ(VllmDefaultBatchedTokens(VllmVersion::kV1_0_8To0_20, 80 * gib, 131072), 8192);
  EXPECT_EQ(VllmDefaultBatchedTokens(VllmVersion::kV0_21Plus, 24 * gib, 131072), 2048);
}

TEST(VllmOverheads, NonTorchMemoryGrowsWithTensorParallelismAndNvlink) {
  DeviceTraits pcie, nvlink, hopper;
  nvlink.nvlink = true;
  hopper.hopper_or_newer = true;
  hopper.nvlink = true;
  EXPECT_LT(VllmNonTorchBytes(1, pcie), VllmNonTorchBytes(1, hopper));
  EXPECT_LT(VllmNonTorchBytes(2, pcie), VllmNonTorchBytes(2, nvlink));
  EXPECT_EQ(VllmNonTorchBytes(2, pcie), VllmNonTorchBytes(8, pcie));  // one communicator per rank, whatever tp
  EXPECT_TRUE(DeviceTraitsFor("h100-sxm-80gb").nvlink);
  EXPECT_TRUE(DeviceTraitsFor("a100-sxm-80gb").nvlink);
  EXPECT_FALSE(DeviceTraitsFor("h100-pcie-80gb").nvlink);
  EXPECT_FALSE(DeviceTraitsFor("rtx-4090-24gb").nvlink);
}

TEST(VllmOverheads, GraphsCountInsideTheBudgetFrom021) {
  const std::string base = R"({"model": "meta-llama/Llama-3.1-8B", "mode": "inference", "gpu": "h100-sxm-80gb",
    "inference": {"engine": "vllm", "max_model_len": 8192, "vllm_version": ")";
  Result inside = testing_support::EstimateText(base + R"(0.21+"}})");
  Result outside = testing_support::EstimateText(base + R"(0.8-0.20"}})");
  Result eager = testing_support::EstimateText(base + R"(0.21+", "cuda_graphs": false}})");
  // The same budget: 0.21+ subtracts its graph pool from the KV cache, 0.8-0.20 adds it on top.
  EXPECT_LT(inside.inference.kv_token_capacity, eager.inference.kv_token_capacity);
  EXPECT_LT(inside.gpu.peak_allocated_bytes, outside.gpu.peak_allocated_bytes);
  EXPECT_GT(testing_support::GpuTerm(inside, "temporary"), testing_support::GpuTerm(eager, "temporary"));
}

// One start-up log row run through the estimate: what we say for each component it prints.
struct Compared {
  std::string id, component;
  double printed = 0, ours = 0;
  bool outlier = false;
  double RelError() const { return printed != 0 ? (ours - printed) / std::fabs(printed) : 0; }
};

json ScenarioFor(const json& row) {
  json inf = {{"engine", "vllm"},
              {"weights", row.value("weights", "bf16")},
              {"vllm_version", row["vllm_version"]},
              {"gpu_memory_utilization", row.value("gpu_memory_utilization", 0.9)},
              {"max_model_len", row.value("max_model_len", 0)},
              {"max_num_seqs", row.value("max_num_seqs", 256)},
              {"max_num_batched_tokens", row.value("max_num_batched_tokens", 0)}};
  json s = {{"model", row["model"]}, {"mode", "inference"}, {"inference", inf},
            {"parallel", {{"tp", row["tp"]}, {"gpus", row["tp"]}}}};
  if (row.contains("gpu")) {
    s["gpu"] = row["gpu"];
  } else {
    s["gpu"] = {{"name", row["id"]}, {"memory_bytes", static_cast<int64_t>(row["gpu_total_gib"].get<double>() * kGiB)}};
  }
  return s;
}

std::vector<Compared> CompareRow(const json& row) {
  std::vector<Compared> out;
  const json& printed = row["printed"];
  const json outliers = row.value("outliers", json::object());
  auto add = [&](const std::string& key, double ours_bytes) {
    if (!printed.contains(key)) return;
    out.push_back({row["id"], key, printed[key].get<double>(), ours_bytes / kGiB, outliers.contains(key)});
  };
  const DeviceTraits device = DeviceTraitsFor(row.value("gpu", std::string("custom")));
  add("non_torch_gib", static_cast<double>(VllmNonTorchBytes(row["tp"].get<int64_t>(), device)));
  if (row.value("non_torch_only", false)) return out;

  Result r = testing_support::EstimateText(ScenarioFor(row).dump());
  using testing_support::GpuTerm;
  add("weights_gib", static_cast<double>(GpuTerm(r, "weights")));
  add("activation_gib", static_cast<double>(GpuTerm(r, "activations") + GpuTerm(r, "logits_and_loss")));
  if (printed.contains("kv_gib") && printed["kv_gib"].get<double>() > 0) add("kv_gib", static_cast<double>(GpuTerm(r, "kv_cache")));
  if (printed.contains("kv_tokens")) out.push_back({row["id"], "kv_tokens", printed["kv_tokens"].get<double>(),
                                                    static_cast<double>(r.inference.kv_token_capacity), outliers.contains("kv_tokens")});
  const ModelSpec& m = testing_support::PresetSpec(row["model"].get<std::string>().c_str());
  const VllmVersion version = row["vllm_version"] == "0.21+" ? VllmVersion::kV0_21Plus
                              : row["vllm_version"] == "0.8-0.20" ? VllmVersion::kV1_0_8To0_20 : VllmVersion::kV0Engine;
  add("graphs_gib", static_cast<double>(VllmCudaGraphBytes(version, static_cast<int64_t>(m.layer_kind.size()), row.value("max_num_seqs", 256))));
  return out;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

TEST(VllmStartupLogs, EveryPrintedComponentMatches) {
  json doc = testing_support::LoadFixture("inference/vllm_startup_logs.json");
  ASSERT_TRUE(doc.is_object());
  ASSERT_GE(doc["rows"].size(), 12u);
  // Relative bars per component (non-torch memory: absolute, in GiB; it is a few tenths).
  const std::map<std::string, double> bar = {{"weights_gib", 0.02}, {"activation_gib", 0.20}, {"kv_gib", 0.06},
                                             {"kv_tokens", 0.06}, {"graphs_gib", 0.15}, {"non_torch_gib", 0.12}};
  std::map<std::string, std::vector<double>> errors;
  std::map<std::string, double> kv_by_row;  // the token capacity where printed, else the GiB left for the cache
  int compared = 0;
  for (const auto& row : doc["rows"]) {
    for (const Compared& c : CompareRow(row)) {
      ++compared;
      const bool absolute = c.component == "non_torch_gib";
      const double err = absolute ? c.ours - c.printed : c.RelError();
      std::cout << "  " << c.id << " " << c.component << ": printed " << c.printed << ", ours " << c.ours << ", error "
                << (absolute ? std::to_string(err) + " GiB" : std::to_string(100 * err) + "%") << (c.outlier ? " (outlier)" : "") << "\n";
      if (c.outlier) continue;
      errors[c.component].push_back(std::fabs(err));
      if (c.component == "kv_tokens" || (c.component == "kv_gib" && !kv_by_row.count(c.id))) kv_by_row[c.id] = std::fabs(err);
      EXPECT_LE(std::fabs(err), bar.at(c.component)) << c.id << " " << c.component << ": printed " << c.printed << ", ours " << c.ours;
    }
  }
  EXPECT_GE(compared, 30);
  for (const auto& [component, e] : errors) {
    std::cout << "  " << component << ": " << e.size() << " rows, median |error| " << Median(e) << ", worst "
              << *std::max_element(e.begin(), e.end()) << "\n";
  }
  // The KV capacity the engine prints, one figure per row (tokens, or the GiB left for the cache):
  // median within 3% (docs/accuracy_inference.md).
  std::vector<double> kv;
  for (const auto& [id, e] : kv_by_row) kv.push_back(e);
  std::cout << "  KV capacity: " << kv.size() << " rows, median |error| " << Median(kv) << "\n";
  ASSERT_GE(kv.size(), 4u);
  EXPECT_LE(Median(kv), 0.03);
}

}  // namespace
}  // namespace vramplan
