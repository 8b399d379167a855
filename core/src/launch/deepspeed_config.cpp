#include "io/message_text.h"
#include "launch/deepspeed_config.h"

#include "io/enum_names.h"

namespace vramplan::launch {
namespace {

void ReadOffload(const io::Json& v, const std::string& key, const char* path, ImportContext* ctx) {
  if (!v.is_object()) {
    ctx->Error(key, "expected an object such as {\"device\": \"cpu\"}");
    return;
  }
  for (auto it = v.begin(); it != v.end(); ++it) {
    const std::string k = key + "." + it.key();
    if (it.key() == "device") {
      const auto d = ctx->String(it.value(), k);
      if (!d) continue;
      if (*d == "cpu" || *d == "nvme" || *d == "none") ctx->Read(k, path, *d);
      else ctx->Error(k, "expected \"cpu\", \"nvme\" or \"none\"");
    } else if (it.key() == "pin_memory" || it.key() == "nvme_path" || it.key() == "buffer_count" || it.key() == "buffer_size" ||
               it.key() == "max_in_cpu" || it.key() == "pipeline_read" || it.key() == "pipeline_write" || it.key() == "fast_init" || it.key() == "ratio") {
      ctx->Ignored(k, "host-side or NVMe buffer setting: no GPU memory effect modeled");
    } else {
      ctx->Unsupported(k, "not a DeepSpeed offload key (deepspeed/runtime/zero/offload_config.py)");
    }
  }
}

void ReadZero(const io::Json& z, const std::string& prefix, ImportContext* ctx) {
  if (!z.is_object()) {
    ctx->Error(prefix, "expected an object");
    return;
  }
  for (auto it = z.begin(); it != z.end(); ++it) {
    const std::string k = prefix + "." + it.key();
    const io::Json& v = it.value();
    const std::string& name = it.key();
    if (name == "stage") {
      if (auto stage = ctx->Int(v, k, 0, 3)) ctx->Read(k, "parallel.zero", *stage);
    } else if (name == "offload_optimizer") {
      ReadOffload(v, k, "parallel.offload_optimizer", ctx);
    } else if (name == "offload_param") {
      ReadOffload(v, k, "parallel.offload_params", ctx);
    } else if (name == "overlap_comm" || name == "contiguous_gradients") {
      if (IsAuto(v)) ctx->Ignored(k, "\"auto\": DeepSpeed's default");
      else if (auto b = ctx->Bool(v, k)) ctx->Read(k, "parallel." + name, *b);
    } else if (name == "reduce_bucket_size") {
      if (IsAuto(v)) ctx->Ignored(k, "\"auto\": HF fills hidden_size^2; the scenario's default is DeepSpeed's 5e8");
      else if (auto n = ctx->Int(v, k, 0, int64_t{1} << 40)) ctx->Read(k, "parallel.reduce_bucket_size", *n);
    } else if (name == "cpu_offload") {  // the pre-0.5 spelling
      if (auto b = ctx->Bool(v, k)) ctx->Read(k, "parallel.offload_optimizer", *b ? "cpu" : "none");
    } else if (name == "stage3_prefetch_bucket_size" || name == "stage3_param_persistence_threshold" || name == "stage3_max_live_parameters" ||
               name == "stage3_max_reuse_distance") {
      // HF fills "auto" for the first two (transformers integrations/deepspeed.py
      // trainer_config_finalize: 0.9 x hidden_size^2 and 10 x hidden_size).
      if (IsAuto(v)) ctx->Ignored(k, "\"auto\": HF fills it from hidden_size; the scenario's default is DeepSpeed's");
      else if (auto n = ctx->Int(v, k, 0, int64_t{1} << 40)) ctx->Read(k, "parallel." + name, *n);
    } else if (name == "allgather_bucket_size" || name == "sub_group_size" ||
               name == "zero_hpz_partition_size" || name == "zero_quantized_weights" || name == "zero_quantized_gradients" ||
               name == "mics_shard_size") {
      ctx->Unsupported(k, "changes ZeRO's gather/bucket buffers or sharding, which the estimate models with DeepSpeed's defaults");
    } else if (name == "allgather_partitions" || name == "reduce_scatter" || name == "round_robin_gradients" ||
               name == "stage3_gather_16bit_weights_on_model_save" || name == "gather_16bit_weights_on_model_save" ||
               name == "load_from_fp32_weights" || name == "elastic_checkpoint" || name == "ignore_unused_parameters" ||
               name == "use_multi_rank_bucket_allreduce" || name == "memory_efficient_linear") {
      ctx->Ignored(k, "communication or checkpoint setting");
    } else {
      ctx->Unsupported(k, "not a key of DeepSpeedZeroConfig (deepspeed/runtime/zero/config.py)");
    }
  }
}

}  // namespace

void ReadDeepSpeed(const io::Json& ds, const std::string& prefix, ImportContext* ctx, DeepSpeedFlags* flags) {
  flags->present = true;
  if (!ds.is_object()) {
    ctx->Error(prefix.empty() ? "deepspeed" : prefix, "expected a DeepSpeed config object");
    return;
  }
  const std::string p = prefix.empty() ? "" : prefix + ".";
  for (auto it = ds.begin(); it != ds.end(); ++it) {
    const std::string k = p + it.key();
    const std::string& name = it.key();
    const io::Json& v = it.value();
    if (name == "zero_optimization") {
      ReadZero(v, k, ctx);
    } else if (name == "bf16" || name == "fp16" || name == "bfloat16") {
      const io::Json* enabled = v.is_object() && v.contains("enabled") ? &v["enabled"] : nullptr;
      std::optional<bool>* slot = name == "fp16" ? &flags->fp16 : &flags->bf16;
      if (enabled == nullptr) ctx->Ignored(k, "no \"enabled\": off");
      else if (IsAuto(*enabled)) ctx->AddNote("read", k + ".enabled", "\"auto\": the trainer's " + std::string(name == "fp16" ? "fp16" : "bf16") + " flag decides");
      else if (auto b = ctx->Bool(*enabled, k + ".enabled")) {
        *slot = *b;
        ctx->AddNote("read", k + ".enabled", *b ? "DeepSpeed mixed precision" : "off");
      }
      if (v.is_object()) {
        for (auto sub = v.begin(); sub != v.end(); ++sub) {
          if (sub.key() != "enabled") ctx->Ignored(k + "." + sub.key(), "loss scaling: no memory effect");
        }
      }
    } else if (name == "train_micro_batch_size_per_gpu" || name == "gradient_accumulation_steps" || name == "train_batch_size") {
      if (IsAuto(v)) {
        ctx->AddNote("read", k, "\"auto\": the trainer's value");
        continue;
      }
      const auto n = ctx->Int(v, k, 1, int64_t{1} << 40);
      if (!n) continue;
      if (name == "train_micro_batch_size_per_gpu") flags->micro_batch = *n;
      else if (name == "gradient_accumulation_steps") flags->grad_accum = *n;
      else flags->train_batch = *n;
    } else if (name == "optimizer") {
      const io::Json* type = v.is_object() && v.contains("type") ? &v["type"] : nullptr;
      const auto t = type ? ctx->String(*type, k + ".type") : std::nullopt;
      if (!t) continue;
      std::string lower;
      for (char c : *t) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (lower == "adam" || lower == "adamw") {
        // DeepSpeed's FusedAdam (deepspeed/ops/adam/fused_adam.py): one multi-tensor kernel, like torch's fused AdamW.
        ctx->Read(k + ".type", "train.optimizer", "adamw");
        ctx->Set("train.optimizer_impl", "fused");
      } else if (lower == "lion") {
        ctx->Read(k + ".type", "train.optimizer", "lion");
      } else {
        ctx->Unsupported(k + ".type", "DeepSpeed optimizer " + io::Preview(*type) + " is not modeled; the scenario's optimizer applies");
      }
    } else if (name == "activation_checkpointing") {
      if (v.is_object() && v.contains("cpu_checkpointing")) {
        if (auto b = ctx->Bool(v["cpu_checkpointing"], k + ".cpu_checkpointing")) ctx->Read(k + ".cpu_checkpointing", "train.activation_offload", *b);
      }
      ctx->AddNote("ignored", k, "partition_activations and the rest apply to Megatron's checkpointing API only");
    } else if (name == "gradient_clipping" || name == "steps_per_print" || name == "wall_clock_breakdown" || name == "scheduler" ||
               name == "prescale_gradients" || name == "gradient_predivide_factor" || name == "tensorboard" || name == "wandb" ||
               name == "csv_monitor" || name == "comet" || name == "flops_profiler" || name == "comms_logger" || name == "zero_allow_untested_optimizer" ||
               name == "zero_force_ds_cpu_optimizer" || name == "dump_state" || name == "communication_data_type" || name == "seq_parallel_communication_data_type" ||
               name == "checkpoint" || name == "elasticity" || name == "amp" || name == "data_types") {
      ctx->Ignored(k);
    } else {
      ctx->Unsupported(k, "not read (deepspeed/runtime/config.py)");
    }
  }
}

void DeepSpeedPrecision(bool bf16, bool fp16, std::string_view key, ImportContext* ctx) {
  const char* precision = bf16 ? "mixed_bf16" : fp16 ? "mixed_fp16" : "fp32";
  ctx->AddNote("read", std::string(key), std::string("-> train.precision = \"") + precision + "\" (DeepSpeed keeps 16-bit weights and fp32 master weights)");
  ctx->Set("train.precision", precision);
  ctx->Set("train.autocast", false);
}

bool UsesDeepSpeed(const Scenario& s) {
  return s.parallel.zero > 0 || s.train.precision == Precision::kMixedBf16 || s.train.precision == Precision::kMixedFp16;
}

OrderedJson DeepSpeedConfigFor(const Scenario& s, bool standalone) {
  const TrainConfig& t = s.train;
  const ParallelConfig& p = s.parallel;
  OrderedJson ds = OrderedJson::object();
  if (standalone) {
    const int64_t dp = std::max<int64_t>(1, p.gpus / std::max<int64_t>(1, p.tp * p.pp * p.cp));
    ds["train_batch_size"] = t.micro_batch_size * t.grad_accum_steps * dp;
    ds["train_micro_batch_size_per_gpu"] = t.micro_batch_size;
    ds["gradient_accumulation_steps"] = t.grad_accum_steps;
  } else {
    ds["train_batch_size"] = "auto";
    ds["train_micro_batch_size_per_gpu"] = "auto";
    ds["gradient_accumulation_steps"] = "auto";
  }
  if (standalone) {
    ds["bf16"] = {{"enabled", t.precision == Precision::kMixedBf16}};
    ds["fp16"] = {{"enabled", t.precision == Precision::kMixedFp16}};
  } else {
    // Inside a trainer config HF fills "auto" from its bf16 / fp16 flags and rejects a value that
    // differs from them (transformers integrations/deepspeed.py HfTrainerDeepSpeedConfig
    // trainer_config_process: fill_match("bf16.enabled", args.bf16 ...), mismatches raised in
    // trainer_config_finalize): "auto" keeps the two in step.
    ds["bf16"] = {{"enabled", "auto"}};
    ds["fp16"] = {{"enabled", "auto"}};
  }
  if (standalone && t.optimizer == Optimizer::kAdamW && t.optimizer_impl == OptimizerImpl::kFused) {
    ds["optimizer"] = {{"type", "AdamW"}, {"params", {{"lr", 1e-5}, {"weight_decay", 0.0}}}};
  } else if (standalone && t.optimizer == Optimizer::kLion) {
    ds["optimizer"] = {{"type", "Lion"}, {"params", {{"lr", 1e-5}}}};
  }
  OrderedJson zero = OrderedJson::object();
  zero["stage"] = p.zero;
  if (p.offload_optimizer != Offload::kNone) zero["offload_optimizer"] = {{"device", io::NameOf(p.offload_optimizer, io::kOffloadNames)}, {"pin_memory", true}};
  if (p.offload_params != Offload::kNone) zero["offload_param"] = {{"device", io::NameOf(p.offload_params, io::kOffloadNames)}, {"pin_memory", true}};
  if (p.overlap_comm) zero["overlap_comm"] = *p.overlap_comm;
  if (p.contiguous_gradients) zero["contiguous_gradients"] = *p.contiguous_gradients;
  if (p.reduce_bucket_size) zero["reduce_bucket_size"] = *p.reduce_bucket_size;
  if (p.stage3_prefetch_bucket_size) zero["stage3_prefetch_bucket_size"] = *p.stage3_prefetch_bucket_size;
  if (p.stage3_param_persistence_threshold) zero["stage3_param_persistence_threshold"] = *p.stage3_param_persistence_threshold;
  if (p.stage3_max_live_parameters) zero["stage3_max_live_parameters"] = *p.stage3_max_live_parameters;
  if (p.stage3_max_reuse_distance) zero["stage3_max_reuse_distance"] = *p.stage3_max_reuse_distance;
  ds["zero_optimization"] = zero;
  if (t.activation_offload) ds["activation_checkpointing"] = {{"cpu_checkpointing", true}};
  ds["gradient_clipping"] = standalone ? OrderedJson(1.0) : OrderedJson("auto");  // HF fills it from max_grad_norm
  return ds;
}

}  // namespace vramplan::launch
