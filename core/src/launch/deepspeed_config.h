// DeepSpeed's config (a ds_config JSON), read on its own or inside another config (HF
// TrainingArguments "deepspeed", LLaMA-Factory and axolotl "deepspeed", accelerate
// "deepspeed_config"), and written for a scenario. Keys and defaults: deepspeed/runtime/config.py
// DeepSpeedConfig, deepspeed/runtime/zero/config.py DeepSpeedZeroConfig and
// deepspeed/runtime/zero/offload_config.py (DeepSpeed v0.16).
#pragma once

#include <optional>
#include <string>

#include "launch/formats.h"
#include "launch/text_documents.h"

namespace vramplan::launch {

struct DeepSpeedFlags {
  bool present = false;
  std::optional<bool> bf16, fp16;  // unset: absent or "auto" (the trainer's flags decide)
  std::optional<int64_t> micro_batch, grad_accum, train_batch;
};

// Reads `ds` (an object) with keys reported as `prefix` + key ("deepspeed.zero_optimization.stage").
// Sets parallel.* and train.optimizer/micro-batch fields it holds; precision is left to the caller
// (it depends on the trainer's flags when DeepSpeed's are "auto").
void ReadDeepSpeed(const io::Json& ds, const std::string& prefix, ImportContext* ctx, DeepSpeedFlags* flags);

// Precision of a DeepSpeed run: bf16 -> mixed_bf16, fp16 -> mixed_fp16, neither -> fp32 (the
// engine keeps 16-bit weights and gradients and fp32 master weights and states).
void DeepSpeedPrecision(bool bf16, bool fp16, std::string_view key, ImportContext* ctx);

// The ds_config for `s`. `standalone`: batch sizes and the optimizer written out (a plain
// DeepSpeed launch); otherwise "auto" where the HF trainer fills them.
OrderedJson DeepSpeedConfigFor(const Scenario& s, bool standalone);

// Whether `s` runs under DeepSpeed (a ZeRO stage, or DeepSpeed's mixed precision).
bool UsesDeepSpeed(const Scenario& s);

}  // namespace vramplan::launch
