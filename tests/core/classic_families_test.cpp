// BLOOM, OPT, GPT-J, MPT, the pure Mamba, Phi-3.5-MoE and DBRX readers (core/src/model/families/
// bloom_mpt.cpp, opt_gptj.cpp, mamba.cpp, phimoe_dbrx.cpp): what their exact totals in
// tests/fixtures/param_counts.json do not show on their own (position tables, rotary fractions, the
// pure-SSM layer shape, MoE settings in nested objects) and the configs they refuse rather than
// count wrong.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/hf_config.h"
#include "test_support.h"
#include "vramplan/model_spec.h"

namespace vramplan {
namespace classic_families_test {

using testing_support::LoadFixture;

nlohmann::json FixtureConfig(const std::string& id) {
  const nlohmann::json table = LoadFixture("param_counts.json");
  for (const auto& row : table["models"]) {
    if (row["id"] == id) return row["config"];
  }
  ADD_FAILURE() << id << " is not in tests/fixtures/param_counts.json";
  return nlohmann::json::object();
}

ModelSpec Read(const nlohmann::json& config) {
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(config, "model", &warnings);
  EXPECT_TRUE(spec.ok()) << (spec.ok() ? "" : spec.errors()[0].message);
  EXPECT_TRUE(warnings.empty());
  return spec.ok() ? spec.value() : ModelSpec{};
}

std::string RefusalPath(const nlohmann::json& config) {
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(config, "model", &warnings);
  return spec.ok() ? std::string("(read)") : spec.errors()[0].field_path;
}

TEST(ClassicFamilies, PositionsFollowEachFamily) {
  // OPTLearnedPositionalEmbedding: max_position_embeddings + 2 rows (the fairseq offset).
  const ModelSpec opt = Read(FixtureConfig("facebook/opt-125m"));
  EXPECT_EQ(opt.position_embedding_rows, 2050);
  EXPECT_EQ(opt.rope_fraction, 0.0);
  EXPECT_TRUE(opt.tied_embeddings);
  // ALiBi: no position table, no rotary cache.
  for (const char* id : {"bigscience/bloom-560m", "mosaicml/mpt-7b"}) {
    const ModelSpec m = Read(FixtureConfig(id));
    EXPECT_EQ(m.position_embedding_rows, 0) << id;
    EXPECT_EQ(m.rope_fraction, 0.0) << id;
  }
  // GPT-J: rotary on 64 of 256 head dims, an lm_head with bias, one LayerNorm feeding both branches.
  const ModelSpec gptj = Read(FixtureConfig("EleutherAI/gpt-j-6b"));
  EXPECT_DOUBLE_EQ(gptj.rope_fraction, 0.25);
  EXPECT_TRUE(gptj.lm_head_bias);
  EXPECT_FALSE(gptj.tied_embeddings);
  ASSERT_EQ(gptj.kinds.size(), 1u);
  EXPECT_TRUE(gptj.kinds[0].parallel_residual);
  EXPECT_EQ(gptj.kinds[0].norms.size(), 1u);
}

TEST(ClassicFamilies, BloomCountsItsEmbeddingLayerNorm) {
  const ModelSpec m = Read(FixtureConfig("bigscience/bloom-560m"));
  EXPECT_EQ(m.extra_embedding_params, 2 * 1024);  // word_embeddings_layernorm weight + bias
  EXPECT_EQ(CountParams(m).embedding, 250880LL * 1024 + 2 * 1024);
}

TEST(ClassicFamilies, PureMambaLayersHoldOneNormAndOneMixer) {
  struct Case {
    const char* id;
    MixerKind kind;
    int64_t state_elements;  // per layer and sequence
  };
  for (const Case& c : {Case{"state-spaces/mamba-130m-hf", MixerKind::kMamba1, 1536 * 16},
                        Case{"mistralai/Mamba-Codestral-7B-v0.1", MixerKind::kMamba2, 128 * 64 * 128},
                        Case{"tiiuae/falcon-mamba-7b", MixerKind::kMamba1, 8192 * 16}}) {
    const ModelSpec m = Read(FixtureConfig(c.id));
    ASSERT_EQ(m.kinds.size(), 1u) << c.id;
    const LayerKind& k = m.kinds[0];
    EXPECT_EQ(k.attention.num_heads, 0) << c.id << ": no attention, no KV cache";
    EXPECT_EQ(k.mlp.intermediate, 0) << c.id << ": no MLP";
    EXPECT_EQ(k.recurrent.kind, c.kind) << c.id;
    EXPECT_EQ(k.recurrent.StateElements(), c.state_elements) << c.id;
    ASSERT_EQ(k.norms.size(), 1u) << c.id;
    EXPECT_EQ(k.norms[0].name, "norm") << c.id;
  }
}

TEST(ClassicFamilies, MoeLayoutsOfPhimoeAndDbrx) {
  const ModelSpec phimoe = Read(FixtureConfig("microsoft/Phi-3.5-MoE-instruct"));
  EXPECT_TRUE(phimoe.lm_head_bias);
  EXPECT_EQ(phimoe.norm_kind, NormKind::kLayerNorm);
  EXPECT_TRUE(phimoe.final_norm.bias);
  // DBRX: 8 kv heads from the nested attn_config, top-4 of 16 experts from ffn_config, and experts
  // that are nn.Parameter tensors (DbrxExpertGLU w1 / v1 / w2), so not LoRA targets.
  const ModelSpec dbrx = Read(FixtureConfig("databricks/dbrx-instruct"));
  ASSERT_EQ(dbrx.kinds.size(), 1u);
  const LayerKind& k = dbrx.kinds[0];
  EXPECT_EQ(k.attention.num_kv_heads, 8);
  EXPECT_EQ(k.mlp.num_experts, 16);
  EXPECT_EQ(k.mlp.experts_per_token, 4);
  EXPECT_FALSE(dbrx.final_norm.bias);
  for (const LinearSpec& l : k.linears) {
    EXPECT_EQ(l.lora_targetable, l.copies == 1) << l.name;
  }
}

TEST(ClassicFamilies, LayoutsNotModelledAreRefused) {
  // OPT-350m: a 512-wide embedding and lm_head around a 1,024-wide decoder (project_in / _out).
  nlohmann::json opt = FixtureConfig("facebook/opt-125m");
  opt["hidden_size"] = 1024;
  opt["num_attention_heads"] = 16;
  opt["word_embed_proj_dim"] = 512;
  EXPECT_EQ(RefusalPath(opt), "model.word_embed_proj_dim");
  // transformers' MptMLP is 4 x d_model wide whatever expansion_ratio says.
  nlohmann::json mpt = FixtureConfig("mosaicml/mpt-7b");
  mpt["expansion_ratio"] = 8;
  EXPECT_EQ(RefusalPath(mpt), "model.expansion_ratio");
  // Mamba2Mixer reshapes expand x hidden_size into num_heads x head_dim.
  nlohmann::json mamba2 = FixtureConfig("mistralai/Mamba-Codestral-7B-v0.1");
  mamba2["num_heads"] = 96;
  EXPECT_EQ(RefusalPath(mamba2), "model.num_heads");
}

}  // namespace
}  // namespace vramplan
