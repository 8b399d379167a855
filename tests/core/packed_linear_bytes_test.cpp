// Serving weight bytes of GPTQ / AWQ / compressed-tensors checkpoints whose quantization_config
// describes the packed layout (inference/packed_linear_bytes.h). The model is one decoder layer
// of Qwen2.5-Coder-1.5B (tests/fixtures/param_counts.json), so every expected figure below is
// worked by hand from that layer's tensor shapes:
//
//   linear  in    out   own bias   (Qwen2: q, k, v carry a bias; o, gate, up, down do not)
//   q       1536  1536  yes        k, v  1536  256  yes        o  1536  1536
//   gate    1536  8960             up    1536  8960            down  8960  1536
//
//   sum in x out = 2 x 1536^2 + 2 x 1536 x 256 + 3 x 1536 x 8960 = 46,792,704
//   sum in = 6 x 1536 + 8960 = 18,176;  sum out = 21,504 + 1,536 = 23,040
//   groups x out: group 128: 12 x 21,504 + 70 x 1,536 = 365,568
//                 group 32:  48 x 21,504 + 280 x 1,536 = 1,462,272
//                 group -1:  1 x 23,040 = 23,040
//   the model's own biases (q, k, v): (1536 + 256 + 256) x 2 B = 4,096 B
//   the layer's two RMSNorms: 2 x 1536 x 2 B = 6,144 B
//
// 4-bit qweight / weight_packed: 46,792,704 / 8 int32 = 23,396,352 B; 8-bit: 46,792,704 B.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "inference/packed_linear_bytes.h"
#include "inference/weight_formats.h"
#include "model/hf_config.h"
#include "model/packed_linears.h"
#include "test_support.h"
#include "vramplan/model_spec.h"

namespace vramplan {
namespace packed_linear_bytes_test {

using nlohmann::json;

json QwenLayerConfig() {
  const json table = testing_support::LoadFixture("param_counts.json");
  for (const auto& row : table["models"]) {
    if (row["id"] == "Qwen/Qwen2.5-Coder-1.5B-Instruct-GPTQ-Int4") {
      json config = row["config"];
      config["num_hidden_layers"] = 1;
      return config;
    }
  }
  ADD_FAILURE() << "Qwen/Qwen2.5-Coder-1.5B-Instruct-GPTQ-Int4 is not a row of param_counts.json";
  return json::object();
}

ModelSpec Spec(const json& config, const json& facts = json::object()) {
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(config, "model", &warnings);
  EXPECT_TRUE(spec.ok());
  if (!spec.ok()) return {};
  ApplyCheckpointFacts(facts, &spec.value());
  return spec.value();
}

struct ServingCase {
  const char* what;
  const char* quantization_config;  // "" keeps the fixture's (the verbatim Qwen GPTQ-Int4 config)
  WeightFormat format;
  int64_t transformers_layer_bytes, vllm_layer_bytes;
  const char* vllm_explain;  // a piece of vLLM's explanation
};

const ServingCase kCases[] = {
    // Qwen/Qwen2.5-Coder-1.5B-Instruct-GPTQ-Int4 as published: GPTQ 4-bit, group 128, desc_act
    // false, sym true. Stored: qweight 23,396,352 B + qzeros 365,568 / 8 x 4 = 182,784 B + scales
    // 365,568 x 2 = 731,136 B + g_idx 18,176 x 4 = 72,704 B. transformers keeps all four (+ biases,
    // norms): 24,393,216. vLLM gptq_marlin drops qzeros and (no desc_act) g_idx: 23,396,352 +
    // 731,136 + 4,096 + 6,144 = 24,137,728.
    {"Qwen2.5-Coder GPTQ-Int4, group 128", "", WeightFormat::kGptq4, 24393216, 24137728, "vLLM gptq_marlin keeps qweight + scales"},
    // GPTQ 4-bit group 32 with act-order: scales 1,462,272 x 2 = 2,924,544 B, qzeros 1,462,272 / 8
    // x 4 = 731,136 B. transformers: 23,396,352 + 731,136 + 2,924,544 + 72,704 + 4,096 + 6,144 =
    // 27,134,976. vLLM Marlin keeps the sorted g_idx and adds g_idx_sort_indices (2 x 72,704):
    // 23,396,352 + 2,924,544 + 145,408 + 4,096 + 6,144 = 26,476,544.
    {"GPTQ group 32, desc_act", R"({"quant_method": "gptq", "bits": 4, "group_size": 32, "desc_act": true, "sym": true})",
     WeightFormat::kGptq4, 27134976, 26476544, "g_idx + g_idx_sort_indices"},
    // GPTQ 8-bit, group -1 (one group per output channel): qweight 46,792,704 B, scales 23,040 x 2 =
    // 46,080 B, qzeros 23,040 / 4 x 4 = 23,040 B, g_idx 72,704 B. transformers: 46,792,704 + 23,040 +
    // 46,080 + 72,704 + 4,096 + 6,144 = 46,944,768. vLLM Marlin (8-bit sym): 46,792,704 + 46,080 +
    // 4,096 + 6,144 = 46,849,024.
    {"GPTQ 8-bit, group -1", R"({"quant_method": "gptq", "bits": 8, "group_size": -1, "desc_act": false, "sym": true})",
     WeightFormat::kGptq8, 46944768, 46849024, "one group per output channel"},
    // Asymmetric GPTQ: no Marlin type for it (GPTQMarlinConfig.TYPE_MAP), so vLLM's gptq.py keeps
    // qzeros and empties g_idx: 23,396,352 + 182,784 + 731,136 + 4,096 + 6,144 = 24,320,512.
    {"GPTQ asymmetric, group 128", R"({"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": false, "sym": false})",
     WeightFormat::kGptq4, 24393216, 24320512, "vLLM gptq keeps qweight + qzeros + scales"},
    // AutoAWQ GEMM, group 128: qweight [in, out / 8] int32 = 23,396,352 B, qzeros [in / 128, out / 8]
    // int32 = 182,784 B, scales [in / 128, out] fp16 = 731,136 B, no g_idx; vLLM's AWQ Marlin
    // repacks each to the same size: both 23,396,352 + 182,784 + 731,136 + 4,096 + 6,144 = 24,320,512.
    {"AWQ GEMM, group 128", R"({"quant_method": "awq", "bits": 4, "group_size": 128, "version": "gemm", "zero_point": true})",
     WeightFormat::kAwq4, 24320512, 24320512, "vLLM keeps qweight + qzeros + scales"},
    // compressed-tensors W4A16 (llm-compressor's scheme: int4, symmetric, group 128):
    // weight_packed [out, in / 8] int32 = 23,396,352 B, weight_scale [out, in / 128] 16-bit =
    // 731,136 B, weight_shape int64 [2] x 7 linears = 112 B: 23,396,352 + 731,136 + 112 + 4,096 +
    // 6,144 = 24,137,840 for both.
    {"compressed-tensors W4A16", R"({"quant_method": "compressed-tensors", "format": "pack-quantized",
        "config_groups": {"group_0": {"targets": ["Linear"],
          "weights": {"num_bits": 4, "type": "int", "symmetric": true, "strategy": "group", "group_size": 128}}}})",
     WeightFormat::kGptq4, 24137840, 24137840, "weight_packed + weight_scale + weight_shape"},
    // The same with actorder "group": + weight_g_idx 72,704 B (transformers: 24,210,544); vLLM
    // keeps it sorted and adds g_idx_sort_indices: 24,137,840 + 2 x 72,704 = 24,283,248.
    {"compressed-tensors W4A16, actorder", R"({"quant_method": "compressed-tensors", "format": "pack-quantized",
        "config_groups": {"group_0": {"targets": ["Linear"],
          "weights": {"num_bits": 4, "type": "int", "symmetric": true, "strategy": "group", "group_size": 128, "actorder": "group"}}}})",
     WeightFormat::kGptq4, 24210544, 24283248, "weight_g_idx + g_idx_sort_indices"},
};

TEST(PackedLinearBytes, FollowTheConfigsLayoutAndWhatTheEngineKeeps) {
  for (const ServingCase& c : kCases) {
    SCOPED_TRACE(c.what);
    json config = QwenLayerConfig();
    if (*c.quantization_config != '\0') config["quantization_config"] = json::parse(c.quantization_config);
    const ModelSpec m = Spec(config);
    ASSERT_NE(m.checkpoint.packed_linears.layout, PackedLinearLayout::kNone);
    const WeightBytes tf = ComputeWeightBytes(m, c.format, 1, PackedLoader::kModules);
    const WeightBytes vllm = ComputeWeightBytes(m, c.format, 1, PackedLoader::kVllm);
    ASSERT_EQ(tf.layer_bytes.size(), 1u);
    EXPECT_EQ(tf.layer_bytes[0], c.transformers_layer_bytes);
    EXPECT_EQ(vllm.layer_bytes[0], c.vllm_layer_bytes);
    EXPECT_NE(vllm.explain.find(c.vllm_explain), std::string::npos) << vllm.explain;
    EXPECT_EQ(vllm.explain.find("assumed"), std::string::npos) << vllm.explain;
  }
}

// The whole Qwen2.5-Coder-1.5B-Instruct-GPTQ-Int4 in transformers is its checkpoint's data: the
// repo's model.safetensors is 1,149,862,960 B (the Hub API's size, tests/fixtures/param_counts.json
// checkpoint_total_source), less the 8-byte length prefix and the 102,440-byte JSON header =
// 1,149,760,512 B. vLLM's Marlin drops 28 x (182,784 qzeros + 72,704 g_idx) = 7,153,664 B of it.
TEST(PackedLinearBytes, QwenGptqInt4InTransformersIsTheFilesData) {
  json config = QwenLayerConfig();
  config["num_hidden_layers"] = 28;
  const ModelSpec m = Spec(config);
  EXPECT_EQ(ComputeWeightBytes(m, WeightFormat::kGptq4, 1, PackedLoader::kModules).total_bytes, 1149862960LL - 8 - 102440);
  EXPECT_EQ(ComputeWeightBytes(m, WeightFormat::kGptq4, 1, PackedLoader::kVllm).total_bytes, 1149760512LL - 7153664);
}

// An exporter's stored zero biases (RedHatAI's GPTQ exports; checkpoint.packed_linears_store_bias)
// count in the checkpoint, 1536 + 8960 + 8960 + 1536 = 20,992 elements for o, gate, up and down,
// but neither engine builds them: the bytes are the published config's above.
TEST(PackedLinearBytes, StoredZeroBiasesAreNotLoaded) {
  const ModelSpec plain = Spec(QwenLayerConfig());
  const ModelSpec stored = Spec(QwenLayerConfig(), json{{"packed_linears_store_bias", true}});
  EXPECT_EQ(CountParams(stored).checkpoint_total - CountParams(plain).checkpoint_total, 20992);
  EXPECT_EQ(ComputeWeightBytes(stored, WeightFormat::kGptq4, 1, PackedLoader::kModules).layer_bytes[0], 24393216);
  EXPECT_EQ(ComputeWeightBytes(stored, WeightFormat::kGptq4, 1, PackedLoader::kVllm).layer_bytes[0], 24137728);
}

// Without a layout in the config (gptq_4bit picked for an unquantized model) the group-128
// defaults hold, with qzeros and g_idx, for every engine, and the explanation says so.
TEST(PackedLinearBytes, NoConfigLayoutAssumesGroup128AndSaysSo) {
  json config = QwenLayerConfig();
  config.erase("quantization_config");
  const ModelSpec m = Spec(config);
  for (PackedLoader loader : {PackedLoader::kModules, PackedLoader::kVllm}) {
    const WeightBytes w = ComputeWeightBytes(m, WeightFormat::kGptq4, 1, loader);
    EXPECT_EQ(w.layer_bytes[0], 24393216);
    EXPECT_NE(w.explain.find("group 128 assumed"), std::string::npos) << w.explain;
  }
  // A config layout of another format (AWQ here) is not used for gptq_4bit either.
  config["quantization_config"] = json::parse(R"({"quant_method": "awq", "bits": 4, "group_size": 64, "version": "gemm"})");
  const WeightBytes w = ComputeWeightBytes(Spec(config), WeightFormat::kGptq4, 1, PackedLoader::kVllm);
  EXPECT_EQ(w.layer_bytes[0], 24393216);
  EXPECT_NE(w.explain.find("group 128 assumed"), std::string::npos) << w.explain;
}

// vLLM with tp = 2 and act-order: a row-parallel linear (o_proj, down_proj) holds its scales whole
// on each rank (marlin_repeat_scales_on_all_ranks). Per rank, GPTQ 4-bit group 128, desc_act:
//   q     (1,179,648 qweight + 36,864 scales + 12,288 g_idx and sort indices + 3,072 bias) / 2 = 615,936
//   k, v  (196,608 + 6,144 + 12,288 + 512) / 2 = 107,776 each
//   o     (1,179,648 + 12,288) / 2 + 36,864 scales whole = 632,832
//   gate, up  (6,881,280 + 215,040 + 12,288) / 2 = 3,554,304 each
//   down  (6,881,280 + 71,680) / 2 + 215,040 scales whole = 3,691,520
//   norms 6,144: 615,936 + 2 x 107,776 + 632,832 + 2 x 3,554,304 + 3,691,520 + 6,144 = 12,270,592.
TEST(PackedLinearBytes, VllmRepeatsRowParallelScalesWithActOrder) {
  json config = QwenLayerConfig();
  config["quantization_config"] = json::parse(R"({"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": true, "sym": true})");
  const ModelSpec m = Spec(config);
  EXPECT_EQ(ComputeWeightBytes(m, WeightFormat::kGptq4, 2, PackedLoader::kVllm).layer_bytes[0], 12270592);
}

// vLLM's GPTQ-Marlin MoE method keeps the experts' qzeros as 16-bit tensors (w13_qzeros /
// w2_qzeros, params_dtype). One expert gate 2048 -> 768, group 128: qweight [256, 768] int32 =
// 786,432 B, scales [16, 768] x 2 = 24,576 B, qzeros [16, 96] x 2 B = 3,072 B: 814,080 B; the same
// shape as a dense linear drops qzeros: 811,008 B.
TEST(PackedLinearBytes, VllmMarlinMoeKeepsExpertZerosAt16Bit) {
  PackedLinears gptq{PackedLinearLayout::kGptq, 4, 128};
  gptq.sym = true;
  LinearSpec l;
  l.in_features = 2048;
  l.out_features = 768;
  l.copies = 4;
  l.role = ModuleRole::kExperts;
  l.slot = LinearSlot::kExpertGate;
  EXPECT_EQ(PackedLinearResidentBytes(l, gptq, PackedLoader::kVllm, 1).sharded, 814080);
  l.role = ModuleRole::kMlp;
  l.slot = LinearSlot::kGate;
  l.copies = 1;
  EXPECT_EQ(PackedLinearResidentBytes(l, gptq, PackedLoader::kVllm, 1).sharded, 811008);
}

// The checkpoint's element count and the engines' bytes come from one tensor list.
TEST(PackedLinearBytes, ElementsAndBytesShareOneTensorList) {
  const PackedLinears gptq{PackedLinearLayout::kGptq, 4, 128};
  LinearSpec l;
  l.in_features = 8960;
  l.out_features = 1536;
  l.slot = LinearSlot::kDown;
  int64_t elements = 0, bytes = 0;
  for (const PackedTensor& t : PackedLinearTensors(l, gptq)) elements += t.elements, bytes += t.Bytes();
  const PackedElements e = PackedLinearElements(l, gptq);
  EXPECT_EQ(elements, e.weight + e.metadata);
  // qweight [1120, 1536] + qzeros [70, 192] int32, scales [70, 1536] fp16, g_idx [8960] int32.
  EXPECT_EQ(bytes, 1120 * 1536 * 4 + 70 * 192 * 4 + 70 * 1536 * 2 + 8960 * 4);
  EXPECT_EQ(PackedLinearResidentBytes(l, gptq, PackedLoader::kModules, 1).sharded, bytes);
}

}  // namespace
}  // namespace vramplan
