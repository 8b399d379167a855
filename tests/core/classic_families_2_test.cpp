// StableLM, GPT-Neo, CodeGen, OLMo 1 and Persimmon readers (core/src/model/families/
// stablelm_persimmon.cpp, gpt_neo_codegen.cpp, olmo.cpp): what their totals in
// tests/fixtures/param_counts.json do not show on their own: position tables, rotary fractions,
// norms without weights, per-head q / k norms, parallel residuals and the MLP activation the
// training walk takes.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/hf_config.h"
#include "test_support.h"
#include "vramplan/model_spec.h"

namespace vramplan {
namespace classic_families_2_test {

using testing_support::LoadFixture;

ModelSpec ReadFixture(const std::string& id) {
  const nlohmann::json table = LoadFixture("param_counts.json");
  for (const auto& row : table["models"]) {
    if (row["id"] != id) continue;
    Issues warnings;
    auto spec = ModelSpecFromHfConfig(row["config"], "model", &warnings);
    EXPECT_TRUE(spec.ok()) << id;
    EXPECT_TRUE(warnings.empty()) << id;
    return spec.ok() ? spec.value() : ModelSpec{};
  }
  ADD_FAILURE() << id << " is not in tests/fixtures/param_counts.json";
  return ModelSpec{};
}

const NormSpec* FindNorm(const LayerKind& k, std::string_view name) {
  for (const NormSpec& n : k.norms) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

TEST(ClassicFamilies2, StableLmNormsAndResiduals) {
  // StableLM 2 1.6B: sequential residual with two LayerNorms (bias), q/k/v bias, a quarter rotary.
  const ModelSpec small = ReadFixture("stabilityai/stablelm-2-1_6b");
  ASSERT_EQ(small.kinds.size(), 1u);
  EXPECT_EQ(small.norm_kind, NormKind::kLayerNorm);
  EXPECT_DOUBLE_EQ(small.rope_fraction, 0.25);
  EXPECT_FALSE(small.kinds[0].parallel_residual);
  EXPECT_EQ(small.kinds[0].norms.size(), 2u);
  EXPECT_TRUE(small.kinds[0].linears[0].bias);   // q_proj
  EXPECT_FALSE(small.kinds[0].linears[3].bias);  // o_proj
  EXPECT_EQ(small.kinds[0].mlp.kind, MlpKind::kGated);
  // StableLM 2 12B: parallel residual off input_layernorm alone, one LayerNorm(head_dim) per head
  // without bias: 32 x 160 q weights, 8 x 160 k weights.
  const ModelSpec big = ReadFixture("stabilityai/stablelm-2-12b-chat");
  ASSERT_EQ(big.kinds.size(), 1u);
  EXPECT_TRUE(big.kinds[0].parallel_residual);
  EXPECT_EQ(FindNorm(big.kinds[0], "post_attention_layernorm"), nullptr);
  const NormSpec* q = FindNorm(big.kinds[0], "q_layernorm");
  const NormSpec* k = FindNorm(big.kinds[0], "k_layernorm");
  ASSERT_NE(q, nullptr);
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(q->dim, 32 * 160);
  EXPECT_EQ(k->dim, 8 * 160);
  EXPECT_FALSE(q->bias);
}

TEST(ClassicFamilies2, GptNeoHasLearnedPositionsAndNoWindowedCache) {
  const ModelSpec m = ReadFixture("EleutherAI/gpt-neo-125m");
  EXPECT_EQ(m.position_embedding_rows, 2048);
  EXPECT_EQ(m.rope_fraction, 0.0);
  EXPECT_TRUE(m.tied_embeddings);
  ASSERT_EQ(m.kinds.size(), 1u);  // local and global layers have the same weights
  EXPECT_EQ(m.kinds[0].attention.sliding_window, 0);
  EXPECT_EQ(m.kinds[0].mlp.kind, MlpKind::kPlain);
  EXPECT_EQ(m.kinds[0].mlp.activation, ActivationFn::kGeluNew);
  EXPECT_EQ(m.kinds[0].mlp.intermediate, 4 * 768);
  EXPECT_EQ(m.legacy_buffer_bytes_per_layer, 2048 * 2048);
}

TEST(ClassicFamilies2, CodeGenIsGptJsParallelBlockWithFusedQkv) {
  const ModelSpec m = ReadFixture("Salesforce/codegen-350M-mono");
  EXPECT_DOUBLE_EQ(m.rope_fraction, 0.5);  // rotary_dim 32 of head_dim 64
  EXPECT_TRUE(m.lm_head_bias);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_EQ(m.position_embedding_rows, 0);
  ASSERT_EQ(m.kinds.size(), 1u);
  EXPECT_TRUE(m.kinds[0].parallel_residual);
  EXPECT_EQ(m.kinds[0].norms.size(), 1u);
  EXPECT_EQ(m.kinds[0].linears[0].slot, LinearSlot::kQkv);
  EXPECT_EQ(m.kinds[0].linears[0].out_features, 3 * 1024);
  EXPECT_FALSE(m.kinds[0].linears[0].bias);
}

TEST(ClassicFamilies2, OlmoNormsHaveNoParameters) {
  const ModelSpec m = ReadFixture("allenai/OLMo-1B-hf");
  EXPECT_TRUE(m.tied_embeddings);
  EXPECT_FALSE(m.final_norm.has_weight);
  EXPECT_FALSE(m.final_norm.bias);
  ASSERT_EQ(m.kinds.size(), 1u);
  ASSERT_EQ(m.kinds[0].norms.size(), 2u);
  for (const NormSpec& n : m.kinds[0].norms) {
    EXPECT_FALSE(n.has_weight) << n.name;
    EXPECT_FALSE(n.bias) << n.name;
  }
  EXPECT_EQ(m.kinds[0].mlp.activation, ActivationFn::kSilu);
}

TEST(ClassicFamilies2, PersimmonSharesOneQkNormPerLayerAndSquaresItsRelu) {
  const ModelSpec m = ReadFixture("adept/persimmon-8b-base");
  EXPECT_DOUBLE_EQ(m.rope_fraction, 0.5);
  EXPECT_FALSE(m.lm_head_bias);
  ASSERT_EQ(m.kinds.size(), 1u);
  const NormSpec* q = FindNorm(m.kinds[0], "q_layernorm");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->slot, NormSlot::kQPerHead);
  EXPECT_EQ(q->dim, 64);
  EXPECT_TRUE(q->bias);
  // relu2: relu saves its output and square reuses it, as a plain ReLU MLP saves one tensor.
  EXPECT_EQ(m.kinds[0].mlp.kind, MlpKind::kPlain);
  EXPECT_EQ(m.kinds[0].mlp.activation, ActivationFn::kRelu);
}

}  // namespace
}  // namespace vramplan
