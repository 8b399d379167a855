// The model's context limit (model/context_limit.cpp), its warning and search caps
// (planner/context_limit_check.cpp) and the verdict (planner/verdict.cpp).
#include "model/context_limit.h"

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "planner/context_limit_check.h"
#include "test_support.h"

namespace vramplan {
namespace context_limit_test {

using testing_support::EstimateText;
using testing_support::HasWarning;

struct LimitCase {
  const char* what;  // the config it copies, with its source
  const char* config;
  const char* model_type;
  int64_t tokens;  // vLLM's derived max_model_len (vllm/config.py _get_and_verify_max_len)
};

// Config excerpts as on the Hub (config.json of each model; the presets in core/data/presets.json
// carry the same fields). Synthetic rows say so: they pin one rule of vLLM's derivation.
const LimitCase kCases[] = {
    {"meta-llama/Llama-3.1-8B config.json: llama3 rope is not multiplied",
     R"({"max_position_embeddings":131072,"rope_scaling":{"factor":8.0,"low_freq_factor":1.0,"high_freq_factor":4.0,"original_max_position_embeddings":8192,"rope_type":"llama3"}})",
     "llama", 131072},
    {"deepseek-ai/DeepSeek-V3 config.json: yarn, legacy \"type\" key, 4,096 x 40",
     R"({"max_position_embeddings":163840,"rope_scaling":{"beta_fast":32,"beta_slow":1,"factor":40,"mscale":1.0,"mscale_all_dim":1.0,"original_max_position_embeddings":4096,"type":"yarn"}})",
     "deepseek_v3", 163840},
    {"openai/gpt-oss-20b config.json: yarn 4,096 x 32",
     R"({"max_position_embeddings":131072,"rope_scaling":{"beta_fast":32.0,"beta_slow":1.0,"factor":32.0,"original_max_position_embeddings":4096,"rope_type":"yarn","truncate":false}})",
     "gpt_oss", 131072},
    {"Qwen/Qwen2.5-7B-Instruct with the YaRN block its model card adds: 32,768 x 4",
     R"({"max_position_embeddings":32768,"rope_scaling":{"factor":4.0,"original_max_position_embeddings":32768,"type":"yarn"}})",
     "qwen2", 131072},
    {"google/gemma-3-4b-it text_config: already scaled, linear factor not applied again",
     R"({"max_position_embeddings":131072,"rope_scaling":{"factor":8.0,"rope_type":"linear"}})", "gemma3_text", 131072},
    {"microsoft/Phi-3.5-mini-instruct config.json: longrope is not multiplied",
     R"({"max_position_embeddings":131072,"original_max_position_embeddings":4096,"rope_scaling":{"type":"longrope","long_factor":[1.0],"short_factor":[1.0]}})",
     "phi3", 131072},
    {"openai-community/gpt2 config.json: n_positions", R"({"n_positions":1024,"n_ctx":1024})", "gpt2", 1024},
    {"tiiuae/falcon-7b config.json names no length: FalconConfig's default", R"({"hidden_size":4544})", "falcon", 2048},
    {"synthetic: linear scaling multiplies", R"({"max_position_embeddings":4096,"rope_scaling":{"type":"linear","factor":4.0}})", "llama", 16384},
    {"synthetic: dynamic scaling multiplies", R"({"max_position_embeddings":4096,"rope_scaling":{"rope_type":"dynamic","factor":2.0}})", "llama", 8192},
    {"synthetic: the smallest length key wins", R"({"max_position_embeddings":8192,"seq_length":2048})", "chatglm", 2048},
    {"synthetic: rope_type default has no factor", R"({"max_position_embeddings":4096,"rope_scaling":{"rope_type":"default"}})", "llama", 4096},
    {"CohereForAI/c4ai-command-r-v01 config.json: model_max_length over max_position_embeddings",
     R"({"max_position_embeddings":8192,"model_max_length":131072,"rope_scaling":null})", "cohere", 131072},
    {"transformers v5 config (rope_parameters replaces rope_scaling): Qwen3 with YaRN 32,768 x 4",
     R"({"max_position_embeddings":40960,"rope_parameters":{"rope_type":"yarn","factor":4.0,"original_max_position_embeddings":32768,"rope_theta":1000000.0}})",
     "qwen3", 131072},
    {"transformers v5 config: rope_parameters default, no factor",
     R"({"max_position_embeddings":202752,"rope_parameters":{"rope_theta":1000000,"rope_type":"default"}})", "glm_moe_dsa", 202752},
    {"transformers v5 config: llama3 rope_parameters is not multiplied",
     R"({"max_position_embeddings":131072,"rope_parameters":{"factor":8.0,"original_max_position_embeddings":8192,"rope_type":"llama3","rope_theta":500000.0}})",
     "llama", 131072},
    {"synthetic v5: a block per layer type, the scaled one multiplies",
     R"({"max_position_embeddings":4096,"rope_parameters":{"full_attention":{"rope_type":"linear","factor":2.0},"sliding_attention":{"rope_type":"default"}}})",
     "olmo3", 8192},
    {"synthetic v5: per-layer blocks of a Gemma 3 are not scaled again",
     R"({"max_position_embeddings":131072,"rope_parameters":{"full_attention":{"rope_type":"linear","factor":8.0},"sliding_attention":{"rope_type":"default"}}})",
     "gemma3_text", 131072},
    {"synthetic: no length key, no limit", R"({"hidden_size":64})", "llama", 0},
};

TEST(ContextLimit, DerivedAsVllmDerivesMaxModelLen) {
  for (const LimitCase& c : kCases) {
    SCOPED_TRACE(c.what);
    const ContextLimit limit = ContextLimitFromConfig(nlohmann::json::parse(c.config), c.model_type);
    EXPECT_EQ(limit.tokens, c.tokens);
    EXPECT_EQ(limit.source.empty(), c.tokens == 0) << limit.source;
  }
  EXPECT_EQ(ContextLimitFromConfig(nlohmann::json::parse(kCases[1].config), "deepseek_v3").source,
            "original_max_position_embeddings 4,096 x yarn factor 40");
}

TEST(ContextLimit, PresetsCarryIt) {
  EXPECT_EQ(testing_support::PresetSpec("meta-llama/Llama-3.1-8B").context_limit, 131072);
  EXPECT_EQ(testing_support::PresetSpec("deepseek-ai/DeepSeek-V3").context_limit, 163840);
  EXPECT_EQ(testing_support::PresetSpec("openai/gpt-oss-120b").context_limit, 131072);
  EXPECT_EQ(testing_support::PresetSpec("Qwen/Qwen3-8B").context_limit, 40960);
}

// The issue's case: Llama-3.1-8B with a 200k prompt fit in memory with no word about the model's
// 131,072-token context, and its longest context that fits was 248,565 tokens.
TEST(ContextLimit, LongerThanTheModelWarnsAndCapsTheLongestContext) {
  Result r = EstimateText(R"({"model":"meta-llama/Llama-3.1-8B","mode":"inference","gpu":"h100-sxm-80gb",)"
                          R"("inference":{"prompt_len":200000,"new_tokens":256}})");
  EXPECT_TRUE(r.gpu.fits);
  EXPECT_TRUE(HasWarning(r, "exceeds_model_context", "inference.prompt_len"));
  EXPECT_EQ(r.verdict, "exceeds_model_context");
  EXPECT_EQ(r.inference.max_context_fits, 131072);
  EXPECT_EQ(r.inference.max_context_bound, "model_context");

  Result within = EstimateText(R"({"model":"meta-llama/Llama-3.1-8B","mode":"inference","gpu":"h100-sxm-80gb",)"
                               R"("inference":{"prompt_len":100000,"new_tokens":256}})");
  EXPECT_EQ(within.verdict, "fits");
  EXPECT_FALSE(HasWarning(within, "exceeds_model_context", "inference.prompt_len"));
}

TEST(ContextLimit, EachEngineAndTrainingNameTheirField) {
  EXPECT_TRUE(HasWarning(EstimateText(R"({"model":"meta-llama/Llama-3.1-8B","mode":"inference","gpu":"h200-sxm-141gb",)"
                                      R"("inference":{"engine":"vllm","max_model_len":262144}})"),
                         "exceeds_model_context", "inference.max_model_len"));
  EXPECT_TRUE(HasWarning(EstimateText(R"({"model":"meta-llama/Llama-3.1-8B","mode":"inference",)"
                                      R"("inference":{"engine":"llama_cpp","weights":"gguf_q4_k_m","batch_size":2,"n_ctx":300000}})"),
                         "exceeds_model_context", "inference.n_ctx"));
  // n_ctx is shared by the sequences: 2 x 100,000 is 100,000 per sequence, within the limit.
  EXPECT_FALSE(HasWarning(EstimateText(R"({"model":"meta-llama/Llama-3.1-8B","mode":"inference",)"
                                       R"("inference":{"engine":"llama_cpp","weights":"gguf_q4_k_m","batch_size":2,"n_ctx":200000}})"),
                          "exceeds_model_context", "inference.n_ctx"));
  Result gpt2 = EstimateText(R"({"model":"openai-community/gpt2","train":{"seq_len":2048}})");
  EXPECT_TRUE(HasWarning(gpt2, "exceeds_model_context", "train.seq_len"));
  EXPECT_EQ(gpt2.training.max_seq_len_fits, 1024);
  EXPECT_EQ(gpt2.training.max_seq_len_bound, "model_context");
}

TEST(ContextLimit, VllmLongestContextStopsAtTheModelsLimitNotThePool) {
  // DeepSeek-V3 fp8, 8 x H200: the pool holds 688,608 tokens (shared by all requests).
  Result r = EstimateText(R"({"model":"deepseek-ai/DeepSeek-V3","mode":"inference","gpu":"h200-sxm-141gb","parallel":{"tp":8,"gpus":8},)"
                          R"("inference":{"engine":"vllm","weights":"fp8","prompt_len":4096,"new_tokens":512}})");
  EXPECT_GT(r.inference.kv_token_capacity, 163840);
  EXPECT_EQ(r.inference.max_context_fits, 163840);
  EXPECT_EQ(r.inference.max_context_bound, "model_context");
}

TEST(ContextLimit, SearchBoundNamesWhatEndedTheSearch) {
  ModelSpec m;
  m.context_limit = 4096;
  EXPECT_EQ(CapAtModelContext(m, 1 << 24), 4096);
  EXPECT_EQ(SearchBound(m, 4096, 4096), "model_context");
  EXPECT_EQ(SearchBound(m, 4000, 4096), "memory");
  EXPECT_EQ(SearchBound(m, 0, 4096), "memory");
  m.context_limit = 0;
  EXPECT_EQ(CapAtModelContext(m, 1 << 24), 1 << 24);
  EXPECT_EQ(SearchBound(m, 1 << 24, 1 << 24), "input_limit");
}

// vLLM with 16 concurrent 32k requests where the pool holds one: it starts ("fits"), but the
// verdict says the rest queue.
TEST(Verdict, VllmRequestsThatQueueAreNotAPlainFit) {
  Result r = EstimateText(R"({"model":"meta-llama/Llama-3.1-8B","mode":"inference","gpu":"rtx-4090-24gb",)"
                          R"("inference":{"engine":"vllm","batch_size":16,"prompt_len":32000,"new_tokens":768,"max_model_len":32768}})");
  EXPECT_TRUE(r.gpu.fits);
  EXPECT_LT(r.inference.concurrent_sequences, 16);
  EXPECT_GE(r.inference.concurrent_sequences, 1);
  EXPECT_EQ(r.verdict, "fits_queued");
  EXPECT_TRUE(HasWarning(r, "would_queue", "inference.batch_size"));
  Result one = EstimateText(R"({"model":"meta-llama/Llama-3.1-8B","mode":"inference","gpu":"h100-sxm-80gb",)"
                            R"("inference":{"engine":"vllm","batch_size":1,"prompt_len":1024,"new_tokens":256}})");
  EXPECT_EQ(one.verdict, "fits");
  EXPECT_EQ(one.inference.concurrent_sequences, 1);
  Result big = EstimateText(R"({"model":"meta-llama/Llama-3.1-70B-Instruct","mode":"inference","gpu":"rtx-4090-24gb"})");
  EXPECT_EQ(big.verdict, "does_not_fit");
}

}  // namespace
}  // namespace vramplan
