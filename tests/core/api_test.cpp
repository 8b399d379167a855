// The op table (vramplan/api.h): every op replies with the envelope, an unknown op and bad JSON are
// error values, and each op replies what its typed helper returns (the table adds no arithmetic).
// Also the staged estimator (Prepare + Estimate(prepared, ...)): the same results as Estimate.
#include "vramplan/api.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "vramplan/estimate.h"

namespace vramplan {
namespace api_test {

using nlohmann::json;

constexpr const char* kTrain = R"({"model":"meta-llama/Llama-3.1-8B","train":{"method":"lora","micro_batch_size":2,"seq_len":1024}})";
constexpr const char* kServe = R"({"model":"Qwen/Qwen2.5-7B","mode":"inference","inference":{"engine":"vllm","max_model_len":8192}})";

json Call(const std::string& op, const std::string& request) {
  json j = json::parse(CallOp(op, request), nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << op << ": the reply is not JSON";
  return j;
}

TEST(Api, TableListsEveryOp) {
  const std::vector<std::string> expected = {"estimate", "estimate_fast", "summary", "presets", "gpus", "schema", "parse_config", "plan", "version", "import", "export"};
  EXPECT_EQ(OpNames(), expected);
}

TEST(Api, EveryOpRepliesWithTheEnvelope) {
  const std::string config = R"({"model_type":"llama","hidden_size":64,"intermediate_size":128,"num_hidden_layers":2,
    "num_attention_heads":4,"num_key_value_heads":4,"vocab_size":100,"max_position_embeddings":128})";
  const std::vector<std::pair<std::string, std::string>> calls = {
      {"estimate", kTrain}, {"estimate_fast", kServe}, {"summary", kTrain}, {"presets", ""},
      {"gpus", ""}, {"schema", ""}, {"parse_config", config}, {"plan", kTrain}, {"version", "{}"},
      {"import", R"({"text":"vllm serve Qwen/Qwen2.5-7B"})"}, {"export", std::string(R"({"to":"vllm","scenario":)") + kServe + "}"}};
  for (const auto& [op, request] : calls) {
    json r = Call(op, request);
    ASSERT_TRUE(r.is_object()) << op;
    EXPECT_EQ(r.value("ok", false), true) << op << ": " << r.dump();
    EXPECT_FALSE(r.contains("errors")) << op;
  }
}

TEST(Api, ListingOpsWrapTheirPayloadUnderTheirName) {
  json presets = Call("presets", "");
  ASSERT_TRUE(presets["presets"].is_array());
  EXPECT_GT(presets["presets"].size(), 10u);
  EXPECT_EQ(presets["presets"], json::parse(ListPresetsJson()));
  EXPECT_EQ(presets["presets"], json::parse(CallOpPayload("presets", "")));
  json gpus = Call("gpus", "");
  ASSERT_TRUE(gpus["gpus"].is_array());
  EXPECT_EQ(gpus["gpus"], json::parse(ListGpusJson()));
  json schema = Call("schema", "");
  EXPECT_EQ(schema["schema"].value("type", ""), "object");
  EXPECT_EQ(CallOpPayload("schema", ""), SchemaJson());  // the document byte for byte
  json version = Call("version", "");
  EXPECT_EQ(version["version"], VersionString());
  EXPECT_EQ(CallOpPayload("version", ""), VersionString());
}

TEST(Api, EstimateOpsAreTheTypedHelpers) {
  EXPECT_EQ(CallOp("estimate", kTrain), EstimateJson(kTrain));
  EXPECT_EQ(CallOp("summary", kServe), EstimateSummaryJson(kServe));
  EstimateOptions fast;
  fast.inverse = false;
  EXPECT_EQ(CallOp("estimate_fast", kTrain), EstimateJson(kTrain, fast));
  EXPECT_EQ(CallOpPayload("estimate", kServe), CallOp("estimate", kServe));
}

TEST(Api, EstimateFastSkipsOnlyTheInverseSearches) {
  json full = Call("estimate", kTrain), fast = Call("estimate_fast", kTrain);
  EXPECT_EQ(full["gpu"], fast["gpu"]);
  ASSERT_TRUE(full.contains("training"));
  EXPECT_GT(full["training"].value("max_micro_batch_fits", 0), 0);
  EXPECT_FALSE(fast.contains("training"));
}

TEST(Api, UnknownOpIsAnErrorNamingTheOps) {
  for (const std::string op : {"", "estimat", "plans", "ESTIMATE"}) {
    json r = Call(op, kTrain);
    ASSERT_EQ(r.value("ok", true), false) << op;
    ASSERT_EQ(r["errors"].size(), 1u) << op;
    EXPECT_EQ(r["errors"][0]["code"], "unknown_op") << op;
    EXPECT_EQ(r["errors"][0]["field_path"], "op") << op;
    const std::string message = r["errors"][0]["message"];
    for (const std::string& name : OpNames()) EXPECT_NE(message.find(name), std::string::npos) << op << ": " << message;
  }
  EXPECT_EQ(CallOpPayload("nope", ""), CallOp("nope", ""));
}

// The core table (the page's WASM module): the full table minus plan, import and export, each of
// its ops replying byte for byte as through CallOp, and the three left out named as elsewhere.
TEST(Api, CoreTableIsTheFullTableWithoutPlanImportExport) {
  const std::vector<std::string> expected = {"estimate", "estimate_fast", "summary", "presets", "gpus", "schema", "parse_config", "version"};
  EXPECT_EQ(CoreOpNames(), expected);
  for (const std::string& op : CoreOpNames()) {
    const std::string request = op == "estimate_fast" ? kServe : op == "parse_config" ? "{}" : kTrain;
    EXPECT_EQ(CallCoreOp(op, request), CallOp(op, request)) << op;
    EXPECT_EQ(CallCoreOpPayload(op, request), CallOpPayload(op, request)) << op;
  }
  for (const std::string op : {"plan", "import", "export", "nope"}) {
    json r = json::parse(CallCoreOp(op, kTrain), nullptr, false);
    ASSERT_EQ(r.value("ok", true), false) << op;
    EXPECT_EQ(r["errors"][0]["code"], "unknown_op") << op;
    const std::string message = r["errors"][0]["message"];
    for (const std::string& name : CoreOpNames()) EXPECT_NE(message.find(name), std::string::npos) << message;
    EXPECT_NE(message.find("vramplan-full"), std::string::npos) << message;
    EXPECT_EQ(CallCoreOpPayload(op, kTrain), CallCoreOp(op, kTrain)) << op;
  }
}

TEST(Api, UnknownOpNameIsQuotedSafely) {
  json r = Call(std::string("a\"b\n\x01") + std::string(500, 'x'), "");
  ASSERT_EQ(r.value("ok", true), false);
  const std::string message = r["errors"][0]["message"];
  EXPECT_EQ(message.find('\n'), std::string::npos);
  EXPECT_LT(message.size(), 400u);
}

TEST(Api, BadJsonIsAnErrorValue) {
  for (const std::string op : {"estimate", "estimate_fast", "summary", "parse_config"}) {
    for (const std::string request : {"", "not json", "{\"model\":", "[1,2]", "{\"model\":\"meta-llama/Llama-3.1-8B\"} trailing"}) {
      json r = Call(op, request);
      ASSERT_EQ(r.value("ok", true), false) << op << " " << request;
      ASSERT_FALSE(r["errors"].empty()) << op << " " << request;
      for (const json& e : r["errors"]) {
        EXPECT_TRUE(e["code"].is_string() && e["field_path"].is_string() && e["message"].is_string()) << e.dump();
      }
    }
  }
}

TEST(Api, NotJsonIsInvalidJson) {
  for (const std::string op : {"estimate", "summary", "parse_config"}) {
    json r = Call(op, "{\"model\": nul");
    ASSERT_EQ(r.value("ok", true), false) << op;
    EXPECT_EQ(r["errors"][0]["code"], "invalid_json") << op;
  }
}

TEST(Api, ValidationErrorsKeepTheirFieldPath) {
  json r = Call("estimate", R"({"model":"meta-llama/Llama-3.1-8B","train":{"micro_batch_size":0}})");
  ASSERT_EQ(r.value("ok", true), false);
  EXPECT_EQ(r["errors"][0]["field_path"], "train.micro_batch_size");
}

// ---- the staged estimator

Scenario Parse(const std::string& text) {
  Expected<Scenario> s = ParseScenario(text);
  EXPECT_TRUE(s.ok()) << text;
  return s.value();
}

void ExpectSameTotals(const Result& a, const Result& b, const std::string& what) {
  EXPECT_EQ(a.gpu.peak_allocated_bytes, b.gpu.peak_allocated_bytes) << what;
  EXPECT_EQ(a.gpu.reserved_bytes, b.gpu.reserved_bytes) << what;
  EXPECT_EQ(a.gpu.device_total_bytes, b.gpu.device_total_bytes) << what;
  EXPECT_EQ(a.gpu.fits, b.gpu.fits) << what;
  EXPECT_EQ(a.params.total, b.params.total) << what;
  EXPECT_EQ(a.trainable_params, b.trainable_params) << what;
  EXPECT_EQ(a.peak_phase, b.peak_phase) << what;
  EXPECT_EQ(a.training.max_micro_batch_fits, b.training.max_micro_batch_fits) << what;
  EXPECT_EQ(a.inference.max_context_fits, b.inference.max_context_fits) << what;
  EXPECT_EQ(a.inference.smallest_format_fits, b.inference.smallest_format_fits) << what;
}

TEST(PreparedEstimate, VariantsMatchTheOneShotEstimate) {
  Scenario base = Parse(R"({"model":"meta-llama/Llama-2-7b-hf","train":{"method":"qlora","qlora_backend":"torchao","seq_len":512,
                             "lora":{"targets":"all-linear","rank":8}},"framework":{"model_load":"torchtune_0_1"}})");
  const PreparedModel prepared = Prepare(base);
  ASSERT_FALSE(prepared.empty());
  for (int64_t b : {1, 2, 4}) {
    for (int64_t rank : {8, 16}) {  // the load replay cache must follow the rank
      Scenario v = base;
      v.train.micro_batch_size = b;
      v.train.lora.rank = rank;
      for (bool inverse : {false, true}) {
        EstimateOptions o;
        o.explain = false;
        o.inverse = inverse;
        ExpectSameTotals(Estimate(prepared, v, o), Estimate(v, o), "b=" + std::to_string(b) + " rank=" + std::to_string(rank));
      }
    }
  }
}

TEST(PreparedEstimate, InferenceVariantsMatch) {
  Scenario base = Parse(kServe);
  const PreparedModel prepared = Prepare(base);
  for (const char* engine_scenario : {kServe, R"({"model":"Qwen/Qwen2.5-7B","mode":"inference","inference":{"engine":"transformers","batch_size":4}})"}) {
    Scenario v = Parse(engine_scenario);
    ExpectSameTotals(Estimate(prepared, v), Estimate(v), engine_scenario);
  }
}

TEST(PreparedEstimate, AnotherModelOrGpuIsPreparedAfresh) {
  const PreparedModel prepared = Prepare(Parse(kTrain));
  Scenario other = Parse(R"({"model":"Qwen/Qwen2.5-0.5B","train":{"method":"full"}})");
  ExpectSameTotals(Estimate(prepared, other), Estimate(other), "another model");
  Scenario hopper = Parse(R"({"model":"meta-llama/Llama-3.1-8B","train":{"method":"lora","micro_batch_size":2,"seq_len":1024},"gpu":"h100-sxm-80gb"})");
  ExpectSameTotals(Estimate(prepared, hopper), Estimate(hopper), "another GPU");
  ExpectSameTotals(Estimate(PreparedModel(), hopper), Estimate(hopper), "an empty preparation");
}

TEST(PreparedEstimate, ExplainOffLeavesTheNumbersAlone) {
  Scenario s = Parse(kTrain);
  const PreparedModel prepared = Prepare(s);
  EstimateOptions quiet;
  quiet.explain = false;
  Result with = Estimate(prepared, s), without = Estimate(prepared, s, quiet);
  ExpectSameTotals(with, without, "explain");
  EXPECT_FALSE(with.timeline.empty());
  EXPECT_TRUE(without.timeline.empty());
  for (const Term& t : without.gpu.breakdown) EXPECT_TRUE(t.explain.empty()) << t.key;
}

}  // namespace
}  // namespace vramplan
