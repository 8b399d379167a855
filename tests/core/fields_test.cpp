// The scenario field table (core/src/scenario/fields.h): it agrees with what the reader accepts,
// with the structs' defaults and with the enum spellings; the JSON Schema generated from it agrees
// with the reader at every range bound and enum value; and the checked-in copies of the schema and
// of docs/schema.md's field reference are what the table generates.
// VRAMPLAN_UPDATE_DOCS=1 rewrites the checked-in copies instead (scripts/regen-schema).
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "io/enum_names.h"
#include "io/result_json.h"
#include "scenario/fields.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace fields_test {

using nlohmann::json;

constexpr const char* kModel = "meta-llama/Llama-3.1-8B";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool UpdateDocs() {
  const char* v = std::getenv("VRAMPLAN_UPDATE_DOCS");
  return v != nullptr && std::string(v) == "1";
}

json Parse(const std::string& text) { return json::parse(text, nullptr, false); }

// Splits "train.lora.rank" into its keys.
std::vector<std::string> Keys(std::string_view path) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    out.emplace_back(path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (dot == std::string_view::npos) return out;
    start = dot + 1;
  }
}

// A scenario document with `value` at `path` (the custom GPU's fields inside a gpu object).
json DocWith(std::string_view path, const json& value) {
  json doc = {{"model", kModel}};
  json* at = &doc;
  const auto keys = Keys(path);
  for (size_t i = 0; i + 1 < keys.size(); ++i) {
    if (!at->contains(keys[i])) (*at)[keys[i]] = json::object();
    at = &(*at)[keys[i]];
  }
  (*at)[keys.back()] = value;
  if (path.substr(0, 4) == "gpu." && path != "gpu.memory_bytes") doc["gpu"]["memory_bytes"] = 25769803776;
  return doc;
}

Issues ErrorsOf(const json& doc) {
  auto s = ParseScenario(doc.dump());
  return s.ok() ? Issues{} : s.errors();
}

// The errors about `path` itself (a cross-field error elsewhere does not count).
std::vector<Issue> ErrorsAt(const json& doc, std::string_view path) {
  std::vector<Issue> out;
  for (const auto& e : ErrorsOf(doc)) {
    if (e.field_path == path) out.push_back(e);
  }
  return out;
}

// The "allowed: a, b, c" list of an unknown-key error in the object at `parent`.
std::vector<std::string> AllowedKeys(std::string_view parent) {
  const std::string junk = "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz";  // close to no key: no "did you mean"
  json doc = parent.empty() ? json{{"model", kModel}, {junk, 1}} : DocWith(std::string(parent) + "." + junk, 1);
  if (parent == "gpu") doc["gpu"]["memory_bytes"] = 25769803776;
  for (const auto& e : ErrorsOf(doc)) {
    if (e.code != "unknown_key") continue;
    const size_t at = e.message.find("; allowed: ");
    if (at == std::string::npos) return {};
    std::vector<std::string> keys;
    std::string rest = e.message.substr(at + 11);
    size_t start = 0;
    while (true) {
      size_t comma = rest.find(", ", start);
      keys.push_back(rest.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (comma == std::string::npos) return keys;
      start = comma + 2;
    }
  }
  return {};
}

TEST(Fields, EveryPathTheReaderAcceptsIsInTheTableAndViceVersa) {
  std::set<std::string> objects = {""};
  for (const auto& f : fields::Fields()) {
    if (f.type == fields::Type::kObject || f.type == fields::Type::kGpu) objects.insert(std::string(f.path));
  }
  for (const auto& parent : objects) {
    std::vector<std::string> table;
    for (const fields::Field* f : fields::Children(parent)) table.emplace_back(f->key());
    EXPECT_EQ(AllowedKeys(parent), table) << "object \"" << parent << "\"";
  }
  // And every field has a parent in the table.
  for (const auto& f : fields::Fields()) {
    EXPECT_TRUE(f.parent().empty() || fields::Find(f.parent()) != nullptr) << f.path;
    EXPECT_FALSE(f.doc.empty()) << f.path;
  }
}

// Each row is well formed: its member fits its type, its default parses and is itself accepted.
TEST(Fields, RowsAreWellFormed) {
  using fields::Slot;
  using fields::Type;
  Scenario s;
  std::set<std::string_view> paths;
  for (const auto& f : fields::Fields()) {
    EXPECT_TRUE(paths.insert(f.path).second) << f.path << " twice";
    const bool union_or_object = f.type == Type::kObject || f.type == Type::kModel || f.type == Type::kGpu || f.type == Type::kListOrConst;
    EXPECT_EQ(f.slot == nullptr, union_or_object) << f.path;
    if (f.slot == nullptr) continue;
    const Slot::Kind k = f.slot(s).kind;
    switch (f.type) {
      case Type::kInt:
        EXPECT_TRUE(k == Slot::Kind::kInt64 || k == Slot::Kind::kInt || k == Slot::Kind::kOptInt64) << f.path;
        EXPECT_LE(f.min, f.max) << f.path;
        if (f.gap_min <= f.gap_max) EXPECT_FALSE(f.message.empty() || k == Slot::Kind::kOptInt64) << f.path;
        break;
      case Type::kNumber: EXPECT_EQ(k, Slot::Kind::kDouble) << f.path; break;
      case Type::kBool: EXPECT_TRUE(k == Slot::Kind::kBool || k == Slot::Kind::kOptBool) << f.path; break;
      case Type::kString: EXPECT_EQ(k, Slot::Kind::kString) << f.path; break;
      case Type::kStringList: EXPECT_EQ(k, Slot::Kind::kStringList) << f.path; break;
      case Type::kIntList: EXPECT_EQ(k, Slot::Kind::kIntList) << f.path; break;
      case Type::kEnum: EXPECT_TRUE(k == Slot::Kind::kEnum || k == Slot::Kind::kOptEnum) << f.path; break;
      case Type::kBoolOrEnum: EXPECT_EQ(k, Slot::Kind::kEnum) << f.path; break;
      case Type::kIntChoice: EXPECT_EQ(k, Slot::Kind::kInt) << f.path; break;
      default: ADD_FAILURE() << f.path;
    }
    if (f.type == Type::kEnum || f.type == Type::kBoolOrEnum) EXPECT_EQ(f.values.size(), f.enum_codes.size()) << f.path;
    if (!f.default_json.empty() && f.path.substr(0, 4) != "gpu.") {
      const json def = Parse(std::string(f.default_json));
      ASSERT_FALSE(def.is_discarded()) << f.path;
      EXPECT_TRUE(ErrorsAt(DocWith(f.path, def), f.path).empty()) << f.path << " = " << def;
    }
  }
}

// The default-constructed structs and a parsed minimal scenario echo the table's defaults; fields
// without one are absent unless the struct always holds a value.
TEST(Fields, DefaultsAreTheStructDefaults) {
  Scenario plain;
  plain.model_id = kModel;
  auto parsed = ParseScenario(std::string(R"({"model":")") + kModel + "\"}");
  ASSERT_TRUE(parsed.ok());
  for (const json& echo : {Parse(ScenarioToJson(plain)), Parse(ScenarioToJson(parsed.value()))}) {
    for (const auto& f : fields::Fields()) {
      if (f.path.substr(0, 4) == "gpu." || f.type == fields::Type::kModel) continue;  // the custom GPU; required
      const json* at = &echo;
      for (const auto& k : Keys(f.path)) {
        auto it = at->is_object() ? at->find(k) : at->end();
        at = it == at->end() ? nullptr : &*it;
        if (at == nullptr) break;
      }
      if (f.default_json.empty()) {
        if (f.type == fields::Type::kObject) EXPECT_TRUE(at != nullptr && at->is_object()) << f.path;
        // Optional fields (the default depends on other fields) are echoed only when given;
        // LoRA targets are resolved per model type.
        // A default computed from other fields is echoed resolved (parallel.gpus_per_node:
        // min(gpus, 8) = 1 here).
        else if (f.resolved != nullptr) EXPECT_TRUE(at != nullptr && *at == 1) << f.path;
        else if (f.type != fields::Type::kListOrConst) EXPECT_EQ(at, nullptr) << f.path << " has no default in the table";
        continue;
      }
      ASSERT_NE(at, nullptr) << f.path;
      EXPECT_EQ(*at, Parse(std::string(f.default_json))) << f.path;
    }
  }
}

template <typename E, size_t N>
void ExpectEnum(std::string_view path, const io::EnumName<E> (&names)[N]) {
  const fields::Field* f = fields::Find(path);
  ASSERT_NE(f, nullptr) << path;
  ASSERT_EQ(f->values.size(), N) << path;
  for (size_t i = 0; i < N; ++i) {
    EXPECT_EQ(f->values[i], names[i].name) << path;
    EXPECT_EQ(f->enum_codes[i], static_cast<int>(names[i].value)) << path;
  }
}

TEST(Fields, EnumsAreTheEnumSpellings) {
  ExpectEnum("mode", io::kModeNames);
  ExpectEnum("train.method", io::kMethodNames);
  ExpectEnum("train.precision", io::kPrecisionNames);
  ExpectEnum("train.optimizer", io::kOptimizerNames);
  ExpectEnum("train.optimizer_impl", io::kOptimizerImplNames);
  ExpectEnum("train.gradient_checkpointing", io::kCheckpointingNames);
  ExpectEnum("train.attention", io::kAttentionNames);
  ExpectEnum("train.loss", io::kLossNames);
  ExpectEnum("train.lora.adapter_dtype", io::kAdapterDtypeNames);
  ExpectEnum("train.qlora_backend", io::kQloraBackendNames);
  ExpectEnum("inference.weights", io::kWeightFormatNames);
  ExpectEnum("inference.kv_cache", io::kKvDtypeNames);
  ExpectEnum("inference.attention", io::kAttentionNames);
  ExpectEnum("inference.engine", io::kEngineNames);
  ExpectEnum("inference.vllm_version", io::kVllmVersionNames);
  ExpectEnum("inference.logits", io::kLogitsNames);
  ExpectEnum("inference.speculative.method", io::kSpeculativeMethodNames);
  ExpectEnum("parallel.offload_optimizer", io::kOffloadNames);
  ExpectEnum("parallel.offload_params", io::kOffloadNames);
  ExpectEnum("framework.preset", io::kFrameworkPresetNames);
  ExpectEnum("framework.device", io::kDeviceNames);
  ExpectEnum("framework.model_load", io::kModelLoadNames);
  ExpectEnum("framework.trainer", io::kTrainerNames);
  ExpectEnum("parallel.pp_schedule", io::kPipelineScheduleNames);
  ExpectEnum("parallel.cp_kind", io::kContextParallelKindNames);
  ExpectEnum("train.recompute_method", io::kRecomputeMethodNames);
  ExpectEnum("parallel.fsdp_sharding", io::kFsdpShardingNames);
  ExpectEnum("model_reading", io::kModelReadingNames);
  ExpectEnum("train.objective", io::kObjectiveNames);
  ExpectEnum("train.rollout.vllm_mode", io::kVllmModeNames);
  ExpectEnum("train.kernels", io::kLayerKernelsNames);
  ExpectEnum("inference.mmproj", io::kMmprojNames);
  size_t enums = 0;
  for (const auto& f : fields::Fields()) enums += f.type == fields::Type::kEnum || f.type == fields::Type::kBoolOrEnum;
  EXPECT_EQ(enums, 32u) << "a new enum field: add it above";
}

// Every leaf of the generated JSON Schema, walked with its path.
void SchemaLeaves(const json& node, const std::string& path, std::vector<std::pair<std::string, json>>* out) {
  auto props = node.find("properties");
  if (props != node.end()) {
    for (auto it = props->begin(); it != props->end(); ++it) {
      SchemaLeaves(it.value(), path.empty() ? it.key() : path + "." + it.key(), out);
    }
    return;
  }
  if (path == "gpu") {  // the custom GPU object branch
    SchemaLeaves(node["oneOf"][1], path, out);
    return;
  }
  out->emplace_back(path, node);
}

// The errors a value gets on its own: cross-field checks (code invalid_value: ep > 1 on a dense
// model, vpp > 1 without a pipeline, ...) depend on the other fields, not on the value's bounds.
std::vector<Issue> BoundErrorsAt(const json& doc, const std::string& path) {
  std::vector<Issue> out;
  for (const Issue& e : ErrorsAt(doc, path)) {
    if (e.code != "invalid_value") out.push_back(e);
  }
  return out;
}

// The schema says what the reader does: each integer and number bound is accepted and one step
// beyond it refused; each enum value is accepted and another string refused.
TEST(Fields, SchemaBoundsAreTheReaders) {
  const json schema = Parse(SchemaJson());
  ASSERT_TRUE(schema.is_object());
  std::vector<std::pair<std::string, json>> leaves;
  SchemaLeaves(schema, "", &leaves);
  size_t table_leaves = 0;
  for (const auto& f : fields::Fields()) table_leaves += f.type != fields::Type::kObject && f.type != fields::Type::kGpu;
  EXPECT_EQ(leaves.size(), table_leaves);
  int checked = 0;
  for (const auto& [path, node] : leaves) {
    if (path == "model" || path == "schema") continue;
    const std::string type = node.value("type", "");
    if (node.contains("enum")) {
      for (const auto& v : node["enum"]) {
        EXPECT_TRUE(BoundErrorsAt(DocWith(path, v), path).empty()) << path << " = " << v;
        ++checked;
      }
      EXPECT_FALSE(ErrorsAt(DocWith(path, type == "integer" ? json(3) : json("no_such_value")), path).empty()) << path;
    } else if (type == "integer" || type == "number") {
      const json lo = node["minimum"], hi = node["maximum"];
      EXPECT_TRUE(BoundErrorsAt(DocWith(path, lo), path).empty()) << path << " = " << lo;
      EXPECT_TRUE(BoundErrorsAt(DocWith(path, hi), path).empty()) << path << " = " << hi;
      const double step = type == "integer" ? 1 : 1e-3;
      const json below = type == "integer" ? json(lo.get<int64_t>() - 1) : json(lo.get<double>() - step);
      const json above = type == "integer" ? json(hi.get<int64_t>() + 1) : json(hi.get<double>() + step);
      EXPECT_FALSE(ErrorsAt(DocWith(path, below), path).empty()) << path << " = " << below;
      EXPECT_FALSE(ErrorsAt(DocWith(path, above), path).empty()) << path << " = " << above;
      if (node.contains("not")) {
        const json& gap = node["not"];
        EXPECT_FALSE(ErrorsAt(DocWith(path, gap["minimum"]), path).empty()) << path;
        EXPECT_FALSE(ErrorsAt(DocWith(path, gap["maximum"]), path).empty()) << path;
      }
      checked += 4;
    } else if (type == "boolean") {
      EXPECT_TRUE(BoundErrorsAt(DocWith(path, true), path).empty()) << path;  // cross-field rules aside (padding needs a capacity factor)
      EXPECT_FALSE(ErrorsAt(DocWith(path, "yes"), path).empty()) << path;
    } else if (type == "string" && node.contains("maxLength")) {
      const size_t n = node["maxLength"].get<size_t>();
      EXPECT_TRUE(ErrorsAt(DocWith(path, std::string(n, 'x')), path).empty()) << path;
      EXPECT_FALSE(ErrorsAt(DocWith(path, std::string(n + 1, 'x')), path).empty()) << path;
    } else if (type == "array" && node.contains("maxItems")) {
      const size_t n = node["maxItems"].get<size_t>();
      EXPECT_TRUE(ErrorsAt(DocWith(path, json::array()), path).empty()) << path;
      json too_many = json::array();
      for (size_t i = 0; i <= n; ++i) too_many.push_back("lm_head");
      EXPECT_FALSE(ErrorsAt(DocWith(path, too_many), path).empty()) << path;
    }
  }
  EXPECT_GT(checked, 150);
}

// docs/schema.md's text between the two markers.
bool SplitDoc(const std::string& doc, std::string* before, std::string* inside, std::string* after) {
  const size_t b = doc.find(fields::kDocBeginMarker);
  const size_t e = doc.find(fields::kDocEndMarker);
  if (b == std::string::npos || e == std::string::npos || e < b) return false;
  const size_t inner = b + fields::kDocBeginMarker.size();
  *before = doc.substr(0, inner);
  *inside = doc.substr(inner, e - inner);
  *after = doc.substr(e);
  return true;
}

TEST(Fields, CheckedInSchemaIsGenerated) {
  const std::string path = std::string(VRAMPLAN_DOCS_DIR) + "/scenario.schema.json";
  const std::string generated = fields::GenerateSchemaJson();
  EXPECT_EQ(SchemaJson(), generated);
  if (UpdateDocs()) std::ofstream(path, std::ios::binary) << generated;
  EXPECT_EQ(ReadFile(path), generated) << path << " differs from the field table: run scripts/regen-schema";
}

TEST(Fields, CheckedInFieldReferenceIsGenerated) {
  const std::string path = std::string(VRAMPLAN_DOCS_DIR) + "/schema.md";
  std::string before, inside, after;
  ASSERT_TRUE(SplitDoc(ReadFile(path), &before, &inside, &after)) << path << " lacks the generated-reference markers";
  const std::string generated = fields::GenerateReferenceMarkdown();
  if (UpdateDocs() && inside != generated) {
    std::ofstream(path, std::ios::binary) << before << generated << after;
    ASSERT_TRUE(SplitDoc(ReadFile(path), &before, &inside, &after));
  }
  EXPECT_EQ(inside, generated) << path << "'s field reference differs from the field table: run scripts/regen-schema";
}

}  // namespace
}  // namespace vramplan
