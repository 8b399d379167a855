// The layer rules of the Baichuan, Helium, Arcee, VaultGemma, CWM and StableLM-Epoch readers that
// the published totals of tests/fixtures/param_counts.json do not exercise: Baichuan's position
// encoding (vLLM's rule), which projections carry a bias, the norms VaultGemma keeps, CWM's window
// rule without layer_types, and the remote StableLM's rope_pct. Expected values are worked by hand
// from the modeling files cited in each reader.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/hf_config.h"
#include "vramplan/model_spec.h"

namespace vramplan {
namespace dense_families_test {

using nlohmann::json;

json Small(const char* type) {
  return {{"model_type", type},       {"hidden_size", 64}, {"intermediate_size", 128}, {"num_hidden_layers", 8},
          {"num_attention_heads", 4}, {"vocab_size", 100}};
}

ModelSpec Read(const json& cfg) {
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(cfg, "model", &warnings);
  EXPECT_TRUE(spec.ok()) << (spec.ok() ? "" : spec.errors()[0].message);
  EXPECT_TRUE(warnings.empty()) << (warnings.empty() ? "" : warnings[0].message);
  return spec.ok() ? spec.value() : ModelSpec{};
}

const LinearSpec* Linear(const ModelSpec& m, std::string_view name) {
  for (const LinearSpec& l : m.kinds[m.layer_kind[0]].linears) {
    if (l.name == name) return &l;
  }
  return nullptr;
}

// vllm/model_executor/models/baichuan.py BaichuanForCausalLM: RoPE at hidden_size 4096 (Baichuan2-7B),
// ALiBi otherwise (13B); BaiChuanForCausalLM (Baichuan-7B v1) rotates whatever its width. W_pack is
// h -> 3h without bias and the layer has no q_proj.
TEST(DenseFamilies, BaichuanPositionsFollowVllmsRule) {
  json cfg = Small("baichuan");
  cfg["architectures"] = {"BaichuanForCausalLM"};
  EXPECT_EQ(Read(cfg).rope_fraction, 0.0);
  cfg["architectures"] = {"BaiChuanForCausalLM"};
  EXPECT_EQ(Read(cfg).rope_fraction, 1.0);
  cfg["architectures"] = {"BaichuanForCausalLM"};
  cfg["hidden_size"] = 4096;
  cfg["num_attention_heads"] = 32;
  const ModelSpec m = Read(cfg);
  EXPECT_EQ(m.rope_fraction, 1.0);
  ASSERT_NE(Linear(m, "W_pack"), nullptr);
  EXPECT_EQ(Linear(m, "W_pack")->out_features, 3 * 4096);
  EXPECT_FALSE(Linear(m, "W_pack")->bias);
  EXPECT_EQ(Linear(m, "q_proj"), nullptr);
}

// HeliumAttention rebuilds o_proj with bias=False: attention_bias reaches q/k/v only.
TEST(DenseFamilies, HeliumAttentionBiasSkipsOProj) {
  json cfg = Small("helium");
  cfg["attention_bias"] = true;
  const ModelSpec m = Read(cfg);
  EXPECT_TRUE(Linear(m, "q_proj")->bias);
  EXPECT_TRUE(Linear(m, "v_proj")->bias);
  EXPECT_FALSE(Linear(m, "o_proj")->bias);
}

// ArceeMLP = NemotronMLP: up_proj / down_proj, no gate.
TEST(DenseFamilies, ArceeMlpHasNoGate) {
  const ModelSpec m = Read(Small("arcee"));
  EXPECT_EQ(Linear(m, "gate_proj"), nullptr);
  ASSERT_NE(Linear(m, "up_proj"), nullptr);
  // Per layer: q/k/v/o 4 x 64 x 64, up/down 2 x 64 x 128, two RMSNorms; untied embeddings.
  EXPECT_EQ(CountParams(m).total, 8 * (4 * 4096 + 2 * 8192 + 2 * 64) + 2 * 100 * 64 + 64);
}

// VaultGemmaDecoderLayer deletes post_attention_layernorm and post_feedforward_layernorm; without
// layer_types Gemma2Config's default makes the even layers slide.
TEST(DenseFamilies, VaultGemmaKeepsTwoNormsPerLayer) {
  json cfg = Small("vaultgemma");
  cfg["sliding_window"] = 16;
  const ModelSpec m = Read(cfg);
  const LayerKind& k = m.kinds[m.layer_kind[0]];
  ASSERT_EQ(k.norms.size(), 2u);
  EXPECT_EQ(k.norms[0].name, "input_layernorm");
  EXPECT_EQ(k.norms[1].name, "pre_feedforward_layernorm");
  EXPECT_EQ(m.kinds[m.layer_kind[0]].attention.sliding_window, 16);
  EXPECT_EQ(m.kinds[m.layer_kind[1]].attention.sliding_window, 0);
  EXPECT_TRUE(m.tied_embeddings);
}

// CwmConfig without layer_types: layer i is full attention when i % 4 == 0, else sliding.
TEST(DenseFamilies, CwmDefaultWindowRule) {
  json cfg = Small("cwm");
  cfg["sliding_window"] = 32;
  const ModelSpec m = Read(cfg);
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(m.kinds[m.layer_kind[i]].attention.sliding_window, i % 4 == 0 ? 0 : 32) << i;
  }
  EXPECT_FALSE(Linear(m, "q_proj")->bias);
}

// StableLMEpochConfig names the rotary fraction rope_pct; model_type stablelm reads only
// partial_rotary_factor (default 0.25).
TEST(DenseFamilies, StableLmEpochReadsRopePct) {
  json cfg = Small("stablelm_epoch");
  cfg["rope_pct"] = 0.5;
  EXPECT_EQ(Read(cfg).rope_fraction, 0.5);
  cfg["model_type"] = "stablelm";
  EXPECT_EQ(Read(cfg).rope_fraction, 0.25);
}

}  // namespace
}  // namespace vramplan
