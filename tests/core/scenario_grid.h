// Generated scenarios for the invariant tests (timeline_test.cpp, physics_test.cpp): a full
// product over the dimensions the invariants are about (mode, method, loss, data-parallel set-up,
// checkpointing, model family) with the secondary settings (precision, attention kernel, batch and
// sequence, optimizer, QLoRA backend, framework switches) drawn from a seeded generator, so every
// run sees the same scenarios and a failure names a scenario that can be replayed by its JSON.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace vramplan::testing_support {

// Presets chosen for their structure: tied embeddings (SmolLM2), learned positions + LayerNorm +
// dropout (GPT-2), routed + shared experts (Qwen1.5-MoE), a large untied dense model (Llama-3.1-8B),
// soft-capped attention and a 256k vocabulary (Gemma-2), parallel residual + partial rotary
// (Phi-2), MLA (DeepSeek-V3, only where it stays cheap).
inline const std::vector<std::string>& GridModels() {
  static const std::vector<std::string> models = {"HuggingFaceTB/SmolLM2-135M", "openai-community/gpt2", "Qwen/Qwen1.5-MoE-A2.7B",
                                                  "meta-llama/Llama-3.1-8B", "google/gemma-2-2b-it", "microsoft/phi-2"};
  return models;
}

// Data-parallel set-ups: one GPU, ZeRO 1-3, FSDP, ZeRO-3 with both offloads, ZeRO-2 with optimizer
// offload, ZeRO-1/2 with explicit small buckets and overlap.
inline const std::vector<std::string>& GridParallel() {
  static const std::vector<std::string> parallel = {
      R"({"gpus":1})",
      R"({"gpus":8,"zero":1})",
      R"({"gpus":8,"zero":2})",
      R"({"gpus":8,"zero":3})",
      R"({"gpus":4,"fsdp":true})",
      R"({"gpus":8,"zero":3,"offload_optimizer":"cpu","offload_params":"cpu"})",
      R"({"gpus":2,"zero":2,"offload_optimizer":"cpu"})",
      R"({"gpus":16,"zero":2,"reduce_bucket_size":200000000,"overlap_comm":true})",
  };
  return parallel;
}

template <size_t N>
const char* Pick(std::mt19937_64& rng, const char* const (&options)[N]) {
  return options[std::uniform_int_distribution<size_t>(0, N - 1)(rng)];
}

// One training scenario's JSON from its primary coordinates and a generator for the rest.
inline std::string TrainScenario(const std::string& model, const char* method, const char* loss, const std::string& parallel, const char* ckpt,
                                 std::mt19937_64& rng) {
  static const char* const kPrecision[] = {"bf16", "bf16", "mixed_bf16", "amp_bf16", "fp32", "fp16"};
  static const char* const kAttention[] = {"sdpa", "eager", "flash"};
  static const char* const kShape[] = {R"("micro_batch_size":1,"seq_len":512)", R"("micro_batch_size":2,"seq_len":1024)",
                                       R"("micro_batch_size":4,"seq_len":256)", R"("micro_batch_size":1,"seq_len":4096)"};
  static const char* const kOptimizer[] = {R"("optimizer":"adamw")", R"("optimizer":"adamw","optimizer_impl":"fused")",
                                           R"("optimizer":"adamw","optimizer_impl":"for_loop")", R"("optimizer":"adamw_8bit")",
                                           R"("optimizer":"paged_adamw_8bit")", R"("optimizer":"adafactor")", R"("optimizer":"sgd_momentum")",
                                           R"("optimizer":"lion")"};
  static const char* const kAccum[] = {"1", "1", "4"};
  static const char* const kLora[] = {R"("lora":{"rank":16})", R"("lora":{"rank":8,"targets":"all-linear"})",
                                      R"("lora":{"rank":64,"targets":"all-linear","adapter_dtype":"base"})",
                                      R"("lora":{"rank":16,"targets":"all-linear","use_dora":true})",
                                      R"("lora":{"rank":16,"modules_to_save":["lm_head"]})"};
  static const char* const kQlora[] = {R"("qlora_backend":"bitsandbytes")", R"("qlora_backend":"bitsandbytes","qlora_bits":8)",
                                       R"("qlora_backend":"gptq")", R"("qlora_backend":"torchao")"};
  static const char* const kFreeze[] = {R"("freeze":{"trainable_layers":2})", R"("freeze":{"trainable_layers":1,"train_embeddings":true})",
                                        R"("freeze":{"trainable_layers":3,"train_lm_head":true})"};
  static const char* const kFramework[] = {"{}", "{}", "{}", R"({"preset":"torch_1_13_hf_4_44"})", R"({"use_cache":true})",
                                           R"({"keep_outputs":true})", R"({"model_load":"torchtune_0_1"})", R"({"attention_mask":false})"};
  static const char* const kGpu[] = {"h100-sxm-80gb", "a100-sxm-80gb", "rtx-4090-24gb"};
  const std::string m = method;
  std::string train = std::string(R"({"method":")") + method + R"(","precision":")" + Pick(rng, kPrecision) + R"(","attention":")" +
                      Pick(rng, kAttention) + R"(","loss":")" + loss + R"(","gradient_checkpointing":)" + ckpt + "," + Pick(rng, kShape) + "," +
                      Pick(rng, kOptimizer) + R"(,"grad_accum_steps":)" + Pick(rng, kAccum);
  if (m == "lora" || m == "qlora") train += std::string(",") + Pick(rng, kLora);
  if (m == "qlora") train += std::string(",") + Pick(rng, kQlora);
  if (m == "freeze") train += std::string(",") + Pick(rng, kFreeze);
  train += "}";
  return R"({"model":")" + model + R"(","mode":"train","gpu":")" + Pick(rng, kGpu) + R"(","train":)" + train + R"(,"parallel":)" + parallel +
         R"(,"framework":)" + Pick(rng, kFramework) + "}";
}

// The training grid: models x methods x losses x parallel set-ups x checkpointing (6 x 4 x 3 x 8 x
// 3 = 1,728 scenarios). Some draws are refused by the parser (e.g. torchao with 8 bits never
// happens here, but fp32 weights with flash attention do parse): callers skip the refused ones and
// count them.
inline std::vector<std::string> TrainingGrid(uint64_t seed = 20240611) {
  static const char* const kMethods[] = {"full", "freeze", "lora", "qlora"};
  static const char* const kLosses[] = {"standard", "chunked", "fused_linear"};
  static const char* const kCkpt[] = {"false", "true", R"("selective")"};
  std::mt19937_64 rng(seed);
  std::vector<std::string> out;
  for (const auto& model : GridModels()) {
    for (const char* method : kMethods) {
      for (const char* loss : kLosses) {
        for (const auto& parallel : GridParallel()) {
          for (const char* ckpt : kCkpt) out.push_back(TrainScenario(model, method, loss, parallel, ckpt, rng));
        }
      }
    }
  }
  return out;
}

// The inference grid: models x engines x weight formats x shapes x GPU counts (6 x 3 x 4 x 3 x 2 = 432).
inline std::vector<std::string> InferenceGrid(uint64_t seed = 20240612) {
  static const char* const kEngines[] = {"transformers", "vllm", "llama_cpp"};
  static const char* const kWeights[] = {"bf16", "fp8", "nf4", "gptq_4bit", "awq_4bit", "gguf_q4_k_m", "gguf_q8_0", "int8"};
  static const char* const kShape[] = {R"("batch_size":1,"prompt_len":1024,"new_tokens":256)", R"("batch_size":8,"prompt_len":4096,"new_tokens":512)",
                                       R"("batch_size":32,"prompt_len":256,"new_tokens":2048)"};
  static const char* const kAttention[] = {"sdpa", "eager", "flash"};
  static const char* const kParallel[] = {R"({"gpus":1})", R"({"gpus":2,"tp":2})", R"({"gpus":4})"};
  static const char* const kExtra[] = {"", R"(,"logits":"all")", R"(,"kv_cache":"fp8")", R"(,"n_gpu_layers":10)", R"(,"cuda_graphs":false)",
                                       R"(,"flash_attn":true)"};
  std::mt19937_64 rng(seed);
  std::vector<std::string> out;
  for (const auto& model : GridModels()) {
    for (const char* engine : kEngines) {
      for (int w = 0; w < 4; ++w) {
        for (const char* shape : kShape) {
          for (int g = 0; g < 2; ++g) {
            out.push_back(R"({"model":")" + model + R"(","mode":"inference","inference":{"engine":")" + engine + R"(","weights":")" +
                          Pick(rng, kWeights) + R"(","attention":")" + Pick(rng, kAttention) + R"(",)" + shape + Pick(rng, kExtra) +
                          R"(},"parallel":)" + Pick(rng, kParallel) + "}");
          }
        }
      }
    }
  }
  return out;
}

}  // namespace vramplan::testing_support
