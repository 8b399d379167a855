// Physics the estimate must respect, over seeded random scenarios (scenario_grid.h), each with the
// documented truths where the physics has an exception (docs/training.md section 10):
//  * sharding more never costs memory: ZeRO-2 <= ZeRO-1 per GPU, always; ZeRO-3 <= ZeRO-2 except
//    by ZeRO-3's reduce bucket, which DeepSpeed keeps for the whole run (stage3.py,
//    __ipg_bucket_flat_buffer) while ZeRO-2 frees its buckets after each backward
//    (stage_1_and_2.py, _release_ipg_buffers): then ZeRO-3's peak is outside the backward;
//    ZeRO-1 <= plain data parallelism except by ZeRO-1's gradient buckets (DDP's own reducer
//    buckets are not modeled);
//  * checkpointing never raises the peak, except by the inputs every checkpointed layer shares
//    (position ids 8·s B, the eager 4-D mask), which torch.utils.checkpoint keeps alive
//    (CheckpointFunction.forward: ctx.save_for_backward(*tensor_inputs)) until the first
//    checkpointed layer's backward, where a run without checkpointing holds nothing else;
//  * peak_allocated (torch.cuda.max_memory_allocated()) is at least every phase peak, the model
//    load's included; reserved >= allocated; every breakdown term >= 0 and they sum to the peak.
// Estimates run without explain strings or inverse searches: a few thousand in well under a second.
#include <algorithm>
#include <climits>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "checkpoint_bound.h"
#include "scenario_grid.h"
#include "test_support.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace physics_test {

using nlohmann::json;

constexpr int kScenarios = 320;

Result Simulate(const json& scenario) {
  auto s = ParseScenario(scenario.dump());
  EXPECT_TRUE(s.ok()) << scenario.dump() << (s.ok() ? "" : " -> " + s.errors()[0].message);
  if (!s.ok()) return Result{};
  EstimateOptions options;
  options.explain = false;
  options.inverse = false;
  return Estimate(s.value(), options);
}

// Seeded random training scenarios: the primary coordinates drawn too, not enumerated.
std::vector<json> RandomTrainingScenarios(uint64_t seed, int count) {
  static const char* const kMethods[] = {"full", "freeze", "lora", "qlora"};
  static const char* const kLosses[] = {"standard", "chunked", "fused_linear"};
  static const char* const kCkpt[] = {"false", "true", R"("selective")"};
  std::mt19937_64 rng(seed);
  std::vector<json> out;
  const auto& models = testing_support::GridModels();
  while (static_cast<int>(out.size()) < count) {
    const std::string& model = models[std::uniform_int_distribution<size_t>(0, models.size() - 1)(rng)];
    json s = json::parse(testing_support::TrainScenario(model, testing_support::Pick(rng, kMethods), testing_support::Pick(rng, kLosses),
                                                        R"({"gpus":1})", testing_support::Pick(rng, kCkpt), rng),
                         nullptr, false);
    if (s.is_discarded() || !ParseScenario(s.dump()).ok()) continue;
    out.push_back(std::move(s));
  }
  return out;
}

json WithParallel(json s, const json& parallel) {
  s["parallel"] = parallel;
  return s;
}

// DeepSpeed's ZeRO settings, each tried at every stage; bucket_elements is reduce_bucket_size.
struct BucketSetting {
  const char* json_keys;
  int64_t bucket_elements;
  bool contiguous;
  bool overlap;  // ZeRO-1/2 (ZeRO-3 keeps one buffer either way)
};

const BucketSetting kBucketSettings[] = {
    {"{}", 500000000, true, false},
    {R"({"overlap_comm":true})", 500000000, true, true},
    {R"({"contiguous_gradients":false})", 500000000, false, false},
    {R"({"reduce_bucket_size":16777216,"overlap_comm":true})", 16777216, true, true},
    {R"({"offload_optimizer":"cpu"})", 500000000, true, false},
};

TEST(Physics, MoreShardingNeverCostsMemoryExceptZeroBuckets) {
  std::mt19937_64 rng(31);
  int pairs = 0, zero3_bucket_truths = 0, zero1_bucket_truths = 0, zero2_above_zero1 = 0;
  std::string first;
  for (const json& base : RandomTrainingScenarios(2024, kScenarios)) {
    const int64_t gpus = int64_t{2} << std::uniform_int_distribution<int>(0, 5)(rng);  // 2 .. 64
    for (const BucketSetting& setting : kBucketSettings) {
      auto stage = [&](int zero) {
        json p = json::parse(setting.json_keys);
        p["gpus"] = gpus;
        p["zero"] = zero;
        return Simulate(WithParallel(base, p));
      };
      json ddp = {{"gpus", gpus}};
      if (std::string(setting.json_keys).find("offload") != std::string::npos) ddp["offload_optimizer"] = "cpu";
      const Result z0 = Simulate(WithParallel(base, ddp)), z1 = stage(1), z2 = stage(2), z3 = stage(3);
      const std::string what = base.dump() + " gpus " + std::to_string(gpus) + " " + setting.json_keys;
      ++pairs;
      // ZeRO-2 shards what ZeRO-1 holds in full: no exception.
      if (z2.gpu.peak_allocated_bytes > z1.gpu.peak_allocated_bytes) {
        if (zero2_above_zero1++ == 0) first = what + ": ZeRO-2 " + std::to_string(z2.gpu.peak_allocated_bytes) + " > ZeRO-1 " + std::to_string(z1.gpu.peak_allocated_bytes);
      }
      // The buckets are in the gradients' 16-bit (or fp32) dtype: at most 4 B per element.
      const int64_t persistent_bucket = setting.contiguous ? 4 * setting.bucket_elements : 0;
      const int64_t backward_buckets = setting.contiguous ? (setting.overlap ? 2 : 1) * 4 * setting.bucket_elements : 0;
      // A model smaller than stage3_max_reuse_distance / 2 stays wholly gathered at the turn from
      // forward to backward (DeepSpeed keeps each parameter whose reuse comes within the distance,
      // parallel/zero3_gather.h), beside its partitions: ZeRO-3 may exceed ZeRO-2 by that shard.
      const int64_t shard = (testing_support::GpuTerm(z2, "weights") + gpus - 1) / gpus;
      if (z3.gpu.peak_allocated_bytes > z2.gpu.peak_allocated_bytes) {
        ++zero3_bucket_truths;
        const int64_t excess = z3.gpu.peak_allocated_bytes - z2.gpu.peak_allocated_bytes;
        EXPECT_TRUE(setting.contiguous || excess <= shard) << "without buckets ZeRO-3 exceeds ZeRO-2 by at most the parameter shard: " << what;
        EXPECT_LE(excess, persistent_bucket + shard) << what;
        if (excess > shard) EXPECT_NE(z3.peak_phase, "backward") << "ZeRO-3's bucket only outlasts ZeRO-2's outside the backward: " << what;
      }
      if (z1.gpu.peak_allocated_bytes > z0.gpu.peak_allocated_bytes) {
        ++zero1_bucket_truths;
        EXPECT_LE(z1.gpu.peak_allocated_bytes - z0.gpu.peak_allocated_bytes, backward_buckets) << what;
        EXPECT_EQ(z1.peak_phase, "backward") << what;
      }
    }
  }
  EXPECT_GE(pairs, 5 * kScenarios);
  EXPECT_EQ(zero2_above_zero1, 0) << first;
  std::cout << "[ physics ] " << pairs << " stage ladders: ZeRO-3 above ZeRO-2 by its kept bucket in " << zero3_bucket_truths
            << ", ZeRO-1 above plain DP by its backward buckets in " << zero1_bucket_truths << "\n";
}

// Hand derivation of the ZeRO-3 truth: SmolLM2-135M (269,030,080 B of bf16 weights), full
// fine-tune on 2 GPUs. At the optimizer step ZeRO-2 holds the whole weights and no bucket (freed
// after the backward); ZeRO-3 half the weights and its 5e8-element bf16 bucket, kept for the run:
// + 1,000,000,000 - 269,030,080 / 2 B, which tops ZeRO-2's (embedding backward) peak. (ZeRO-3's
// own peak is now its backward, where the wholly gathered model adds 269 MB, below.) The step's
// temporaries differ too: ZeRO-2 steps Lion per parameter and holds half of the fp32 gradients and
// of the largest clone pair, (4 x 134,515,008 + 4 x (28,311,552 + 331,776)) / 2 = 326,316,672 B;
// ZeRO-3 steps one flat fp32 sub-group (stage3.py; parallel/zero3_sub_groups.h), the rank's
// 67,257,504 elements: their fp32 gradient and Lion's clone of them, 8 x 67,257,504 = 538,060,032 B,
// 211,743,360 B more. With contiguous_gradients off there is no kept bucket; ZeRO-3 then exceeds
// ZeRO-2 by at most its weight shard: the 135M-element model is within stage3_max_reuse_distance / 2,
// so DeepSpeed keeps all of it gathered at the turn from forward to backward beside its partitions
// (parallel/zero3_gather.h).
TEST(Physics, ZeroThreeKeepsItsBucketAfterTheBackward) {
  json s = json::parse(R"({"model":"HuggingFaceTB/SmolLM2-135M","gpu":"rtx-4090-24gb","train":{"method":"full","precision":"mixed_bf16",
      "loss":"fused_linear","gradient_checkpointing":true,"micro_batch_size":4,"seq_len":256,"optimizer":"lion"},"parallel":{"gpus":2,"zero":2}})");
  const Result z2 = Simulate(s);
  s["parallel"]["zero"] = 3;
  const Result z3 = Simulate(s);
  ASSERT_EQ(testing_support::GpuTerm(z2, "weights"), 269030080);
  EXPECT_EQ(z3.gpu.phase_peaks.optimizer_step - z2.gpu.phase_peaks.optimizer_step, 1000000000 - 269030080 / 2 + 211743360);
  EXPECT_GT(z3.gpu.peak_allocated_bytes, z2.gpu.peak_allocated_bytes);
  s["parallel"]["contiguous_gradients"] = false;
  const Result z3_plain = Simulate(s);
  s["parallel"]["zero"] = 2;
  EXPECT_LE(z3_plain.gpu.peak_allocated_bytes, Simulate(s).gpu.peak_allocated_bytes + 269030080 / 2);
}

// Hand derivation of the checkpointing truth: Llama-3.1-8B, last 3 layers trainable (+ lm_head),
// SDPA, b=4, s=256. Without checkpointing the peak is in layer 29's attention backward (the first
// trainable layer: nothing of the frozen layers is saved); with checkpointing the same recomputed
// tensors are saved plus the checkpoints' shared input position_ids (int64, 8·s = 2,048 B).
TEST(Physics, CheckpointingKeepsItsSharedInputs) {
  json s = json::parse(R"({"model":"meta-llama/Llama-3.1-8B","gpu":"a100-sxm-80gb","train":{"method":"freeze","precision":"bf16",
      "attention":"sdpa","micro_batch_size":4,"seq_len":256,"optimizer":"sgd_momentum","gradient_checkpointing":false,
      "freeze":{"trainable_layers":3,"train_lm_head":true}}})");
  const Result none = Simulate(s);
  s["train"]["gradient_checkpointing"] = true;
  const Result full = Simulate(s);
  // The first trainable layer's pre-MLP norm backward holds the peak (five fp32 T·h buffers); its
  // checkpoint keeps the bf16 input (2·T·h) through that layer's backward, which nothing keeps
  // without checkpointing (its input needs no gradient), plus the position ids (8·s).
  EXPECT_EQ(none.peak_at, "layer 29 post-attention norm backward");
  EXPECT_EQ(full.peak_at, "layer 29 post-attention norm backward");
  EXPECT_EQ(full.gpu.peak_allocated_bytes - none.gpu.peak_allocated_bytes, 8 * 256 + 2 * 4 * 256 * 4096);
}

TEST(Physics, CheckpointingNeverRaisesThePeakBeyondItsSharedInputs) {
  int compared = 0, raised = 0;
  int64_t smallest_raise = INT64_MAX, largest_raise = 0;
  for (json base : RandomTrainingScenarios(77, kScenarios)) {
    base["train"]["gradient_checkpointing"] = false;
    const Result none = Simulate(base);
    const int64_t b = base["train"]["micro_batch_size"].get<int64_t>(), s = base["train"]["seq_len"].get<int64_t>();
    const bool eager = base["train"]["attention"] == "eager";
    const bool padding_mask = base["framework"].value("attention_mask", true);
    // position ids (int64) + the eager mask (b x 1 x s x s, or s x (s + 1) without padding), at most 4 B per element
    const int64_t shared_inputs = 8 * s + (eager ? (padding_mask ? 4 * b * s * s : 4 * s * (s + 1)) : 0);
    for (const json mode : {json(true), json("selective")}) {
      json with = base;
      with["train"]["gradient_checkpointing"] = mode;
      const Result r = Simulate(with);
      ++compared;
      if (r.gpu.peak_allocated_bytes <= none.gpu.peak_allocated_bytes) continue;
      ++raised;
      smallest_raise = std::min(smallest_raise, r.gpu.peak_allocated_bytes - none.gpu.peak_allocated_bytes);
      largest_raise = std::max(largest_raise, r.gpu.peak_allocated_bytes - none.gpu.peak_allocated_bytes);
      EXPECT_LE(r.gpu.peak_allocated_bytes - none.gpu.peak_allocated_bytes, shared_inputs + testing_support::CheckpointedLayerBound(with.dump()))
          << with.dump();
      EXPECT_EQ(r.peak_phase, "backward") << with.dump();
    }
  }
  EXPECT_EQ(compared, 2 * kScenarios);
  std::cout << "[ physics ] checkpointing raised the peak (by its shared inputs and one checkpointed layer's own buffers) in " << raised << " of " << compared
            << (raised > 0 ? " (+" + std::to_string(smallest_raise) + " to +" + std::to_string(largest_raise) + " B)" : std::string()) << "\n";
}

void ExpectConsistent(const json& scenario, const Result& r) {
  const PhasePeaks& p = r.gpu.phase_peaks;
  const std::string what = scenario.dump();
  for (int64_t phase : {p.load, p.forward, p.backward, p.optimizer_step}) EXPECT_LE(phase, r.gpu.peak_allocated_bytes) << what;
  EXPECT_EQ(std::max({p.load, p.forward, p.backward, p.optimizer_step}), r.gpu.peak_allocated_bytes) << what;
  EXPECT_GE(r.gpu.reserved_bytes, r.gpu.peak_allocated_bytes) << what;
  EXPECT_GE(r.gpu.reserved_bytes, r.gpu.load_reserved_bytes) << what;
  EXPECT_GE(r.gpu.device_total_bytes, r.gpu.reserved_bytes) << what;
  int64_t sum = 0;
  for (const auto& t : r.gpu.breakdown) {
    EXPECT_GE(t.bytes, 0) << t.key << " " << what;
    if (t.key != "cuda_context" && t.key != "allocator_overhead" && t.key != "comm_buffers") sum += t.bytes;
  }
  EXPECT_EQ(sum, r.gpu.peak_allocated_bytes) << what;
}

TEST(Physics, PeakAllocatedIncludesEveryPhaseAndTheLoad) {
  int checked = 0;
  for (const json& s : RandomTrainingScenarios(5, kScenarios)) {
    ExpectConsistent(s, Simulate(s));
    ++checked;
  }
  // torchtune 0.1's replayed load: a whole-tensor quantization peak that can exceed the step's.
  int load_peaks = 0;
  for (json s : RandomTrainingScenarios(6, 200)) {
    s["framework"] = {{"model_load", "torchtune_0_1"}};
    const Result r = Simulate(s);
    ExpectConsistent(s, r);
    load_peaks += r.peak_phase == "load" ? 1 : 0;
    ++checked;
  }
  EXPECT_EQ(checked, kScenarios + 200);
  std::cout << "[ physics ] torchtune 0.1 scenarios whose load holds the peak: " << load_peaks << " of 200\n";
}

// When the load holds max_memory_allocated, reserved is still what the step needs: the larger of
// the load's reserve and the step's peak plus its allocator reserve, as when the step holds it.
TEST(Physics, ALoadPeakLeavesTheReserveToTheLargerOfLoadAndStep) {
  const json s = json::parse(R"({"model":"meta-llama/Llama-2-7b-hf","gpu":"a100-sxm-80gb","train":{"method":"qlora","precision":"bf16",
      "micro_batch_size":2,"seq_len":512,"gradient_checkpointing":true,"lora":{"rank":8,"alpha":16,"targets":"all-linear",
      "adapter_dtype":"base"},"qlora_backend":"torchao"},"framework":{"attention_mask":false,"model_load":"torchtune_0_1"}})");
  const Result r = Simulate(s);
  ASSERT_EQ(r.peak_phase, "load");
  EXPECT_EQ(r.gpu.peak_allocated_bytes, r.gpu.phase_peaks.load);
  EXPECT_GT(r.gpu.phase_peaks.load, std::max({r.gpu.phase_peaks.forward, r.gpu.phase_peaks.backward, r.gpu.phase_peaks.optimizer_step}));
  EXPECT_EQ(testing_support::GpuTerm(r, "optimizer_states"), 0);  // created at the first step, after the load
  EXPECT_EQ(r.gpu.reserved_bytes, r.gpu.load_reserved_bytes);     // the tutorial's 9.13 GB reserve (qlora_torchao_test.cpp)
}

}  // namespace
}  // namespace vramplan
