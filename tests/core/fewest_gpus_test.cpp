// The planner's "how many GPUs of this kind, with the cheapest parallel layout"
// (planner/fewest_gpus.h): against a brute force over the same layouts and every smaller count,
// and through the plan op's reply.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "io/result_json.h"
#include "io/scenario_json.h"
#include "model/catalog.h"
#include "planner/fewest_gpus.h"
#include "planner/prepared.h"
#include "planner/simulate.h"
#include "planner/step_time.h"
#include "vramplan/api.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace fewest_gpus_test {

using nlohmann::json;

Scenario Parse(const std::string& text) {
  Expected<Scenario> s = ParseScenario(text);
  EXPECT_TRUE(s.ok()) << text;
  return s.value();
}

struct Prepped {
  Scenario base;
  Prepared prepared;
  HardwareRates rates;
  int64_t total = 0;
  double base_seconds = 0;
};

Prepped Prepare(const std::string& text) {
  Prepped s;
  s.base = Parse(text);
  s.prepared = PrepareModel(s.base);
  s.rates = RatesFor(FindGpu(s.base.gpu.id));
  std::optional<Result> r = Probe(s.base, s.prepared);
  EXPECT_TRUE(r.has_value());
  s.total = r->gpu.device_total_bytes;
  s.base_seconds = TrainingStepTime(s.base, s.base.model, s.prepared.params, s.rates).GpuSecondsPerToken();
  return s;
}

bool FitsAt(const Prepped& s, int64_t gpus, int64_t tp, int64_t pp, int zero) {
  Scenario v = s.base;
  v.parallel.gpus = gpus;
  v.parallel.zero = zero;
  if (v.parallel.tp != tp) {
    v.parallel.tp = tp;
    v.parallel.etp = 0;
    if (v.framework.trainer == Trainer::kMegatron) v.parallel.sequence_parallel = tp > 1;
  }
  if (v.parallel.pp != pp) {
    v.parallel.pp = pp;
    v.parallel.vpp = 1;
    v.parallel.pp_layers.clear();
    v.parallel.pp_schedule.reset();
  }
  if (!ValidateCombination(v).empty()) return false;
  std::optional<Result> r = Probe(v, s.prepared);
  return r && r->gpu.fits;
}

// HF trainer: no ZeRO stage fits on fewer GPUs than the answer, the answer's layout fits, and no
// stage that fits at that count is cheaper.
TEST(FewestGpus, HfTrainerMatchesTheBruteForceOverZeroStages) {
  for (const char* text : {
           R"({"model":"Qwen/Qwen2.5-7B","mode":"train","train":{"method":"full","precision":"amp_bf16"},"gpu":"h100-sxm-80gb"})",
           R"({"model":"meta-llama/Meta-Llama-3-70B","mode":"train","train":{"method":"full","precision":"bf16","seq_len":2048},"parallel":{"gpus":8,"zero":3},"gpu":"h100-sxm-80gb"})",
           R"({"model":"meta-llama/Llama-3.1-8B","mode":"train","train":{"method":"full","precision":"bf16","seq_len":2048},"gpu":"rtx-4090-24gb"})"}) {
    const Prepped s = Prepare(text);
    const FewestGpus f = FindFewestGpus(s.base, s.total, s.prepared, s.rates, s.base_seconds);
    ASSERT_TRUE(f.layout.has_value()) << text;
    const int64_t g = f.layout->scenario.parallel.gpus;
    EXPECT_TRUE(f.layout->result.gpu.fits) << text;
    std::printf("# %s: %s, cost %.3f (%lld layouts)\n", text, f.layout->label.c_str(), f.layout->cost, static_cast<long long>(f.layouts));
    for (int zero = 0; zero <= 3; ++zero) {
      for (int64_t n = 1; n < g; ++n) EXPECT_FALSE(FitsAt(s, n, 1, 1, zero)) << text << ": ZeRO-" << zero << " fits on " << n << " < " << g;
      if (!FitsAt(s, g, 1, 1, zero)) continue;
      Scenario v = s.base;
      v.parallel.gpus = g;
      v.parallel.zero = zero;
      const double cost = TrainingStepTime(v, s.base.model, s.prepared.params, s.rates).GpuSecondsPerToken() / s.base_seconds;
      EXPECT_GE(cost, f.layout->cost - 1e-9) << text << ": ZeRO-" << zero << " is cheaper on " << g;
    }
    // The as-configured answers are the estimate's own inverse answers.
    const json e = json::parse(CallOp("estimate", ScenarioToJson(s.base)));
    EXPECT_EQ(f.gpus, e["training"]["min_gpus"].get<int64_t>()) << text;
    EXPECT_EQ(f.gpus_with_zero3, e["training"]["min_gpus_zero3"].get<int64_t>()) << text;
  }
}

// Megatron: tensor x pipeline layouts; none fits on fewer GPUs than the answer.
TEST(FewestGpus, MegatronSearchesTensorAndPipelineDegrees) {
  const Prepped s = Prepare(
      R"({"model":"meta-llama/Meta-Llama-3-70B","mode":"train","gpu":"h100-sxm-80gb","train":{"method":"full","precision":"mixed_bf16","seq_len":4096,"gradient_checkpointing":"selective","attention":"flash"},"parallel":{"gpus":8,"tp":8,"sequence_parallel":true},"framework":{"trainer":"megatron"}})");
  const FewestGpus f = FindFewestGpus(s.base, s.total, s.prepared, s.rates, s.base_seconds);
  ASSERT_TRUE(f.layout.has_value());
  const ParallelConfig& p = f.layout->scenario.parallel;
  EXPECT_TRUE(f.layout->result.gpu.fits);
  EXPECT_GT(p.tp * p.pp, 1) << f.layout->label;
  std::printf("# %s, cost %.3f (%lld layouts)\n", f.layout->label.c_str(), f.layout->cost, static_cast<long long>(f.layouts));
  for (int64_t tp : {1, 2, 4, 8}) {
    for (int64_t pp : {1, 2, 4, 8, 16}) {
      for (int zero : {0, 1}) {
        for (int64_t n = tp * pp; n < p.gpus; n += tp * pp) EXPECT_FALSE(FitsAt(s, n, tp, pp, zero)) << "TP " << tp << " PP " << pp << " ZeRO " << zero << " on " << n;
      }
    }
  }
}

// The plan op's reply carries the layout with a re-estimable scenario.
TEST(FewestGpus, PlanReplyCarriesTheLayout) {
  const json reply = json::parse(CallOp(
      "plan", R"({"model":"Qwen/Qwen2.5-7B","mode":"train","train":{"method":"full","precision":"amp_bf16"},"gpu":"h100-sxm-80gb"})"));
  ASSERT_TRUE(reply["ok"].get<bool>()) << reply.dump();
  const json& l = reply["fewest_gpus"]["layout"];
  ASSERT_TRUE(l.is_object()) << reply["fewest_gpus"].dump();
  EXPECT_GE(l["gpus"].get<int64_t>(), 2);
  EXPECT_TRUE(l["changes"].contains("parallel.gpus"));
  const json r = json::parse(CallOp("estimate_fast", l["scenario"].dump()));
  EXPECT_TRUE(r["gpu"]["fits"].get<bool>());
  EXPECT_EQ(r["gpu"]["device_total_bytes"], l["estimate"]["device_total_bytes"]);
  EXPECT_NE(l["label"].get<std::string>().find("GPUs"), std::string::npos);
}

}  // namespace
}  // namespace vramplan
