#include "io/message_text.h"
#include "launch/trainer_keys.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "launch/model_match.h"

namespace vramplan::launch {
namespace {

// TrainingArguments fields that change no GPU memory of the training step (logging, saving,
// evaluation schedules, learning-rate schedule, data loading on the host, hub upload).
bool IsNoEffectTrainingArgument(std::string_view k) {
  return OneOf(k, {"output_dir", "overwrite_output_dir", "do_train", "do_eval", "do_predict", "eval_strategy", "evaluation_strategy",
                   "prediction_loss_only", "learning_rate", "weight_decay", "adam_beta1", "adam_beta2", "adam_epsilon", "max_grad_norm",
                   "num_train_epochs", "max_steps", "lr_scheduler_type", "lr_scheduler_kwargs", "warmup_ratio", "warmup_steps",
                   "log_level", "log_level_replica", "log_on_each_node", "logging_dir", "logging_strategy", "logging_first_step",
                   "logging_steps", "logging_nan_inf_filter", "save_strategy", "save_steps", "save_total_limit", "save_safetensors",
                   "save_on_each_node", "save_only_model", "seed", "data_seed", "tf32", "local_rank", "dataloader_num_workers",
                   "dataloader_pin_memory", "dataloader_drop_last", "dataloader_persistent_workers", "dataloader_prefetch_factor",
                   "run_name", "disable_tqdm", "remove_unused_columns", "label_names", "load_best_model_at_end",
                   "metric_for_best_model", "greater_is_better", "report_to", "push_to_hub", "hub_model_id", "hub_strategy",
                   "hub_token", "hub_private_repo", "resume_from_checkpoint", "ddp_timeout", "ddp_find_unused_parameters",
                   "ddp_backend", "include_num_input_tokens_seen", "neftune_noise_alpha", "optim_args", "eval_steps", "eval_delay",
                   "eval_accumulation_steps", "per_device_eval_batch_size", "bf16_full_eval", "fp16_full_eval", "full_determinism",
                   "ignore_data_skip", "skip_memory_metrics", "torch_compile_backend", "torch_compile_mode",
                   "average_tokens_across_devices", "accelerator_config", "label_smoothing_factor",
                   "group_by_length", "length_column_name", "dataset_text_field", "dataset_num_proc", "packing", "padding_free",
                   "completion_only_loss", "assistant_only_loss", "dataset_kwargs", "eval_packing", "seed_everything",
                   "use_mps_device", "save_steps_ratio", "plot_loss", "ddp_broadcast_buffers", "restore_callback_states_from_checkpoint",
                   "eval_on_start", "batch_eval_metrics", "logging_dir", "use_legacy_prediction_loop", "jit_mode_eval"});
}

}  // namespace

std::string TorchDtype(const std::string& name) {
  if (OneOf(name, {"bfloat16", "torch.bfloat16", "bf16"})) return "bfloat16";
  if (OneOf(name, {"float16", "torch.float16", "fp16", "half"})) return "float16";
  if (OneOf(name, {"float32", "torch.float32", "fp32", "float"})) return "float32";
  return "";
}

void ReadHfOptim(const std::string& key, const io::Json& v, ImportContext* ctx) {
  const auto name = ctx->String(v, key);
  if (!name) return;
  // transformers OptimizerNames (training_args.py): the torch, bitsandbytes and transformers optimizers.
  struct Row {
    std::string_view hf;
    const char* optimizer;
    const char* impl;  // nullptr: PyTorch's choice (foreach on CUDA)
  };
  static constexpr std::array<Row, 14> kRows = {{
      {"adamw_torch", "adamw", nullptr},          {"adamw_hf", "adamw", "for_loop"},
      {"adamw_torch_fused", "adamw", "fused"},    {"adamw_apex_fused", "adamw", "fused"},
      {"adamw_bnb_8bit", "adamw_8bit", nullptr},  {"adamw_8bit", "adamw_8bit", nullptr},
      {"paged_adamw_8bit", "paged_adamw_8bit", nullptr}, {"adafactor", "adafactor", nullptr},
      {"sgd", "sgd", nullptr},                    {"lion_32bit", "lion", nullptr},
      {"adamw_torch_xla", "adamw", nullptr},      {"adamw_torch_npu_fused", "adamw", "fused"},
      {"adamw_anyprecision", "adamw", nullptr},   {"paged_adamw_32bit", "adamw", nullptr},
  }};
  for (const Row& r : kRows) {
    if (*name == r.hf) {
      ctx->Read(key, "train.optimizer", r.optimizer);
      if (r.impl != nullptr) ctx->Set("train.optimizer_impl", r.impl);
      if (r.hf == "paged_adamw_32bit") ctx->AddNote("read", key, "paged 32-bit AdamW: estimated as AdamW (states on the GPU)");
      return;
    }
  }
  ctx->Unsupported(key, "optimizer " + io::Preview(v) + " is not modeled (adamw_torch, adamw_torch_fused, adamw_bnb_8bit, paged_adamw_8bit, adafactor, sgd, lion_32bit are); AdamW assumed");
}

std::string HfOptimName(const Scenario& s) {
  const TrainConfig& t = s.train;
  switch (t.optimizer) {
    case Optimizer::kAdamW:
      if (t.optimizer_impl == OptimizerImpl::kFused) return "adamw_torch_fused";
      if (t.optimizer_impl == OptimizerImpl::kForLoop) return "";
      return "adamw_torch";
    case Optimizer::kAdamW8bit: return "adamw_bnb_8bit";
    case Optimizer::kPagedAdamW8bit: return "paged_adamw_8bit";
    case Optimizer::kAdafactor: return "adafactor";
    case Optimizer::kSgd: return "sgd";
    case Optimizer::kLion: return "lion_32bit";
    case Optimizer::kSgdMomentum: return "";
  }
  return "";
}

bool ReadLoraConfigKey(const std::string& key, const io::Json& v, ImportContext* ctx) {
  const size_t dot = key.rfind('.');
  const std::string k = dot == std::string::npos ? key : key.substr(dot + 1);
  if (k == "r") {
    if (auto r = ctx->Int(v, key, 1, 65536)) ctx->Read(key, "train.lora.rank", *r);
  } else if (k == "lora_alpha") {
    if (auto a = ctx->Number(v, key, 0, 1e6)) ctx->Read(key, "train.lora.alpha", *a);
  } else if (k == "lora_dropout") {
    if (auto d = ctx->Number(v, key, 0, 0.99)) ctx->Read(key, "train.lora.dropout", *d);
  } else if (k == "target_modules") {
    if (v.is_null()) {
      ctx->Ignored(key, "null: PEFT's default targets for the model type");
    } else if (v.is_string() && v.get_ref<const std::string&>() != "all-linear") {
      ctx->Unsupported(key, "a regular expression is not read; PEFT's default targets assumed (give a list of module names)");
    } else if (v.is_string()) {
      ctx->Read(key, "train.lora.targets", "all-linear");
    } else if (auto list = ctx->StringList(v, key)) {
      ctx->Read(key, "train.lora.targets", *list);
    }
  } else if (k == "modules_to_save") {
    if (v.is_null()) ctx->Ignored(key, "null: none");
    else if (auto list = ctx->StringList(v, key)) ctx->Read(key, "train.lora.modules_to_save", *list);
  } else if (k == "use_dora") {
    if (auto b = ctx->Bool(v, key)) ctx->Read(key, "train.lora.use_dora", *b);
  } else if (k == "base_model_name_or_path") {
    if (auto name = ctx->String(v, key); name && !ctx->IsSet("model")) ReadModel(ctx, key, *name);
  } else if (k == "bias") {
    if (v.is_string() && v.get_ref<const std::string&>() == "none") ctx->Ignored(key, "\"none\": no trainable biases");
    else ctx->Unsupported(key, "trainable biases are not modeled (a few MB)");
  } else if (OneOf(k, {"layers_to_transform", "layers_pattern", "rank_pattern", "alpha_pattern", "exclude_modules", "layer_replication",
                       "trainable_token_indices"})) {
    if (v.is_null() || (v.is_object() && v.empty()) || (v.is_array() && v.empty())) ctx->Ignored(key, "empty");
    else ctx->Unsupported(key, "per-layer ranks or targets are not modeled: every targeted module gets r");
  } else if (OneOf(k, {"peft_type", "task_type", "fan_in_fan_out", "inference_mode", "revision", "init_lora_weights", "use_rslora",
                       "lora_bias", "megatron_config", "megatron_core", "loftq_config", "auto_mapping", "eva_config", "corda_config",
                       "runtime_config", "layers_pattern", "use_qalora", "qalora_group_size", "target_parameters"})) {
    ctx->Ignored(key);
  } else {
    return false;
  }
  return true;
}

bool ReadFsdpKey(const std::string& key, const io::Json& v, ImportContext* ctx) {
  const size_t dot = key.rfind('.');
  std::string k = dot == std::string::npos ? key : key.substr(dot + 1);
  if (k.rfind("fsdp_", 0) == 0) k.erase(0, 5);
  if (k == "sharding_strategy") {
    // FullyShardedDataParallelPlugin accepts the ShardingStrategy name or its number (1-5).
    static constexpr std::array<std::pair<std::string_view, const char*>, 5> kStrategies = {{
        {"FULL_SHARD", "full_shard"}, {"SHARD_GRAD_OP", "shard_grad_op"}, {"NO_SHARD", "no_shard"}, {"HYBRID_SHARD", "hybrid_shard"},
        {"HYBRID_SHARD_ZERO2", "hybrid_shard"}}};
    std::string name = v.is_string() ? v.get<std::string>() : "";
    if (v.is_number_integer() && v.get<int64_t>() >= 1 && v.get<int64_t>() <= 5) name = std::string(kStrategies[static_cast<size_t>(v.get<int64_t>() - 1)].first);
    for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    for (const auto& [fsdp, ours] : kStrategies) {
      if (name == fsdp) {
        ctx->Read(key, "parallel.fsdp_sharding", ours);
        ctx->Set("parallel.fsdp", true);
        if (fsdp == "HYBRID_SHARD_ZERO2") ctx->AddNote("read", key, "HYBRID_SHARD_ZERO2 estimated as HYBRID_SHARD");
        return true;
      }
    }
    ctx->Error(key, "expected FULL_SHARD, SHARD_GRAD_OP, NO_SHARD, HYBRID_SHARD, HYBRID_SHARD_ZERO2 or 1-5, got " + io::Preview(v));
  } else if (k == "reshard_after_forward") {
    // FSDP2 (fully_shard): true frees parameters after forward (FULL_SHARD), false keeps them (SHARD_GRAD_OP).
    if (v.is_string()) return ReadFsdpKey("sharding_strategy", v, ctx);
    if (auto b = ctx->Bool(v, key)) {
      ctx->Read(key, "parallel.fsdp_sharding", *b ? "full_shard" : "shard_grad_op");
      ctx->Set("parallel.fsdp", true);
    }
  } else if (k == "offload_params") {
    if (auto b = ctx->Bool(v, key)) ctx->Read(key, "parallel.offload_params", *b ? "cpu" : "none");
    if (ctx->Get("parallel.offload_params") && *ctx->Get("parallel.offload_params") == "cpu") ctx->Set("parallel.offload_optimizer", "cpu");
  } else if (k == "activation_checkpointing") {
    if (auto b = ctx->Bool(v, key)) ctx->Read(key, "train.gradient_checkpointing", *b);
  } else if (k == "version") {
    ctx->Ignored(key, "FSDP1 and FSDP2 shard the same states; the estimate models both alike");
  } else if (OneOf(k, {"auto_wrap_policy", "transformer_layer_cls_to_wrap", "min_num_params", "backward_prefetch", "forward_prefetch",
                       "state_dict_type", "use_orig_params", "cpu_ram_efficient_loading", "sync_module_states", "limit_all_gathers",
                       "xla", "xla_fsdp_settings", "xla_fsdp_grad_ckpt", "xla_fsdp_v2", "use_orig_params", "cpu_offload",
                       "activation_cpu_offload", "ignored_modules"})) {
    ctx->Ignored(key, "wrapping, prefetch or checkpoint-format setting: the estimate assumes one FSDP unit per decoder layer");
  } else {
    return false;
  }
  return true;
}

void ReadUseReentrant(const std::string& key, const io::Json& v, ImportContext* ctx) {
  if (v.is_null()) {
    ctx->Ignored(key, "no use_reentrant: transformers' gradient_checkpointing_enable() checkpoints reentrantly");
    return;
  }
  const std::optional<bool> reentrant = ctx->Bool(v, key);
  if (!reentrant) return;
  // Non-reentrant checkpointing makes no detached leaf for FSDP1's reshard-only hook to hold
  // (parallel/fsdp_frozen_unit_hooks.h); reentrant (transformers' default) leaves the default.
  if (*reentrant) ctx->Ignored(key, "true: transformers' default (parallel.fsdp_frozen_unit_hooks keeps its default)");
  else ctx->Read(key, "parallel.fsdp_frozen_unit_hooks", false);
}

bool ReadTrainingArgument(const std::string& key, const io::Json& v, ImportContext* ctx, TrainerFlags* flags) {
  const size_t dot = key.rfind('.');
  const std::string k = dot == std::string::npos ? key : key.substr(dot + 1);
  if (k == "per_device_train_batch_size") {
    if (auto n = ctx->Int(v, key, 1, 65536)) ctx->Read(key, "train.micro_batch_size", *n);
  } else if (k == "gradient_accumulation_steps") {
    if (auto n = ctx->Int(v, key, 1, 1 << 20)) ctx->Read(key, "train.grad_accum_steps", *n);
  } else if (k == "gradient_checkpointing") {
    if (auto b = ctx->Bool(v, key)) ctx->Read(key, "train.gradient_checkpointing", *b);
  } else if (k == "gradient_checkpointing_kwargs") {
    ReadUseReentrant(key + ".use_reentrant", v.is_object() && v.contains("use_reentrant") ? v["use_reentrant"] : io::Json(), ctx);
  } else if (k == "optim") {
    ReadHfOptim(key, v, ctx);
  } else if (k == "bf16" || k == "fp16") {
    if (auto b = ctx->Bool(v, key)) {
      (k == "bf16" ? flags->bf16 : flags->fp16) = *b;
      ctx->AddNote("read", key, "-> train.precision (with the model's dtype)");
    }
  } else if (k == "deepspeed") {
    if (v.is_object()) ReadDeepSpeed(v, key, ctx, &flags->deepspeed);
    else if (v.is_null()) ctx->Ignored(key, "null: no DeepSpeed");
    else ctx->Unsupported(key, "a path to a DeepSpeed JSON: its file is not here; give the JSON inline as an object (or as a second document)");
  } else if (k == "fsdp") {
    std::vector<std::string> words;
    if (v.is_string()) {
      std::string s = v.get<std::string>();
      size_t start = 0;
      while (start < s.size()) {
        size_t sp = s.find(' ', start);
        if (sp == std::string::npos) sp = s.size();
        if (sp > start) words.push_back(s.substr(start, sp - start));
        start = sp + 1;
      }
    } else if (v.is_array()) {
      if (auto list = ctx->StringList(v, key)) words = *list;
    } else if (v.is_boolean()) {
      if (v.get<bool>()) words.push_back("full_shard");
    } else if (!v.is_null()) {
      ctx->Error(key, "expected a string such as \"full_shard auto_wrap\" or a list of such words");
    }
    for (const std::string& w : words) {
      if (w == "full_shard" || w == "shard_grad_op" || w == "hybrid_shard" || w == "no_shard" || w == "hybrid_shard_zero2") {
        ctx->Read(key, "parallel.fsdp_sharding", w == "hybrid_shard_zero2" ? "hybrid_shard" : w);
        ctx->Set("parallel.fsdp", true);
        flags->fsdp = true;
      } else if (w == "offload") {
        ctx->Read(key, "parallel.offload_params", "cpu");
        ctx->Set("parallel.offload_optimizer", "cpu");
      } else if (w != "auto_wrap") {
        ctx->Unsupported(key, "FSDP option " + io::Preview(io::Json(w)) + " is not read");
      }
    }
  } else if (k == "fsdp_config") {
    if (!v.is_object()) {
      if (!v.is_null()) ctx->Unsupported(key, "a path to an FSDP config file is not read; give it inline as an object");
      return true;
    }
    for (auto it = v.begin(); it != v.end(); ++it) {
      const std::string sub = key + "." + it.key();
      if (!ReadFsdpKey(sub, it.value(), ctx)) ctx->Unsupported(sub, "not an FSDP setting");
    }
  } else if (k == "torch_compile") {
    if (auto b = ctx->Bool(v, key)) ctx->Read(key, "framework.torch_compile", *b);
  } else if (k == "use_liger_kernel") {
    // transformers Trainer: apply_liger_kernel_to_<model> with its defaults (rope, rms_norm, swiglu,
    // fused_linear_cross_entropy on).
    if (auto b = ctx->Bool(v, key)) {
      ctx->Read(key, "train.loss", *b ? "fused_linear" : "standard");
      if (*b) ctx->Set("train.kernels", "liger");
    }
  } else if (k == "activation_offloading") {
    if (auto b = ctx->Bool(v, key)) ctx->Read(key, "train.activation_offload", *b);
  } else if (k == "auto_find_batch_size") {
    if (v.is_boolean() && !v.get<bool>()) ctx->Ignored(key, "off");
    else ctx->Unsupported(key, "the trainer halves the batch after an out-of-memory error: the estimate is for the batch given");
  } else if (k == "ddp_bucket_cap_mb") {
    ctx->Unsupported(key, "DDP bucket size: the estimate models PyTorch's default (25 MB)");
  } else if (k == "use_cpu" || k == "no_cuda") {
    if (auto b = ctx->Bool(v, key)) {
      if (*b) ctx->Read(key, "framework.device", "cpu");
      else ctx->Ignored(key, "off");
    }
  } else if (IsNoEffectTrainingArgument(k)) {
    ctx->Ignored(key);
  } else {
    return false;
  }
  return true;
}

void ResolveHfPrecision(const TrainerFlags& flags, ImportContext* ctx) {
  const bool bf16 = flags.bf16.value_or(false), fp16 = flags.fp16.value_or(false);
  if (flags.deepspeed.present) {
    DeepSpeedPrecision(flags.deepspeed.bf16.value_or(bf16), flags.deepspeed.fp16.value_or(fp16), "deepspeed.bf16/fp16", ctx);
    return;
  }
  const std::string& dtype = flags.model_dtype;
  std::string precision;
  bool autocast = false;
  if (dtype == "bfloat16" || dtype == "float16") {
    precision = dtype == "bfloat16" ? "bf16" : "fp16";
    autocast = bf16 || fp16;
  } else {
    precision = bf16 ? "amp_bf16" : fp16 ? "amp_fp16" : "fp32";
  }
  ctx->AddNote("read", "bf16/fp16", "-> train.precision = \"" + precision + "\"" + (autocast ? " with autocast" : "") +
                                     (dtype.empty() ? " (model loaded in fp32: from_pretrained's default)" : ""));
  ctx->Set("train.precision", precision);
  ctx->Set("train.autocast", autocast);
}

void ApplyDeepSpeedBatch(const TrainerFlags& flags, ImportContext* ctx) {
  const DeepSpeedFlags& ds = flags.deepspeed;
  if (ds.micro_batch && !ctx->IsSet("train.micro_batch_size")) ctx->Set("train.micro_batch_size", *ds.micro_batch);
  if (ds.grad_accum && !ctx->IsSet("train.grad_accum_steps")) ctx->Set("train.grad_accum_steps", *ds.grad_accum);
}

std::string FsdpStrategyName(const Scenario& s) {
  switch (s.parallel.fsdp_sharding) {
    case FsdpSharding::kFullShard: return "FULL_SHARD";
    case FsdpSharding::kShardGradOp: return "SHARD_GRAD_OP";
    case FsdpSharding::kNoShard: return "NO_SHARD";
    case FsdpSharding::kHybridShard: return "HYBRID_SHARD";
  }
  return "FULL_SHARD";
}

}  // namespace vramplan::launch
