// vLLM MTP speculative decoding (inference/vllm_speculative.h): the drafter's weights and KV pages,
// worked by hand from vLLM's code, and the refusals.
//
// DeepSeek-V3 (config.json: h 7168, 61 layers, q_lora_rank 1536, kv_lora_rank 512, qk_nope 128,
// qk_rope 64, v_head_dim 128, 128 heads, 256 routed experts of 2048, 1 shared expert,
// num_nextn_predict_layers 1). vLLM's draft (deepseek_mtp.py DeepSeekMultiTokenPredictorLayer) is
// one DeepseekV2DecoderLayer (a MoE layer, index 61 >= first_k_dense_replace) + enorm + hnorm +
// eh_proj + shared_head; embed_tokens and shared_head.head are replaced by the target's
// (llm_base_proposer.py _maybe_share_embeddings / _maybe_share_lm_head). The decoder layer:
//   q_a_proj 7168 x 1536                  =     11,010,048  (replicated over tp)
//   q_a_layernorm                         =          1,536
//   q_b_proj 1536 x 128 x (128 + 64)      =     37,748,736
//   kv_a_proj_with_mqa 7168 x (512 + 64)  =      4,128,768  (replicated)
//   kv_a_layernorm                        =            512
//   kv_b_proj 512 x 128 x (128 + 128)     =     16,777,216
//   o_proj 128 x 128 x 7168               =    117,440,512
//   gate 256 x 7168 + correction bias 256 =      1,835,264  (replicated)
//   experts 256 x 3 x 7168 x 2048         = 11,274,289,152
//   shared expert 3 x 7168 x 2048         =     44,040,192
//   input / post-attention norms 2 x 7168 =         14,336
//   layer                                 = 11,507,286,272
// (the Hub's checkpoint_total 684,531,386,000 - total 671,026,419,200 - FP8 scales 41,540,496
// - the MTP layer's embed_tokens and head 2 x 129,280 x 7168 - 3 x 7168 - 2 x 7168^2 gives the
// same 11,507,286,272). In bf16 at tp 1: 2 x 11,507,286,272 = 23,014,572,544 B, eh_proj
// 2 x 7168 x 7168 x 2 B = 205,520,896 B, the three norms 3 x 7168 x 2 B = 43,008 B:
// 23,220,136,448 B. At tp 8: the replicated q_a, kv_a, gate (16,973,824 params: 33,947,648 B)
// + the sharded q_b, kv_b, o, experts, shared expert (11,490,295,808 params x 2 B / 8 =
// 2,872,573,952 B) + norms and bias (16,640 params: 33,280 B) = 2,906,554,880 B; eh_proj and the
// norms stay whole: 3,112,118,784 B.
// KV cache: MLA's latent 512 + 64 = 576 elements per token per layer (MLAAttentionSpec), bf16:
// 61 x 576 x 2 = 70,272 B per token without the draft, 62 x 576 x 2 = 71,424 B with it.
//
// Qwen3-Next-80B-A3B (h 2048, 48 layers, a full-attention layer every 4th: 12; 16 heads of 256,
// 2 KV heads, 512 experts of 512, shared expert 512; the checkpoint's one MTP layer): vLLM's
// Qwen3NextMultiTokenPredictor builds one full-attention Qwen3NextDecoderLayer + fc + 3 norms.
//   q_proj 2048 x (16 x 256 x 2: query and gate) = 16,777,216
//   k_proj, v_proj 2 x 2048 x 512                =  2,097,152
//   o_proj 4096 x 2048                           =  8,388,608
//   q_norm, k_norm 2 x 256                       =        512
//   experts 512 x 3 x 2048 x 512                 = 1,610,612,736
//   router 512 x 2048                            =  1,048,576
//   shared expert 3 x 2048 x 512                 =  3,145,728
//   shared_expert_gate 2048 x 1                  =      2,048
//   input / post-attention norms 2 x 2048        =      4,096
//   layer                                        = 1,642,076,672
// bf16 at tp 1: 3,284,153,344 B + fc 2 x 2048 x 2048 x 2 B = 16,777,216 B + norms 3 x 2048 x 2 B
// = 12,288 B: 3,300,942,848 B. KV: 2 x 2 heads x 256 x 2 B = 2,048 B per layer and token: 12 layers
// 24,576 B, 13 with the draft 26,624 B.
//
// GLM-4.5-Air (h 4096, 46 layers, 96 heads of 128, 8 KV heads, attention_bias, 128 experts of 1408,
// 1 shared expert, num_nextn_predict_layers 1): glm4_moe_mtp.py's layer is one MoE
// Glm4MoeDecoderLayer + enorm + hnorm + eh_proj + shared_head; embed and head shared.
//   q_proj 4096 x 12288 + bias 12288            =    50,343,936
//   k_proj, v_proj 2 x (4096 x 1024 + 1024)     =     8,390,656
//   o_proj 12288 x 4096                         =    50,331,648
//   experts 128 x 3 x 4096 x 1408               = 2,214,592,512
//   shared expert 3 x 4096 x 1408               =    17,301,504
//   gate 128 x 4096 + correction bias 128       =       524,416
//   input / post-attention norms 2 x 4096       =         8,192
//   layer                                       = 2,341,492,864
// (the Hub's checkpoint_total 110,468,824,832 - total 106,852,251,264 - embed and head
// 2 x 151,552 x 4096 - 3 x 4096 - 2 x 4096^2 gives the same). bf16 at tp 1: 4,682,985,728 B
// + eh_proj 2 x 4096 x 4096 x 2 B = 67,108,864 B + norms 24,576 B = 4,750,119,168 B. KV: 2 x 8
// heads x 128 x 2 B = 4,096 B per layer and token: 46 layers 188,416 B, 47 with the draft 192,512 B.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_support.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace vllm_speculative_test {

using nlohmann::json;
using testing_support::GpuTerm;

json Scenario(const std::string& model, int64_t tp, const json& speculative) {
  json inf = {{"engine", "vllm"}, {"weights", "bf16"}, {"max_model_len", 8192}, {"prompt_len", 4096}, {"new_tokens", 256}, {"batch_size", 4}};
  if (!speculative.is_null()) inf["speculative"] = speculative;
  // A device large enough for the bf16 weights on one rank: the pool, not the fit, is under test.
  return {{"model", model}, {"mode", "inference"}, {"inference", inf},
          {"gpu", {{"name", "big"}, {"memory_bytes", int64_t{1} << 41}}}, {"parallel", {{"gpus", tp}, {"tp", tp}}}};
}

struct MtpRow {
  const char* model;
  int64_t tp;
  int64_t draft_weight_bytes;
  int64_t kv_per_token_without, kv_per_token_with;
  // Bytes of one block over every layer without / with the draft (16 tokens x the per-token
  // bytes); 0 for a hybrid model, whose blocks are sized by its recurrent state instead.
  int64_t block_bytes_without, block_bytes_with;
  int64_t attention_layers_with;  // the pool is a multiple of this many pages per block
};

// Worked by hand above.
const MtpRow kRows[] = {
    {"deepseek-ai/DeepSeek-V3", 1, 23220136448, 70272, 71424, 16 * 70272, 16 * 71424, 62},
    {"deepseek-ai/DeepSeek-V3", 8, 3112118784, 70272, 71424, 16 * 70272, 16 * 71424, 62},
    {"zai-org/GLM-4.5-Air", 1, 4750119168, 188416, 192512, 16 * 188416, 16 * 192512, 47},
    {"Qwen/Qwen3-Next-80B-A3B-Instruct", 1, 3300942848, 24576, 26624, 0, 0, 13},
};

TEST(VllmSpeculative, MtpDraftWeightsAndKvPages) {
  for (const MtpRow& row : kRows) {
    SCOPED_TRACE(std::string(row.model) + " tp " + std::to_string(row.tp));
    Result off = testing_support::EstimateText(Scenario(row.model, row.tp, nullptr).dump());
    Result on = testing_support::EstimateText(Scenario(row.model, row.tp, {{"method", "mtp"}, {"num_speculative_tokens", 1}}).dump());
    const int64_t draft = GpuTerm(on, "weights") - GpuTerm(off, "weights");
    EXPECT_EQ(draft, row.draft_weight_bytes);
    EXPECT_EQ(off.inference.kv_bytes_per_token, row.kv_per_token_without);
    EXPECT_EQ(on.inference.kv_bytes_per_token, row.kv_per_token_with);
    // The profile run, sampler and overheads do not change.
    for (const char* key : {"activations", "logits_and_loss", "temporary"}) EXPECT_EQ(GpuTerm(on, key), GpuTerm(off, key)) << key;
    const int64_t pool_off = GpuTerm(off, "kv_cache"), pool_on = GpuTerm(on, "kv_cache");
    ASSERT_GT(pool_on, 0);
    EXPECT_EQ(pool_on % row.attention_layers_with, 0);
    EXPECT_LT(on.inference.kv_token_capacity, off.inference.kv_token_capacity);
    EXPECT_TRUE(on.inference.max_model_len_fits);
    if (row.block_bytes_with > 0) {
      // available_off is in [pool_off, pool_off + block_without); the draft's weights come out of
      // it: pool_on = floor((available_off - draft) / block_with) x block_with.
      EXPECT_EQ(pool_on % row.block_bytes_with, 0);
      EXPECT_GT(pool_on, pool_off - draft - row.block_bytes_with);
      EXPECT_LT(pool_on, pool_off + row.block_bytes_without - draft);
    }
  }
}

// DeepSeek-V3, plain attention: the pool is num_blocks x 62 layers x 16 tokens x 1,152 B, and the
// token capacity num_blocks x 16; one more speculative token only adds lookahead slots.
TEST(VllmSpeculative, MlaPoolIsWholeBlocksOfAllLayers) {
  Result on = testing_support::EstimateText(Scenario("deepseek-ai/DeepSeek-V3", 8, {{"method", "mtp"}}).dump());
  const int64_t page = 62 * 16 * 576 * 2;
  EXPECT_EQ(GpuTerm(on, "kv_cache") % page, 0);
  EXPECT_EQ(on.inference.kv_token_capacity, GpuTerm(on, "kv_cache") / page * 16);
  Result three = testing_support::EstimateText(Scenario("deepseek-ai/DeepSeek-V3", 8, {{"method", "mtp"}, {"num_speculative_tokens", 3}}).dump());
  EXPECT_EQ(GpuTerm(three, "weights"), GpuTerm(on, "weights"));  // the one MTP layer is reused: spec_step_idx % n_predict
  EXPECT_EQ(three.inference.kv_token_capacity, on.inference.kv_token_capacity);
}

// The scheduler's lookahead: a sequence of prompt + new tokens holds cdiv(4096 + 256 + N, 16)
// blocks: 4,352 tokens are exactly 272 blocks, so one lookahead token makes it 273.
TEST(VllmSpeculative, LookaheadSlotsCountPerSequence) {
  json small = Scenario("deepseek-ai/DeepSeek-V3", 8, {{"method", "mtp"}});
  small["inference"]["batch_size"] = 4096;
  small["inference"]["max_num_seqs"] = 4096;
  Result r = testing_support::EstimateText(small.dump());
  const int64_t blocks = r.inference.kv_token_capacity / 16;
  EXPECT_EQ(r.inference.concurrent_sequences, std::min<int64_t>(4096, blocks / 273));
}

TEST(VllmSpeculative, ExplainSaysWhatItCounts) {
  Result r = testing_support::EstimateText(Scenario("deepseek-ai/DeepSeek-V3", 1, {{"method", "deepseek_mtp"}}).dump());
  std::string weights, kv;
  for (const auto& t : r.gpu.breakdown) {
    if (t.key == "weights") weights = t.explain;
    if (t.key == "kv_cache") kv = t.explain;
  }
  EXPECT_NE(weights.find("1 MTP layer(s)"), std::string::npos) << weights;
  EXPECT_NE(weights.find("shared with the target"), std::string::npos) << weights;
  EXPECT_NE(kv.find("62 layers x 576 (MLA latent)"), std::string::npos) << kv;
  EXPECT_NE(kv.find("MTP draft layer"), std::string::npos) << kv;
}

struct Refusal {
  json scenario;
  const char* field;
  const char* says;
};

TEST(VllmSpeculative, Refusals) {
  json on = {{"method", "mtp"}};
  json no_mtp = Scenario("Qwen/Qwen2.5-7B", 1, on);
  json transformers = Scenario("deepseek-ai/DeepSeek-V3", 1, on);
  transformers["inference"]["engine"] = "transformers";
  json v0 = Scenario("deepseek-ai/DeepSeek-V3", 1, on);
  v0["inference"]["vllm_version"] = "0.6-0.10_v0";
  json zero = Scenario("deepseek-ai/DeepSeek-V3", 1, {{"method", "mtp"}, {"num_speculative_tokens", 0}});
  json too_many = Scenario("deepseek-ai/DeepSeek-V3", 1, {{"method", "mtp"}, {"num_speculative_tokens", 65}});
  json bad_method = Scenario("deepseek-ai/DeepSeek-V3", 1, {{"method", "eagle3"}});
  const Refusal rows[] = {
      {no_mtp, "inference.speculative.method", "this model has none"},
      {transformers, "inference.speculative.method", "inference.engine \"vllm\""},
      {v0, "inference.speculative.method", "V1 engine"},
      {zero, "inference.speculative.num_speculative_tokens", ""},
      {too_many, "inference.speculative.num_speculative_tokens", ""},
      {bad_method, "inference.speculative.method", "mtp"},
  };
  for (const Refusal& row : rows) {
    auto s = ParseScenario(row.scenario.dump());
    ASSERT_FALSE(s.ok()) << row.scenario.dump();
    EXPECT_EQ(s.errors()[0].field_path, row.field) << s.errors()[0].message;
    EXPECT_NE(s.errors()[0].message.find(row.says), std::string::npos) << s.errors()[0].message;
  }
  // A training scenario ignores the inference block.
  json train = Scenario("Qwen/Qwen2.5-7B", 1, on);
  train["mode"] = "train";
  EXPECT_TRUE(ParseScenario(train.dump()).ok());
}

}  // namespace
}  // namespace vramplan
