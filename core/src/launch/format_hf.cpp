// HF Trainer arguments as JSON: transformers TrainingArguments (training_args.py, v4.46) with the
// model keys of TRL's ModelConfig (trl/trainer/model_config.py) and SFTConfig's max_length
// (trl/trainer/sft_config.py; both checked at TRL v1.9: docs/planner.md), and PEFT's LoraConfig (peft/tuners/lora/config.py,
// v0.13; an adapter_config.json is one) - in one object, or as two documents one after the other.
// The export is one flat object in TRL's spelling, which `trl sft --config job.json` reads
// (its YAML loader reads JSON); `deepspeed` is embedded as an object (TrainingArguments takes a dict).
#include <algorithm>

#include "io/enum_names.h"
#include "io/message_text.h"
#include "launch/deepspeed_config.h"
#include "launch/formats.h"
#include "launch/model_match.h"
#include "launch/text_documents.h"
#include "launch/trainer_keys.h"

namespace vramplan::launch {
namespace {

struct HfState {
  TrainerFlags flags;
  bool peft = false, trl_lora = false;
  std::optional<bool> load4, load8;
};

// TRL ModelConfig / SFTConfig keys. False when `key` is not one.
bool ReadTrlKey(const std::string& key, const io::Json& v, ImportContext* ctx, HfState* st) {
  if (key == "model_name_or_path") {
    if (auto name = ctx->String(v, key)) ReadModel(ctx, key, *name);
  } else if (key == "torch_dtype" || key == "dtype") {
    const auto s = ctx->String(v, key);
    if (!s) return true;
    if (*s == "auto") {
      st->flags.model_dtype = "bfloat16";
      ctx->AddNote("read", key, "auto: the checkpoint's dtype, bf16 assumed");
    } else if (!(st->flags.model_dtype = TorchDtype(*s)).empty()) {
      ctx->AddNote("read", key, "-> train.precision (the weights' dtype)");
    } else {
      ctx->Error(key, "expected bfloat16, float16, float32 or auto, got " + io::Preview(v));
    }
  } else if (key == "attn_implementation") {
    const auto s = ctx->String(v, key);
    if (!s) return true;
    if (*s == "eager") ctx->Read(key, "train.attention", "eager");
    else if (*s == "sdpa") ctx->Read(key, "train.attention", "sdpa");
    else if (s->rfind("flash_attention", 0) == 0 || s->find("flash") != std::string::npos) ctx->Read(key, "train.attention", "flash");
    else ctx->Unsupported(key, "attention " + io::Preview(v) + " is not modeled (eager, sdpa, flash_attention_2 are)");
  } else if (key == "max_length" || key == "max_seq_length") {
    if (v.is_null()) ctx->Ignored(key, "null: no truncation; set train.seq_len");
    else if (auto n = ctx->Int(v, key, 1, int64_t{1} << 24)) ctx->Read(key, "train.seq_len", *n);
  } else if (key == "use_peft") {
    if (auto b = ctx->Bool(v, key)) st->peft = *b, st->trl_lora = true, ctx->AddNote("read", key, "-> train.method");
  } else if (key == "lora_r") {
    if (auto n = ctx->Int(v, key, 1, 65536)) ctx->Read(key, "train.lora.rank", *n);
  } else if (key == "lora_target_modules") {
    return ReadLoraConfigKey("target_modules", v, ctx);
  } else if (key == "lora_modules_to_save") {
    return ReadLoraConfigKey("modules_to_save", v, ctx);
  } else if (key == "load_in_4bit" || key == "load_in_8bit") {
    if (auto b = ctx->Bool(v, key)) *(key == "load_in_4bit" ? &st->load4 : &st->load8) = *b, ctx->AddNote("read", key, "-> train.qlora_bits");
  } else if (key == "gradient_checkpointing_use_reentrant") {
    ReadUseReentrant(key, v, ctx);
  } else if (key == "use_bnb_nested_quant") {
    if (auto b = ctx->Bool(v, key)) ctx->Read(key, "train.qlora_double_quant", *b);
  } else if (key == "bnb_4bit_quant_type") {
    if (v == "nf4") ctx->Ignored(key, "nf4");
    else ctx->Unsupported(key, "estimated as NF4 (same size)");
  } else if (OneOf(key, {"model_revision", "trust_remote_code", "lora_task_type", "use_rslora", "dataset_name", "dataset_config",
                         "dataset_train_split", "dataset_test_split", "ignore_bias_buffers",
                         "model_init_kwargs", "chat_template_path", "eos_token", "pad_token", "dataset_streaming"})) {
    ctx->Ignored(key);
  } else {
    return false;
  }
  return true;
}

}  // namespace

void ImportHfTraining(std::string_view text, ImportContext* ctx) {
  std::vector<io::Json> docs;
  if (!ParseJsonDocuments(text, &docs, &ctx->errors)) return;
  if (docs.empty()) {
    ctx->Error("", "expected a TrainingArguments JSON object (and optionally a LoraConfig object)", "invalid_config");
    return;
  }
  ctx->Set("mode", "train");
  HfState st;
  for (io::Json& doc : docs) {
    if (!doc.is_object()) {
      ctx->Error("", "each document must be a JSON object", "invalid_config");
      return;
    }
    ctx->TakeExtras(&doc);
    const bool lora_doc = doc.contains("peft_type") || doc.contains("r") || doc.contains("target_modules");
    if (lora_doc) st.peft = true;
    for (auto it = doc.begin(); it != doc.end(); ++it) {
      const std::string& k = it.key();
      if (lora_doc && ReadLoraConfigKey(k, it.value(), ctx)) continue;
      if (ReadTrlKey(k, it.value(), ctx, &st)) continue;
      if (OneOf(k, {"lora_alpha", "lora_dropout", "use_dora"}) && ReadLoraConfigKey(k, it.value(), ctx)) {
        st.trl_lora = st.trl_lora || !lora_doc;
        continue;
      }
      if (ReadTrainingArgument(k, it.value(), ctx, &st.flags)) continue;
      ctx->Unsupported(k, "not a TrainingArguments, TRL ModelConfig or LoraConfig key the estimate reads");
    }
  }
  if (!ctx->errors.empty()) return;
  const bool quantized = st.load4.value_or(false) || st.load8.value_or(false);
  ctx->Set("train.method", quantized ? "qlora" : st.peft ? "lora" : "full");
  ctx->AddNote("read", "use_peft / LoraConfig / load_in_*bit", std::string("-> train.method = ") + (quantized ? "qlora" : st.peft ? "lora" : "full"));
  if (quantized) {
    ctx->Set("train.qlora_bits", st.load4.value_or(false) ? 4 : 8);
    ctx->Default("train.qlora_double_quant", false, "TRL's default use_bnb_nested_quant: false");
  }
  if (st.peft) {
    // TRL ModelConfig's LoRA defaults (r 16, alpha 32, dropout 0.05) or PEFT LoraConfig's (r 8, alpha 8, dropout 0).
    ctx->Default("train.lora.rank", st.trl_lora ? 16 : 8, st.trl_lora ? "TRL's default lora_r" : "PEFT's default r");
    ctx->Default("train.lora.alpha", st.trl_lora ? 32.0 : 8.0, st.trl_lora ? "TRL's default lora_alpha" : "PEFT's default lora_alpha");
    ctx->Default("train.lora.dropout", st.trl_lora ? 0.05 : 0.0, st.trl_lora ? "TRL's default lora_dropout" : "PEFT's default lora_dropout");
  }
  ctx->Default("train.micro_batch_size", 8, "TrainingArguments' default per_device_train_batch_size");
  ctx->Default("train.grad_accum_steps", 1, "TrainingArguments' default gradient_accumulation_steps");
  ctx->Default("train.gradient_checkpointing", false, "TrainingArguments' default gradient_checkpointing: false");
  ctx->Default("train.optimizer", "adamw", "TrainingArguments' default optim: adamw_torch");
  ctx->Default("train.attention", "sdpa", "transformers' default attention (SDPA)");
  ctx->Default("train.seq_len", 1024, "TRL SFTConfig's default max_length");
  ApplyDeepSpeedBatch(st.flags, ctx);
  ResolveHfPrecision(st.flags, ctx);
  if (st.flags.deepspeed.present || st.flags.fsdp) ctx->AddNote("default", "parallel.gpus", "the GPU count comes from the launcher (accelerate / torchrun / deepspeed): set parallel.gpus");
}

ExportText ExportHfTraining(const Scenario& s) {
  ExportText out;
  const TrainConfig& t = s.train;
  OrderedJson j = OrderedJson::object();
  j["model_name_or_path"] = s.model_id.empty() ? "./model" : s.model_id;
  if (s.model_id.empty()) out.notes.push_back(Note{"model", "model_name_or_path", "the model is an inline config: replace ./model with its checkpoint directory"});
  const bool half_weights = t.precision == Precision::kBf16 || t.precision == Precision::kFp16 || t.precision == Precision::kMixedBf16 ||
                            t.precision == Precision::kMixedFp16;
  const bool bf16_family = t.precision == Precision::kBf16 || t.precision == Precision::kAmpBf16 || t.precision == Precision::kMixedBf16;
  // TRL's ModelConfig field (trl/trainer/model_config.py): `dtype` since TRL 0.24, where
  // `torch_dtype` became its deprecated alias, removed in 1.0; the import reads both.
  j["dtype"] = half_weights ? (bf16_family ? "bfloat16" : "float16") : "float32";
  j["attn_implementation"] = t.attention == AttentionImpl::kFlash ? "flash_attention_2" : t.attention == AttentionImpl::kEager ? "eager" : "sdpa";
  j["dataset_name"] = "trl-lib/Capybara";
  j["output_dir"] = "outputs/vramplan-job";
  j["max_length"] = t.seq_len;
  j["per_device_train_batch_size"] = t.micro_batch_size;
  j["gradient_accumulation_steps"] = t.grad_accum_steps;
  j["gradient_checkpointing"] = t.gradient_checkpointing != Checkpointing::kNone;
  const std::string optim = HfOptimName(s);
  if (!optim.empty()) j["optim"] = optim;
  const bool autocast_flag = t.precision == Precision::kAmpBf16 || t.precision == Precision::kAmpFp16 || t.precision == Precision::kMixedBf16 ||
                             t.precision == Precision::kMixedFp16 || ((t.precision == Precision::kBf16 || t.precision == Precision::kFp16) && t.autocast);
  j["bf16"] = autocast_flag && bf16_family;
  j["fp16"] = autocast_flag && !bf16_family;
  j["learning_rate"] = t.method == TrainMethod::kFull ? 1e-5 : 2e-4;
  j["num_train_epochs"] = 1;
  j["logging_steps"] = 10;
  if (t.method == TrainMethod::kLora || t.method == TrainMethod::kQlora) {
    j["use_peft"] = true;
    j["lora_r"] = t.lora.rank;
    j["lora_alpha"] = t.lora.alpha;
    j["lora_dropout"] = t.lora.dropout;
    if (t.lora.all_linear) j["lora_target_modules"] = "all-linear";
    else if (!t.lora.targets.empty()) j["lora_target_modules"] = t.lora.targets;
    if (!t.lora.modules_to_save.empty()) j["lora_modules_to_save"] = t.lora.modules_to_save;
    if (t.lora.use_dora) j["use_dora"] = true;
  }
  if (t.method == TrainMethod::kQlora) {
    j["load_in_4bit"] = t.qlora_bits == 4;
    j["load_in_8bit"] = t.qlora_bits == 8;
    j["use_bnb_nested_quant"] = t.qlora_double_quant;
  }
  if (t.loss == LossImpl::kFusedLinear) j["use_liger_kernel"] = true;
  if (t.activation_offload) j["activation_offloading"] = true;
  if (s.framework.torch_compile) j["torch_compile"] = true;
  if (UsesDeepSpeed(s)) j["deepspeed"] = DeepSpeedConfigFor(s, false);
  if (s.parallel.fsdp) {
    std::string fsdp;
    switch (s.parallel.fsdp_sharding) {
      case FsdpSharding::kFullShard: fsdp = "full_shard"; break;
      case FsdpSharding::kShardGradOp: fsdp = "shard_grad_op"; break;
      case FsdpSharding::kNoShard: fsdp = "no_shard"; break;
      case FsdpSharding::kHybridShard: fsdp = "hybrid_shard"; break;
    }
    if (s.parallel.offload_params != Offload::kNone) fsdp += " offload";
    j["fsdp"] = fsdp + " auto_wrap";
  }
  out.text = j.dump(2) + "\n";
  return out;
}

}  // namespace vramplan::launch
