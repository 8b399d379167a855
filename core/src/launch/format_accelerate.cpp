// accelerate's launch config (`accelerate launch --config_file job.yaml train.py`), as
// `accelerate config` writes it: src/accelerate/commands/config/config_args.py ClusterConfig and
// cluster.py (keys), FSDP settings as FullyShardedDataParallelPlugin reads them
// (src/accelerate/utils/dataclasses.py; accelerate v1.1). It holds the processes, the distributed
// type (DDP, FSDP, DeepSpeed), FSDP's sharding and offload and the mixed precision; the model, batch
// and sequence are the script's (noted as defaults, kept in the vramplan comment by the export).
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

void ReadDeepSpeedPlugin(const io::Json& v, ImportContext* ctx) {
  if (!v.is_object()) return ctx->Error("deepspeed_config", "expected a map");
  for (auto it = v.begin(); it != v.end(); ++it) {
    const std::string key = "deepspeed_config." + it.key();
    const io::Json& x = it.value();
    if (it.key() == "zero_stage") {
      if (auto n = ctx->Int(x, key, 0, 3)) ctx->Read(key, "parallel.zero", *n);
    } else if (it.key() == "offload_optimizer_device" || it.key() == "offload_param_device") {
      const auto d = ctx->String(x, key);
      if (!d) continue;
      if (*d == "none" || *d == "cpu" || *d == "nvme") ctx->Read(key, it.key() == "offload_optimizer_device" ? "parallel.offload_optimizer" : "parallel.offload_params", *d);
      else ctx->Error(key, "expected none, cpu or nvme");
    } else if (it.key() == "gradient_accumulation_steps") {
      if (auto n = ctx->Int(x, key, 1, 1 << 20)) ctx->Read(key, "train.grad_accum_steps", *n);
    } else if (it.key() == "deepspeed_config_file") {
      ctx->Unsupported(key, "a ds_config file is not here: its keys are not read");
    } else if (OneOf(it.key(), {"gradient_clipping", "zero3_init_flag", "zero3_save_16bit_model", "deepspeed_multinode_launcher", "deepspeed_hostfile"})) {
      ctx->Ignored(key);
    } else {
      ctx->Unsupported(key, "not an accelerate DeepSpeed setting the estimate reads");
    }
  }
}

}  // namespace

void ImportAccelerate(std::string_view text, ImportContext* ctx) {
  std::vector<io::Json> docs;
  if (!ParseYamlDocuments(text, &docs, &ctx->errors)) return;
  if (docs.empty() || !docs[0].is_object()) return ctx->Error("", "an accelerate config is a YAML map", "invalid_config");
  const io::Json& d = docs[0];
  ctx->Set("mode", "train");
  std::string type = "NO", precision = "no";
  int64_t processes = 1, machines = 1;
  for (auto it = d.begin(); it != d.end(); ++it) {
    const std::string& key = it.key();
    const io::Json& v = it.value();
    if (v.is_null()) {
      ctx->Ignored(key, "empty: the default");
    } else if (key == "distributed_type") {
      if (auto s = ctx->String(v, key)) type = *s, ctx->AddNote("read", key, "-> parallel (" + io::Printable(*s, 20) + ")");
    } else if (key == "num_processes") {
      if (auto n = ctx->Int(v, key, 1, int64_t{1} << 20)) processes = *n, ctx->Read(key, "parallel.gpus", *n);
    } else if (key == "num_machines") {
      if (auto n = ctx->Int(v, key, 1, int64_t{1} << 20)) machines = *n, ctx->AddNote("read", key, "-> parallel.gpus_per_node");
    } else if (key == "mixed_precision") {
      if (auto s = ctx->String(v, key)) precision = *s, ctx->AddNote("read", key, "-> train.precision");
    } else if (key == "fsdp_config") {
      if (!v.is_object()) {
        ctx->Error(key, "expected a map");
        continue;
      }
      for (auto f = v.begin(); f != v.end(); ++f) {
        if (!ReadFsdpKey(key + "." + f.key(), f.value(), ctx)) ctx->Unsupported(key + "." + f.key(), "not an FSDP plugin setting");
      }
    } else if (key == "deepspeed_config") {
      ReadDeepSpeedPlugin(v, ctx);
    } else if (key == "use_cpu") {
      if (auto b = ctx->Bool(v, key)) {
        if (*b) ctx->Read(key, "framework.device", "cpu");
        else ctx->Ignored(key, "off");
      }
    } else if (key == "megatron_lm_config" || key == "parallelism_config" || key == "fp8_config" || key == "dynamo_config") {
      ctx->Unsupported(key, "not modeled from an accelerate config");
    } else if (OneOf(key, {"compute_environment", "debug", "downcast_bf16", "machine_rank", "main_process_ip", "main_process_port",
                           "main_training_function", "rdzv_backend", "same_network", "tpu_env", "tpu_use_cluster", "tpu_use_sudo",
                           "gpu_ids", "enable_cpu_affinity", "ipex_config", "mpirun_config", "commands", "command_file", "tpu_name",
                           "tpu_zone", "dynamo_backend"})) {
      ctx->Ignored(key);
    } else {
      ctx->Unsupported(key, "not an accelerate config key (src/accelerate/commands/config/config_args.py)");
    }
  }
  if (!ctx->errors.empty()) return;
  if (machines > 1 && processes % machines == 0) ctx->Set("parallel.gpus_per_node", processes / machines);
  const bool deepspeed = type == "DEEPSPEED";
  if (type == "FSDP") ctx->Set("parallel.fsdp", true);
  else if (deepspeed) ctx->Default("parallel.zero", 0, "no zero_stage");
  else if (type != "NO" && type != "MULTI_GPU") ctx->Unsupported("distributed_type", io::Quote(type, 30) + " is not modeled (NO, MULTI_GPU, FSDP, DEEPSPEED are)");
  if (precision != "no" && precision != "bf16" && precision != "fp16") ctx->Unsupported("mixed_precision", io::Quote(precision, 20) + ": estimated without mixed precision");
  if (deepspeed) {
    DeepSpeedPrecision(precision == "bf16", precision == "fp16", "mixed_precision", ctx);
  } else {
    // accelerate autocasts; the script's model is assumed loaded in fp32 (from_pretrained's default),
    // as FSDP's MixedPrecision keeps fp32 sharded parameters.
    ctx->Set("train.precision", precision == "bf16" ? "amp_bf16" : precision == "fp16" ? "amp_fp16" : "fp32");
    ctx->Set("train.autocast", false);
  }
  ctx->Default("train.method", "full", "an accelerate config does not say: full fine-tuning assumed");
  ctx->Default("train.gradient_checkpointing", false, "the script decides: off assumed");
  NoModel(ctx, "an accelerate config");
}

ExportText ExportAccelerate(const Scenario& s) {
  ExportText out;
  const ParallelConfig& p = s.parallel;
  OrderedJson y = OrderedJson::object();
  y["compute_environment"] = "LOCAL_MACHINE";
  y["debug"] = false;
  const bool deepspeed = UsesDeepSpeed(s);
  y["distributed_type"] = deepspeed ? "DEEPSPEED" : p.fsdp ? "FSDP" : p.gpus > 1 ? "MULTI_GPU" : "NO";
  y["downcast_bf16"] = "no";
  if (deepspeed) {
    OrderedJson d = OrderedJson::object();
    d["gradient_accumulation_steps"] = s.train.grad_accum_steps;
    d["offload_optimizer_device"] = io::NameOf(p.offload_optimizer, io::kOffloadNames);
    d["offload_param_device"] = io::NameOf(p.offload_params, io::kOffloadNames);
    d["zero3_init_flag"] = p.zero == 3;
    d["zero_stage"] = p.zero;
    y["deepspeed_config"] = d;
  }
  if (p.fsdp) {
    OrderedJson f = OrderedJson::object();
    f["fsdp_activation_checkpointing"] = s.train.gradient_checkpointing != Checkpointing::kNone;
    f["fsdp_auto_wrap_policy"] = "TRANSFORMER_BASED_WRAP";
    f["fsdp_backward_prefetch"] = "BACKWARD_PRE";
    f["fsdp_cpu_ram_efficient_loading"] = true;
    f["fsdp_forward_prefetch"] = false;
    f["fsdp_offload_params"] = p.offload_params != Offload::kNone;
    f["fsdp_sharding_strategy"] = FsdpStrategyName(s);
    f["fsdp_state_dict_type"] = "SHARDED_STATE_DICT";
    f["fsdp_sync_module_states"] = true;
    f["fsdp_use_orig_params"] = true;
    y["fsdp_config"] = f;
  }
  y["machine_rank"] = 0;
  y["main_training_function"] = "main";
  const Precision pr = s.train.precision;
  y["mixed_precision"] = (pr == Precision::kAmpBf16 || pr == Precision::kMixedBf16) ? "bf16" : (pr == Precision::kAmpFp16 || pr == Precision::kMixedFp16) ? "fp16" : "no";
  const int64_t per_node = p.gpus_per_node > 0 ? p.gpus_per_node : std::min<int64_t>(p.gpus, 8);
  y["num_machines"] = per_node > 0 && p.gpus % per_node == 0 ? p.gpus / per_node : 1;
  y["num_processes"] = p.gpus;
  y["rdzv_backend"] = "static";
  y["same_network"] = true;
  y["tpu_env"] = OrderedJson::array();
  y["tpu_use_cluster"] = false;
  y["tpu_use_sudo"] = false;
  y["use_cpu"] = s.framework.device == Device::kCpu;
  out.text = ToYaml(y);
  return out;
}

}  // namespace vramplan::launch
