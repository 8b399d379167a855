// Hybrid models in the inference engines: a KV cache for the attention layers only, and a
// fixed-size recurrent state per sequence for the linear-attention / Mamba layers, as vLLM,
// llama.cpp and transformers allocate it (docs/inference.md "Recurrent state of hybrid models").
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_support.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace hybrid_inference_test {

using nlohmann::json;
using testing_support::GpuTerm;

Result RunHybrid(const std::string& model, const json& inf, const json& extra = json::object()) {
  json sc = {{"model", model}, {"mode", "inference"}, {"inference", inf}};
  for (auto it = extra.begin(); it != extra.end(); ++it) sc[it.key()] = it.value();
  return testing_support::EstimateText(sc.dump());
}

constexpr const char* kNano = "nvidia/NVIDIA-Nemotron-Nano-9B-v2";  // 27 Mamba-2, 4 attention, 25 MLP blocks
constexpr const char* kNext = "Qwen/Qwen3-Next-80B-A3B-Instruct";   // 36 Gated DeltaNet, 12 attention layers

TEST(HybridInference, TransformersCachesStateAndAttentionKv) {
  Result r = RunHybrid(kNext, {{"prompt_len", 4096}, {"new_tokens", 16}, {"batch_size", 2}});
  // 12 attention layers x 2 x 2 kv heads x 256 x 2 B.
  EXPECT_EQ(r.inference.kv_bytes_per_token, 12 * 2 * 2 * 256 * 2);
  EXPECT_EQ(r.inference.recurrent_layers, 36);
  // conv_states (batch, 8,192 channels, kernel 4) bf16 + the fp32 recurrent state 32 x 128 x 128.
  EXPECT_EQ(r.inference.state_bytes_per_sequence, 36 * (4 * 8192 * 2 + 32 * 128 * 128 * 4));
  EXPECT_EQ(GpuTerm(r, "kv_cache"), 24576LL * 4096 * 2 + 2LL * 77856768);
}

TEST(HybridInference, VllmPagesStateLikeAttentionBlocks) {
  Result r = RunHybrid(kNano, {{"engine", "vllm"}, {"max_model_len", 32768}}, {{"gpu", "a100-sxm-80gb"}});
  // Per Mamba-2 layer: conv 3 x (10,240 + 2 x 8 x 128) + SSM 128 x 80 x 128, bf16.
  const int64_t layer = (3 * 12288 + 128 * 80 * 128) * 2;
  EXPECT_EQ(layer, 2695168);
  EXPECT_EQ(r.inference.state_bytes_per_sequence, 27 * layer);
  EXPECT_EQ(r.inference.recurrent_layers, 27);
  EXPECT_EQ(r.inference.kv_bytes_per_token, 4 * 2 * 8 * 128 * 2);
  // Attention block: 16 x cdiv(2,695,168, 16 x 4,096) = 672 tokens; page 672 x 4,096 B; groups of
  // 4 layers (1 attention + 7 state groups).
  const int64_t page = 672 * 4096;
  ASSERT_GT(r.inference.kv_token_capacity, 0);
  EXPECT_EQ(r.inference.kv_token_capacity % 672, 0);
  EXPECT_EQ(GpuTerm(r, "kv_cache") % (4 * page), 0);
  const int64_t num_blocks = GpuTerm(r, "kv_cache") / (4 * page);
  EXPECT_EQ(r.inference.kv_token_capacity, num_blocks / 8 * 672);
  // A 32,768-token request: cdiv(32768, 672) = 49 attention blocks + 7 state blocks.
  EXPECT_EQ(r.inference.max_concurrency, std::min<int64_t>(256, num_blocks / 56));
}

TEST(HybridInference, LlamaCppKeepsF32StatePerSequenceSlot) {
  Result one = RunHybrid(kNano, {{"engine", "llama_cpp"}, {"weights", "gguf_q4_k_m"}, {"prompt_len", 1000}, {"new_tokens", 24}, {"batch_size", 1}});
  Result four = RunHybrid(kNano, {{"engine", "llama_cpp"}, {"weights", "gguf_q4_k_m"}, {"prompt_len", 1000}, {"new_tokens", 24}, {"batch_size", 4}});
  const int64_t state = 27LL * (3 * 12288 + 128 * 80 * 128) * 4;
  EXPECT_EQ(one.inference.state_bytes_per_sequence, state);
  // n_ctx = batch x 1,024 cells for the 4 attention layers (f16), plus one state row per sequence.
  EXPECT_EQ(GpuTerm(one, "kv_cache"), 1024LL * 16384 + state);
  EXPECT_EQ(GpuTerm(four, "kv_cache"), 4096LL * 16384 + 4 * state);
}

// Kimi-Linear-48B-A3B (the config row of param_counts_hybrid.json): 20 KDA layers of 32 heads x 128
// with short_conv_kernel_size 4, 7 MLA layers (kv_lora_rank 512 + qk_rope_head_dim 64).
json KimiLinearConfig() {
  const json table = testing_support::LoadFixture("param_counts_hybrid.json");
  for (const auto& row : table["models"]) {
    if (row["id"] == "moonshotai/Kimi-Linear-48B-A3B-Instruct") return row["config"];
  }
  return json::object();
}

TEST(HybridInference, KimiDeltaStateInEachEngine) {
  const json cfg = KimiLinearConfig();
  ASSERT_EQ(cfg["model_type"], "kimi_linear");
  // vLLM MambaStateShapeCalculator.kda_state_shape: q, k, v conv states of (4 - 1) x 4,096 / tp in
  // the model dtype and a 32 / tp x 128 x 128 recurrent state in float32 (kda_state_dtype).
  Result v = RunHybrid("", {{"engine", "vllm"}, {"max_model_len", 32768}}, {{"model", cfg}, {"gpu", "h100-sxm-80gb"}});
  EXPECT_EQ(v.inference.recurrent_layers, 20);
  EXPECT_EQ(v.inference.state_bytes_per_sequence, 20 * (3 * 3 * 4096 * 2 + 32 * 128 * 128 * 4));
  // MLA's compressed cache: 7 layers x (512 + 64) bf16.
  EXPECT_EQ(v.inference.kv_bytes_per_token, 7 * 576 * 2);
  Result v4 = RunHybrid("", {{"engine", "vllm"}, {"max_model_len", 32768}},
                        {{"model", cfg}, {"gpu", "h100-sxm-80gb"}, {"parallel", {{"gpus", 4}, {"tp", 4}}}});
  EXPECT_EQ(v4.inference.state_bytes_per_sequence, 20 * (3 * 3 * 1024 * 2 + 8 * 128 * 128 * 4));
  // llama.cpp (llama_hparams::n_embd_r = 3 x (d_conv - 1) x n_head x n_embd_head_kda, n_embd_s =
  // n_embd_head_kda^2 x n_head), F32.
  Result l = RunHybrid("", {{"engine", "llama_cpp"}, {"weights", "gguf_q4_k_m"}, {"prompt_len", 1000}, {"new_tokens", 24}},
                       {{"model", cfg}});
  EXPECT_EQ(l.inference.state_bytes_per_sequence, 20 * (3 * 3 * 32 * 128 + 128 * 128 * 32) * 4);
}

// Bamba-9B (the config row of param_counts_hybrid.json): 29 BambaMixer layers of 128 heads x 64,
// one group, state 128, kernel 4; 3 attention layers of 8 KV heads x 128.
json BambaConfig() {
  const json table = testing_support::LoadFixture("param_counts_hybrid.json");
  for (const auto& row : table["models"]) {
    if (row["id"] == "ibm-ai-platform/Bamba-9B") return row["config"];
  }
  return json::object();
}

TEST(HybridInference, BambaReusesTheMamba2State) {
  const json cfg = BambaConfig();
  ASSERT_EQ(cfg["model_type"], "bamba");
  // vLLM MambaStateShapeCalculator.mamba2_state_shape(tp 1, intermediate 8,192, n_groups 1, heads 128,
  // head_dim 64, state 128, conv_kernel 4), worked by hand: conv state (4 - 1) x (8,192 + 2 x 1 x 128)
  // = 3 x 8,448 and temporal state 128 x 64 x 128, both in the model dtype (bf16).
  const int64_t layer = (3 * 8448 + 128 * 64 * 128) * 2;
  EXPECT_EQ(layer, 2147840);
  Result v = RunHybrid("", {{"engine", "vllm"}, {"max_model_len", 32768}}, {{"model", cfg}, {"gpu", "h100-sxm-80gb"}});
  EXPECT_EQ(v.inference.recurrent_layers, 29);
  EXPECT_EQ(v.inference.state_bytes_per_sequence, 29 * layer);
  EXPECT_EQ(v.inference.kv_bytes_per_token, 3 * 2 * 8 * 128 * 2);
  // tp 2: the single group is replicated to 2 (extra_groups_for_head_shards(1, 2) = 1), so the conv
  // channels are (8,192 + 2 x 2 x 128) / 2 = 4,352 per rank, the temporal state 64 x 64 x 128.
  Result v2 = RunHybrid("", {{"engine", "vllm"}, {"max_model_len", 32768}},
                        {{"model", cfg}, {"gpu", "h100-sxm-80gb"}, {"parallel", {{"gpus", 2}, {"tp", 2}}}});
  EXPECT_EQ(v2.inference.state_bytes_per_sequence, 29 * (3 * 4352 + 64 * 64 * 128) * 2);
  // llama.cpp: the same rows in F32 (n_embd_r = (d_conv - 1) x conv channels, n_embd_s = state x inner).
  Result l = RunHybrid("", {{"engine", "llama_cpp"}, {"weights", "gguf_q4_k_m"}, {"prompt_len", 1000}, {"new_tokens", 24}},
                       {{"model", cfg}});
  EXPECT_EQ(l.inference.state_bytes_per_sequence, 29 * (3 * 8448 + 128 * 64 * 128) * 4);
}

TEST(HybridInference, AttentionOnlyModelsHaveNoState) {
  Result r = RunHybrid("Qwen/Qwen2.5-7B", {{"prompt_len", 1024}});
  EXPECT_EQ(r.inference.recurrent_layers, 0);
  EXPECT_EQ(r.inference.state_bytes_per_sequence, 0);
}

}  // namespace
}  // namespace vramplan
