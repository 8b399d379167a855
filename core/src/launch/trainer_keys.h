// The keys of the HF trainer stack shared by several formats: transformers TrainingArguments
// (src/transformers/training_args.py, v4.46; OptimizerNames), the model-loading keys TRL's
// ModelConfig adds (trl/trainer/model_config.py, v0.12), PEFT's LoraConfig
// (src/peft/tuners/lora/config.py, v0.13) and the FSDP settings of TrainingArguments.fsdp_config
// and accelerate (src/accelerate/utils/dataclasses.py FullyShardedDataParallelPlugin, v1.1).
#pragma once

#include <optional>
#include <string>

#include "launch/deepspeed_config.h"
#include "launch/formats.h"

namespace vramplan::launch {

// What the keys say about precision and distribution, resolved once every key is read.
struct TrainerFlags {
  std::optional<bool> bf16, fp16;
  std::string model_dtype;  // "bfloat16", "float16", "float32" or "" (not given)
  DeepSpeedFlags deepspeed;
  bool fsdp = false;
};

// Reads one TrainingArguments key (`key` as written in the config). False when `key` is not one.
bool ReadTrainingArgument(const std::string& key, const io::Json& v, ImportContext* ctx, TrainerFlags* flags);
// gradient_checkpointing_kwargs.use_reentrant / TRL's gradient_checkpointing_use_reentrant: false ->
// parallel.fsdp_frozen_unit_hooks false (no detached input for FSDP1's hook to keep).
void ReadUseReentrant(const std::string& key, const io::Json& v, ImportContext* ctx);

// Reads one PEFT LoraConfig key. False when `key` is not one.
bool ReadLoraConfigKey(const std::string& key, const io::Json& v, ImportContext* ctx);

// Reads one FSDP setting (with or without the "fsdp_" prefix). False when it is not one.
bool ReadFsdpKey(const std::string& key, const io::Json& v, ImportContext* ctx);

// An HF / bitsandbytes optimizer name (TrainingArguments.optim) onto train.optimizer(_impl).
void ReadHfOptim(const std::string& key, const io::Json& v, ImportContext* ctx);
// The TrainingArguments.optim for `s`, or "" when it has none (noted by the caller's round trip).
std::string HfOptimName(const Scenario& s);

// "bfloat16" / "float16" / "float32" from a torch dtype name; "" when not one.
std::string TorchDtype(const std::string& name);

// HF Trainer's precision: DeepSpeed's when it runs; else 16-bit weights (model_dtype) with
// autocast when bf16/fp16 is on, fp32 weights with autocast (amp_*) when only the flag is on.
void ResolveHfPrecision(const TrainerFlags& flags, ImportContext* ctx);

// Batch sizes a DeepSpeed config holds where the trainer's keys did not set them.
void ApplyDeepSpeedBatch(const TrainerFlags& flags, ImportContext* ctx);

// TrainingArguments.fsdp / accelerate fsdp_sharding_strategy for `s`.
std::string FsdpStrategyName(const Scenario& s);

}  // namespace vramplan::launch
