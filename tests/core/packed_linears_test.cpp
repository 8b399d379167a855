// GPTQ / AWQ / compressed-tensors pack-quantized linears in params.checkpoint_total
// (model/packed_linears.h). Expected element counts are the quantizers' buffer shapes worked by
// hand (the header of packed_linears.h cites the code), checked where a checkpoint's own tensor
// listing or file size is public; whole-model totals are rows of tests/fixtures/param_counts.json.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/hf_config.h"
#include "model/packed_linears.h"
#include "support/result_invariants.h"
#include "test_support.h"
#include "vramplan/estimate.h"
#include "vramplan/model_spec.h"

namespace vramplan {
namespace packed_linears_test {

using nlohmann::json;
using P = PackedLinearLayout;

struct ShapeCase {
  const char* what;
  PackedLinears packed;
  int64_t in, out;
  bool bias;
  int64_t weight, metadata;
};

const ShapeCase kShapes[] = {
    // Llama-2-7B down_proj (11008 -> 4096). GPTQ: qweight [11008 / 32 * 4, 4096] = 1376 x 4096,
    // qzeros [86, 512], scales [86, 4096], g_idx [11008].
    {"GPTQ 4-bit group 128", {P::kGptq, 4, 128}, 11008, 4096, false, 1376LL * 4096, 86 * 512 + 86 * 4096 + 11008},
    // AWQ: the Hub's tensor listing of TheBloke/Llama-2-7B-AWQ model.safetensors (quoted in
    // casper-hansen/AutoAWQ issue #566): down_proj.qweight [11 008, 512] I32, .qzeros [86, 512] I32,
    // .scales [86, 4096] F16; no g_idx.
    {"AWQ 4-bit group 128", {P::kAwq, 4, 128}, 11008, 4096, false, 11008LL * 512, 86 * 512 + 86 * 4096},
    // group_size -1: one group. qweight [4096 / 32 * 8, 1024], qzeros [1, 1024 / 32 * 8], scales [1, 1024], g_idx [4096].
    {"GPTQ 8-bit, one group", {P::kGptq, 8, 0}, 4096, 1024, false, 1024LL * 1024, 256 + 1024 + 4096},
    // 3-bit: qweight [4096 / 32 * 3, 4096] = 384 x 4096, qzeros [32, 4096 / 32 * 3 = 384].
    {"GPTQ 3-bit group 128", {P::kGptq, 3, 128}, 4096, 4096, false, 384LL * 4096, 32 * 384 + 32 * 4096 + 4096},
    // A bias the model has is its parameter, in neither count; a stored zero bias is metadata.
    {"GPTQ, the model's own bias", {P::kGptq, 4, 128}, 1536, 256, true, 192LL * 256, 12 * 32 + 12 * 256 + 1536},
    {"GPTQ, a stored zero bias", {P::kGptq, 4, 128, false, false, true}, 1536, 1536, false, 192LL * 1536,
     12 * 192 + 12 * 1536 + 1536 + 1536},
    // compressed-tensors, Llama-3.3-70B q_proj (8192 -> 8192), symmetric, actorder group:
    // weight_packed [8192, 1024], weight_scale [8192, 64], weight_shape [2], weight_g_idx [8192].
    {"pack-quantized 4-bit group 128, actorder", {P::kCompressedTensors, 4, 128, false, true}, 8192, 8192, false, 8192LL * 1024,
     8192 * 64 + 2 + 8192},
    // asymmetric: weight_zero_point packed along the output rows, [ceil(4096 / 8), 32].
    {"pack-quantized 4-bit group 128, asymmetric", {P::kCompressedTensors, 4, 128, true, false}, 4096, 4096, false, 4096LL * 512,
     4096 * 32 + 2 + 512 * 32},
    // channel strategy: one scale per output row; 8-bit packs four per int32.
    {"pack-quantized 8-bit channel", {P::kCompressedTensors, 8, 0}, 4096, 14336, false, 14336LL * 1024, 14336 + 2},
};

TEST(PackedLinears, ElementsFollowTheQuantizersBuffers) {
  for (const ShapeCase& c : kShapes) {
    SCOPED_TRACE(c.what);
    LinearSpec l;
    l.in_features = c.in;
    l.out_features = c.out;
    l.bias = c.bias;
    l.slot = LinearSlot::kDown;
    EXPECT_TRUE(StoredPacked(l, c.packed));
    const PackedElements e = PackedLinearElements(l, c.packed);
    EXPECT_EQ(e.weight, c.weight);
    EXPECT_EQ(e.metadata, c.metadata);
  }
}

TEST(PackedLinears, RoutersAndUnpackableShapesStayUnpacked) {
  const PackedLinears gptq{P::kGptq, 4, 128};
  LinearSpec l;
  l.in_features = 4096;
  l.out_features = 8;
  l.slot = LinearSlot::kRouter;  // vLLM builds the router without the quantization method
  EXPECT_FALSE(StoredPacked(l, gptq));
  l.slot = LinearSlot::kSharedExpertScale;  // Qwen2-MoE shared_expert_gate, 1 output
  l.out_features = 1;
  EXPECT_FALSE(StoredPacked(l, gptq));
  l.slot = LinearSlot::kDown;
  l.out_features = 4096;
  l.in_features = 4000;  // not a multiple of the group
  EXPECT_FALSE(StoredPacked(l, gptq));
  EXPECT_FALSE(StoredPacked(l, PackedLinears{}));
}

struct ConfigCase {
  const char* what;
  const char* quantization_config;
  P layout;
  int64_t bits, group;
  bool zero_point, g_idx, note;
};

const ConfigCase kConfigs[] = {
    {"Qwen2.5-Coder GPTQ-Int4 (verbatim)",
     R"({"batch_size": 1, "bits": 4, "block_name_to_quantize": null, "cache_block_outputs": true, "damp_percent": 0.01,
         "dataset": null, "desc_act": false, "exllama_config": {"version": 1}, "group_size": 128, "max_input_length": null,
         "model_seqlen": null, "module_name_preceding_first_block": null, "modules_in_block_to_quantize": null,
         "pad_token_id": null, "quant_method": "gptq", "sym": true, "tokenizer": null, "true_sequential": true,
         "use_cuda_fp16": false, "use_exllama": true})",
     P::kGptq, 4, 128, false, false, false},
    {"gptqmodel v2 format", R"({"bits": 4, "group_size": 128, "checkpoint_format": "gptq_v2", "format": "gptq_v2", "quant_method": "gptq"})",
     P::kGptq, 4, 128, false, false, false},
    {"GPTQ per channel", R"({"bits": 8, "group_size": -1, "quant_method": "gptq"})", P::kGptq, 8, 0, false, false, false},
    {"GPTQ marlin checkpoint: other tensors", R"({"bits": 4, "group_size": 128, "checkpoint_format": "marlin", "quant_method": "gptq"})",
     P::kNone, 0, 0, false, false, false},
    {"GPTQ with per-module overrides: noted", R"({"bits": 4, "group_size": 128, "quant_method": "gptq", "dynamic": {"-:.*mlp.*": {}}})",
     P::kGptq, 4, 128, false, false, true},
    {"Qwen1.5-MoE GPTQ module list: noted",
     R"({"bits": 4, "group_size": 128, "quant_method": "gptq", "modules_in_block_to_quantize": [["self_attn.q_proj"]]})", P::kGptq, 4,
     128, false, false, true},
    {"AutoAWQ GEMM", R"({"bits": 4, "group_size": 128, "modules_to_not_convert": null, "quant_method": "awq", "version": "gemm", "zero_point": true})",
     P::kAwq, 4, 128, false, false, false},
    {"AutoAWQ quant_config spelling", R"({"w_bit": 4, "q_group_size": 64, "quant_method": "awq", "version": "GEMM"})", P::kAwq, 4, 64,
     false, false, false},
    {"AWQ GEMV: other shapes", R"({"bits": 4, "group_size": 128, "quant_method": "awq", "version": "gemv"})", P::kNone, 0, 0, false,
     false, false},
    {"compressed-tensors W4A16 actorder",
     R"({"quant_method": "compressed-tensors", "format": "pack-quantized", "ignore": ["lm_head"],
         "config_groups": {"group_0": {"targets": ["Linear"], "input_activations": null,
           "weights": {"num_bits": 4, "type": "int", "symmetric": true, "strategy": "group", "group_size": 128, "actorder": "group"}}}})",
     P::kCompressedTensors, 4, 128, false, true, false},
    {"compressed-tensors asymmetric channel",
     R"({"quant_method": "compressed-tensors", "format": "pack-quantized",
         "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "int", "symmetric": false, "strategy": "channel"}}}})",
     P::kCompressedTensors, 8, 0, true, false, false},
    {"compressed-tensors regex ignore list: not read",
     R"({"quant_method": "compressed-tensors", "format": "pack-quantized", "ignore": ["lm_head", "re:.*self_attn.*"],
         "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 32}}}})",
     P::kNone, 0, 0, false, false, false},
    {"compressed-tensors FP8: not packed",
     R"({"quant_method": "compressed-tensors", "format": "float-quantized",
         "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float", "strategy": "channel"}}}})",
     P::kNone, 0, 0, false, false, false},
    {"bitsandbytes: not packed this way", R"({"quant_method": "bitsandbytes", "load_in_4bit": true})", P::kNone, 0, 0, false, false, false},
};

TEST(PackedLinears, ReadFromQuantizationConfig) {
  for (const ConfigCase& c : kConfigs) {
    SCOPED_TRACE(c.what);
    const PackedLinearsReading r = PackedLinearsFromConfig(json::parse(c.quantization_config));
    EXPECT_EQ(r.packed.layout, c.layout);
    if (c.layout == P::kNone) continue;
    EXPECT_EQ(r.packed.bits, c.bits);
    EXPECT_EQ(r.packed.group_size, c.group);
    EXPECT_EQ(r.packed.zero_point, c.zero_point);
    EXPECT_EQ(r.packed.g_idx, c.g_idx);
    EXPECT_EQ(!r.note.empty(), c.note);
  }
}

// GPTQ's desc_act and sym, which vLLM's kernel choice reads (inference/packed_linear_bytes.h); a
// missing sym is not "true" (vLLM's is_gptq_marlin_compatible refuses a config without it).
TEST(PackedLinears, ReadsGptqDescActAndSym) {
  const PackedLinears qwen = PackedLinearsFromConfig(json::parse(kConfigs[0].quantization_config)).packed;
  EXPECT_FALSE(qwen.desc_act);
  EXPECT_TRUE(qwen.sym);
  const PackedLinears act = PackedLinearsFromConfig(json::parse(R"({"quant_method": "gptq", "bits": 4, "group_size": 32, "desc_act": true})")).packed;
  EXPECT_TRUE(act.desc_act);
  EXPECT_FALSE(act.sym);
}

json Row(const char* id) {
  const json table = testing_support::LoadFixture("param_counts.json");
  for (const auto& row : table["models"]) {
    if (row["id"] == id) return row;
  }
  ADD_FAILURE() << id << " is not a row of param_counts.json";
  return json::object();
}

ParamCounts Count(const json& config, const json& facts = json::object()) {
  Issues warnings;
  auto spec = ModelSpecFromHfConfig(config, "model", &warnings);
  EXPECT_TRUE(spec.ok());
  if (!spec.ok()) return {};
  ApplyCheckpointFacts(facts, &spec.value());
  return CountParams(spec.value());
}

// RedHatAI/Llama-3.3-70B-Instruct-quantized.w4a16 (llm-compressor, compressed-tensors
// pack-quantized). A public safetensors-header census (every file's data_offsets summed) gives
// 39,525,311,232 B. Worked from the compressor's shapes, 80 layers x 7 linears:
//   int32: weight_packed 8,556,380,160 + weight_g_idx 6,225,920 = 8,562,606,080 elements (4 B)
//   16-bit: embed_tokens + lm_head 2,101,346,304 + norms 1,318,912 + weight_scale 534,773,760
//           = 2,637,438,976 elements (2 B)
//   weight_shape: 560 x 2 elements, int64 (torch.tensor(module.weight.shape)), 8,960 B
//   4 x 8,562,606,080 + 2 x 2,637,438,976 + 8,960 = 39,525,311,232 B, the census's total.
// The quantization_config below is written from that layout (int4, group 128, symmetric, actorder
// "group": without weight_g_idx the bytes fall 24,903,680 short); no copy of the Hub file was found.
TEST(PackedLinears, CompressedTensorsLlama33_70bMatchesTheHeaderCensus) {
  json config = Row("meta-llama/Llama-3.3-70B-Instruct")["config"];
  config["quantization_config"] = json::parse(R"({"quant_method": "compressed-tensors", "format": "pack-quantized", "ignore": ["lm_head"],
      "config_groups": {"group_0": {"targets": ["Linear"],
        "weights": {"num_bits": 4, "type": "int", "symmetric": true, "strategy": "group", "group_size": 128, "actorder": "group"}}}})");
  const int64_t int32 = 8556380160LL + 6225920LL, half = 2101346304LL + 1318912LL + 534773760LL, shape = 560 * 2;
  ASSERT_EQ(4 * int32 + 2 * half + 8 * shape, 39525311232LL);
  const ParamCounts c = Count(config);
  EXPECT_EQ(c.total, 70553706496LL);  // the unquantized model, as the table row
  EXPECT_EQ(c.checkpoint_total, int32 + half + shape);
  EXPECT_EQ(c.int32_packing_saved, 8 * 8556380160LL - 8556380160LL);  // eight 4-bit values per int32
}

// The JSON answer carries int32_packing_saved and its buckets still add up
// (tests/core/support/result_invariants.h ParamBucketsSumToTotal).
TEST(PackedLinears, ResultJsonBucketsAddUp) {
  json scenario = {{"mode", "inference"}, {"gpu", "h100-sxm-80gb"}, {"inference", {{"engine", "vllm"}, {"max_model_len", 4096}}}};
  json row = Row("RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16");
  scenario["model"] = row["config"];
  const json r = json::parse(EstimateJson(scenario.dump()), nullptr, false);
  ASSERT_TRUE(r.is_object());
  ASSERT_TRUE(r.contains("params")) << r.dump().substr(0, 400);
  EXPECT_GT(r["params"]["int32_packing_saved"].get<int64_t>(), 0);
  EXPECT_EQ(r["params"]["total"].get<int64_t>(), row["params"].get<int64_t>());
  const auto problem = fuzzing::invariant_detail::ParamBucketsSumToTotal(r);
  EXPECT_FALSE(problem.has_value()) << problem.value_or("") << r["params"].dump();
}

}  // namespace
}  // namespace vramplan
