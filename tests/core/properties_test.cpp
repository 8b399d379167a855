// Properties of the estimate over many random sane scenarios (support/scenario_generator.h):
//  * invariants of every result (support/result_invariants.h): the breakdown sums to the peak,
//    reserved >= peak, device_total >= reserved, fits == (headroom >= 0), no negative bytes,
//    active <= total, trainable <= total, max(timeline) == peak, every phase peak <= peak;
//  * monotonicity where the physics demands it: more micro-batch or sequence (training), more
//    batch, prompt or new tokens (transformers, llama.cpp) never lowers the peak; vLLM sizes its
//    pool by its budget, so the request shape does not move its peak; ZeRO 0 -> 1 -> 2 -> 3 never
//    raises the per-GPU peak; checkpointing never raises it; a larger LoRA rank never lowers it;
//    more GPUs under ZeRO-3 never raise the per-GPU model states;
//  * the inverse answers agree with forward estimates (the largest micro-batch / sequence /
//    context / batch that fits does fit, one more does not; the smallest format fits; min_gpus
//    fits and fewer do not).
// Each property is its own test and prints its first counterexamples as scenario JSON plus a
// minimized one. Knobs (docs/testing.md): VRAMPLAN_PROPERTY_SCENARIOS (default 1000; 500 in
// sanitizer builds), VRAMPLAN_PROPERTY_SEED.
#include <algorithm>
#include <chrono>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/json_shrink.h"
#include "checkpoint_bound.h"
#include "support/result_invariants.h"
#include "support/scenario_generator.h"
#include "vramplan/estimate.h"

namespace vramplan::fuzzing {
namespace properties_test {

constexpr uint64_t kDefaultSeed = 11;

uint64_t SampleSize() { return EnvOr("VRAMPLAN_PROPERTY_SCENARIOS", kSanitizerBuild ? 500 : 1000); }
uint64_t Seed() { return EnvOr("VRAMPLAN_PROPERTY_SEED", kDefaultSeed); }

// The estimate of a scenario (no explain strings; inverse searches only when asked), or nullopt
// when the scenario is refused.
std::optional<json> Eval(const json& scenario, bool inverse = false, bool explain = false) {
  EstimateOptions options;
  options.explain = explain;
  options.inverse = inverse;
  json r = ParseOrDiscard(EstimateJson(DumpCompact(scenario), options));
  if (!AsBool(Member(r, "ok")).value_or(false)) return std::nullopt;
  return r;
}

// The result a property receives for its scenario: the full answer as the CLI gives it, without
// the inverse searches (explained: the training timeline is only built for explained results).
std::optional<json> EvalBase(const json& scenario) { return Eval(scenario, /*inverse=*/false, /*explain=*/true); }

int64_t Peak(const json& r) { return AsInt(At(r, {"gpu", "peak_allocated_bytes"})).value_or(-1); }

struct Sample {
  uint64_t index = 0;
  json scenario;
  json result;
};

// The shared sample: generated and estimated once per test binary run.
const std::vector<Sample>& Samples() {
  static const std::vector<Sample> samples = [] {
    std::vector<Sample> out;
    const uint64_t n = SampleSize(), seed = Seed();
    size_t rejected = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (uint64_t i = 0; i < n; ++i) {
      Rng rng = Rng::For(seed, i);
      Sample s;
      s.index = i;
      s.scenario = GenerateScenario(rng, &rejected);
      std::optional<json> r = EvalBase(s.scenario);
      if (!r) continue;  // reported by the AllScenariosEstimate test
      s.result = std::move(*r);
      out.push_back(std::move(s));
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << "properties: seed " << seed << ", " << out.size() << " of " << n << " scenarios estimated in " << secs << " s ("
              << rejected << " generator draws refused by the validator and redrawn)" << (kSanitizerBuild ? " (sanitizer build)" : "") << "\n";
    return out;
  }();
  return samples;
}

bool IsTrain(const json& s) { return AsString(Member(s, "mode")).value_or("train") == "train"; }
std::string Engine(const json& s) { return AsString(At(s, {"inference", "engine"})).value_or("transformers"); }

// ---- a property: applicability, a verdict per scenario, a report with counterexamples ---------

struct Verdict {
  bool applicable = false;
  std::optional<std::string> violation;
};
Verdict NotApplicable() { return {}; }
Verdict Holds() { return {true, std::nullopt}; }
Verdict Violated(std::string why) { return {true, std::move(why)}; }

// A property of one scenario given its (explain-free, inverse-free) result.
using Property = std::function<Verdict(const json& scenario, const json& result)>;

// Runs `property` over `samples` (every `stride`-th), prints the first counterexamples and a
// minimized first one, and fails the test when any scenario violates it.
void CheckProperty(const char* name, const Property& property, size_t stride = 1) {
  const auto& samples = Samples();
  ASSERT_FALSE(samples.empty());
  size_t applicable = 0;
  std::vector<std::pair<const Sample*, std::string>> bad;
  for (size_t i = 0; i < samples.size(); i += stride) {
    Verdict v = property(samples[i].scenario, samples[i].result);
    if (!v.applicable) continue;
    ++applicable;
    if (v.violation) bad.emplace_back(&samples[i], *v.violation);
  }
  std::cout << "property " << name << ": " << bad.size() << " of " << applicable << " applicable scenarios violate it\n";
  if (bad.empty()) return;
  std::string report = std::string(name) + ": " + std::to_string(bad.size()) + " of " + std::to_string(applicable) +
                       " scenarios violate it (seed " + std::to_string(Seed()) + ")";
  for (size_t k = 0; k < bad.size() && k < 3; ++k) {
    report += "\n  scenario #" + std::to_string(bad[k].first->index) + ": " + DumpCompact(bad[k].first->scenario) + "\n    " + bad[k].second;
  }
  std::string last_detail = bad[0].second;
  const auto shrink_start = std::chrono::steady_clock::now();
  const double shrink_limit_s = kSanitizerBuild ? 20 : 5;
  json minimized = ShrinkJson(
      bad[0].first->scenario,
      [&](const json& candidate) {
        if (std::chrono::duration<double>(std::chrono::steady_clock::now() - shrink_start).count() > shrink_limit_s) return false;
        std::optional<json> r = EvalBase(candidate);
        if (!r) return false;
        Verdict v = property(candidate, *r);
        if (v.violation) last_detail = *v.violation;
        return v.violation.has_value();
      },
      400);
  Verdict again = [&] {
    std::optional<json> r = EvalBase(minimized);
    return r ? property(minimized, *r) : NotApplicable();
  }();
  report += "\n  minimized: " + DumpCompact(minimized) + "\n    " + again.violation.value_or(last_detail);
  ADD_FAILURE() << report;
}

// ---- every generated scenario is valid and estimated ------------------------------------------

TEST(Properties, GeneratedScenariosAreEstimated) {
  const auto& samples = Samples();
  EXPECT_EQ(samples.size(), SampleSize()) << "some generated scenarios were refused by the estimate";
  size_t train = 0, vllm = 0, llama = 0, transformers = 0;
  for (const auto& s : samples) {
    if (IsTrain(s.scenario)) ++train;
    else if (Engine(s.scenario) == "vllm") ++vllm;
    else if (Engine(s.scenario) == "llama_cpp") ++llama;
    else ++transformers;
  }
  std::cout << "properties: " << train << " training, " << transformers << " transformers, " << vllm << " vLLM, " << llama << " llama.cpp scenarios\n";
  EXPECT_GT(train, samples.size() / 3);
  EXPECT_GT(vllm + llama + transformers, samples.size() / 5);
}

// ---- invariants: one test per invariant --------------------------------------------------------

class ResultInvariant : public ::testing::TestWithParam<std::string> {};

TEST_P(ResultInvariant, HoldsOnEveryScenario) {
  const NamedInvariant* inv = FindInvariant(GetParam());
  ASSERT_NE(inv, nullptr);
  CheckProperty(inv->name, [inv](const json&, const json& r) {
    auto d = inv->check(r);
    return d ? Violated(*d) : Holds();
  });
}

// The checks can fail: each rejects a real result with the one number it guards tampered with
// (and accepts the result untouched: a full fine-tune on which every invariant holds today).
TEST(Properties, InvariantChecksRejectTamperedResults) {
  std::optional<json> base = EvalBase(json::parse(R"({"model":"Qwen/Qwen2.5-0.5B","train":{"method":"full","seq_len":512}})"));
  ASSERT_TRUE(base.has_value());
  auto add = [](json& j, std::initializer_list<const char*> path, int64_t delta) {
    json* cur = &j;
    for (const char* p : path) cur = &(*cur)[p];
    *cur = AsInt(cur).value_or(0) + delta;
  };
  const json& r0 = *base;
  const int64_t peak = Peak(r0), reserved = AsInt(At(r0, {"gpu", "reserved_bytes"})).value_or(0);
  const std::vector<std::pair<std::string, std::function<void(json&)>>> tampers = {
      {"breakdown_sums_to_peak", [&](json& r) { add(r, {"gpu", "breakdown", "weights"}, 1); }},
      {"overheads_compose_device_total", [&](json& r) { add(r, {"gpu", "breakdown", "cuda_context"}, 1); }},
      {"reserved_at_least_peak", [&](json& r) { r["gpu"]["reserved_bytes"] = peak - 1; }},
      {"reserved_at_least_load_reserved", [&](json& r) { r["gpu"]["load_reserved_bytes"] = reserved + 1; }},
      {"device_total_at_least_reserved", [&](json& r) { r["gpu"]["device_total_bytes"] = reserved - 1; }},
      {"fits_matches_headroom", [&](json& r) { r["gpu"]["fits"] = !AsBool(At(r, {"gpu", "fits"})).value_or(false); }},
      {"no_negative_numbers", [&](json& r) { r["gpu"]["saved_activation_bytes"] = -1; }},
      {"active_at_most_total", [&](json& r) { r["params"]["active_per_token"] = AsInt(At(r, {"params", "total"})).value_or(0) + 1; }},
      {"trainable_at_most_total", [&](json& r) { r["params"]["trainable"] = AsInt(At(r, {"params", "total"})).value_or(0) + 1; }},
      {"param_buckets_sum_to_total", [&](json& r) { add(r, {"params", "by_module", "norms"}, 1); }},
      {"timeline_max_is_peak", [&](json& r) { r["timeline"][0]["allocated_bytes"] = peak + 1; }},
      {"phase_peaks_at_most_peak", [&](json& r) { r["gpu"]["phase_peaks"]["load"] = peak + 1; }},
      {"rank_timeline_max_is_peak", [&](json& r) { r["ranks"][0]["timeline"][0]["allocated_bytes"] = peak + 1; }},
      {"gpu_is_worst_rank", [&](json& r) { r["ranks"][0]["peak_allocated_bytes"] = peak + 1; }},
      {"node_host_ram_is_rank_times_processes", [&](json& r) { add(r, {"cpu", "node_bytes"}, 1); }},
  };
  for (const auto& inv : ResultInvariants()) {
    EXPECT_FALSE(inv.check(r0).has_value()) << inv.name << " rejects the untouched result: " << inv.check(r0).value_or("");
    auto it = std::find_if(tampers.begin(), tampers.end(), [&](const auto& t) { return t.first == inv.name; });
    ASSERT_NE(it, tampers.end()) << inv.name << " has no tamper test";
    json bad = r0;
    it->second(bad);
    EXPECT_TRUE(inv.check(bad).has_value()) << inv.name << " accepts a tampered result";
  }
}

std::vector<std::string> InvariantNames() {
  std::vector<std::string> names;
  for (const auto& inv : ResultInvariants()) names.push_back(inv.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Properties, ResultInvariant, ::testing::ValuesIn(InvariantNames()),
                         [](const ::testing::TestParamInfo<std::string>& param_info) { return param_info.param; });

// ---- monotonicity -------------------------------------------------------------------------------

// The peak must not drop when `field` (a path) grows from its value v to v + 1 and to 2v.
Verdict NonDecreasingIn(const json& scenario, const json& result, const std::vector<std::string>& path, int64_t default_value,
                        int64_t max_value) {
  json* node = nullptr;
  json copy = scenario;
  json* cur = &copy;
  for (const auto& p : path) {
    if (!cur->is_object()) return NotApplicable();
    cur = &(*cur)[p];
  }
  node = cur;
  const int64_t v = AsInt(node).value_or(default_value);
  const int64_t base = Peak(result);
  bool any = false;
  for (int64_t next : {v + 1, std::max<int64_t>(1, 2 * v)}) {
    if (next <= v || next > max_value) continue;
    *node = next;
    std::optional<json> r = Eval(copy);
    if (!r) continue;  // the larger value is refused (e.g. micro_batch x seq_len > 2^31)
    any = true;
    if (Peak(*r) < base) {
      std::string field;
      for (const auto& p : path) field += (field.empty() ? "" : ".") + p;
      return Violated(field + " " + std::to_string(v) + " -> " + std::to_string(next) + ": peak_allocated " + std::to_string(base) + " -> " +
                      std::to_string(Peak(*r)) + " (" + invariant_detail::Diff(Peak(*r), base) + " B)");
    }
  }
  return any ? Holds() : NotApplicable();
}

TEST(Properties, TrainPeakNonDecreasingInMicroBatch) {
  CheckProperty("train_peak_non_decreasing_in_micro_batch", [](const json& s, const json& r) {
    return IsTrain(s) ? NonDecreasingIn(s, r, {"train", "micro_batch_size"}, 1, 65536) : NotApplicable();
  });
}

TEST(Properties, TrainPeakNonDecreasingInSeqLen) {
  CheckProperty("train_peak_non_decreasing_in_seq_len", [](const json& s, const json& r) {
    return IsTrain(s) ? NonDecreasingIn(s, r, {"train", "seq_len"}, 2048, int64_t{1} << 24) : NotApplicable();
  });
}

bool GrowingEngine(const json& s) { return !IsTrain(s) && Engine(s) != "vllm"; }

TEST(Properties, InferencePeakNonDecreasingInBatch) {
  CheckProperty("inference_peak_non_decreasing_in_batch", [](const json& s, const json& r) {
    return GrowingEngine(s) ? NonDecreasingIn(s, r, {"inference", "batch_size"}, 1, 65536) : NotApplicable();
  });
}

TEST(Properties, InferencePeakNonDecreasingInPromptLen) {
  CheckProperty("inference_peak_non_decreasing_in_prompt_len", [](const json& s, const json& r) {
    return GrowingEngine(s) ? NonDecreasingIn(s, r, {"inference", "prompt_len"}, 1024, int64_t{1} << 24) : NotApplicable();
  });
}

TEST(Properties, InferencePeakNonDecreasingInNewTokens) {
  CheckProperty("inference_peak_non_decreasing_in_new_tokens", [](const json& s, const json& r) {
    return GrowingEngine(s) ? NonDecreasingIn(s, r, {"inference", "new_tokens"}, 256, int64_t{1} << 24) : NotApplicable();
  });
}

// vLLM allocates its KV pool from gpu_memory_utilization x capacity at start-up, before any
// request: the requests' batch and lengths change what it can serve, never what it allocates.
TEST(Properties, VllmPeakIndependentOfRequestShape) {
  CheckProperty("vllm_peak_independent_of_request_shape", [](const json& s, const json& r) {
    if (IsTrain(s) || Engine(s) != "vllm") return NotApplicable();
    json v = s;
    v["inference"]["batch_size"] = AsInt(At(s, {"inference", "batch_size"})).value_or(1) * 2;
    v["inference"]["prompt_len"] = AsInt(At(s, {"inference", "prompt_len"})).value_or(1024) + 1000;
    v["inference"]["new_tokens"] = AsInt(At(s, {"inference", "new_tokens"})).value_or(256) + 100;
    std::optional<json> rv = Eval(v);
    if (!rv) return NotApplicable();
    if (Peak(*rv) == Peak(r)) return Holds();
    return Violated("batch x2, prompt +1000, new +100: peak_allocated " + std::to_string(Peak(r)) + " -> " + std::to_string(Peak(*rv)));
  });
}

// What vLLM serves is monotone: if it serves requests of length L, it serves shorter ones.
bool VllmServes(const json& r) {
  return AsBool(At(r, {"gpu", "fits"})).value_or(false) && AsBool(At(r, {"inference", "max_model_len_fits"})).value_or(false) &&
         AsInt(At(r, {"inference", "kv_token_capacity"})).value_or(0) > 0;
}

TEST(Properties, VllmServesShorterRequestsWhenItServesLonger) {
  CheckProperty("vllm_serves_shorter_requests", [](const json& s, const json& r) {
    if (IsTrain(s) || Engine(s) != "vllm" || !VllmServes(r)) return NotApplicable();
    json v = s;
    const int64_t len = AsInt(At(s, {"inference", "max_model_len"})).value_or(0);
    if (len > 1) v["inference"]["max_model_len"] = len / 2;
    v["inference"]["prompt_len"] = std::max<int64_t>(1, AsInt(At(s, {"inference", "prompt_len"})).value_or(1024) / 2);
    std::optional<json> rv = Eval(v);
    if (!rv) return NotApplicable();
    return VllmServes(*rv) ? Holds() : Violated("serves the longer request but not half of it");
  });
}

// The scenario at ZeRO stage `stage` on >= 2 GPUs, without FSDP or offload (they change what
// the stage alone does).
json AtZeroStage(const json& s, int stage) {
  json a = s;
  json& par = a["parallel"];
  if (!par.is_object()) par = json::object();
  par.erase("fsdp");
  par.erase("offload_optimizer");
  par.erase("offload_params");
  par["gpus"] = std::max<int64_t>(2, AsInt(Member(par, "gpus")).value_or(1));
  par["zero"] = stage;
  return a;
}

// Per-GPU model states: the weights term at the peak + all gradients + the device optimizer
// states (ZeRO-3 also counts the gathered units in the weights term).
int64_t ModelStates(const json& r) {
  int64_t sum = 0;
  for (const json* v : {At(r, {"gpu", "breakdown", "weights"}), At(r, {"gpu", "gradient_bytes"}), At(r, {"gpu", "optimizer_state_bytes"})}) {
    if (__builtin_add_overflow(sum, AsInt(v).value_or(0), &sum)) return INT64_MAX;
  }
  return sum;
}

// Per-GPU peak at ZeRO stage `from` and `from + 1` on the same scenario.
Verdict ZeroStepNeverRaisesPeak(const json& s, int from) {
  if (!IsTrain(s)) return NotApplicable();
  const json a = AtZeroStage(s, from), b = AtZeroStage(s, from + 1);
  std::optional<json> ra = Eval(a), rb = Eval(b);
  if (!ra || !rb) return NotApplicable();
  if (Peak(*rb) <= Peak(*ra)) return Holds();
  // The documented truth (docs/training.md section 10, tests/core/physics_test.cpp): ZeRO-3 keeps
  // its reduce bucket (reduce_bucket_size elements, at most 4 B each, with contiguous_gradients) for
  // the whole run while ZeRO-2 frees its buckets after the backward, so outside the backward ZeRO-3
  // may exceed ZeRO-2 by at most that bucket.
  // And a model within stage3_max_reuse_distance / 2 elements stays wholly gathered at the turn
  // from forward to backward (parallel/zero3_gather.h) beside its partitions: ZeRO-3 may exceed
  // ZeRO-2 by its weight shard.
  const int64_t shard = from == 2 ? AsInt(At(*rb, {"gpu", "breakdown", "weights"})).value_or(0) : 0;
  const bool kept_bucket = from == 2 && AsBool(At(b, {"parallel", "contiguous_gradients"})).value_or(true) &&
                           AsString(Member(*rb, "peak_phase")).value_or("") != "backward";
  if (from == 2 && Peak(*rb) - Peak(*ra) <= shard + (kept_bucket ? 4 * AsInt(At(b, {"parallel", "reduce_bucket_size"})).value_or(500000000) : 0)) {
    return Holds();
  }
  return Violated("zero " + std::to_string(from) + " -> " + std::to_string(from + 1) + " on " +
                  std::to_string(AsInt(At(a, {"parallel", "gpus"})).value_or(0)) + " GPUs: peak_allocated " + std::to_string(Peak(*ra)) + " -> " +
                  std::to_string(Peak(*rb)) + " (" + invariant_detail::Diff(Peak(*rb), Peak(*ra)) + " B)");
}

// Sharding only removes model states: each stage keeps at most what the previous one kept. (The
// peak itself may rise from stage 0 to 1, and so is not a property: DeepSpeed's ZeRO-1/2 allocate
// their gradient buckets, reduce_bucket_size elements, whatever the model size, and stage 0 has
// none; docs/training.md, stage_1_and_2.py ipg buffers.)
TEST(Properties, ZeroStagesNeverRaiseModelStates) {
  CheckProperty("zero_stages_never_raise_model_states", [](const json& s, const json&) {
    if (!IsTrain(s)) return NotApplicable();
    std::optional<json> prev;
    for (int stage = 0; stage <= 3; ++stage) {
      std::optional<json> r = Eval(AtZeroStage(s, stage));
      if (!r) return NotApplicable();
      if (prev && ModelStates(*r) > ModelStates(*prev)) {
        return Violated("zero " + std::to_string(stage - 1) + " -> " + std::to_string(stage) + ": weights + gradients + optimizer states " +
                        std::to_string(ModelStates(*prev)) + " -> " + std::to_string(ModelStates(*r)));
      }
      prev = std::move(r);
    }
    return Holds();
  });
}

// ZeRO-1 and ZeRO-2 allocate the same reduce buckets (one DeepSpeedZeroOptimizer); ZeRO-2 frees each
// gradient as its hook copies it into the bucket, ZeRO-1 (without overlap_comm) holds all of them
// until reduce_gradients(): no exception (docs/training.md section 8).
TEST(Properties, Zero1To2NeverRaisesPeak) {
  CheckProperty("zero_1_to_2_never_raises_peak", [](const json& s, const json&) { return ZeroStepNeverRaisesPeak(s, 1); });
}

TEST(Properties, Zero2To3NeverRaisesPeak) {
  CheckProperty("zero_2_to_3_never_raises_peak", [](const json& s, const json&) { return ZeroStepNeverRaisesPeak(s, 2); });
}

Verdict CheckpointingNeverRaises(const json& s, const json& mode) {
  if (!IsTrain(s)) return NotApplicable();
  json off = s, on = s;
  off["train"]["gradient_checkpointing"] = false;
  on["train"]["gradient_checkpointing"] = mode;
  std::optional<json> r_off = Eval(off), r_on = Eval(on);
  if (!r_off || !r_on) return NotApplicable();
  if (Peak(*r_on) <= Peak(*r_off)) return Holds();
  // The documented truth (docs/training.md sections 3 and 10, tests/core/physics_test.cpp): every
  // checkpoint keeps its inputs until its backward, and the inputs all layers share (int64 position
  // ids, 8·s B; the eager mask, b x s x s or s x (s + 1), at most 4 B per element) live until the
  // first checkpointed layer's backward; nothing saves them without checkpointing.
  const int64_t b = AsInt(At(s, {"train", "micro_batch_size"})).value_or(1);
  const int64_t seq = AsInt(At(s, {"train", "seq_len"})).value_or(2048);
  const bool eager = AsString(At(s, {"train", "attention"})).value_or("sdpa") == "eager";
  const bool padding_mask = AsBool(At(s, {"framework", "attention_mask"})).value_or(true);
  const int64_t shared_inputs = 8 * seq + (eager ? (padding_mask ? 4 * b * seq * seq : 4 * seq * (seq + 1)) : 0);
  // Plus what one checkpointed layer holds through its own backward: its kept input or the core's
  // arguments, and its recomputation's buffers (docs/training.md section 3, measured).
  if (AsString(Member(*r_on, "peak_phase")).value_or("") == "backward" &&
      Peak(*r_on) - Peak(*r_off) <= shared_inputs + testing_support::CheckpointedLayerBound(on.dump())) {
    return Holds();
  }
  // Selective recomputation keeps the core's arguments (q_embed, k_embed, v) in place of the core's
  // own saves in every layer (train_step.cpp, fixtures *.selective). Under autocast the RoPE outputs
  // are fp32 where the core saved 16-bit casts, so at a few tokens, where the s x s probabilities it
  // drops are tiny, a layer keeps more: at most the arguments themselves, 4 B per element.
  if (mode == "selective") {
    const int64_t layers = AsInt(At(*r_on, {"model", "num_layers"})).value_or(0);
    const int64_t heads = AsInt(At(*r_on, {"model", "num_heads"})).value_or(0);
    const int64_t kv_heads = AsInt(At(*r_on, {"model", "num_kv_heads"})).value_or(0);
    const int64_t args = 4 * b * seq * (heads + 2 * kv_heads) * AsInt(At(*r_on, {"model", "head_dim"})).value_or(0);
    if (Peak(*r_on) - Peak(*r_off) <= shared_inputs + layers * args) return Holds();
  }
  return Violated("gradient_checkpointing false -> " + DumpCompact(mode) + ": peak_allocated " + std::to_string(Peak(*r_off)) + " -> " +
                  std::to_string(Peak(*r_on)) + " (" + invariant_detail::Diff(Peak(*r_on), Peak(*r_off)) + " B)");
}

TEST(Properties, FullCheckpointingNeverRaisesPeak) {
  CheckProperty("full_checkpointing_never_raises_peak", [](const json& s, const json&) { return CheckpointingNeverRaises(s, true); });
}

TEST(Properties, SelectiveCheckpointingNeverRaisesPeak) {
  CheckProperty("selective_checkpointing_never_raises_peak", [](const json& s, const json&) { return CheckpointingNeverRaises(s, "selective"); });
}

TEST(Properties, LoraRankUpNeverLowersPeak) {
  CheckProperty("lora_rank_up_never_lowers_peak", [](const json& s, const json& r) {
    const std::string method = AsString(At(s, {"train", "method"})).value_or("lora");
    if (!IsTrain(s) || (method != "lora" && method != "qlora")) return NotApplicable();
    // Paged optimizers keep the states of tensors of >= 1e5 elements in managed memory, outside
    // torch's allocator (bitsandbytes optim/optimizer.py Optimizer8bit.get_state_buffer): a higher
    // rank can move an adapter's states across that line and lower the device peak.
    if (AsString(At(s, {"train", "optimizer"})).value_or("").rfind("paged_", 0) == 0) return NotApplicable();
    return NonDecreasingIn(s, r, {"train", "lora", "rank"}, 16, 65536);
  });
}

// Doubling the GPUs under ZeRO-3 halves the shards; the gathered units do not grow.
TEST(Properties, Zero3MoreGpusNeverRaiseModelStates) {
  CheckProperty("zero3_more_gpus_never_raise_model_states", [](const json& s, const json&) {
    if (!IsTrain(s)) return NotApplicable();
    json a = s;
    json& par = a["parallel"];
    if (!par.is_object()) par = json::object();
    par.erase("fsdp");
    par["zero"] = 3;
    const int64_t g = AsInt(Member(par, "gpus")).value_or(1);
    json b = a;
    b["parallel"]["gpus"] = g * 2;
    std::optional<json> ra = Eval(a), rb = Eval(b);
    if (!ra || !rb) return NotApplicable();
    if (ModelStates(*rb) <= ModelStates(*ra)) return Holds();
    return Violated("ZeRO-3 gpus " + std::to_string(g) + " -> " + std::to_string(2 * g) + ": weights + gradients + optimizer states " +
                    std::to_string(ModelStates(*ra)) + " -> " + std::to_string(ModelStates(*rb)));
  });
}

// ---- inverse answers agree with forward estimates -------------------------------------------------

// Inverse questions cost a search each: they run on every 5th scenario.
constexpr size_t kInverseStride = 5;

bool Fits(const json& r) { return AsBool(At(r, {"gpu", "fits"})).value_or(false); }

// Fits as the inference inverse searches judge it: on the device, and vLLM starts and has a pool.
bool InferenceFits(const json& s, const json& r) { return Fits(r) && (Engine(s) != "vllm" || VllmServes(r)); }

// `answer` is the largest value of `field` in [1, bound] that fits: it fits (when > 0), one more
// does not (unless at the bound or refused by the validator), and 0 means 1 does not fit.
Verdict LargestFittingConsistent(const char* what, int64_t answer, int64_t bound, const std::function<json(int64_t)>& with_value,
                                 const std::function<bool(const json&, const json&)>& fits) {
  auto fits_at = [&](int64_t x) -> std::optional<bool> {
    json v = with_value(x);
    std::optional<json> r = Eval(v);
    if (!r) return std::nullopt;
    return fits(v, *r);
  };
  const std::string name = std::string(what) + " = " + std::to_string(answer);
  if (answer < 0 || answer > bound) return Violated(name + " is outside [0, " + std::to_string(bound) + "]");
  if (answer == 0) {
    auto one = fits_at(1);
    if (one && *one) return Violated(name + " but 1 fits");
    return Holds();
  }
  auto at = fits_at(answer);
  if (!at) return Violated(name + " but that scenario is refused by the validator");
  if (!*at) return Violated(name + " but it does not fit");
  if (answer < bound) {
    auto above = fits_at(answer + 1);
    if (above && *above) return Violated(name + " but " + std::to_string(answer + 1) + " fits too");
  }
  return Holds();
}

// The length searches stop at the model's context limit (result "model"."context_limit", 0: none).
int64_t AtModelLimit(const json& r, int64_t bound) {
  const int64_t limit = AsInt(At(r, {"model", "context_limit"})).value_or(0);
  return limit > 0 ? std::min(bound, limit) : bound;
}

Property InverseProperty(const std::function<Verdict(const json& s, const json& r_inverse)>& check) {
  return [check](const json& s, const json&) {
    std::optional<json> r = Eval(s, /*inverse=*/true);
    if (!r) return NotApplicable();
    return check(s, *r);
  };
}

TEST(Properties, InverseMaxMicroBatchConsistent) {
  CheckProperty("inverse_max_micro_batch_consistent", InverseProperty([](const json& s, const json& r) {
    if (!IsTrain(s)) return NotApplicable();
    return LargestFittingConsistent(
        "max_micro_batch_fits", AsInt(At(r, {"training", "max_micro_batch_fits"})).value_or(-1), 65536,
        [&](int64_t x) { json v = s; v["train"]["micro_batch_size"] = x; return v; }, [](const json&, const json& rr) { return Fits(rr); });
  }), kInverseStride);
}

TEST(Properties, InverseMaxSeqLenConsistent) {
  CheckProperty("inverse_max_seq_len_consistent", InverseProperty([](const json& s, const json& r) {
    if (!IsTrain(s)) return NotApplicable();
    return LargestFittingConsistent(
        "max_seq_len_fits", AsInt(At(r, {"training", "max_seq_len_fits"})).value_or(-1), AtModelLimit(r, int64_t{1} << 24),
        [&](int64_t x) { json v = s; v["train"]["seq_len"] = x; return v; }, [](const json&, const json& rr) { return Fits(rr); });
  }), kInverseStride);
}

// The scenario at context length L as the search builds it (core/src/inference/inverse.cpp
// SetContext): vLLM max_model_len = L; llama.cpp n_ctx = L x batch; new tokens min(new, L/2).
json WithContext(const json& s, int64_t len) {
  json v = s;
  json& inf = v["inference"];
  const int64_t batch = AsInt(Member(inf, "batch_size")).value_or(1);
  const int64_t new_tokens = AsInt(Member(inf, "new_tokens")).value_or(256);
  if (Engine(s) == "vllm") inf["max_model_len"] = len;
  else if (Engine(s) == "llama_cpp") inf["n_ctx"] = len * batch;
  const int64_t gen = std::min(new_tokens, len / 2);
  inf["new_tokens"] = gen;
  inf["prompt_len"] = len - gen;
  return v;
}

TEST(Properties, InverseMaxContextConsistent) {
  CheckProperty("inverse_max_context_consistent", InverseProperty([](const json& s, const json& r) {
    if (IsTrain(s)) return NotApplicable();
    return LargestFittingConsistent("max_context_fits", AsInt(At(r, {"inference", "max_context_fits"})).value_or(-1), AtModelLimit(r, int64_t{1} << 24),
                                    [&](int64_t x) { return WithContext(s, x); }, [](const json& v, const json& rr) { return InferenceFits(v, rr); });
  }), kInverseStride);
}

// vLLM: max_batch_fits is the whole-block concurrency of the pool at the scenario's length,
// capped by max_num_seqs; the engine warns on inference.batch_size exactly when a batch exceeds
// it. Other engines: a forward estimate at that batch fits, one more does not.
bool HasBatchWarning(const json& r) {
  const json* w = Member(r, "warnings");
  if (w == nullptr || !w->is_array()) return false;
  for (const auto& x : *w) {
    if (AsString(Member(x, "field_path")).value_or("") == "inference.batch_size") return true;
  }
  return false;
}

TEST(Properties, InverseMaxBatchConsistent) {
  CheckProperty("inverse_max_batch_consistent", InverseProperty([](const json& s, const json& r) {
    if (IsTrain(s)) return NotApplicable();
    const int64_t answer = AsInt(At(r, {"inference", "max_batch_fits"})).value_or(-1);
    if (Engine(s) == "vllm") {
      if (answer <= 0) return Holds();
      json at = s, above = s;
      at["inference"]["batch_size"] = answer;
      above["inference"]["batch_size"] = answer + 1;
      std::optional<json> ra = Eval(at, false, /*explain=*/true), rb = Eval(above, false, true);
      if (!ra) return Violated("max_batch_fits = " + std::to_string(answer) + " is refused by the validator");
      if (HasBatchWarning(*ra)) return Violated("max_batch_fits = " + std::to_string(answer) + " but that batch is warned as not fitting the pool");
      if (rb && !HasBatchWarning(*rb)) return Violated("max_batch_fits = " + std::to_string(answer) + " but " + std::to_string(answer + 1) + " is not warned");
      return Holds();
    }
    const int64_t batch = AsInt(At(s, {"inference", "batch_size"})).value_or(1);
    const int64_t n_ctx = AsInt(At(s, {"inference", "n_ctx"})).value_or(0);
    return LargestFittingConsistent(
        "max_batch_fits", answer, int64_t{1} << 20,
        [&](int64_t b) {
          json v = s;
          v["inference"]["batch_size"] = b;
          if (Engine(s) == "llama_cpp" && n_ctx > 0) v["inference"]["n_ctx"] = n_ctx / batch * b;
          return v;
        },
        [](const json& v, const json& rr) { return InferenceFits(v, rr); });
  }), kInverseStride);
}

// The smallest format that fits fits, and every format of the engine that stores more weight
// bytes does not (it is the highest-fidelity step down); "" means none fits.
TEST(Properties, InverseSmallestFormatConsistent) {
  CheckProperty("inverse_smallest_format_consistent", InverseProperty([](const json& s, const json& r) {
    if (IsTrain(s)) return NotApplicable();
    const std::string answer = AsString(At(r, {"inference", "smallest_format_fits"})).value_or("?");
    const std::vector<std::string> formats =
        Engine(s) == "llama_cpp" ? std::vector<std::string>{"fp16", "gguf_q8_0", "gguf_q6_k", "gguf_q5_k_m", "gguf_q5_k_s", "gguf_q4_k_m", "gguf_q4_k_s",
                                                            "gguf_iq4_xs", "gguf_q4_0", "gguf_q3_k_m", "gguf_iq3_xxs", "gguf_q2_k", "gguf_iq2_xxs"}
                                 : std::vector<std::string>{"fp32", "bf16", "fp8", "int8", "gptq_4bit", "awq_4bit", "nf4"};
    struct Seen { std::string format; int64_t weights; bool fits; };
    std::vector<Seen> seen;
    for (const auto& f : formats) {
      json v = s;
      v["inference"]["weights"] = f;
      std::optional<json> rv = Eval(v);
      if (!rv) continue;
      seen.push_back({f, AsInt(At(*rv, {"gpu", "breakdown", "weights"})).value_or(0), InferenceFits(v, *rv)});
    }
    if (answer.empty()) {
      for (const auto& x : seen) {
        if (x.fits) return Violated("smallest_format_fits is \"\" but " + x.format + " fits");
      }
      return Holds();
    }
    const Seen* chosen = nullptr;
    for (const auto& x : seen) {
      if (x.format == answer) chosen = &x;
    }
    if (chosen == nullptr) return Violated("smallest_format_fits = " + answer + " is not a format of this engine");
    if (!chosen->fits) return Violated("smallest_format_fits = " + answer + " but it does not fit");
    for (const auto& x : seen) {
      if (x.fits && x.weights > chosen->weights) {
        return Violated("smallest_format_fits = " + answer + " (" + std::to_string(chosen->weights) + " B of weights) but " + x.format + " (" +
                        std::to_string(x.weights) + " B) fits too");
      }
    }
    return Holds();
  }), kInverseStride);
}

// min_gpus (tensor parallel, transformers and vLLM): tp = min_gpus fits, every smaller
// power-of-two tp that divides the heads does not. llama.cpp splits layers, which no scenario
// field expresses, so its answer has no forward estimate to compare with.
TEST(Properties, InverseMinGpusConsistent) {
  CheckProperty("inverse_min_gpus_consistent", InverseProperty([](const json& s, const json& r) {
    if (IsTrain(s) || Engine(s) == "llama_cpp") return NotApplicable();
    const int64_t answer = AsInt(At(r, {"inference", "min_gpus"})).value_or(-1);
    const int64_t gpus = AsInt(At(s, {"parallel", "gpus"})).value_or(1);
    auto fits_at = [&](int64_t tp) -> std::optional<bool> {
      json v = s;
      v["parallel"]["tp"] = tp;
      v["parallel"]["gpus"] = std::max(gpus, tp);
      std::optional<json> rv = Eval(v);
      if (!rv) return std::nullopt;
      return InferenceFits(v, *rv);
    };
    if (answer == 0) {
      for (int64_t tp = 1; tp <= 64; tp *= 2) {
        auto f = fits_at(tp);
        if (f && *f) return Violated("min_gpus = 0 (none up to 64) but tp " + std::to_string(tp) + " fits");
      }
      return Holds();
    }
    auto f = fits_at(answer);
    if (!f) return Violated("min_gpus = " + std::to_string(answer) + " is refused by the validator");
    if (!*f) return Violated("min_gpus = " + std::to_string(answer) + " but tp " + std::to_string(answer) + " does not fit");
    for (int64_t tp = 1; tp < answer; tp *= 2) {
      auto g = fits_at(tp);
      if (g && *g) return Violated("min_gpus = " + std::to_string(answer) + " but tp " + std::to_string(tp) + " fits");
    }
    return Holds();
  }), kInverseStride);
}

}  // namespace
}  // namespace vramplan::fuzzing
