// Sizes at the edge of what the validator accepts. Every numeric scenario field is driven to its
// maximum (the ranges of core/src/io/scenario_json.cpp), alone and all together, for every mode,
// training method, inference engine and attention kernel, over dense, MoE, MLA, gpt-oss, GPT-2 and
// 405B presets and three synthetic configs at the reader's limits (65,536 experts, 4,096 heads, a
// 2^24 vocabulary); then a few hundred random scenarios with sizes drawn up to their maxima. Each
// estimate must be either a clean error naming a field (code "too_large" when the sizes multiply
// beyond 2^62 B) or a result in which no number is negative, the sums hold (peak = breakdown,
// reserved >= peak, device total >= reserved, fits == headroom >= 0) and the inverse answers are
// verified (the answer fits, answer + 1 does not, below the search bound). scripts/test-sanitizers
// runs this under UBSan with -fno-sanitize-recover: an int64 overflow on these paths fails the run.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "inference/engines.h"
#include "parallel/shard.h"
#include "parallel/topology.h"
#include "planner/prepared.h"
#include "inference/kv_cache.h"
#include "io/enum_names.h"
#include "test_support.h"
#include "util/checked_math.h"
#include "util/size_limits.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace overflow_test {

using nlohmann::json;

// The validator's maxima (core/src/io/scenario_json.cpp); FieldMaximaAreTheValidators checks them.
constexpr int64_t kMaxTokens = int64_t{1} << 24;
constexpr int64_t kMaxBatch = int64_t{1} << 16;
constexpr int64_t kMaxGpus = int64_t{1} << 20;
constexpr int64_t kMaxMemoryBytes = int64_t{1} << 50;
// The inverse searches answer within the validator's ranges (inference/inverse.cpp): the context
// up to kMaxTokens (llama.cpp: n_ctx = context x batch within kMaxTokens), the batch up to kMaxBatch
// (llama.cpp with an explicit n_ctx, which scales with the batch: n_ctx within kMaxTokens).
// The searches stop at the model's own context limit too (planner/context_limit_check.h).
int64_t AtModelLimit(const Scenario& s, int64_t bound) { return s.model.context_limit > 0 ? std::min(bound, s.model.context_limit) : bound; }
int64_t ContextSearchBound(const Scenario& s) {
  return AtModelLimit(s, s.inference.engine == Engine::kLlamaCpp ? std::max<int64_t>(1, kMaxTokens / std::max<int64_t>(1, s.inference.batch_size)) : kMaxTokens);
}
int64_t BatchSearchBound(const Scenario& s) {
  if (s.inference.engine != Engine::kLlamaCpp || s.inference.n_ctx <= 0) return kMaxBatch;
  const int64_t per_seq = std::max<int64_t>(1, s.inference.n_ctx / std::max<int64_t>(1, s.inference.batch_size));
  return std::max<int64_t>(1, std::min(kMaxBatch, kMaxTokens / per_seq));
}
constexpr double kMaxTrainTokens = 2147483648.0;  // micro_batch_size x seq_len accepted by the validator

// A Mixtral-style config with the most experts and the widest top-k its reader accepts (65,536
// each) on tiny widths: router logits and routed rows grow with tokens x experts.
json ExtremeMoeConfig() {
  return json{{"model_type", "mixtral"},       {"hidden_size", 64},          {"intermediate_size", 64},
              {"num_hidden_layers", 2},        {"num_attention_heads", 4},   {"num_key_value_heads", 4},
              {"vocab_size", 256},             {"num_local_experts", 65536}, {"num_experts_per_tok", 65536},
              {"_name_or_path", "extreme-moe"}};
}

// 64 layers of 4,096 one-dimensional heads: eager scores saved in every layer.
json ManyHeadsConfig() {
  return json{{"model_type", "llama"},          {"hidden_size", 4096},          {"intermediate_size", 4096},
              {"num_hidden_layers", 64},        {"num_attention_heads", 4096},  {"num_key_value_heads", 4096},
              {"vocab_size", 1024},             {"_name_or_path", "many-heads"}};
}

// The largest vocabulary the config reader accepts (2^24): logits grow with tokens x vocabulary.
json WideVocabConfig() {
  return json{{"model_type", "llama"},          {"hidden_size", 4096},          {"intermediate_size", 16384},
              {"num_hidden_layers", 2},         {"num_attention_heads", 32},    {"num_key_value_heads", 8},
              {"vocab_size", int64_t{1} << 24}, {"_name_or_path", "wide-vocab"}};
}

struct Model {
  std::string name;
  json model;  // preset id or inline config
  int64_t layers;
  int64_t heads;  // the largest valid tensor-parallel degree divides them
};

const std::vector<Model>& Models() {
  static const std::vector<Model> models = {
      {"dense", "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B", 28, 12},
      {"moe", "Qwen/Qwen3-30B-A3B", 48, 32},
      {"mla", "deepseek-ai/DeepSeek-V3", 61, 128},
      {"gpt_oss", "openai/gpt-oss-20b", 24, 64},
      {"gpt2", "openai-community/gpt2", 12, 12},
      {"big", "meta-llama/Llama-3.1-405B", 126, 128},
      {"extreme_moe", ExtremeMoeConfig(), 2, 4},
      {"many_heads", ManyHeadsConfig(), 64, 4096},
      {"wide_vocab", WideVocabConfig(), 2, 32},
  };
  return models;
}

// One field (or a few that only make sense together) set to the maximum the validator accepts.
struct FieldMax {
  std::string name;
  json patch;  // merged into the scenario (json::merge_patch)
};

json Patch(const std::string& section, const json& fields) { return json{{section, fields}}; }

std::vector<FieldMax> TrainFields(const std::string& method, const Model& m) {
  std::vector<FieldMax> f = {
      {"micro_batch_size", Patch("train", {{"micro_batch_size", kMaxBatch}})},
      {"seq_len", Patch("train", {{"seq_len", kMaxTokens}})},
      {"grad_accum_steps", Patch("train", {{"grad_accum_steps", int64_t{1} << 20}})},
      {"gpus", Patch("parallel", {{"gpus", kMaxGpus}})},
      {"zero3_buckets", Patch("parallel", {{"gpus", 8}, {"zero", 3}, {"reduce_bucket_size", int64_t{1} << 40}})},
      {"zero2_buckets", Patch("parallel", {{"gpus", 8}, {"zero", 2}, {"overlap_comm", true}, {"reduce_bucket_size", int64_t{1} << 40}})},
      {"cp", Patch("parallel", {{"cp", 65536}, {"gpus", 65536}})},
      {"memory_bytes", json{{"gpu", {{"name", "1 PiB"}, {"memory_bytes", kMaxMemoryBytes}}}}},
  };
  if (method == "lora" || method == "qlora" || method == "qlora_gptq") {
    f.push_back({"lora.rank", Patch("train", {{"lora", {{"rank", 65536}}}})});
    f.push_back({"lora.alpha", Patch("train", {{"lora", {{"alpha", 1e6}}}})});
    f.push_back({"lora.dropout", Patch("train", {{"lora", {{"dropout", 0.99}, {"use_dora", true}}}})});
  }
  if (method == "qlora_gptq") f.push_back({"qlora_group_size", Patch("train", {{"qlora_group_size", 4096}})});
  if (method == "freeze") f.push_back({"trainable_layers", Patch("train", {{"freeze", {{"trainable_layers", m.layers}}}})});
  return f;
}

std::vector<FieldMax> InferenceFields(const std::string& engine, const Model& m) {
  std::vector<FieldMax> f = {
      {"batch_size", Patch("inference", {{"batch_size", kMaxBatch}})},
      {"prompt_len", Patch("inference", {{"prompt_len", kMaxTokens}})},
      {"new_tokens", Patch("inference", {{"new_tokens", kMaxTokens}})},
      {"gpus", Patch("parallel", {{"gpus", kMaxGpus}})},
      {"tp", Patch("parallel", {{"tp", m.heads}, {"gpus", m.heads}})},
      {"memory_bytes", json{{"gpu", {{"name", "1 PiB"}, {"memory_bytes", kMaxMemoryBytes}}}}},
  };
  if (engine == "transformers") f.push_back({"logits_all", Patch("inference", {{"logits", "all"}, {"prompt_len", kMaxTokens}})});
  if (engine == "vllm") {
    f.push_back({"gpu_memory_utilization", Patch("inference", {{"gpu_memory_utilization", 1.0}})});
    f.push_back({"max_model_len", Patch("inference", {{"max_model_len", kMaxTokens}})});
    f.push_back({"max_num_batched_tokens", Patch("inference", {{"max_num_batched_tokens", kMaxTokens}})});
    f.push_back({"max_num_seqs", Patch("inference", {{"max_num_seqs", kMaxBatch}})});
    f.push_back({"block_size", Patch("inference", {{"block_size", 1024}})});
  }
  if (engine == "llama_cpp") {
    f.push_back({"n_ctx", Patch("inference", {{"n_ctx", kMaxTokens}})});
    f.push_back({"n_batch", Patch("inference", {{"n_batch", kMaxTokens}})});
    f.push_back({"n_ubatch", Patch("inference", {{"n_ubatch", kMaxTokens}, {"n_batch", kMaxTokens}})});
    f.push_back({"n_gpu_layers", Patch("inference", {{"n_gpu_layers", 4096}})});
  }
  return f;
}

// Every field of the list at once (patches merged in order).
FieldMax Together(const std::vector<FieldMax>& fields, const std::vector<std::string>& skip = {}) {
  FieldMax all{"all", json::object()};
  for (const auto& f : fields) {
    if (std::find(skip.begin(), skip.end(), f.name) == skip.end()) all.patch.merge_patch(f.patch);
  }
  return all;
}

// ---- checks

bool FitsTyped(const Scenario& s) {
  Result r = Estimate(s, EstimateOptions{false, false});
  if (!r.errors.empty()) return false;
  return s.mode == Mode::kTrain ? r.gpu.fits : InferenceFits(s, r);
}

// The context the inverse search sets (inference/inverse.cpp SetContext): prompt + new tokens,
// vLLM's max_model_len, llama.cpp's n_ctx per sequence.
Scenario WithContext(const Scenario& base, int64_t len) {
  Scenario s = base;
  InferenceConfig& i = s.inference;
  if (i.engine == Engine::kVllm) i.max_model_len = len;
  else if (i.engine == Engine::kLlamaCpp) i.n_ctx = len * std::max<int64_t>(1, i.batch_size);
  i.new_tokens = std::min(base.inference.new_tokens, len / 2);
  i.prompt_len = len - i.new_tokens;
  return s;
}

Scenario WithBatch(const Scenario& base, int64_t b) {
  Scenario s = base;
  s.inference.batch_size = b;
  if (s.inference.engine == Engine::kLlamaCpp && base.inference.n_ctx > 0) {
    s.inference.n_ctx = base.inference.n_ctx / std::max<int64_t>(1, base.inference.batch_size) * b;
  }
  return s;
}

void ExpectInverseAnswersVerified(const Scenario& s, const json& r, const std::string& where) {
  if (s.mode == Mode::kTrain) {
    const int64_t mb = r["training"]["max_micro_batch_fits"].get<int64_t>();
    const int64_t seq = r["training"]["max_seq_len_fits"].get<int64_t>();
    Scenario w = s;
    if (mb > 0) {
      w.train.micro_batch_size = mb;
      EXPECT_TRUE(FitsTyped(w)) << where << ": max_micro_batch_fits " << mb << " does not fit";
    }
    if (mb < kMaxBatch) {
      w.train.micro_batch_size = mb + 1;
      const bool beyond_domain = static_cast<double>(mb + 1) * static_cast<double>(s.train.seq_len) > kMaxTrainTokens;
      EXPECT_TRUE(beyond_domain || !FitsTyped(w)) << where << ": max_micro_batch_fits " << mb << " + 1 fits";
    }
    w = s;
    if (seq > 0) {
      w.train.seq_len = seq;
      EXPECT_TRUE(FitsTyped(w)) << where << ": max_seq_len_fits " << seq << " does not fit";
    }
    if (seq < AtModelLimit(s, kMaxTokens)) {
      w.train.seq_len = seq + 1;
      const bool beyond_domain = static_cast<double>(s.train.micro_batch_size) * static_cast<double>(seq + 1) > kMaxTrainTokens;
      EXPECT_TRUE(beyond_domain || !FitsTyped(w)) << where << ": max_seq_len_fits " << seq << " + 1 fits";
    }
    return;
  }
  const json& c = r["inference"];
  const int64_t ctx = c["max_context_fits"].get<int64_t>();
  if (ctx > 0) EXPECT_TRUE(FitsTyped(WithContext(s, ctx))) << where << ": max_context_fits " << ctx << " does not fit";
  EXPECT_LE(ctx, ContextSearchBound(s)) << where;
  if (ctx < ContextSearchBound(s)) EXPECT_FALSE(FitsTyped(WithContext(s, ctx + 1))) << where << ": max_context_fits " << ctx << " + 1 fits";
  const int64_t batch = c["max_batch_fits"].get<int64_t>();
  if (s.inference.engine == Engine::kVllm) {
    EXPECT_LE(batch, s.inference.max_num_seqs) << where;
  } else {
    if (batch > 0) EXPECT_TRUE(FitsTyped(WithBatch(s, batch))) << where << ": max_batch_fits " << batch << " does not fit";
    EXPECT_LE(batch, BatchSearchBound(s)) << where;
    if (batch < BatchSearchBound(s)) EXPECT_FALSE(FitsTyped(WithBatch(s, batch + 1))) << where << ": max_batch_fits " << batch << " + 1 fits";
  }
  const std::string format = c["smallest_format_fits"].get<std::string>();
  if (!format.empty()) {
    Scenario w = s;
    bool known = false;
    for (const auto& e : io::kWeightFormatNames) {
      if (format == e.name) {
        w.inference.weights = e.value;
        known = true;
      }
    }
    EXPECT_TRUE(known) << format;
    EXPECT_TRUE(FitsTyped(w)) << where << ": smallest_format_fits " << format << " does not fit";
  }
  const int64_t gpus = c["min_gpus"].get<int64_t>();
  if (gpus > 0 && s.inference.engine != Engine::kLlamaCpp) {
    Scenario w = s;
    w.parallel.tp = gpus;
    w.parallel.gpus = std::max(s.parallel.gpus, gpus);
    EXPECT_TRUE(FitsTyped(w)) << where << ": min_gpus " << gpus << " does not fit";
  }
}

// Every number of the result except the scenario echo (n_gpu_layers -1, qlora_group_size -1) and
// the headroom (negative when the job does not fit) is >= 0.
void ExpectNoNegative(const json& j, const std::string& path, const std::string& where) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (path.empty() && it.key() == "scenario") continue;
      if (path == "/gpu" && it.key() == "headroom_bytes") continue;
      ExpectNoNegative(*it, path + "/" + it.key(), where);
    }
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) ExpectNoNegative(j[i], path + "/" + std::to_string(i), where);
  } else if (j.is_number_integer()) {
    EXPECT_GE(j.get<int64_t>(), 0) << where << ": " << path;
  } else if (j.is_number_float()) {
    EXPECT_GE(j.get<double>(), 0) << where << ": " << path;
  }
}

bool IsScenarioPath(const std::string& p) {
  for (const char* root : {"model", "mode", "train", "inference", "parallel", "gpu", "framework"}) {
    if (p.rfind(root, 0) == 0) return true;
  }
  return false;
}

void ExpectCleanErrors(const json& r, const std::string& where) {
  ASSERT_TRUE(r.contains("errors")) << where;
  ASSERT_FALSE(r["errors"].empty()) << where;
  for (const auto& e : r["errors"]) {
    const std::string field = e["field_path"].get<std::string>(), message = e["message"].get<std::string>();
    EXPECT_TRUE(IsScenarioPath(field)) << where << ": " << e.dump();
    EXPECT_FALSE(message.empty()) << where;
    EXPECT_EQ(message.find('\n'), std::string::npos) << where;
    if (e["code"] == "too_large") {
      EXPECT_NE(message.find("2^62"), std::string::npos) << where << ": " << message;
    }
  }
}

struct Tally {
  int results = 0;
  int refused_too_large = 0;
  int refused_other = 0;
};

// The estimate of one scenario, checked as the header says, and counted in `tally`.
void CheckScenario(const json& scenario, const std::string& where, Tally* tally) {
  const std::string text = scenario.dump();
  const json r = json::parse(EstimateJson(text), nullptr, false);
  ASSERT_FALSE(r.is_discarded()) << where;
  const json summary = json::parse(EstimateSummaryJson(text), nullptr, false);
  ASSERT_EQ(r["ok"], summary["ok"]) << where;
  if (!r["ok"].get<bool>()) {
    ExpectCleanErrors(r, where);
    EXPECT_EQ(r["errors"], summary["errors"]) << where;
    const bool too_large = r["errors"][0]["code"] == "too_large";
    ++(too_large ? tally->refused_too_large : tally->refused_other);
    return;
  }
  ++tally->results;
  ExpectNoNegative(r, "", where);
  const json& g = r["gpu"];
  const json& bd = g["breakdown"];
  int64_t allocated = 0;
  for (auto it = bd.begin(); it != bd.end(); ++it) {
    if (it.key() != "cuda_context" && it.key() != "allocator_overhead" && it.key() != "comm_buffers") allocated += it->get<int64_t>();
  }
  const int64_t peak = g["peak_allocated_bytes"], reserved = g["reserved_bytes"], total = g["device_total_bytes"];
  EXPECT_EQ(peak, allocated) << where;
  EXPECT_EQ(reserved, peak + bd["allocator_overhead"].get<int64_t>()) << where;
  EXPECT_EQ(total, reserved + bd["cuda_context"].get<int64_t>() + bd["comm_buffers"].get<int64_t>()) << where;
  EXPECT_GE(reserved, peak) << where;
  EXPECT_GE(total, reserved) << where;
  EXPECT_LE(total, checked::kMaxDeviceBytes) << where;
  EXPECT_EQ(g["headroom_bytes"].get<int64_t>(), g["capacity_bytes"].get<int64_t>() - total) << where;
  EXPECT_EQ(g["fits"].get<bool>(), g["headroom_bytes"].get<int64_t>() >= 0) << where;
  for (const char* key : {"peak_allocated_bytes", "reserved_bytes", "device_total_bytes", "headroom_bytes", "fits"}) {
    EXPECT_EQ(summary[key], g[key]) << where << ": " << key;
  }
  Expected<Scenario> s = ParseScenario(text);
  ASSERT_TRUE(s.ok()) << where;
  ExpectInverseAnswersVerified(s.value(), r, where);
}

// Settings that switch formulas on (precisions, losses, checkpointing, optimizers, framework
// switches, the CPU device, weight and cache formats), applied to the all-at-once cases.
const std::vector<json>& TrainKnobs() {
  static const std::vector<json> knobs = {
      json::object(),
      {{"train", {{"precision", "fp32"}}}, {"framework", {{"keep_outputs", true}, {"use_cache", true}}}},
      {{"train", {{"precision", "amp_bf16"}, {"gradient_checkpointing", "selective"}, {"loss", "chunked"}, {"optimizer", "adafactor"}}}},
      {{"train", {{"precision", "mixed_bf16"}, {"gradient_checkpointing", true}, {"loss", "fused_linear"}, {"optimizer", "lion"}}},
       {"framework", {{"preset", "torch_1_13_hf_4_44"}}}},
      {{"train", {{"optimizer", "paged_adamw_8bit"}, {"optimizer_impl", "for_loop"}}}, {"framework", {{"model_load", "torchtune_0_1"}}}},
      {{"framework", {{"device", "cpu"}, {"cpu_onednn_bf16_buffers", true}, {"cpu_kv_alive_at_scores", true}, {"attention_mask", false}}}},
  };
  return knobs;
}

const std::vector<json>& InferenceKnobs() {
  static const std::vector<json> knobs = {
      json::object(),
      {{"inference", {{"weights", "fp32"}, {"kv_cache", "fp32"}}}},
      {{"inference", {{"weights", "gguf_q4_k_m"}, {"kv_cache", "int8"}}}},
      {{"inference", {{"weights", "gptq_4bit"}, {"kv_cache", "int4"}}}},
      {{"inference", {{"weights", "fp8"}, {"kv_cache", "fp8"}, {"cuda_graphs", false}}}},
      {{"inference", {{"weights", "awq_4bit"}}}, {"framework", {{"device", "cpu"}}}},
  };
  return knobs;
}

// `cases` plus every all-at-once case ("all..." names) under every knob but the first.
std::vector<FieldMax> WithKnobs(std::vector<FieldMax> cases, const std::vector<json>& knobs) {
  const size_t n = cases.size();
  for (size_t i = 0; i < n; ++i) {
    if (cases[i].name.rfind("all", 0) != 0) continue;
    for (size_t k = 1; k < knobs.size(); ++k) {
      FieldMax f = cases[i];
      f.name += " knob " + std::to_string(k);
      f.patch.merge_patch(knobs[k]);
      cases.push_back(f);
    }
  }
  return cases;
}

json BaseTrain(const Model& m, const std::string& method, const std::string& attention) {
  json t = {{"attention", attention}, {"gradient_checkpointing", false}};
  if (method == "qlora_gptq") t.update({{"method", "qlora"}, {"qlora_backend", "gptq"}});
  else t["method"] = method;
  return json{{"model", m.model}, {"mode", "train"}, {"train", t}, {"gpu", "h100-sxm-80gb"}};
}

json BaseInference(const Model& m, const std::string& engine, const std::string& attention) {
  json i = {{"engine", engine}};
  if (engine == "llama_cpp") i["flash_attn"] = attention == "flash";
  else i["attention"] = attention;
  return json{{"model", m.model}, {"mode", "inference"}, {"inference", i}, {"gpu", "p100-pcie-16gb"}};
}

void RunGrid(const Model& m, Tally* tally) {
  for (const std::string method : {"full", "freeze", "lora", "qlora", "qlora_gptq"}) {
    for (const std::string attention : {"eager", "sdpa", "flash"}) {
      const json base = BaseTrain(m, method, attention);
      const std::vector<FieldMax> fields = TrainFields(method, m);
      std::vector<FieldMax> cases = fields;
      cases.push_back(Together(fields));
      cases.push_back(Together(fields, {"seq_len", "micro_batch_size"}));  // sizes beside the tokens
      // The validator caps micro_batch_size x seq_len at 2^31 tokens: the largest products it accepts.
      for (const auto& [b, len] : {std::pair<int64_t, int64_t>{kMaxBatch, int64_t{1} << 15}, {int64_t{1} << 7, kMaxTokens}}) {
        FieldMax f = Together(fields, {"seq_len", "micro_batch_size"});
        f.name = "all at " + std::to_string(b) + " x " + std::to_string(len) + " tokens";
        f.patch.merge_patch(Patch("train", {{"micro_batch_size", b}, {"seq_len", len}}));
        cases.push_back(f);
      }
      // The knobs on full fine-tuning and QLoRA (which together reach every training formula).
      const bool knobs = method == "full" || method == "qlora";
      for (const auto& f : knobs ? WithKnobs(cases, TrainKnobs()) : cases) {
        json sc = base;
        sc.merge_patch(f.patch);
        CheckScenario(sc, m.name + " train " + method + " " + attention + " " + f.name + " " + sc.dump(), tally);
      }
    }
  }
  for (const std::string engine : {"transformers", "vllm", "llama_cpp"}) {
    for (const std::string attention : {"eager", "sdpa", "flash"}) {
      if (engine == "vllm" && attention != "sdpa") continue;          // vLLM picks its own kernel
      if (engine == "llama_cpp" && attention == "sdpa") continue;     // llama.cpp: flash_attn on or off
      const json base = BaseInference(m, engine, attention);
      const std::vector<FieldMax> fields = InferenceFields(engine, m);
      std::vector<FieldMax> cases = fields;
      cases.push_back(Together(fields, {"gpus"}));  // tp needs gpus = tp
      cases.push_back(Together(fields, {"gpus", "prompt_len", "new_tokens", "logits_all"}));
      for (const auto& f : WithKnobs(cases, InferenceKnobs())) {
        json sc = base;
        sc.merge_patch(f.patch);
        CheckScenario(sc, m.name + " inference " + engine + " " + attention + " " + f.name + " " + sc.dump(), tally);
      }
    }
  }
}

class EdgeOfRange : public ::testing::TestWithParam<size_t> {};

TEST_P(EdgeOfRange, EveryFieldAtItsMaximumAloneAndTogether) {
  const Model& m = Models()[GetParam()];
  Tally tally;
  RunGrid(m, &tally);
  // Both outcomes occur: the grid reaches refusals and real results.
  EXPECT_GT(tally.results, 0) << m.name;
  EXPECT_GT(tally.refused_too_large, 0) << m.name;
  RecordProperty("results", tally.results);
  RecordProperty("too_large", tally.refused_too_large);
  RecordProperty("other_errors", tally.refused_other);
}

INSTANTIATE_TEST_SUITE_P(Overflow, EdgeOfRange, ::testing::Range<size_t>(0, 9),
                         [](const ::testing::TestParamInfo<size_t>& info) { return Models()[info.param].name; });

// The maxima above are the validator's: each is accepted, one more is refused (so that a change of
// range shows up here instead of silently shrinking the grid).
TEST(Overflow, FieldMaximaAreTheValidators) {
  const json train = {{"model", "Qwen/Qwen2.5-0.5B"}, {"mode", "train"}};
  const json inference = {{"model", "Qwen/Qwen2.5-0.5B"}, {"mode", "inference"}};
  struct Case {
    json base;
    std::string section, key;
    int64_t max;
  };
  const std::vector<Case> cases = {
      {train, "train", "micro_batch_size", kMaxBatch},     {train, "train", "seq_len", kMaxTokens},
      {train, "train", "grad_accum_steps", int64_t{1} << 20}, {inference, "inference", "batch_size", kMaxBatch},
      {inference, "inference", "prompt_len", kMaxTokens},  {inference, "inference", "new_tokens", kMaxTokens},
      {inference, "inference", "max_model_len", kMaxTokens}, {inference, "inference", "max_num_batched_tokens", kMaxTokens},
      {inference, "inference", "max_num_seqs", kMaxBatch}, {inference, "inference", "block_size", 1024},
      {inference, "inference", "n_ctx", kMaxTokens},       {inference, "inference", "n_batch", kMaxTokens},
      {inference, "inference", "n_ubatch", kMaxTokens},    {inference, "inference", "n_gpu_layers", 4096},
      {inference, "parallel", "gpus", kMaxGpus},           {inference, "parallel", "reduce_bucket_size", int64_t{1} << 40},
  };
  for (const auto& c : cases) {
    for (int64_t v : {c.max, c.max + 1}) {
      json sc = c.base;
      sc[c.section][c.key] = v;
      Expected<Scenario> s = ParseScenario(sc.dump());
      EXPECT_EQ(s.ok(), v == c.max) << c.section << "." << c.key << " = " << v;
    }
  }
  for (int64_t v : {kMaxMemoryBytes, kMaxMemoryBytes + 1}) {
    json sc = inference;
    sc["gpu"] = {{"name", "g"}, {"memory_bytes", v}};
    EXPECT_EQ(ParseScenario(sc.dump()).ok(), v == kMaxMemoryBytes);
  }
  json lora = train;
  lora["train"] = {{"lora", {{"rank", 65536}}}};
  EXPECT_TRUE(ParseScenario(lora.dump()).ok());
  lora["train"]["lora"]["rank"] = 65537;
  EXPECT_FALSE(ParseScenario(lora.dump()).ok());
}

// ---- random scenarios with every size drawn log-uniformly over its validated range

// 2^k, k uniform in [0, max_log2], or the maximum itself one time in three (the edges matter).
int64_t LogUniform(std::mt19937_64& rng, int max_log2) {
  return int64_t{1} << (rng() % 3 == 0 ? max_log2 : static_cast<int>(rng() % static_cast<uint64_t>(max_log2 + 1)));
}

template <typename T>
const T& Pick(std::mt19937_64& rng, const std::vector<T>& v) {
  return v[rng() % v.size()];
}

json RandomEdgeScenario(std::mt19937_64& rng) {
  static const std::vector<json> models = [] {
    std::vector<json> m;
    for (const auto& p : Presets()) m.push_back(p.id);
    m.push_back(ExtremeMoeConfig());
    m.push_back(ManyHeadsConfig());
    m.push_back(WideVocabConfig());
    return m;
  }();
  const std::vector<std::string> attention = {"eager", "sdpa", "flash"};
  json sc = {{"model", Pick(rng, models)}};
  if (rng() % 3 == 0) sc["gpu"] = {{"name", "big"}, {"memory_bytes", LogUniform(rng, 50)}};
  else sc["gpu"] = Pick(rng, std::vector<std::string>{"p100-pcie-16gb", "a100-sxm-80gb", "h200-sxm-141gb", "mi300x-192gb", "apple-m3-ultra-512gb"});
  if (rng() % 2 == 0) {
    sc["mode"] = "train";
    json t = {{"method", Pick(rng, std::vector<std::string>{"full", "freeze", "lora", "qlora"})},
              {"attention", Pick(rng, attention)},
              {"micro_batch_size", LogUniform(rng, 16)},
              {"seq_len", LogUniform(rng, 24)},
              {"precision", Pick(rng, std::vector<std::string>{"fp32", "bf16", "fp16", "amp_bf16", "amp_fp16", "mixed_bf16"})},
              {"optimizer", Pick(rng, std::vector<std::string>{"adamw", "adamw_8bit", "paged_adamw_8bit", "adafactor", "sgd", "sgd_momentum", "lion"})},
              {"loss", Pick(rng, std::vector<std::string>{"standard", "chunked", "fused_linear"})},
              {"lora", {{"rank", LogUniform(rng, 16)}, {"use_dora", rng() % 4 == 0}, {"dropout", rng() % 2 ? 0.0 : 0.99}}},
              {"qlora_backend", Pick(rng, std::vector<std::string>{"bitsandbytes", "gptq"})},
              {"qlora_group_size", Pick(rng, std::vector<int64_t>{-1, 16, 128, 4096})}};
    if (rng() % 2) t["lora"]["targets"] = "all-linear";
    const int ckpt = static_cast<int>(rng() % 3);
    t["gradient_checkpointing"] = ckpt == 2 ? json("selective") : json(ckpt == 1);
    sc["train"] = t;
    sc["framework"] = {{"use_cache", rng() % 2 == 0}, {"keep_outputs", rng() % 2 == 0}, {"attention_mask", rng() % 2 == 0}};
    if (rng() % 4 == 0) sc["framework"]["preset"] = "torch_1_13_hf_4_44";
    if (rng() % 4 == 0) sc["framework"]["model_load"] = "torchtune_0_1";
    if (rng() % 6 == 0) sc["framework"].update({{"device", "cpu"}, {"cpu_onednn_bf16_buffers", true}, {"cpu_kv_alive_at_scores", true}});
    if (rng() % 2 == 0) {
      sc["parallel"] = {{"gpus", LogUniform(rng, 20)}, {"zero", static_cast<int>(rng() % 4)}, {"reduce_bucket_size", LogUniform(rng, 40)},
                        {"offload_optimizer", rng() % 3 == 0 ? "cpu" : "none"}, {"offload_params", rng() % 3 == 0 ? "cpu" : "none"}};
    }
  } else {
    sc["mode"] = "inference";
    const std::string engine = Pick(rng, std::vector<std::string>{"transformers", "vllm", "llama_cpp"});
    json i = {{"engine", engine},
              {"attention", Pick(rng, attention)},
              {"batch_size", LogUniform(rng, 16)},
              {"prompt_len", LogUniform(rng, 24)},
              {"new_tokens", rng() % 4 == 0 ? int64_t{0} : LogUniform(rng, 24)},
              {"kv_cache", Pick(rng, std::vector<std::string>{"auto", "fp32", "fp16", "fp8", "int8", "int4"})},
              {"logits", rng() % 3 == 0 ? "all" : "last"}};
    if (engine == "llama_cpp") {
      i["weights"] = Pick(rng, std::vector<std::string>{"gguf_q4_k_m", "gguf_q8_0", "gguf_iq2_xxs", "fp16"});
      i.update({{"n_ctx", rng() % 2 ? int64_t{0} : LogUniform(rng, 24)}, {"n_batch", LogUniform(rng, 24)}, {"n_ubatch", LogUniform(rng, 24)},
                {"flash_attn", rng() % 2 == 0}, {"n_gpu_layers", rng() % 2 ? int64_t{-1} : static_cast<int64_t>(rng() % 4097)}});
    } else {
      i["weights"] = Pick(rng, std::vector<std::string>{"fp32", "bf16", "fp8", "int8", "nf4", "gptq_4bit", "awq_4bit"});
    }
    if (engine == "vllm") {
      i.update({{"max_model_len", rng() % 2 ? int64_t{0} : LogUniform(rng, 24)}, {"max_num_batched_tokens", rng() % 2 ? int64_t{0} : LogUniform(rng, 24)},
                {"max_num_seqs", LogUniform(rng, 16)}, {"block_size", LogUniform(rng, 10)}, {"gpu_memory_utilization", rng() % 2 ? 1.0 : 0.5}});
    }
    sc["inference"] = i;
    if (rng() % 3 == 0) sc["parallel"] = {{"gpus", LogUniform(rng, 20)}};
    else if (rng() % 3 == 0) sc["parallel"] = {{"tp", 2}, {"gpus", 2}};
  }
  return sc;
}

// A few hundred per run (the seed is fixed; VRAMPLAN_OVERFLOW_RANDOM=N runs N with seed N for
// longer searches under the sanitizers).
TEST(Overflow, RandomEdgeScenariosAreRefusedOrSane) {
  const char* env = std::getenv("VRAMPLAN_OVERFLOW_RANDOM");
  const int n = env != nullptr ? std::atoi(env) : 300;
  std::mt19937_64 rng(env != nullptr ? static_cast<uint64_t>(n) : 2024);
  Tally tally;
  for (int k = 0; k < n; ++k) {
    const json sc = RandomEdgeScenario(rng);
    CheckScenario(sc, "random " + std::to_string(k) + " " + sc.dump(), &tally);
  }
  EXPECT_GT(tally.results, n / 10);
  EXPECT_GT(tally.refused_too_large, n / 50);
}

// ---- the cases reported in the issue, as regression tests

json Estimated(const json& scenario) { return json::parse(EstimateJson(scenario.dump()), nullptr, false); }

// Reported: "fits, 0.5 GiB" on a 16 GB P100 with a negative allocator term (the eager scores,
// ~2.8e19 B, wrapped).
TEST(Overflow, R1DistillEagerBatch1000Prompt16MIsRefused) {
  const json sc = {{"model", "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B"},
                   {"mode", "inference"},
                   {"inference", {{"batch_size", 1000}, {"prompt_len", kMaxTokens}, {"attention", "eager"}}},
                   {"gpu", "p100-pcie-16gb"}};
  const json r = Estimated(sc);
  ASSERT_FALSE(r["ok"].get<bool>()) << r.dump();
  ASSERT_EQ(r["errors"].size(), 1u);
  const json& e = r["errors"][0];
  EXPECT_EQ(e["code"], "too_large");
  EXPECT_EQ(e["field_path"], "inference.prompt_len");
  const std::string msg = e["message"];
  for (const char* named : {"inference.batch_size (1,000)", "inference.prompt_len", "12 attention heads", "eager", "2^62"}) {
    EXPECT_NE(msg.find(named), std::string::npos) << named << " in " << msg;
  }
  // The scores alone: 1000 x 12 heads x (2^24)^2 x (2 x 2 + 4) B + the mask 1000 x (2^24)^2 x 2 B.
  const double scores = 1000.0 * 16777216.0 * 16777216.0 * (12 * 8 + 2);
  EXPECT_NE(msg.find("~2.8e19 B"), std::string::npos) << scores << " " << msg;
  EXPECT_EQ(json::parse(EstimateSummaryJson(sc.dump()))["ok"], false);
  // The typed API: errors set, nothing fits.
  Result typed = Estimate(ParseScenario(sc.dump()).value());
  ASSERT_EQ(typed.errors.size(), 1u);
  EXPECT_EQ(typed.errors[0].code, "too_large");
  EXPECT_FALSE(typed.gpu.fits);
  EXPECT_EQ(typed.gpu.device_total_bytes, 0);
}

// Reported with it: max_context_fits came back as the search bound, 16,777,216 tokens, because the
// probe at 2^24 tokens wrapped. At batch 1000 the eager scores alone, 1000 x 12 heads x L^2 x 8 B,
// must fit the P100's 17,070,817,280 B: L <= sqrt(17070817280 / 96000) = 421.
TEST(Overflow, MaxContextFitsAtBatch1000IsNotTheSearchBound) {
  const json sc = {{"model", "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B"},
                   {"mode", "inference"},
                   {"inference", {{"batch_size", 1000}, {"prompt_len", 1024}, {"attention", "eager"}}},
                   {"gpu", "p100-pcie-16gb"}};
  const json r = Estimated(sc);
  ASSERT_TRUE(r["ok"].get<bool>());
  const int64_t ctx = r["inference"]["max_context_fits"];
  EXPECT_GT(ctx, 0);
  EXPECT_LE(ctx, 421);
  Tally tally;
  CheckScenario(sc, sc.dump(), &tally);  // fits at ctx, not at ctx + 1
  EXPECT_EQ(tally.results, 1);
}

// Reported: max_context_fits of 1M-16.7M tokens in 10 of 60 random eager-inference scenarios
// (probes whose byte counts wrapped looked like they fit). Every answer is now verified.
TEST(Overflow, MaxContextFitsOfRandomEagerScenariosIsVerified) {
  std::mt19937_64 rng(11);
  const std::vector<std::string> models = {"deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B", "Qwen/Qwen2.5-7B", "meta-llama/Llama-3.1-8B",
                                           "openai-community/gpt2", "google/gemma-2-2b-it", "microsoft/phi-2"};
  const std::vector<std::string> gpus = {"p100-pcie-16gb", "t4-16gb", "a100-sxm-80gb", "h200-sxm-141gb", "rtx-4090-24gb"};
  Tally tally;
  for (int i = 0; i < 60; ++i) {
    const json sc = {{"model", models[rng() % models.size()]},
                     {"mode", "inference"},
                     {"inference", {{"attention", "eager"}, {"batch_size", int64_t{1} << (rng() % 11)}, {"prompt_len", int64_t{1} << (4 + rng() % 21)},
                                    {"new_tokens", int64_t{1} << (rng() % 12)}}},
                     {"gpu", gpus[rng() % gpus.size()]}};
    CheckScenario(sc, sc.dump(), &tally);
    const json r = Estimated(sc);
    if (r["ok"].get<bool>()) {
      // Eager scores grow with the square of the context: nothing with a real GPU reaches 1M tokens.
      EXPECT_LT(r["inference"]["max_context_fits"].get<int64_t>(), 1 << 20) << sc.dump();
    }
  }
  EXPECT_GT(tally.results, 30);
}

// Reported: DeepSeek-V3's decompressed transformers cache (61 layers x 128 heads x (192 + 128) x
// 2 B = 4,997,120 B per token) for 65,536 x 2^24 tokens is 5.5e18 B: refused, not wrapped.
TEST(Overflow, DeepSeekV3KvCacheIsRefusedNotWrapped) {
  const json sc = {{"model", "deepseek-ai/DeepSeek-V3"},
                   {"mode", "inference"},
                   {"inference", {{"batch_size", kMaxBatch}, {"prompt_len", kMaxTokens}}},
                   {"gpu", "h200-sxm-141gb"}};
  const json r = Estimated(sc);
  ASSERT_FALSE(r["ok"].get<bool>()) << r.dump().substr(0, 300);
  const json& e = r["errors"][0];
  EXPECT_EQ(e["code"], "too_large");
  EXPECT_EQ(e["field_path"], "inference.prompt_len");
  EXPECT_NE(e["message"].get<std::string>().find("the KV cache would take up to ~5.5e18 B"), std::string::npos) << e["message"];
  // The same cache for 2^16 tokens in all is exact: 4,997,120 B per token.
  json small = sc;
  small["inference"] = {{"batch_size", 16}, {"prompt_len", 4096}, {"new_tokens", 0}};
  const json ok = Estimated(small);
  ASSERT_TRUE(ok["ok"].get<bool>());
  EXPECT_EQ(ok["inference"]["kv_bytes_per_token"].get<int64_t>(), 61 * 128 * (192 + 128) * 2);
}

// Reported: a 405B full fine-tune at seq_len 2^24 passed the old guard (b x s <= 2^31 tokens,
// < 10^17 scores per layer) and wrapped: 126 layers x 128 heads x 2^48 scores x 9 B is ~4e19 B.
TEST(Overflow, Llama405BFullFineTuneAtSeq16M) {
  json sc = {{"model", "meta-llama/Llama-3.1-405B"},
             {"mode", "train"},
             {"train", {{"method", "full"}, {"seq_len", kMaxTokens}, {"attention", "eager"}, {"gradient_checkpointing", false}}},
             {"gpu", "h100-sxm-80gb"}};
  json r = Estimated(sc);
  ASSERT_FALSE(r["ok"].get<bool>());
  EXPECT_EQ(r["errors"][0]["code"], "too_large");
  EXPECT_EQ(r["errors"][0]["field_path"], "train.seq_len");
  EXPECT_NE(r["errors"][0]["message"].get<std::string>().find("eager attention"), std::string::npos);
  // With SDPA the same step is representable (~1e16 B): a result that does not fit, sums intact.
  sc["train"]["attention"] = "sdpa";
  Tally tally;
  CheckScenario(sc, sc.dump(), &tally);
  EXPECT_EQ(tally.results, 1);
  EXPECT_FALSE(Estimated(sc)["gpu"]["fits"].get<bool>());
}

// Reported: llama.cpp's compute buffer without flash attention, heads x n_ctx x n_ubatch x 4 B,
// wrapped for n_ctx = batch x context.
TEST(Overflow, LlamaCppEagerComputeBufferIsRefused) {
  json sc = {{"model", "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B"},
             {"mode", "inference"},
             {"inference", {{"engine", "llama_cpp"}, {"batch_size", kMaxBatch}, {"prompt_len", kMaxTokens}, {"n_batch", kMaxTokens}, {"n_ubatch", kMaxTokens}}},
             {"gpu", "rtx-4090-24gb"}};
  json r = Estimated(sc);
  ASSERT_FALSE(r["ok"].get<bool>());
  EXPECT_EQ(r["errors"][0]["code"], "too_large");
  const std::string msg = r["errors"][0]["message"];
  EXPECT_NE(msg.find("KQ scores"), std::string::npos) << msg;
  EXPECT_NE(msg.find("inference.flash_attn"), std::string::npos) << msg;
}

// A model too large to count in int64 bytes is refused by the config parser too.
TEST(Overflow, ConfigWhoseParametersExceedTheLimitIsRefused) {
  ModelSpec m = testing_support::PresetSpec("meta-llama/Llama-3.1-405B");
  EXPECT_TRUE(CheckModelSizeLimits(m, "model").empty());
  for (auto& kind : m.kinds) {
    for (auto& l : kind.linears) l.copies = int64_t{1} << 30;  // 2^30 copies of every linear
  }
  Issues issues = CheckModelSizeLimits(m, "model");
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].code, "too_large");
  EXPECT_EQ(issues[0].field_path, "model");
}

// ---- the backstop: checked arithmetic flags instead of wrapping

TEST(Overflow, CheckedArithmeticFlagsOverflowInsteadOfWrapping) {
  {
    checked::OverflowScope scope;
    EXPECT_EQ(checked::Mul(int64_t{1} << 31, int64_t{1} << 31), int64_t{1} << 62);
    EXPECT_EQ(checked::Add(int64_t{1} << 62, (int64_t{1} << 62) - 1), INT64_MAX);
    EXPECT_EQ(checked::Mul(-3, 4, 5), -60);
    EXPECT_FALSE(scope.overflowed());
    EXPECT_EQ(checked::Mul(int64_t{1} << 32, int64_t{1} << 31), checked::kOverflowBytes);
    EXPECT_TRUE(scope.overflowed());
    {
      checked::OverflowScope inner;  // a probe: starts clear, leaves the outer state as it was
      EXPECT_FALSE(inner.overflowed());
      checked::Add(INT64_MAX, 1);
      EXPECT_TRUE(inner.overflowed());
    }
    EXPECT_TRUE(scope.overflowed());
  }
  checked::OverflowScope clean;
  {
    checked::OverflowScope probe;
    checked::Mul(INT64_MAX, 2);
  }
  EXPECT_FALSE(clean.overflowed());
}

// The one rank role of a job (every rank is alike today: parallel/topology.h).
RankShard JobRank(const Scenario& s) {
  const Topology topology = TopologyOf(s);
  return ShardFor(s, topology, topology.roles.front());
}

// Past the pre-flight (called directly), the engines flag the overflow of the reported cases.
TEST(Overflow, EnginesFlagWhatThePreflightWouldRefuse) {
  Expected<Scenario> s = ParseScenario(R"({"model": "deepseek-ai/DeepSeek-V3", "mode": "inference", "gpu": "h200-sxm-141gb",
      "inference": {"batch_size": 65536, "prompt_len": 16777216, "new_tokens": 16777216, "attention": "eager"}})");
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(WithinSizeLimits(s.value()));
  {
    checked::OverflowScope overflow;
    Result r;
    RunInferenceEngine(s.value(), JobRank(s.value()), PrepareModel(s.value()), &r, false);
    EXPECT_TRUE(overflow.overflowed());
  }
  Scenario llama = s.value();
  llama.model = testing_support::PresetSpec("deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B");
  llama.inference.engine = Engine::kLlamaCpp;
  llama.inference.n_batch = llama.inference.n_ubatch = kMaxTokens;
  {
    checked::OverflowScope overflow;
    Result r;
    RunInferenceEngine(llama, JobRank(llama), PrepareModel(llama), &r, false);
    EXPECT_TRUE(overflow.overflowed());
  }
  {
    checked::OverflowScope overflow;
    std::vector<KvGroup> groups = KvGroups(s.value().model, Engine::kTransformers, 1);
    KvBytes(groups, ResolveKvDtype(KvDtype::kFp32, WeightFormat::kBf16, Engine::kTransformers), kMaxTokens * 2, kMaxBatch * 16);
    EXPECT_TRUE(overflow.overflowed());
  }
}

}  // namespace
}  // namespace vramplan
