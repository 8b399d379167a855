// axolotl's training YAML (`axolotl train job.yaml`). Keys and defaults: the config schema in
// src/axolotl/utils/schemas/ (config.py AxolotlInputConfig, model.py, peft.py LoraConfig,
// training.py HyperparametersConfig, integrations for Liger / Cut Cross Entropy; axolotl v0.10).
// axolotl loads the model in bf16/fp16 when the flag is on (cfg.torch_dtype) and the HF trainer
// autocasts; `deepspeed` and `fsdp_config` are read inline (an object) or as a path (noted).
#include <algorithm>
#include <cctype>

#include "io/enum_names.h"
#include "io/message_text.h"
#include "launch/deepspeed_config.h"
#include "launch/formats.h"
#include "launch/model_match.h"
#include "launch/trainer_keys.h"
#include "launch/yaml_subset.h"

namespace vramplan::launch {
namespace {

bool IsNoEffect(std::string_view k) {
  return OneOf(k, {"base_model_config", "tokenizer_type", "model_type", "tokenizer_config", "trust_remote_code", "datasets", "test_datasets",
                   "dataset_prepared_path", "val_set_size", "output_dir", "wandb_project", "wandb_entity", "wandb_watch", "wandb_name",
                   "wandb_log_model", "wandb_run_id", "num_epochs", "learning_rate", "lr_scheduler", "lr_scheduler_kwargs", "warmup_steps",
                   "warmup_ratio", "evals_per_epoch", "eval_steps", "saves_per_epoch", "save_steps", "weight_decay", "special_tokens",
                   "tokens", "logging_steps", "train_on_inputs", "group_by_length", "strict", "chat_template", "early_stopping_patience",
                   "resume_from_checkpoint", "auto_resume_from_checkpoints", "local_rank", "debug", "seed", "max_grad_norm", "hub_model_id",
                   "hub_strategy", "save_total_limit", "shuffle_merged_datasets", "dataset_processes", "save_safetensors", "use_tensorboard",
                   "sample_packing", "eval_sample_packing", "pad_to_sequence_len", "tf32", "lora_fan_in_fan_out", "peft_use_rslora",
                   "lora_model_dir", "xformers_attention_enabled", "loss_watchdog_threshold", "loss_watchdog_patience", "eval_max_new_tokens",
                   "eval_table_size", "eval_causal_lm_metrics", "do_causal_lm_eval", "max_steps", "is_llama_derived_model",
                   "is_mistral_derived_model", "is_qwen_derived_model", "save_strategy", "eval_strategy",
                   "evaluation_strategy", "adam_beta1", "adam_beta2", "adam_epsilon", "cosine_min_lr_ratio", "lr_quadratic_warmup",
                   "dataloader_num_workers", "dataloader_pin_memory", "dataloader_prefetch_factor", "remove_unused_columns", "ddp_timeout",
                   "ddp_bucket_cap_mb", "ddp_broadcast_buffers", "ddp_find_unused_parameters", "eval_batch_size", "save_first_step",
                   "default_system_message", "dataset_exact_deduplication", "skip_prepare_dataset", "plugins", "hf_use_auth_token",
                   "push_dataset_to_hub", "revision_of_model", "mlflow_tracking_uri", "mlflow_experiment_name", "comet_api_key",
                   "comet_workspace", "comet_project_name", "use_wandb", "flash_attn_rms_norm", "flash_attn_fuse_qkv", "flash_attn_fuse_mlp",
                   "bf16_full_eval", "fp16_full_eval", "liger_layer_norm", "liger_cross_entropy", "lora_on_cpu"});
}

void ReadKey(const std::string& key, const io::Json& v, ImportContext* ctx, TrainerFlags* flags, std::optional<bool>* load4, std::optional<bool>* load8) {
  if (key == "base_model") {
    if (auto name = ctx->String(v, key)) ReadModel(ctx, key, *name);
  } else if (key == "adapter") {
    if (v.is_null()) return ctx->AddNote("read", key, "null: full fine-tuning"), ctx->Set("train.method", "full");
    const auto s = ctx->String(v, key);
    if (!s) return;
    if (*s == "lora" || *s == "qlora") ctx->Read(key, "train.method", *s);
    else ctx->Unsupported(key, "adapter " + io::Preview(v) + " is not modeled (lora and qlora are)");
  } else if (key == "load_in_4bit" || key == "load_in_8bit") {
    if (auto b = ctx->Bool(v, key)) *(key == "load_in_4bit" ? load4 : load8) = *b, ctx->AddNote("read", key, "-> train.qlora_bits");
  } else if (key == "lora_r") {
    if (auto n = ctx->Int(v, key, 1, 65536)) ctx->Read(key, "train.lora.rank", *n);
  } else if (key == "lora_alpha") {
    if (auto a = ctx->Number(v, key, 0, 1e6)) ctx->Read(key, "train.lora.alpha", *a);
  } else if (key == "lora_dropout") {
    if (auto d = ctx->Number(v, key, 0, 0.99)) ctx->Read(key, "train.lora.dropout", *d);
  } else if (key == "lora_target_modules") {
    if (v.is_null()) ctx->Ignored(key, "null");
    else if (auto list = ctx->StringList(v, key)) ctx->Read(key, "train.lora.targets", *list);
  } else if (key == "lora_target_linear") {
    if (auto b = ctx->Bool(v, key)) {
      if (*b) ctx->Read(key, "train.lora.targets", "all-linear");
      else ctx->Ignored(key, "false: lora_target_modules decides");
    }
  } else if (key == "lora_modules_to_save") {
    if (v.is_null()) ctx->Ignored(key, "null");
    else if (auto list = ctx->StringList(v, key)) ctx->Read(key, "train.lora.modules_to_save", *list);
  } else if (key == "peft_use_dora") {
    if (auto b = ctx->Bool(v, key)) ctx->Read(key, "train.lora.use_dora", *b);
  } else if (key == "sequence_len") {
    if (auto n = ctx->Int(v, key, 1, int64_t{1} << 24)) ctx->Read(key, "train.seq_len", *n);
  } else if (key == "micro_batch_size") {
    if (auto n = ctx->Int(v, key, 1, 65536)) ctx->Read(key, "train.micro_batch_size", *n);
  } else if (key == "batch_size") {
    ctx->Ignored(key, "the global batch: micro_batch_size and gradient_accumulation_steps set the memory");
  } else if (key == "optimizer") {
    ReadHfOptim(key, v, ctx);
  } else if (key == "bf16" || key == "fp16") {
    if (v == "auto") (key == "bf16" ? flags->bf16 : flags->fp16) = true, ctx->AddNote("read", key, "auto: on where the GPU has it");
    else if (auto b = ctx->Bool(v, key)) (key == "bf16" ? flags->bf16 : flags->fp16) = *b, ctx->AddNote("read", key, "-> train.precision");
  } else if (key == "gradient_checkpointing") {
    if (v == "unsloth" || v == "offload") {
      ctx->Read(key, "train.gradient_checkpointing", true);
      ctx->Read(key, "train.activation_offload", true);
    } else if (auto b = ctx->Bool(v, key)) {
      ctx->Read(key, "train.gradient_checkpointing", *b);
    }
  } else if (key == "gradient_checkpointing_kwargs") {
    ReadUseReentrant(key + ".use_reentrant", v.is_object() && v.contains("use_reentrant") ? v["use_reentrant"] : io::Json(), ctx);
  } else if (key == "flash_attention" || key == "sdp_attention" || key == "xformers_attention" || key == "eager_attention") {
    if (auto b = ctx->Bool(v, key); b && *b) {
      ctx->Read(key, "train.attention", key == "flash_attention" ? "flash" : key == "eager_attention" ? "eager" : "sdpa");
    } else if (b) {
      ctx->Ignored(key, "off");
    }
  } else if (OneOf(key, {"liger_rope", "liger_rms_norm", "liger_glu_activation", "liger_swiglu"})) {
    // axolotl/integrations/liger: apply_liger_kernel_to_<model>(rope=, rms_norm=, swiglu=); the
    // estimate takes Liger's layer kernels together (train.kernels "liger").
    if (auto b = ctx->Bool(v, key)) {
      if (*b) ctx->Read(key, "train.kernels", "liger");
      else ctx->Ignored(key, "off");
    }
  } else if (OneOf(key, {"unsloth_lora_mlp", "unsloth_lora_qkv", "unsloth_lora_o"})) {
    // axolotl/monkeypatch/lora_kernels.py: unsloth's LoRA_MLP / LoRA_QKV / LoRA_W Functions (taken
    // together with unsloth's RMSNorm as train.kernels "unsloth").
    if (auto b = ctx->Bool(v, key)) {
      if (*b) ctx->Read(key, "train.kernels", "unsloth");
      else ctx->Ignored(key, "off");
    }
  } else if (key == "liger_fused_linear_cross_entropy" || key == "cut_cross_entropy") {
    // cut_cross_entropy: axolotl/integrations/cut_cross_entropy (CutCrossEntropyPlugin) patches the
    // model's forward with Apple's linear_cross_entropy -> train.loss "cce".
    if (auto b = ctx->Bool(v, key)) {
      if (*b) ctx->Read(key, "train.loss", key == "cut_cross_entropy" ? "cce" : "fused_linear");
      else ctx->Ignored(key, "off");
    }
  } else if (key == "chunked_cross_entropy") {
    if (auto b = ctx->Bool(v, key)) {
      if (*b) ctx->Read(key, "train.loss", "chunked");
      else ctx->Ignored(key, "off");
    }
  } else if (key == "fsdp_version") {
    ctx->Ignored(key, "FSDP1 and FSDP2 shard the same states");
  } else if (key == "unfrozen_parameters" || key == "relora_steps" || key == "lisa_n_layers" || key == "rl" || key == "gptq" ||
             key == "llama4_linearized_experts" || key == "s2_attention" || key == "sequence_parallel_degree" || key == "context_parallel_size" ||
             key == "tensor_parallel_size") {
    if (v.is_null() || (v.is_boolean() && !v.get<bool>())) ctx->Ignored(key, "off");
    else ctx->Unsupported(key, "changes memory in a way the estimate does not model");
  } else if (ReadTrainingArgument(key, v, ctx, flags)) {
  } else if (IsNoEffect(key)) {
    ctx->Ignored(key);
  } else {
    ctx->Unsupported(key, "not an axolotl option the estimate reads (src/axolotl/utils/schemas)");
  }
}

}  // namespace

void ImportAxolotl(std::string_view text, ImportContext* ctx) {
  std::vector<io::Json> docs;
  if (!ParseYamlDocuments(text, &docs, &ctx->errors)) return;
  if (docs.empty() || !docs[0].is_object()) {
    ctx->Error("", "an axolotl config is a YAML map of options", "invalid_config");
    return;
  }
  ctx->Set("mode", "train");
  TrainerFlags flags;
  std::optional<bool> load4, load8;
  for (auto it = docs[0].begin(); it != docs[0].end(); ++it) {
    if (it.value().is_null()) ctx->Ignored(it.key(), "empty: the default");  // YAML "key:" with nothing after it
    else ReadKey(it.key(), it.value(), ctx, &flags, &load4, &load8);
  }
  if (docs[0].contains("deepspeed") && docs[0]["deepspeed"].is_string() && docs.size() > 1 && docs[1].is_object()) {
    ReadDeepSpeed(docs[1], "deepspeed", ctx, &flags.deepspeed);
  }
  if (!ctx->errors.empty()) return;
  ctx->Default("train.method", "full", "no adapter: full fine-tuning");
  if (load4.value_or(false) || load8.value_or(false)) {
    ctx->Set("train.qlora_bits", load4.value_or(false) ? 4 : 8);
    if (*ctx->Get("train.method") == "lora") ctx->Set("train.method", "qlora");
  }
  // peft.py LoraConfig and training.py HyperparametersConfig defaults.
  ctx->Default("train.seq_len", 512, "axolotl's default sequence_len");
  ctx->Default("train.micro_batch_size", 1, "axolotl's default micro_batch_size");
  ctx->Default("train.grad_accum_steps", 1, "axolotl's default gradient_accumulation_steps");
  ctx->Default("train.gradient_checkpointing", false, "axolotl's default gradient_checkpointing: false");
  ctx->Default("train.optimizer", "adamw", "axolotl's default optimizer (adamw_torch_fused)");
  if (*ctx->Get("train.optimizer") == "adamw" && !ctx->IsSet("train.optimizer_impl") && !docs[0].contains("optimizer")) ctx->Set("train.optimizer_impl", "fused");
  ctx->Default("train.attention", "sdpa", "no attention option: transformers' default (SDPA)");
  ApplyDeepSpeedBatch(flags, ctx);
  const bool bf16 = flags.bf16.value_or(false), fp16 = flags.fp16.value_or(false);
  if (flags.deepspeed.present) {
    DeepSpeedPrecision(flags.deepspeed.bf16.value_or(bf16), flags.deepspeed.fp16.value_or(fp16), "bf16 / deepspeed", ctx);
  } else {
    ctx->Set("train.precision", bf16 ? "bf16" : fp16 ? "fp16" : "fp32");
    ctx->Set("train.autocast", bf16 || fp16);
  }
  if (flags.deepspeed.present || flags.fsdp) ctx->AddNote("default", "parallel.gpus", "the GPU count comes from the launcher (accelerate / torchrun): set parallel.gpus");
}

ExportText ExportAxolotl(const Scenario& s) {
  ExportText out;
  const TrainConfig& t = s.train;
  OrderedJson y = OrderedJson::object();
  y["base_model"] = s.model_id.empty() ? "./model" : s.model_id;
  if (s.model_id.empty()) out.notes.push_back(Note{"model", "base_model", "the model is an inline config: replace ./model with its checkpoint directory"});
  const bool lora = t.method == TrainMethod::kLora || t.method == TrainMethod::kQlora;
  if (t.method == TrainMethod::kQlora) {
    y["load_in_8bit"] = t.qlora_bits == 8;
    y["load_in_4bit"] = t.qlora_bits == 4;
  }
  if (lora) {
    y["adapter"] = t.method == TrainMethod::kQlora && t.qlora_bits == 4 ? "qlora" : "lora";
    y["lora_r"] = t.lora.rank;
    y["lora_alpha"] = t.lora.alpha;
    y["lora_dropout"] = t.lora.dropout;
    if (t.lora.all_linear) y["lora_target_linear"] = true;
    else if (!t.lora.targets.empty()) y["lora_target_modules"] = t.lora.targets;
    if (!t.lora.modules_to_save.empty()) y["lora_modules_to_save"] = t.lora.modules_to_save;
    if (t.lora.use_dora) y["peft_use_dora"] = true;
  }
  y["datasets"] = OrderedJson::array({{{"path", "mhenrichsen/alpaca_2k_test"}, {"type", "alpaca"}}});
  y["val_set_size"] = 0.0;
  y["output_dir"] = "./outputs/vramplan-job";
  y["sequence_len"] = t.seq_len;
  y["sample_packing"] = false;
  y["micro_batch_size"] = t.micro_batch_size;
  y["gradient_accumulation_steps"] = t.grad_accum_steps;
  y["num_epochs"] = 1;
  const std::string optim = HfOptimName(s);
  if (!optim.empty()) y["optimizer"] = optim;
  y["lr_scheduler"] = "cosine";
  y["learning_rate"] = lora ? 0.0002 : 0.00001;
  const bool bf16 = t.precision == Precision::kBf16 || t.precision == Precision::kMixedBf16;
  const bool fp16 = t.precision == Precision::kFp16 || t.precision == Precision::kMixedFp16;
  y["bf16"] = bf16;
  y["fp16"] = fp16;
  y["gradient_checkpointing"] = t.activation_offload && t.gradient_checkpointing == Checkpointing::kFull ? OrderedJson("offload")
                                                                                                          : OrderedJson(t.gradient_checkpointing != Checkpointing::kNone);
  if (t.attention == AttentionImpl::kFlash) y["flash_attention"] = true;
  else if (t.attention == AttentionImpl::kSdpa) y["sdp_attention"] = true;
  else y["eager_attention"] = true;
  if (t.loss == LossImpl::kFusedLinear) {
    y["plugins"] = OrderedJson::array({"axolotl.integrations.liger.LigerPlugin"});
    y["liger_fused_linear_cross_entropy"] = true;
  } else if (t.loss == LossImpl::kChunked) {
    y["chunked_cross_entropy"] = true;
  } else if (t.loss == LossImpl::kCce) {
    y["plugins"] = OrderedJson::array({"axolotl.integrations.cut_cross_entropy.CutCrossEntropyPlugin"});
    y["cut_cross_entropy"] = true;
  }
  if (t.kernels == LayerKernels::kLiger) {
    y["plugins"] = OrderedJson::array({"axolotl.integrations.liger.LigerPlugin"});
    y["liger_rope"] = true;
    y["liger_rms_norm"] = true;
    y["liger_glu_activation"] = true;
  } else if (t.kernels == LayerKernels::kUnsloth) {
    y["unsloth_lora_mlp"] = true;
    y["unsloth_lora_qkv"] = true;
    y["unsloth_lora_o"] = true;
  }
  if (UsesDeepSpeed(s)) y["deepspeed"] = DeepSpeedConfigFor(s, false);
  if (s.parallel.fsdp) {
    // The sharding strategy is an option of the `fsdp` list, which axolotl hands to
    // TrainingArguments.fsdp; its fsdp_config has no sharding-strategy key (axolotl
    // src/axolotl/utils/trainer.py setup_fsdp_envs, utils/schemas/fsdp.py FSDPConfig).
    std::string strategy = FsdpStrategyName(s);
    for (char& c : strategy) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    OrderedJson options = OrderedJson::array({strategy});
    if (s.parallel.offload_params != Offload::kNone) options.push_back("offload");
    options.push_back("auto_wrap");
    y["fsdp"] = options;
    OrderedJson f = OrderedJson::object();
    f["fsdp_offload_params"] = s.parallel.offload_params != Offload::kNone;
    f["fsdp_auto_wrap_policy"] = "TRANSFORMER_BASED_WRAP";
    y["fsdp_config"] = f;
  }
  if (s.framework.torch_compile) y["torch_compile"] = true;
  y["logging_steps"] = 1;
  y["saves_per_epoch"] = 1;
  out.text = ToYaml(y);
  return out;
}

}  // namespace vramplan::launch
