// The YAML-subset reader: what launch configs use reads as PyYAML's safe_load would, and whatever
// else (hostile nesting, huge numbers, tabs, anchors, unclosed quotes) is a clear error with a
// line number, never a crash.
#include "launch/yaml_subset.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "io/input_limits.h"

namespace vramplan::launch {
namespace yaml_subset_test {

using io::Json;

Json One(const std::string& text) {
  std::vector<Json> docs;
  Issues errors;
  EXPECT_TRUE(ParseYamlDocuments(text, &docs, &errors)) << (errors.empty() ? "" : errors[0].message);
  return docs.empty() ? Json() : docs[0];
}

Issue Fails(const std::string& text) {
  std::vector<Json> docs;
  Issues errors;
  EXPECT_FALSE(ParseYamlDocuments(text, &docs, &errors)) << text.substr(0, 80);
  return errors.empty() ? Issue{} : errors[0];
}

TEST(YamlSubset, BlockMapsListsAndScalars) {
  const Json j = One(R"(# a LLaMA-Factory job
model_name_or_path: meta-llama/Llama-3.1-8B   # the model
lora_rank: 8
learning_rate: 1.0e-4
lr: 3e-4
bf16: true
pure_bf16: False
flag: yes
none: ~
empty:
quoted: "a: b # not a comment"
single: 'it''s'
list:
  - q_proj
  - v_proj
same_column:
- a
- b
nested:
  zero_optimization:
    stage: 3
    offload_optimizer: {device: cpu, pin_memory: true}
flow: [q_proj, "v_proj", 3, 1.5]
items:
  - path: data/a.json
    type: alpaca
  - path: data/b.json
)");
  EXPECT_EQ(j["model_name_or_path"], "meta-llama/Llama-3.1-8B");
  EXPECT_EQ(j["lora_rank"], 8);
  EXPECT_DOUBLE_EQ(j["learning_rate"].get<double>(), 1e-4);
  EXPECT_DOUBLE_EQ(j["lr"].get<double>(), 3e-4);
  EXPECT_EQ(j["bf16"], true);
  EXPECT_EQ(j["pure_bf16"], false);
  EXPECT_EQ(j["flag"], true);
  EXPECT_TRUE(j["none"].is_null());
  EXPECT_TRUE(j["empty"].is_null());
  EXPECT_EQ(j["quoted"], "a: b # not a comment");
  EXPECT_EQ(j["single"], "it's");
  EXPECT_EQ(j["list"], Json::array({"q_proj", "v_proj"}));
  EXPECT_EQ(j["same_column"], Json::array({"a", "b"}));
  EXPECT_EQ(j["nested"]["zero_optimization"]["stage"], 3);
  EXPECT_EQ(j["nested"]["zero_optimization"]["offload_optimizer"]["device"], "cpu");
  EXPECT_EQ(j["flow"], Json::parse(R"(["q_proj","v_proj",3,1.5])"));
  ASSERT_EQ(j["items"].size(), 2u);
  EXPECT_EQ(j["items"][0]["type"], "alpaca");
  EXPECT_EQ(j["items"][1]["path"], "data/b.json");
}

TEST(YamlSubset, DocumentsBlockScalarsAndMultiLineFlow) {
  std::vector<Json> docs;
  Issues errors;
  ASSERT_TRUE(ParseYamlDocuments("a: 1\n---\n{\"stage\": 3,\n  \"x\": [1,\n    2]}\n---\ntext: |\n  line one\n  line two\nfolded: >-\n  one\n  two\n", &docs, &errors))
      << errors[0].message;
  ASSERT_EQ(docs.size(), 3u);
  EXPECT_EQ(docs[0]["a"], 1);
  EXPECT_EQ(docs[1]["x"], Json::array({1, 2}));
  EXPECT_EQ(docs[2]["text"], "line one\nline two\n");
  EXPECT_EQ(docs[2]["folded"], "one two");
}

TEST(YamlSubset, ErrorsNameTheLineAndTheKey) {
  Issue e = Fails("a: 1\nb:\n\t- x\n");
  EXPECT_NE(e.message.find("line 3"), std::string::npos) << e.message;
  e = Fails("a: 1\na: 2\n");
  EXPECT_NE(e.message.find("twice"), std::string::npos);
  EXPECT_EQ(e.field_path, "a");
  e = Fails("a: &anchor 1\nb: *anchor\n");
  EXPECT_NE(e.message.find("not supported"), std::string::npos);
  e = Fails("a: \"unclosed\n");
  EXPECT_NE(e.message.find("line 1"), std::string::npos);
  e = Fails("a:\n  b: 1\n    c: 2\n");
  EXPECT_NE(e.message.find("line 3"), std::string::npos) << e.message;
  e = Fails("key: [1, 2\nother: 3\n");
  EXPECT_NE(e.message.find("unclosed"), std::string::npos) << e.message;
}

TEST(YamlSubset, HugeNumbersAreOutOfRangeNotInfinity) {
  const Issue e = Fails("per_device_train_batch_size: 1e999\n");
  EXPECT_EQ(e.code, "out_of_range");
  EXPECT_EQ(e.field_path, "per_device_train_batch_size");
  const Json j = One("big: 99999999999999999999999\n");
  EXPECT_TRUE(j["big"].is_number_float());  // beyond int64: a double, checked by the importers' ranges
}

TEST(YamlSubset, DeepNestingIsRefusedWithoutRecursingPastTheLimit) {
  std::string block;
  for (size_t i = 0; i < 200; ++i) block += std::string(2 * i, ' ') + "k:\n";
  EXPECT_EQ(Fails(block).code, "too_deep");
  EXPECT_EQ(Fails("a: " + std::string(100000, '[') + std::string(100000, ']') + "\n").code, "too_deep");
  std::string list;
  for (size_t i = 0; i < 200; ++i) list += std::string(2 * i, ' ') + "-\n";
  EXPECT_EQ(Fails(list).code, "too_deep");
}

TEST(YamlSubset, SizeLimitsHold) {
  EXPECT_EQ(Fails(std::string(io::kMaxDocumentBytes + 1, 'a')).code, "too_large");
  EXPECT_EQ(Fails("a: \"" + std::string(io::kMaxStringBytes + 10, 'x') + "\"\n").code, "too_long");
  std::string many = "l: [";
  for (size_t i = 0; i <= io::kMaxArrayItems; ++i) many += "1,";
  many += "1]\n";
  EXPECT_EQ(Fails(many).code, "too_many");
}

TEST(YamlSubset, GarbageNeverCrashes) {
  const std::vector<std::string> inputs = {"", "---", "...", ":", "- - - -", "{", "}", "]", "[", "a: {b: [c, {d: e}]]", "? complex\n: key",
                                           "a: !!str 1", "- a\nb: c", "a:\n- b\n  - c", "\"\\u12\"", "'", "a: |\n", "%YAML 1.2\n---\na: 1",
                                           std::string("a: \0b", 5), "a: \xff\xfe"};
  for (const std::string& s : inputs) {
    std::vector<Json> docs;
    Issues errors;
    ParseYamlDocuments(s, &docs, &errors);  // either way, no crash
  }
  SUCCEED();
}

}  // namespace
}  // namespace vramplan::launch
