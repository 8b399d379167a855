// Random *sane* scenarios for the property suite: every preset family, training and inference,
// every method, precision, optimizer, loss and attention kernel, checkpointing, ZeRO / FSDP /
// offload, catalogue and custom GPUs, the three engines and their formats, with batch and
// sequence sizes in realistic ranges. Each scenario is drawn from its own generator
// (Rng::For(seed, index)), so scenario i of a seed can be regenerated alone.
#pragma once

#include <numeric>
#include <string>
#include <vector>

#include "model/catalog.h"
#include "support/json_access.h"
#include "vramplan/estimate.h"

namespace vramplan::fuzzing {

// Attention heads every layer kind divides by (the largest tp the validator accepts divides it).
inline int64_t CommonHeads(const ModelSpec& m) {
  int64_t g = 0;
  for (const auto& k : m.kinds) g = std::gcd(g, k.attention.num_heads);
  return g == 0 ? 1 : g;
}

inline json GenerateTrainSection(const PresetEntry& p, Rng& rng) {
  json t = json::object();
  const std::string method = rng.Pick<const char*>({"full", "full", "freeze", "lora", "lora", "lora", "qlora", "qlora"});
  t["method"] = method;
  t["precision"] = rng.Pick<const char*>({"bf16", "bf16", "fp16", "fp32", "amp_bf16", "amp_fp16", "mixed_bf16", "mixed_fp16"});
  const std::string precision = t["precision"].get<std::string>();
  if ((precision == "bf16" || precision == "fp16" || precision.rfind("mixed", 0) == 0) && rng.Chance(0.3)) t["autocast"] = true;
  t["optimizer"] = rng.Pick<const char*>({"adamw", "adamw", "adamw_8bit", "paged_adamw_8bit", "adafactor", "sgd", "sgd_momentum", "lion"});
  if (rng.Chance(0.3)) t["optimizer_impl"] = rng.Pick<const char*>({"foreach", "fused", "for_loop"});
  t["micro_batch_size"] = rng.LogRange(1, 32);
  t["seq_len"] = rng.Chance(0.5) ? rng.Pick<int64_t>({128, 256, 512, 1024, 2048, 4096, 8192, 16384}) : rng.LogRange(16, 16384);
  if (rng.Chance(0.3)) t["grad_accum_steps"] = rng.Pick<int64_t>({1, 2, 4, 8, 16});
  switch (rng.Below(3)) {
    case 0: t["gradient_checkpointing"] = true; break;
    case 1: t["gradient_checkpointing"] = false; break;
    default: t["gradient_checkpointing"] = "selective"; break;
  }
  t["attention"] = rng.Pick<const char*>({"eager", "sdpa", "sdpa", "flash", "flash"});
  if (t["attention"] == "eager" && t["seq_len"].get<int64_t>() > 4096) t["seq_len"] = 4096;
  t["loss"] = rng.Pick<const char*>({"standard", "standard", "chunked", "fused_linear"});
  if (method == "lora" || method == "qlora") {
    json lora = json::object();
    lora["rank"] = rng.Pick<int64_t>({4, 8, 16, 32, 64, 128, 256});
    if (rng.Chance(0.5)) lora["targets"] = "all-linear";
    if (rng.Chance(0.1)) lora["modules_to_save"] = json::array({rng.Pick<const char*>({"lm_head", "embed_tokens"})});
    if (rng.Chance(0.2)) lora["dropout"] = rng.Pick<double>({0.05, 0.1});
    if (rng.Chance(0.15)) lora["use_dora"] = true;
    if (rng.Chance(0.2)) lora["adapter_dtype"] = "base";
    t["lora"] = lora;
  }
  if (method == "qlora") {
    t["qlora_backend"] = rng.Pick<const char*>({"bitsandbytes", "bitsandbytes", "gptq", "torchao"});
    t["qlora_bits"] = t["qlora_backend"] == "torchao" ? 4 : rng.Pick<int64_t>({4, 4, 8, 2});
    if (t["qlora_backend"] == "gptq") t["qlora_group_size"] = rng.Pick<int64_t>({32, 64, 128, -1});
    if (rng.Chance(0.2)) t["qlora_double_quant"] = false;
  }
  if (method == "freeze") {
    t["freeze"] = {{"trainable_layers", rng.Range(0, std::min<int64_t>(8, p.spec.num_layers))},
                   {"train_embeddings", rng.Chance(0.2)},
                   {"train_lm_head", rng.Chance(0.2)}};
  }
  return t;
}

inline json GenerateParallelForTraining(Rng& rng) {
  json par = json::object();
  if (rng.Chance(0.5)) return par;
  par["gpus"] = rng.Pick<int64_t>({2, 4, 8, 16});
  if (rng.Chance(0.2)) {
    par["fsdp"] = true;
  } else {
    par["zero"] = rng.Range(0, 3);
  }
  const bool sharded_params = par.contains("fsdp") || par.value("zero", 0) == 3;
  if ((par.contains("fsdp") || par.value("zero", 0) >= 1) && rng.Chance(0.2)) par["offload_optimizer"] = "cpu";
  if (sharded_params && rng.Chance(0.2)) par["offload_params"] = "cpu";
  if (par.value("zero", 0) >= 1 && rng.Chance(0.2)) par["reduce_bucket_size"] = rng.Pick<int64_t>({50000000, 200000000, 500000000});
  if (par.value("zero", 0) >= 1 && rng.Chance(0.2)) par["overlap_comm"] = rng.Chance(0.5);
  if (rng.Chance(0.2)) par["gpus_per_node"] = rng.Pick<int64_t>({1, 2, 4, 8, 16});
  return par;
}

inline json GenerateFramework(bool train, Rng& rng) {
  json f = json::object();
  // torchtune 0.1's load order (deep-copied layers, whole-tensor NF4) has a load peak of its own.
  if (train && rng.Chance(0.1)) f["model_load"] = "torchtune_0_1";
  if (rng.Chance(0.7)) return f;
  if (rng.Chance(0.2)) f["preset"] = "torch_1_13_hf_4_44";
  if (rng.Chance(0.05)) f["device"] = "cpu";
  for (const char* flag : {"rmsnorm_saves_squared_input", "loss_shift_logits_copy", "adamw_foreach_denom_copy", "keep_outputs", "use_cache",
                           "variable_shapes", "expandable_segments"}) {
    if (rng.Chance(0.1)) f[flag] = true;
  }
  for (const char* flag : {"loss_upcast_logits", "attention_mask", "batch_on_device", "cuda_lazy_loading"}) {
    if (rng.Chance(0.1)) f[flag] = false;
  }
  return f;
}

inline json GenerateInferenceSection(const PresetEntry& p, Rng& rng, json* parallel) {
  json inf = json::object();
  const std::string engine = rng.Pick<const char*>({"transformers", "transformers", "vllm", "llama_cpp"});
  inf["engine"] = engine;
  inf["batch_size"] = rng.LogRange(1, 64);
  inf["prompt_len"] = rng.LogRange(1, 32768);
  inf["new_tokens"] = rng.Chance(0.1) ? 0 : rng.LogRange(1, 4096);
  const int64_t heads = CommonHeads(p.spec);
  auto pick_tp = [&] {
    std::vector<int64_t> tps;
    for (int64_t tp : {1, 2, 4, 8}) {
      if (heads % tp == 0) tps.push_back(tp);
    }
    return rng.Pick(tps);
  };
  if (engine == "llama_cpp") {
    inf["weights"] = rng.Pick<const char*>({"gguf_q8_0", "gguf_q6_k", "gguf_q5_k_m", "gguf_q5_k_s", "gguf_q4_k_m", "gguf_q4_k_s", "gguf_q4_0",
                                            "gguf_q3_k_m", "gguf_q2_k", "gguf_iq4_xs", "gguf_iq3_xxs", "gguf_iq2_xxs", "fp16", "bf16"});
    inf["flash_attn"] = rng.Chance(0.5);
    inf["kv_cache"] = inf["flash_attn"].get<bool>() ? rng.Pick<const char*>({"auto", "fp16", "int8", "int4"}) : rng.Pick<const char*>({"auto", "fp16"});
    if (rng.Chance(0.3)) inf["n_ctx"] = rng.LogRange(256, 131072);
    if (rng.Chance(0.3)) inf["n_batch"] = rng.Pick<int64_t>({512, 1024, 2048, 4096});
    if (rng.Chance(0.3)) inf["n_ubatch"] = rng.Pick<int64_t>({128, 256, 512});
    if (rng.Chance(0.3)) inf["n_gpu_layers"] = rng.Range(0, p.spec.num_layers + 1);
  } else {
    inf["weights"] = rng.Pick<const char*>({"bf16", "bf16", "fp16", "fp32", "fp8", "int8", "nf4", "gptq_4bit", "awq_4bit"});
    if (engine == "vllm") {
      inf["kv_cache"] = rng.Pick<const char*>({"auto", "auto", "fp8"});
      inf["gpu_memory_utilization"] = rng.Pick<double>({0.8, 0.9, 0.9, 0.95});
      if (rng.Chance(0.3)) inf["max_model_len"] = rng.LogRange(256, 131072);
      if (rng.Chance(0.3)) inf["max_num_seqs"] = rng.Pick<int64_t>({16, 64, 128, 256, 512});
      if (rng.Chance(0.2)) inf["max_num_batched_tokens"] = rng.Pick<int64_t>({2048, 8192, 16384});
      if (rng.Chance(0.2)) inf["block_size"] = 32;
      if (rng.Chance(0.2)) inf["cuda_graphs"] = false;
    } else {
      inf["kv_cache"] = rng.Pick<const char*>({"auto", "auto", "fp16", "bf16", "fp32"});
      inf["attention"] = rng.Pick<const char*>({"eager", "sdpa", "sdpa", "flash"});
      if (inf["attention"] == "eager" && inf["prompt_len"].get<int64_t>() > 8192) inf["prompt_len"] = 8192;
      if (rng.Chance(0.1)) inf["logits"] = "all";
    }
    if (rng.Chance(0.3)) {
      const int64_t tp = pick_tp();
      (*parallel)["tp"] = tp;
      (*parallel)["gpus"] = tp;
    } else if (engine == "transformers" && rng.Chance(0.15)) {
      (*parallel)["gpus"] = 2;  // device_map="auto" layer split
    }
  }
  return inf;
}

// A random valid scenario; draws again (up to 50 times) when the validator refuses the draw, and
// counts the refusals in *rejected.
inline json GenerateScenario(Rng& rng, size_t* rejected = nullptr) {
  const auto& presets = Presets();
  const auto gpus = GpuIds();
  for (int attempt = 0; attempt < 50; ++attempt) {
    const PresetEntry& p = presets[rng.Below(presets.size())];
    json s = json::object();
    s["model"] = p.id;
    const bool train = rng.Chance(0.6);
    s["mode"] = train ? "train" : "inference";
    json parallel = json::object();
    if (train) {
      s["train"] = GenerateTrainSection(p, rng);
      parallel = GenerateParallelForTraining(rng);
    } else {
      s["inference"] = GenerateInferenceSection(p, rng, &parallel);
    }
    if (!parallel.empty()) s["parallel"] = parallel;
    if (rng.Chance(0.75)) {
      s["gpu"] = rng.Pick(gpus);
    } else {
      s["gpu"] = {{"name", "custom"}, {"memory_bytes", rng.Pick<int64_t>({8, 12, 16, 24, 40, 48, 80, 96, 141, 192}) << 30}};
    }
    json framework = GenerateFramework(train, rng);
    if (!framework.empty()) s["framework"] = framework;
    if (ParseScenario(DumpCompact(s)).ok()) return s;
    if (rejected != nullptr) ++*rejected;
  }
  return json::object({{"model", "meta-llama/Llama-3.2-1B-Instruct"}});
}

}  // namespace vramplan::fuzzing
