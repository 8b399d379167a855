// Configs saved by transformers v5, which folds rope_theta, rope_scaling and partial_rotary_factor
// into one `rope_parameters` block (and renames torch_dtype to dtype): the same model read from its
// v4 and its v5 config.json must give the same ModelSpec (model/families/config_reader.h Fraction,
// model/context_limit.cpp). The v5 layout follows transformers v5 modeling_rope_utils.py
// (`config.rope_parameters["rope_theta"]`, `rope_parameters.get("partial_rotary_factor", 1.0)`).
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/hf_config.h"
#include "test_support.h"
#include "vramplan/model_spec.h"

namespace vramplan {
namespace transformers_v5_config_test {

using nlohmann::json;

json FixtureConfig(const std::string& id) {
  const json table = testing_support::LoadFixture("param_counts.json");
  for (const auto& row : table["models"]) {
    if (row["id"] == id) return row["config"];
  }
  ADD_FAILURE() << id << " is not in tests/fixtures/param_counts.json";
  return json::object();
}

// What transformers v5's save_pretrained writes for a v4 config: rope keys in one block.
json AsV5(json v4) {
  json rope = v4.contains("rope_scaling") && v4["rope_scaling"].is_object() ? v4["rope_scaling"] : json{{"rope_type", "default"}};
  for (const char* key : {"rope_theta", "partial_rotary_factor"}) {
    if (v4.contains(key)) rope[key] = v4[key], v4.erase(key);
  }
  v4.erase("rope_scaling");
  if (v4.contains("torch_dtype")) v4["dtype"] = v4["torch_dtype"], v4.erase("torch_dtype");
  v4["rope_parameters"] = rope;
  return v4;
}

ModelSpec Read(const json& config) {
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(config, "model", &warnings);
  EXPECT_TRUE(spec.ok()) << (spec.ok() ? "" : spec.errors()[0].message);
  EXPECT_TRUE(warnings.empty()) << (warnings.empty() ? "" : warnings[0].message);
  return spec.ok() ? spec.value() : ModelSpec{};
}

TEST(TransformersV5Config, SameModelFromEitherLayout) {
  for (const char* id : {"THUDM/GLM-4-9B-0414", "stabilityai/stablelm-2-1_6b", "meta-llama/Llama-3.1-8B"}) {
    SCOPED_TRACE(id);
    const json v4 = FixtureConfig(id);
    const json v5 = AsV5(v4);
    ASSERT_FALSE(v5.contains("partial_rotary_factor"));
    const ModelSpec a = Read(v4), b = Read(v5);
    EXPECT_EQ(CountParams(a).total, CountParams(b).total);
    EXPECT_DOUBLE_EQ(a.rope_fraction, b.rope_fraction);
    EXPECT_EQ(a.context_limit, b.context_limit);
  }
}

TEST(TransformersV5Config, PartialRotaryFactorInsideRopeParameters) {
  // GLM-4's default is half the head rotary (Glm4Config); a v5 config that states a quarter is read
  // as a quarter, not as the default.
  json v5 = AsV5(FixtureConfig("THUDM/GLM-4-9B-0414"));
  v5["rope_parameters"]["partial_rotary_factor"] = 0.25;
  EXPECT_DOUBLE_EQ(Read(v5).rope_fraction, 0.25);

  v5["rope_parameters"]["partial_rotary_factor"] = 2.0;
  Issues warnings;
  auto bad = ModelSpecFromHfConfig(v5, "model", &warnings);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.errors()[0].code, "out_of_range");
  EXPECT_EQ(bad.errors()[0].field_path, "model.rope_parameters.partial_rotary_factor");
}

TEST(TransformersV5Config, YarnInRopeParametersSetsTheContextLimit) {
  // Llama 3.1's llama3 rope is not multiplied (vLLM _get_and_verify_max_len), in either layout.
  EXPECT_EQ(Read(AsV5(FixtureConfig("meta-llama/Llama-3.1-8B"))).context_limit, 131072);
}

}  // namespace
}  // namespace vramplan
