// LLaMA-Factory's training YAML (`llamafactory-cli train job.yaml`). Keys and defaults:
// src/llamafactory/hparams/model_args.py (ModelArguments, QuantizationArguments),
// data_args.py (DataArguments), finetuning_args.py (FinetuningArguments, LoraArguments,
// FreezeArguments), and transformers' Seq2SeqTrainingArguments for the rest (LLaMA-Factory v0.9.3).
// Precision follows src/llamafactory/model/adapter.py init_adapter: the model loads in the compute
// dtype (bf16/fp16, inferred from the GPU when neither flag is set), and full/freeze tuning casts
// the trainable parameters to fp32 unless pure_bf16 or ZeRO-3/FSDP.
//
// The DeepSpeed config: LLaMA-Factory passes `deepspeed` to TrainingArguments, which takes a path or
// a dict, so the export embeds the ds_config as a nested map (one launchable file); the import
// also reads a path followed by the ds_config as a second YAML document ("---").
#include <algorithm>

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
  return OneOf(k, {"template", "dataset", "eval_dataset", "dataset_dir", "train_on_prompt", "mask_history", "streaming", "buffer_size",
                   "mix_strategy", "interleave_probs", "overwrite_cache", "preprocessing_batch_size", "preprocessing_num_workers",
                   "max_samples", "eval_num_beams", "ignore_pad_token_for_loss", "val_size", "tool_format", "tokenized_path",
                   "neat_packing", "cache_dir", "use_fast_tokenizer", "split_special_tokens", "new_special_tokens",
                   "model_revision", "low_cpu_mem_usage", "hf_hub_token", "ms_hub_token", "om_hub_token", "trust_remote_code",
                   "print_param_status", "use_reentrant_gc", "compute_accuracy", "disable_shuffling", "plot_loss",
                   "include_effective_tokens_per_second", "loraplus_lr_ratio", "loraplus_lr_embedding", "use_rslora", "create_new_adapter",
                   "lora_bias", "moe_aux_loss_coef", "upcast_layernorm", "upcast_lmhead_output", "freeze_trainable_modules",
                   "infer_backend", "infer_dtype", "offload_folder", "use_cache", "do_sample", "temperature", "top_p", "top_k",
                   "max_new_tokens", "repetition_penalty", "default_system", "enable_thinking", "swanlab_project", "swanlab_run_name",
                   "use_swanlab", "dataloader_num_workers", "ray_run_name", "ray_storage_path", "ray_num_workers", "resources_per_worker",
                   "placement_strategy", "pissa_init", "pissa_iter", "pissa_convert", "quantization_device_map", "export_dir"});
}

void ReadKey(const std::string& key, const io::Json& v, ImportContext* ctx, TrainerFlags* flags, bool* pure_bf16, int64_t* rank) {
  if (key == "model_name_or_path") {
    if (auto name = ctx->String(v, key)) ReadModel(ctx, key, *name);
  } else if (key == "stage") {
    const auto s = ctx->String(v, key);
    if (!s) return;
    if (*s == "sft" || *s == "pt") ctx->Ignored(key, "sft / pt: one model, the estimate's training step");
    else ctx->Unsupported(key, "stage " + io::Preview(v) + ": the reference / reward / value models of preference training are not modeled");
  } else if (key == "finetuning_type") {
    const auto s = ctx->String(v, key);
    if (!s) return;
    if (*s == "lora" || *s == "full" || *s == "freeze") ctx->Read(key, "train.method", *s);
    else ctx->Error(key, "expected lora, full or freeze, got " + io::Preview(v));
  } else if (key == "lora_rank") {
    if (auto n = ctx->Int(v, key, 1, 65536)) ctx->Read(key, "train.lora.rank", *n), *rank = *n;
  } else if (key == "lora_alpha") {
    if (auto a = ctx->Number(v, key, 0, 1e6)) ctx->Read(key, "train.lora.alpha", *a);
  } else if (key == "lora_dropout") {
    if (auto d = ctx->Number(v, key, 0, 0.99)) ctx->Read(key, "train.lora.dropout", *d);
  } else if (key == "lora_target") {
    if (auto list = ctx->StringList(v, key)) {
      if (list->size() == 1 && (*list)[0] == "all") ctx->Read(key, "train.lora.targets", "all-linear");
      else ctx->Read(key, "train.lora.targets", *list);
    }
  } else if (key == "additional_target") {
    if (v.is_null()) ctx->Ignored(key, "null");
    else if (auto list = ctx->StringList(v, key)) ctx->Read(key, "train.lora.modules_to_save", *list);
  } else if (key == "use_dora") {
    if (auto b = ctx->Bool(v, key)) ctx->Read(key, "train.lora.use_dora", *b);
  } else if (key == "freeze_trainable_layers") {
    if (auto n = ctx->Int(v, key, -4096, 4096)) {
      if (*n >= 0) ctx->Read(key, "train.freeze.trainable_layers", *n);
      else ctx->Unsupported(key, "negative: the first layers train; the estimate trains the last N (same count, same memory)"), ctx->Set("train.freeze.trainable_layers", -*n);
    }
  } else if (key == "freeze_extra_modules") {
    if (auto list = ctx->StringList(v, key)) {
      for (const std::string& m : *list) {
        if (m == "embed_tokens" || m == "wte") ctx->Read(key, "train.freeze.train_embeddings", true);
        else if (m == "lm_head") ctx->Read(key, "train.freeze.train_lm_head", true);
        else ctx->Unsupported(key, "module " + io::Preview(io::Json(m)) + " is not modeled (embed_tokens and lm_head are)");
      }
    }
  } else if (key == "freeze_vision_tower") {
    // hparams/finetuning_args.py (default true): the vision tower's parameters stay frozen.
    if (auto b = ctx->Bool(v, key)) ctx->Read(key, "train.freeze_vision_tower", *b);
  } else if (key == "freeze_multi_modal_projector") {
    if (auto b = ctx->Bool(v, key)) ctx->Read(key, "train.freeze_multi_modal_projector", *b);
  } else if (key == "image_max_pixels") {
    // hparams/model_args.py (default 768 x 768): mm_plugin.py _preprocess_image scales larger images down.
    if (auto n = ctx->Int(v, key, 0, int64_t{1} << 32)) ctx->Read(key, "train.image_max_pixels", *n);
  } else if (key == "video_max_pixels") {
    // hparams/model_args.py (default 256 x 256): mm_plugin.py _regularize_videos resizes each frame
    // under it like an image; counted as the per-frame cap of docs/models.md "Video inputs" (the
    // grid rounding may differ by a row of patches).
    if (auto n = ctx->Int(v, key, 0, int64_t{1} << 32)) ctx->Read(key, "train.video_max_pixels", *n);
  } else if (key == "quantization_bit") {
    if (v.is_null()) return ctx->Ignored(key, "null: no quantization");
    if (auto n = ctx->Int(v, key, 2, 8)) {
      if (*n == 4 || *n == 8 || *n == 2) ctx->Read(key, "train.qlora_bits", *n);
      else ctx->Error(key, "expected 2, 4 or 8 bits");
    }
  } else if (key == "quantization_method") {
    const auto s = ctx->String(v, key);
    if (!s) return;
    if (*s == "bnb" || *s == "bitsandbytes") ctx->Read(key, "train.qlora_backend", "bitsandbytes");
    else if (*s == "gptq") ctx->Read(key, "train.qlora_backend", "gptq");
    else ctx->Unsupported(key, "quantization method " + io::Preview(v) + " is not modeled (bnb and gptq are)");
  } else if (key == "quantization_type") {
    if (v == "nf4") ctx->Ignored(key, "nf4: the default");
    else ctx->Unsupported(key, "estimated as NF4 (same size)");
  } else if (key == "double_quantization") {
    if (auto b = ctx->Bool(v, key)) ctx->Read(key, "train.qlora_double_quant", *b);
  } else if (key == "flash_attn") {
    const auto s = ctx->String(v, key);
    if (!s) return;
    // model_args.py AttentionFunction: auto (SDPA where torch has it), disabled (eager), sdpa, fa2.
    if (*s == "auto" || *s == "sdpa") ctx->Read(key, "train.attention", "sdpa");
    else if (*s == "fa2" || *s == "fa3") ctx->Read(key, "train.attention", "flash");
    else if (*s == "disabled" || *s == "eager") ctx->Read(key, "train.attention", "eager");
    else ctx->Error(key, "expected auto, disabled, sdpa or fa2, got " + io::Preview(v));
  } else if (key == "enable_liger_kernel") {
    // model/model_utils/liger_kernel.py apply_liger_kernel: apply_liger_kernel_to_<model> with its
    // defaults (rope, rms_norm, swiglu on) and fused_linear_cross_entropy.
    if (auto b = ctx->Bool(v, key)) {
      ctx->Read(key, "train.loss", *b ? "fused_linear" : "standard");
      if (*b) ctx->Set("train.kernels", "liger");
    }
  } else if (key == "disable_gradient_checkpointing") {
    if (auto b = ctx->Bool(v, key)) ctx->Read(key, "train.gradient_checkpointing", !*b);
  } else if (key == "gradient_checkpointing") {
    ctx->Ignored(key, "LLaMA-Factory checkpoints unless disable_gradient_checkpointing is true");
  } else if (key == "cutoff_len") {
    if (auto n = ctx->Int(v, key, 1, int64_t{1} << 24)) ctx->Read(key, "train.seq_len", *n);
  } else if (key == "pure_bf16") {
    if (auto b = ctx->Bool(v, key)) *pure_bf16 = *b, ctx->AddNote("read", key, "-> train.precision");
  } else if (key == "packing") {
    // data/processor: packing concatenates samples to cutoff_len; without it each batch is padded
    // to its longest sample (docs/frameworks.md, "Batches as they are").
    if (auto b = ctx->Bool(v, key)) ctx->Read(key, "train.packing", *b);
  } else if (key == "use_unsloth_gc") {
    // model/model_utils/checkpointing.py get_unsloth_gradient_checkpointing_func: each checkpointed
    // layer input goes to CPU in forward and comes back for its backward (docs/frameworks.md).
    if (auto b = ctx->Bool(v, key)) ctx->Read(key, "train.activation_offload", *b);
  } else if (key == "use_unsloth") {
    // model/model_utils/unsloth.py: FastLanguageModel with use_gradient_checkpointing="unsloth";
    // unsloth's models compute the loss with its fast cross-entropy (docs/frameworks.md).
    if (auto b = ctx->Bool(v, key)) {
      ctx->Read(key, "train.activation_offload", *b);
      if (*b) ctx->Set("train.loss", "unsloth");
      // FastLanguageModel's layers (fast RMSNorm, RoPE) and get_peft_model's LoRA Functions.
      if (*b) ctx->Set("train.kernels", "unsloth");
    }
  } else if (OneOf(key, {"use_galore", "use_apollo", "use_badam", "use_adam_mini", "use_llama_pro",
                         "shift_attn", "mixture_of_depths", "rope_scaling", "resize_vocab", "train_from_scratch", "adapter_name_or_path",
                         "freeze_vision_tower", "freeze_multi_modal_projector", "train_mm_proj_only", "image_max_pixels",
                         "use_muon", "sequence_parallel_size", "enable_fsdp_cpu_ram_efficient_loading"})) {
    if (v.is_boolean() && !v.get<bool>()) ctx->Ignored(key, "off");
    else if (v.is_null()) ctx->Ignored(key, "null");
    else ctx->Unsupported(key, "changes memory in a way the estimate does not model");
  } else if (ReadTrainingArgument(key, v, ctx, flags)) {
  } else if (IsNoEffect(key)) {
    ctx->Ignored(key);
  } else {
    ctx->Unsupported(key, "not a LLaMA-Factory argument the estimate reads (src/llamafactory/hparams)");
  }
}

}  // namespace

void ImportLlamaFactory(std::string_view text, ImportContext* ctx) {
  std::vector<io::Json> docs;
  if (!ParseYamlDocuments(text, &docs, &ctx->errors)) return;
  if (docs.empty() || !docs[0].is_object()) {
    ctx->Error("", "a LLaMA-Factory config is a YAML map of arguments", "invalid_config");
    return;
  }
  ctx->Set("mode", "train");
  TrainerFlags flags;
  bool pure_bf16 = false;
  int64_t rank = 8;
  for (auto it = docs[0].begin(); it != docs[0].end(); ++it) {
    if (it.value().is_null()) ctx->Ignored(it.key(), "empty: the default");  // YAML "key:" with nothing after it
    else ReadKey(it.key(), it.value(), ctx, &flags, &pure_bf16, &rank);
  }
  if (docs[0].contains("deepspeed") && docs[0]["deepspeed"].is_string()) {
    if (docs.size() > 1 && docs[1].is_object()) {
      ctx->notes.push_back(Note{"read", "deepspeed", "the ds_config given as the second document"});
      ReadDeepSpeed(docs[1], "deepspeed", ctx, &flags.deepspeed);
    }
  }
  if (!ctx->errors.empty()) return;
  // finetuning_args.py defaults: finetuning_type lora, lora_rank 8, lora_alpha rank*2, lora_target all.
  ctx->Default("train.method", "lora", "LLaMA-Factory's default finetuning_type");
  const bool quantized = ctx->IsSet("train.qlora_bits");
  if (quantized && *ctx->Get("train.method") == "lora") ctx->Set("train.method", "qlora");
  ctx->Default("train.lora.rank", 8, "LLaMA-Factory's default lora_rank");
  ctx->Default("train.lora.alpha", static_cast<double>(rank * 2), "LLaMA-Factory's default lora_alpha (rank x 2)");
  ctx->Default("train.lora.targets", "all-linear", "LLaMA-Factory's default lora_target: all");
  ctx->Default("train.freeze.trainable_layers", 2, "LLaMA-Factory's default freeze_trainable_layers");
  ctx->Default("train.seq_len", 2048, "LLaMA-Factory's default cutoff_len");
  ctx->Default("train.micro_batch_size", 8, "TrainingArguments' default per_device_train_batch_size");
  ctx->Default("train.grad_accum_steps", 1, "TrainingArguments' default gradient_accumulation_steps");
  ctx->Default("train.gradient_checkpointing", true, "LLaMA-Factory checkpoints by default (disable_gradient_checkpointing: false)");
  ctx->Default("train.attention", "sdpa", "LLaMA-Factory's default flash_attn: auto (SDPA)");
  ctx->Default("train.optimizer", "adamw", "TrainingArguments' default optim: adamw_torch");
  ApplyDeepSpeedBatch(flags, ctx);
  const std::string method = ctx->Get("train.method")->get<std::string>();
  const bool bf16 = flags.bf16.value_or(false), fp16 = flags.fp16.value_or(false);
  if (flags.deepspeed.present) {
    DeepSpeedPrecision(flags.deepspeed.bf16.value_or(bf16), flags.deepspeed.fp16.value_or(fp16), "bf16 / deepspeed", ctx);
  } else if (pure_bf16) {
    ctx->Set("train.precision", "bf16");
    ctx->Set("train.autocast", bf16);
  } else {
    const bool fp32_trainable = (method == "full") && !flags.fsdp;
    std::string precision;
    if (bf16 || fp16) precision = fp32_trainable ? (bf16 ? "amp_bf16" : "amp_fp16") : (bf16 ? "bf16" : "fp16");
    else precision = fp32_trainable ? "fp32" : "bf16";
    ctx->Set("train.precision", precision);
    ctx->Set("train.autocast", (bf16 || fp16) && !fp32_trainable);
    if (method == "freeze") ctx->AddNote("read", "finetuning_type", "freeze: LLaMA-Factory keeps the trainable layers in fp32; estimated with the model's 16-bit dtype throughout");
    if (!bf16 && !fp16) ctx->AddNote("default", "train.precision", "neither bf16 nor fp16: LLaMA-Factory loads the model in bf16 where the GPU has it");
  }
  if (flags.deepspeed.present || flags.fsdp) ctx->AddNote("default", "parallel.gpus", "the GPU count comes from the launcher (FORCE_TORCHRUN=1, NPROC_PER_NODE): set parallel.gpus");
}

ExportText ExportLlamaFactory(const Scenario& s) {
  ExportText out;
  const TrainConfig& t = s.train;
  OrderedJson y = OrderedJson::object();
  y["model_name_or_path"] = s.model_id.empty() ? "./model" : s.model_id;
  if (s.model_id.empty()) out.notes.push_back(Note{"model", "model_name_or_path", "the model is an inline config: replace ./model with its checkpoint directory"});
  y["trust_remote_code"] = true;
  y["stage"] = "sft";
  y["do_train"] = true;
  const bool lora = t.method == TrainMethod::kLora || t.method == TrainMethod::kQlora;
  y["finetuning_type"] = lora ? "lora" : io::NameOf(t.method, io::kMethodNames);
  if (lora) {
    y["lora_rank"] = t.lora.rank;
    y["lora_alpha"] = t.lora.alpha;
    y["lora_dropout"] = t.lora.dropout;
    if (t.lora.all_linear) y["lora_target"] = "all";
    else if (!t.lora.targets.empty()) {
      std::string joined;
      for (const auto& m : t.lora.targets) joined += (joined.empty() ? "" : ",") + m;
      y["lora_target"] = joined;
    }
    if (!t.lora.modules_to_save.empty()) {
      std::string joined;
      for (const auto& m : t.lora.modules_to_save) joined += (joined.empty() ? "" : ",") + m;
      y["additional_target"] = joined;
    }
    if (t.lora.use_dora) y["use_dora"] = true;
  }
  if (t.method == TrainMethod::kQlora) {
    y["quantization_bit"] = t.qlora_bits;
    y["quantization_method"] = t.qlora_backend == QloraBackend::kGptq ? "gptq" : "bnb";
    y["double_quantization"] = t.qlora_double_quant;
  }
  if (t.method == TrainMethod::kFreeze) {
    y["freeze_trainable_layers"] = t.freeze.trainable_layers;
    std::string extra = std::string(t.freeze.train_embeddings ? "embed_tokens" : "") + (t.freeze.train_embeddings && t.freeze.train_lm_head ? "," : "") +
                        (t.freeze.train_lm_head ? "lm_head" : "");
    if (!extra.empty()) y["freeze_extra_modules"] = extra;
  }
  y["flash_attn"] = t.attention == AttentionImpl::kFlash ? "fa2" : t.attention == AttentionImpl::kEager ? "disabled" : "sdpa";
  if (t.loss == LossImpl::kFusedLinear) y["enable_liger_kernel"] = true;
  if (t.gradient_checkpointing == Checkpointing::kNone) y["disable_gradient_checkpointing"] = true;
  if (UsesDeepSpeed(s)) y["deepspeed"] = DeepSpeedConfigFor(s, false);
  y["dataset"] = "identity,alpaca_en_demo";
  y["template"] = "llama3";
  y["cutoff_len"] = t.seq_len;
  y["output_dir"] = "saves/vramplan-job";
  y["logging_steps"] = 10;
  y["save_steps"] = 500;
  y["per_device_train_batch_size"] = t.micro_batch_size;
  y["gradient_accumulation_steps"] = t.grad_accum_steps;
  y["learning_rate"] = lora ? 1.0e-4 : 1.0e-5;
  y["num_train_epochs"] = 3.0;
  y["lr_scheduler_type"] = "cosine";
  y["warmup_ratio"] = 0.1;
  const std::string optim = HfOptimName(s);
  if (!optim.empty()) y["optim"] = optim;
  switch (t.precision) {
    case Precision::kBf16: (t.autocast ? y["bf16"] : y["pure_bf16"]) = true; break;
    case Precision::kAmpBf16: case Precision::kMixedBf16: y["bf16"] = true; break;
    case Precision::kFp16: case Precision::kAmpFp16: case Precision::kMixedFp16: y["fp16"] = true; break;
    case Precision::kFp32: break;
  }
  if (s.framework.torch_compile) y["torch_compile"] = true;
  out.text = ToYaml(y);
  return out;
}

}  // namespace vramplan::launch
