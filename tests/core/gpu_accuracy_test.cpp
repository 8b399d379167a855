// Regression guard for the calibration against published GPU measurements
// (tests/fixtures/gpu/training_rows.json; docs/accuracy.md): the median absolute error over the
// representable rows (the target: 8%) and every single-GPU row within 25%.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_support.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace gpu_accuracy_test {

// The figure of the result a published single-GPU row is compared with: its metric (allocated or
// active -> the peak allocated, device_total, else reserved), or for model-init figures
// (`score_phase: "load"`) the load phase's.
double PredictedBytes(const nlohmann::json& row, const nlohmann::json& gpu) {
  const std::string metric = row["metric"].get<std::string>();
  if (row.value("score_phase", "") == "load") {
    return metric == "allocated" ? gpu["phase_peaks"]["load"].get<double>() : gpu["load_reserved_bytes"].get<double>();
  }
  return metric == "allocated" || metric == "active" ? gpu["peak_allocated_bytes"].get<double>()
         : metric == "device_total"                    ? gpu["device_total_bytes"].get<double>()
                                                       : gpu["reserved_bytes"].get<double>();
}

double MeasuredBytes(const nlohmann::json& row) {
  return row.contains("measured_bytes_per_gpu") ? row["measured_bytes_per_gpu"].get<double>() : row["measured_bytes"].get<double>();
}

TEST(GpuAccuracy, PublishedTrainingRows) {
  nlohmann::json doc = testing_support::LoadFixture("gpu/training_rows.json");
  ASSERT_TRUE(doc.is_object());
  std::vector<double> errors, multi_gpu;
  for (const auto& row : doc["rows"]) {
    if (!row.value("representable", false)) continue;
    const std::string id = row["id"].get<std::string>();
    nlohmann::json r = nlohmann::json::parse(EstimateJson(row["scenario"].dump()), nullptr, false);
    ASSERT_TRUE(r.value("ok", false)) << id;
    const double predicted = PredictedBytes(row, r["gpu"]);
    const double measured = MeasuredBytes(row);
    const double err = std::abs(predicted - measured) / measured;
    if (row.value("multi_gpu", false)) {
      multi_gpu.push_back(err);  // data-parallel rows: a first version, guarded separately below
      continue;
    }
    errors.push_back(err);
    EXPECT_LE(err, 0.25) << id << " predicted " << predicted << " measured " << measured;
  }
  ASSERT_GE(errors.size(), 50u);
  std::sort(errors.begin(), errors.end());
  const double median = errors[errors.size() / 2];
  std::printf("# published GPU rows: %zu, median |error| %.1f%%\n", errors.size(), median * 100);
  EXPECT_LE(median, 0.08);  // the target (docs/accuracy.md)
  ASSERT_GE(multi_gpu.size(), 20u);
  std::sort(multi_gpu.begin(), multi_gpu.end());
  std::printf("# multi-GPU rows: %zu, median |error| %.1f%%\n", multi_gpu.size(), multi_gpu[multi_gpu.size() / 2] * 100);
  EXPECT_LE(multi_gpu[multi_gpu.size() / 2], 0.25);
}

}  // namespace
}  // namespace vramplan

namespace vramplan {
namespace gpu_accuracy_test {

// Published multi-GPU training runs (tests/fixtures/gpu/multi_gpu_runs.json; docs/accuracy.md,
// "Multi-GPU training"): Megatron-LM's functional tests with tensor, sequence, pipeline (1F1B,
// interleaved, uneven), context and expert parallelism (Megatron's MoE GPT with non-gated GeLU
// experts, allgather dispatcher) and the distributed optimizer, each figure compared with the rank
// that logged it, and torchtitan's FSDP2 runs (op-level selective checkpointing, context
// parallelism). Bars: median within 10%, every row within 25% (26 rows: median 4.2%, worst 12.8%;
// the five expert-parallel rows -5.1% to -9.7%).
TEST(GpuAccuracy, PublishedMultiGpuMegatronAndTorchtitanRuns) {
  nlohmann::json doc = testing_support::LoadFixture("gpu/multi_gpu_runs.json");
  ASSERT_TRUE(doc.is_object());
  std::vector<double> errors;
  for (const auto& row : doc["rows"]) {
    const std::string framework = row.value("framework", "");
    if (!row.value("representable", false) || row.value("list", "") != "main" || (framework != "megatron" && framework != "torchtitan")) continue;
    const std::string id = row["id"].get<std::string>();
    nlohmann::json r = nlohmann::json::parse(EstimateJson(row["scenario"].dump()), nullptr, false);
    if (!r.value("ok", false)) continue;  // a layout the schema does not express yet (listed in docs/accuracy.md)
    const nlohmann::json& g = row.value("measured_rank", "") == "last" ? r["ranks"].back() : r["gpu"];
    const double predicted = g[row["metric"] == "allocated" ? "peak_allocated_bytes" : "reserved_bytes"].get<double>();  // torchtitan prints max reserved
    const double measured = row["measured_bytes"].get<double>();
    const double err = std::abs(predicted - measured) / measured;
    EXPECT_LT(err, 0.25) << id << ": predicted " << predicted << " measured " << measured;
    errors.push_back(err);
  }
  ASSERT_GE(errors.size(), 15u);
  std::sort(errors.begin(), errors.end());
  EXPECT_LT(errors[errors.size() / 2], 0.10);
}

}  // namespace
}  // namespace vramplan

namespace vramplan {
namespace gpu_accuracy_test {

// Published data-parallel-only multi-GPU runs (rows flagged multi_gpu: training_rows.json's torchtune
// FSDP1/FSDP2, PEFT's DeepSpeed ZeRO-3 and FSDP scripts, Qwen1's DeepSpeed ZeRO-2/3 profiling, and
// framework_rows.json's fms-acceleration two-GPU FSDP runs, peak allocated; docs/accuracy.md,
// "Data-parallel-only runs"). Regression bars at today's level (the target is median 10%,
// p90 25%): median within 4%, p90 within 19% (43 rows: median 3.1%, p90 17.5% with FSDP1's
// frozen-unit hooks modeled; 7.5% / 21.9% before them, bars 8% / 23%; the 22 rows before the
// fms-acceleration runs: median 11.9%, p90 32.5%, bars 13% / 34%), and every run within 40% (the
// worst, torchtune's 405B QLoRA, +36.7%). Rows on the underspecified list are not run.
TEST(GpuAccuracy, PublishedDataParallelOnlyRuns) {
  std::vector<double> errors;
  for (const char* file : {"gpu/training_rows.json", "gpu/framework_rows.json"}) {
  nlohmann::json doc = testing_support::LoadFixture(file);
  ASSERT_TRUE(doc.is_object()) << file;
  for (const auto& row : doc["rows"]) {
    if (!row.value("multi_gpu", false) || !row.value("representable", false) || row.value("list", "") == "underspecified") continue;
    const std::string id = row["id"].get<std::string>();
    nlohmann::json r = nlohmann::json::parse(EstimateJson(row["scenario"].dump()), nullptr, false);
    ASSERT_TRUE(r.value("ok", false)) << id;
    const double ratio = PredictedBytes(row, r["gpu"]) / MeasuredBytes(row);
    EXPECT_GT(ratio, 0.5) << id;
    EXPECT_LT(ratio, 2.0) << id;
    EXPECT_LE(std::abs(ratio - 1.0), 0.40) << id;
    errors.push_back(std::abs(ratio - 1.0));
  }
  }
  ASSERT_GE(errors.size(), 43u);
  std::sort(errors.begin(), errors.end());
  const double median = errors.size() % 2 ? errors[errors.size() / 2] : (errors[errors.size() / 2 - 1] + errors[errors.size() / 2]) / 2;
  const double p90 = errors[static_cast<size_t>(0.9 * static_cast<double>(errors.size() - 1) + 0.5)];
  std::printf("# data-parallel-only runs: %zu, median |error| %.1f%%, p90 %.1f%%\n", errors.size(), median * 100, p90 * 100);
  EXPECT_LE(median, 0.04);
  EXPECT_LE(p90, 0.19);
}

}  // namespace
}  // namespace vramplan

namespace vramplan {
namespace gpu_accuracy_test {

// Published single-GPU figures of framework runs (tests/fixtures/gpu/framework_rows.json;
// docs/accuracy.md section 2c): unsloth (offloaded checkpointing, its loss heads) and the Hugging
// Face + FA2 baselines beside them, and fms-acceleration's HF Trainer + PEFT reference runs on an A100
// 80GB (peak allocated; full, LoRA and QLoRA, scored, not fitted). Regression bars at today's level, not the target
// (median 5%, no framework above 10%), which the unsloth rows miss for reasons the doc gives:
// every row runs and stays within 35% (45% before accelerate's fp32 copy of the returned logits was
// counted for the SFT loss: the pre-2024.12 unsloth rows, whose loss returns its 16-bit logits, were
// one fp32 logits buffer short), the transformers rows' median within 10%, unsloth's within 10% (was
// 15% before unsloth <= 2025.2's out-of-place LoRA terms, framework.unsloth_lora_out_of_place), the three
// pre-2024.12 Llama-70B rows (old loss) within 10%, and unsloth's Llama-3.1-8B max-context column, where
// the kernels' tensors decide the slope, within 10% on every card (was 15%).
// fms-acceleration's Liger runs of Meta-Llama-3-8B (a100_80gb_liger.csv, foak's unsloth RMSNorm / RoPE,
// Liger's fused linear cross-entropy; peak allocated) are within 1.1%: each within 3%.
TEST(GpuAccuracy, PublishedFrameworkRows) {
  nlohmann::json doc = testing_support::LoadFixture("gpu/framework_rows.json");
  ASSERT_TRUE(doc.is_object());
  std::map<std::string, std::vector<double>> per_framework;
  for (const auto& row : doc["rows"]) {
    // fms-acceleration's two-GPU FSDP rows are scored with the data-parallel-only runs above
    if (!row.value("representable", false) || row.value("multi_gpu", false)) continue;
    const std::string id = row["id"].get<std::string>();
    nlohmann::json r = nlohmann::json::parse(EstimateJson(row["scenario"].dump()), nullptr, false);
    ASSERT_TRUE(r.value("ok", false)) << id;
    const double predicted = PredictedBytes(row, r["gpu"]);
    const double measured = MeasuredBytes(row);
    const double err = std::abs(predicted - measured) / measured;
    EXPECT_LE(err, 0.35) << id << " predicted " << predicted << " measured " << measured;
    if (id.rfind("unsloth-bench-llama3.1-8b", 0) == 0) EXPECT_LE(err, 0.10) << id;
    if (id.find("-old-maxctx-") != std::string::npos || id == "unsloth-blog-llama3.1-70b-qlora-r32-bs5-s8192") EXPECT_LE(err, 0.10) << id;
    if (id.rfind("fms-acceleration-liger-", 0) == 0) EXPECT_LE(err, 0.03) << id;
    per_framework[row["framework"].get<std::string>()].push_back(err);
  }
  ASSERT_GE(per_framework["unsloth"].size(), 20u);
  ASSERT_GE(per_framework["transformers"].size(), 27u);  // + fms-acceleration's 8 A100 runs and 6 Liger runs (peak allocated)
  for (auto& [framework, errors] : per_framework) {
    std::sort(errors.begin(), errors.end());
    const double median = errors.size() % 2 ? errors[errors.size() / 2]
                                            : (errors[errors.size() / 2 - 1] + errors[errors.size() / 2]) / 2;
    std::printf("# framework rows, %s: %zu, median |error| %.1f%%\n", framework.c_str(), errors.size(), median * 100);
    EXPECT_LE(median, 0.10) << framework;
  }
}

}  // namespace
}  // namespace vramplan
