// Stored persistent buffers of classic checkpoints (core/src/model/legacy_buffers.cpp): the causal
// masks and rotary inv_freq that transformers saved before it registered them with
// persistent=False. The exact Hub totals of the real checkpoints are rows of
// tests/fixtures/param_counts.json (checkpoint_total, with their sources and hand decompositions);
// here, the version boundaries, the GPT-Neo global-layer rule, and that params.total and the
// memory estimate do not move.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/hf_config.h"
#include "model/legacy_buffers.h"
#include "test_support.h"
#include "vramplan/model_spec.h"

namespace vramplan {
namespace legacy_buffers_test {

using nlohmann::json;
using testing_support::EstimateText;
using testing_support::LoadFixture;

// A fixture row's config (tests/fixtures/param_counts.json), with transformers_version set
// (nullptr: removed).
json FixtureConfig(const std::string& id, const char* version) {
  const json table = LoadFixture("param_counts.json");
  for (const json& row : table["models"]) {
    if (row["id"] != id) continue;
    json config = row["config"];
    if (version == nullptr) {
      config.erase("transformers_version");
    } else {
      config["transformers_version"] = version;
    }
    return config;
  }
  ADD_FAILURE() << id << " is not a row of param_counts.json";
  return json::object();
}

ParamCounts Counts(const json& config, ModelSpec* spec_out = nullptr) {
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(config, "model", &warnings);
  EXPECT_TRUE(spec.ok());
  if (!spec.ok()) return ParamCounts{};
  if (spec_out != nullptr) *spec_out = spec.value();
  return CountParams(spec.value());
}

struct Row {
  const char* id;
  const char* version;    // transformers_version written into the config (nullptr: absent)
  int64_t stored;         // buffer elements the checkpoint stores, worked by hand
  const char* why;
};

// Each row's `stored` is the family's buffer shapes times its layers, worked from the config
// by hand; 0 at or past the release that made the buffers non-persistent.
const Row kRows[] = {
    // GPT-2: 12 x h.N.attn.bias (1,024 x 1,024); PR #23256, first release v4.30.0.
    {"openai-community/gpt2", nullptr, 12 * 1024 * 1024, "no version: the original checkpoint"},
    {"openai-community/gpt2", "4.29.2", 12 * 1024 * 1024, "last release before v4.30.0"},
    {"openai-community/gpt2", "4.30.0", 0, "v4.30.0 saves no mask"},
    {"openai-community/gpt2", "4.30.0.dev0", 0, "a dev tag counts as its release"},
    // GPT-Neo 125M: the 6 global layers' attn.attention.bias (2,048 x 2,048).
    {"EleutherAI/gpt-neo-125m", "4.9.0.dev0", int64_t{6} * 2048 * 2048, "the Hub config's version"},
    {"EleutherAI/gpt-neo-125m", "4.35.0", 0, "after v4.30.0"},
    // Pythia-1B: 16 x (attention.bias 2,048^2 + inv_freq 256 x 0.25 / 2 = 32).
    {"EleutherAI/pythia-1b", "4.24.0", int64_t{16} * (2048 * 2048 + 32), "the Hub config's version"},
    {"EleutherAI/pythia-1b", "4.31.0", 16 * 32, "masks no longer saved, inv_freq still"},
    {"EleutherAI/pythia-1b", "4.40.0", 0, "after v4.32.0"},
    // Llama-2-7B: 32 x self_attn.rotary_emb.inv_freq (128 / 2); PR #24998, first release v4.32.0.
    {"meta-llama/Llama-2-7b-hf", "4.31.0.dev0", 32 * 64, "the Hub config's version"},
    {"meta-llama/Llama-2-7b-hf", "4.31.0", 32 * 64, "v4.31.0 still saved inv_freq"},
    {"meta-llama/Llama-2-7b-hf", "4.32.0", 0, "v4.32.0 does not"},
    {"meta-llama/Llama-2-7b-hf", "4.40.0.dev0", 0, "Llama 3's version"},
    {"meta-llama/Llama-2-7b-hf", nullptr, 0, "no version: a Llama config without one is not an old conversion"},
};

TEST(LegacyBuffers, StoredOnlyBeforeEachFamilysRelease) {
  for (const Row& row : kRows) {
    const json config = FixtureConfig(row.id, row.version);
    const ParamCounts c = Counts(config);
    EXPECT_EQ(c.unloaded, row.stored) << row.id << " at " << (row.version ? row.version : "(absent)") << ": " << row.why;
    EXPECT_EQ(c.checkpoint_total, c.total + row.stored) << row.id << ": " << row.why;
  }
}

TEST(LegacyBuffers, ParamsTotalDoesNotMove) {
  for (const char* id : {"openai-community/gpt2", "EleutherAI/gpt-neo-125m", "EleutherAI/pythia-1b", "meta-llama/Llama-2-7b-hf"}) {
    EXPECT_EQ(Counts(FixtureConfig(id, "4.20.0")).total, Counts(FixtureConfig(id, "4.45.0")).total) << id;
  }
}

TEST(LegacyBuffers, NoteSaysWhenTheVersionIsAbsent) {
  ModelSpec absent;
  Counts(FixtureConfig("openai-community/gpt2", nullptr), &absent);
  ASSERT_FALSE(absent.notes.empty());
  EXPECT_NE(absent.notes.back().find("12 x h.N.attn.bias (1,024 x 1,024)"), std::string::npos) << absent.notes.back();
  EXPECT_NE(absent.notes.back().find("assumes the original checkpoint"), std::string::npos) << absent.notes.back();
  ModelSpec dated;
  Counts(FixtureConfig("meta-llama/Llama-2-7b-hf", "4.31.0.dev0"), &dated);
  ASSERT_FALSE(dated.notes.empty());
  EXPECT_NE(dated.notes.back().find("transformers_version 4.31.0.dev0"), std::string::npos) << dated.notes.back();
  EXPECT_EQ(dated.notes.back().find("assumes"), std::string::npos) << dated.notes.back();
}

TEST(LegacyBuffers, GptNeoCountsGlobalLayersFromAttentionTypes) {
  // Without the expanded attention_layers list, attention_types [[["global", "local"], 6]] gives 6
  // global layers of 12.
  json config = FixtureConfig("EleutherAI/gpt-neo-125m", nullptr);
  config.erase("attention_layers");
  EXPECT_EQ(Counts(config).unloaded, int64_t{6} * 2048 * 2048);
  config["attention_types"] = json::parse(R"([[["global"], 12]])");
  EXPECT_EQ(Counts(config).unloaded, int64_t{12} * 2048 * 2048);
}

TEST(LegacyBuffers, ReadsTheMinorVersion) {
  EXPECT_EQ(TransformersMinorVersion("4.31.0.dev0"), (std::pair<int, int>{4, 31}));
  EXPECT_EQ(TransformersMinorVersion("4.9.0"), (std::pair<int, int>{4, 9}));
  EXPECT_EQ(TransformersMinorVersion("5.0.0rc1"), (std::pair<int, int>{5, 0}));
  EXPECT_FALSE(TransformersMinorVersion("latest").has_value());
  EXPECT_FALSE(TransformersMinorVersion("4").has_value());
}

TEST(LegacyBuffers, MemoryEstimateDoesNotMove) {
  // The engines do not load these buffers (current transformers recomputes them): the same GPU
  // total whichever version saved the checkpoint.
  for (const char* id : {"openai-community/gpt2", "meta-llama/Llama-2-7b-hf"}) {
    for (const char* mode : {R"("mode": "train", "train": {"method": "full"})", R"("mode": "inference")"}) {
      const std::string old_text = R"({"model": )" + FixtureConfig(id, "4.20.0").dump() + ", " + mode + "}";
      const std::string new_text = R"({"model": )" + FixtureConfig(id, "4.45.0").dump() + ", " + mode + "}";
      const Result old_result = EstimateText(old_text);
      const Result new_result = EstimateText(new_text);
      EXPECT_EQ(old_result.gpu.device_total_bytes, new_result.gpu.device_total_bytes) << id << " " << mode;
      EXPECT_GT(old_result.params.checkpoint_total, new_result.params.checkpoint_total) << id << " " << mode;
    }
  }
}

}  // namespace legacy_buffers_test
}  // namespace vramplan
