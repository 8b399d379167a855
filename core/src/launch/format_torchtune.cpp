// torchtune recipe configs (`tune run lora_finetune_single_device --config job.yaml key=value ...`):
// a YAML config, `key=value` overrides (on their own lines or after `tune run`; `~key` removes a
// key), or a `tune run` line naming a built-in config, whose model and method are read from its
// name. Keys: the recipes (recipes/lora_finetune_single_device.py, full_finetune_distributed.py,
// ...) and their configs (recipes/configs/llama3_1/8B_lora_single_device.yaml, ...), model
// builders in torchtune/models/<family>/_model_builders.py (torchtune v0.6). torchtune keeps
// weights, gradients, optimizer states and LoRA adapters in `dtype` (no autocast), QLoRA bases as
// torchao NF4Tensor.
#include <algorithm>
#include <array>

#include "io/message_text.h"
#include "launch/command_args.h"
#include "launch/formats.h"
#include "launch/model_match.h"
#include "launch/shell_words.h"
#include "launch/text_documents.h"
#include "launch/trainer_keys.h"
#include "launch/yaml_subset.h"

namespace vramplan::launch {
namespace {

struct Builder {
  std::string_view name;    // builder without its lora_/qlora_ prefix
  std::string_view module;  // torchtune.models.<module>
  std::string_view preset;
};

constexpr std::array<Builder, 35> kBuilders = {{
    {"llama2_7b", "llama2", "meta-llama/Llama-2-7b-hf"},       {"llama2_13b", "llama2", "meta-llama/Llama-2-13b-hf"},
    {"llama2_70b", "llama2", "meta-llama/Llama-2-70b-hf"},     {"llama3_8b", "llama3", "meta-llama/Meta-Llama-3-8B-Instruct"},
    {"llama3_70b", "llama3", "meta-llama/Meta-Llama-3-70B"},   {"llama3_1_8b", "llama3_1", "meta-llama/Llama-3.1-8B"},
    {"llama3_1_70b", "llama3_1", "meta-llama/Llama-3.1-70B-Instruct"}, {"llama3_1_405b", "llama3_1", "meta-llama/Llama-3.1-405B"},
    {"llama3_2_1b", "llama3_2", "meta-llama/Llama-3.2-1B-Instruct"}, {"llama3_2_3b", "llama3_2", "meta-llama/Llama-3.2-3B"},
    {"llama3_3_70b", "llama3_3", "meta-llama/Llama-3.3-70B-Instruct"}, {"mistral_7b", "mistral", "mistralai/Mistral-7B-v0.1"},
    {"gemma_2b", "gemma", "google/gemma-2b"},                  {"gemma_7b", "gemma", "google/gemma-7b"},
    {"gemma2_2b", "gemma2", "google/gemma-2-2b-it"},           {"gemma2_9b", "gemma2", "google/gemma-2-9b-it"},
    {"gemma2_27b", "gemma2", "google/gemma-2-27b"},            {"qwen2_5_0_5b", "qwen2_5", "Qwen/Qwen2.5-0.5B"},
    {"qwen2_5_1_5b_base", "qwen2_5", "Qwen/Qwen2.5-1.5B"},     {"qwen2_5_3b", "qwen2_5", "Qwen/Qwen2.5-3B"},
    {"qwen2_5_7b_base", "qwen2_5", "Qwen/Qwen2.5-7B"},         {"qwen2_5_14b_base", "qwen2_5", "Qwen/Qwen2.5-14B"},
    {"qwen2_5_32b_base", "qwen2_5", "Qwen/Qwen2.5-32B"},       {"qwen2_5_72b_base", "qwen2_5", "Qwen/Qwen2.5-72B"},
    {"qwen3_0_6b_base", "qwen3", "Qwen/Qwen3-0.6B"},           {"qwen3_1_7b_base", "qwen3", "Qwen/Qwen3-1.7B"},
    {"qwen3_4b_base", "qwen3", "Qwen/Qwen3-4B"},               {"qwen3_8b_base", "qwen3", "Qwen/Qwen3-8B"},
    {"qwen3_14b_base", "qwen3", "Qwen/Qwen3-14B"},             {"qwen3_32b", "qwen3", "Qwen/Qwen3-32B"},
    {"phi3_mini", "phi3", "microsoft/Phi-3-mini-4k-instruct"}, {"phi4_14b", "phi4", "microsoft/phi-4"},
    {"qwen2_5_1_5b_instruct", "qwen2_5", "Qwen/Qwen2.5-1.5B"}, {"qwen2_5_7b_instruct", "qwen2_5", "Qwen/Qwen2.5-7B"},
    {"qwen3_8b_instruct", "qwen3", "Qwen/Qwen3-8B"},
}};

// "torchtune.models.llama3_1.lora_llama3_1_8b" -> the builder row and the method prefix.
const Builder* FindBuilder(std::string component, std::string* method) {
  const size_t dot = component.find_last_of('.');
  if (dot != std::string::npos) component = component.substr(dot + 1);
  *method = "full";
  if (component.rfind("qlora_", 0) == 0) *method = "qlora", component.erase(0, 6);
  else if (component.rfind("lora_", 0) == 0) *method = "lora", component.erase(0, 5);
  for (const Builder& b : kBuilders) {
    if (component == b.name) return &b;
  }
  return nullptr;
}

// Sets `dotted` (a.b.c) in `doc` to `value`, or removes it when `remove`.
void Override(io::Json* doc, const std::string& dotted, const io::Json& value, bool remove) {
  io::Json* node = doc;
  size_t start = 0;
  for (int depth = 0; depth < 16; ++depth) {
    const size_t dot = dotted.find('.', start);
    const std::string part = dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!node->is_object()) *node = io::Json::object();
    if (dot == std::string::npos) {
      if (remove) node->erase(part);
      else (*node)[part] = value;
      return;
    }
    node = &(*node)[part];
    start = dot + 1;
  }
}

bool IsOverride(const std::string& w) {
  const size_t eq = w.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  for (size_t i = 0; i < eq; ++i) {
    const char c = w[i];
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' || (i == 0 && c == '~'))) return false;
  }
  return true;
}

void ReadModelSection(const io::Json& m, ImportContext* ctx) {
  if (!m.is_object()) return ctx->Error("model", "expected a map with _component_");
  std::string method;
  for (auto it = m.begin(); it != m.end(); ++it) {
    const std::string key = "model." + it.key();
    const io::Json& v = it.value();
    if (it.key() == "_component_") {
      const auto c = ctx->String(v, key);
      if (!c) continue;
      const Builder* b = FindBuilder(*c, &method);
      ctx->Read(key, "train.method", method);
      if (b != nullptr) ctx->Read(key, "model", std::string(b->preset));
      else ctx->AddNote("model", key, io::Quote(*c, 80) + " is not a builder with a preset: choose the model");
      if (method == "qlora") {
        ctx->Set("train.qlora_backend", "torchao");
        ctx->Set("train.qlora_bits", 4);
      }
    } else if (it.key() == "lora_rank") {
      if (auto n = ctx->Int(v, key, 1, 65536)) ctx->Read(key, "train.lora.rank", *n);
    } else if (it.key() == "lora_alpha") {
      if (auto a = ctx->Number(v, key, 0, 1e6)) ctx->Read(key, "train.lora.alpha", *a);
    } else if (it.key() == "lora_dropout") {
      if (auto d = ctx->Number(v, key, 0, 0.99)) ctx->Read(key, "train.lora.dropout", *d);
    } else if (it.key() == "use_dora") {
      if (auto b = ctx->Bool(v, key)) ctx->Read(key, "train.lora.use_dora", *b);
    } else if (it.key() == "quantize_base") {
      if (auto b = ctx->Bool(v, key); b && *b) ctx->Read(key, "train.method", "qlora"), ctx->Set("train.qlora_backend", "torchao"), ctx->Set("train.qlora_bits", 4);
    } else if (it.key() == "lora_attn_modules" || it.key() == "apply_lora_to_mlp" || it.key() == "apply_lora_to_output") {
      // Resolved together below.
    } else {
      ctx->Unsupported(key, "not a model builder argument the estimate reads");
    }
  }
  // torchtune's module names onto the HF names the scenario uses (torchtune/models/convert_weights.py _FROM_HF).
  std::vector<std::string> targets;
  if (m.contains("lora_attn_modules")) {
    if (auto list = ctx->StringList(m["lora_attn_modules"], "model.lora_attn_modules")) {
      for (const std::string& t : *list) {
        if (t == "q_proj" || t == "k_proj" || t == "v_proj") targets.push_back(t);
        else if (t == "output_proj") targets.push_back("o_proj");
        else ctx->Unsupported("model.lora_attn_modules", "module " + io::Preview(io::Json(t)) + " is not mapped");
      }
    }
  }
  if (m.contains("apply_lora_to_mlp")) {
    if (auto b = ctx->Bool(m["apply_lora_to_mlp"], "model.apply_lora_to_mlp"); b && *b) {
      for (const char* t : {"gate_proj", "up_proj", "down_proj"}) targets.push_back(t);
    }
  }
  if (m.contains("apply_lora_to_output")) {
    if (auto b = ctx->Bool(m["apply_lora_to_output"], "model.apply_lora_to_output"); b && *b) ctx->Unsupported("model.apply_lora_to_output", "a LoRA on the output projection is not modeled");
  }
  if (targets.size() == 7) ctx->Read("model.lora_attn_modules / apply_lora_to_mlp", "train.lora.targets", "all-linear");  // every linear but the output
  else if (!targets.empty()) ctx->Read("model.lora_attn_modules / apply_lora_to_mlp", "train.lora.targets", targets);
}

void ReadOptimizer(const io::Json& o, ImportContext* ctx) {
  if (!o.is_object() || !o.contains("_component_")) return ctx->Error("optimizer", "expected a map with _component_");
  const auto c = ctx->String(o["_component_"], "optimizer._component_");
  if (!c) return;
  const std::string& name = *c;
  if (name == "torch.optim.AdamW" || name == "torch.optim.Adam") {
    ctx->Read("optimizer._component_", "train.optimizer", "adamw");
    if (o.contains("fused")) {
      if (auto b = ctx->Bool(o["fused"], "optimizer.fused"); b && *b) ctx->Read("optimizer.fused", "train.optimizer_impl", "fused");
    }
    if (o.contains("foreach")) {
      if (auto b = ctx->Bool(o["foreach"], "optimizer.foreach"); b && !*b && !ctx->IsSet("train.optimizer_impl")) ctx->Read("optimizer.foreach", "train.optimizer_impl", "for_loop");
    }
  } else if (name == "bitsandbytes.optim.PagedAdamW8bit" || name == "bitsandbytes.optim.PagedAdamW") {
    ctx->Read("optimizer._component_", "train.optimizer", "paged_adamw_8bit");
  } else if (name == "bitsandbytes.optim.AdamW8bit" || name == "torchao.optim.AdamW8bit" || name == "torchao.prototype.low_bit_optim.AdamW8bit") {
    ctx->Read("optimizer._component_", "train.optimizer", "adamw_8bit");
  } else if (name == "torch.optim.SGD") {
    const bool momentum = o.contains("momentum") && o["momentum"].is_number() && o["momentum"].get<double>() > 0;
    ctx->Read("optimizer._component_", "train.optimizer", momentum ? "sgd_momentum" : "sgd");
  } else {
    ctx->Unsupported("optimizer._component_", "optimizer " + io::Preview(o["_component_"]) + " is not modeled; AdamW assumed");
  }
  for (auto it = o.begin(); it != o.end(); ++it) {
    if (it.key() != "_component_" && it.key() != "fused" && it.key() != "foreach" && it.key() != "momentum") ctx->Ignored("optimizer." + it.key());
  }
}

void ReadTop(const std::string& key, const io::Json& v, ImportContext* ctx) {
  if (key == "model") {
    ReadModelSection(v, ctx);
  } else if (key == "batch_size") {
    if (auto n = ctx->Int(v, key, 1, 65536)) ctx->Read(key, "train.micro_batch_size", *n);
  } else if (key == "gradient_accumulation_steps") {
    if (auto n = ctx->Int(v, key, 1, 1 << 20)) ctx->Read(key, "train.grad_accum_steps", *n);
  } else if (key == "enable_activation_checkpointing") {
    if (auto b = ctx->Bool(v, key)) ctx->Read(key, "train.gradient_checkpointing", *b);
  } else if (key == "enable_activation_offloading") {
    if (auto b = ctx->Bool(v, key)) ctx->Read(key, "train.activation_offload", *b);
  } else if (key == "dtype") {
    const auto s = ctx->String(v, key);
    if (!s) return;
    if (*s == "bf16" || *s == "fp32") ctx->Read(key, "train.precision", *s);
    else ctx->Error(key, "expected bf16 or fp32 (torchtune/training/precision.py), got " + io::Preview(v));
  } else if (key == "compile") {
    if (auto b = ctx->Bool(v, key)) ctx->Read(key, "framework.torch_compile", *b);
  } else if (key == "optimizer") {
    ReadOptimizer(v, ctx);
  } else if (key == "loss") {
    const io::Json* c = v.is_object() && v.contains("_component_") ? &v["_component_"] : nullptr;
    const auto name = c ? ctx->String(*c, "loss._component_") : std::nullopt;
    if (!name) return;
    if (name->find("CEWithChunkedOutputLoss") != std::string::npos || name->find("LinearCrossEntropyLoss") != std::string::npos) ctx->Read("loss._component_", "train.loss", "chunked");
    else if (name->find("CrossEntropyLoss") != std::string::npos) ctx->Read("loss._component_", "train.loss", "standard");
    else ctx->Unsupported("loss._component_", "loss " + io::Preview(*c) + " is not modeled");
  } else if (key == "tokenizer") {
    if (v.is_object() && v.contains("max_seq_len")) {
      if (v["max_seq_len"].is_null()) ctx->AddNote("default", "tokenizer.max_seq_len", "null: the longest sample decides; set train.seq_len");
      else if (auto n = ctx->Int(v["max_seq_len"], "tokenizer.max_seq_len", 1, int64_t{1} << 24)) ctx->Read("tokenizer.max_seq_len", "train.seq_len", *n);
    }
    ctx->Ignored("tokenizer", "paths and special tokens");
  } else if (key == "fsdp_cpu_offload") {
    if (auto b = ctx->Bool(v, key)) {
      ctx->Read(key, "parallel.offload_params", *b ? "cpu" : "none");
      if (*b) ctx->Set("parallel.offload_optimizer", "cpu");
    }
  } else if (key == "fsdp_sharding_strategy") {
    ReadFsdpKey("sharding_strategy", v, ctx);  // FSDP1 recipes (torchtune before its FSDP2 move)
  } else if (key == "fsdp_reshard_after_forward") {
    // The FSDP2 recipes' knob (recipes/full_finetune_distributed.py, lora_finetune_distributed.py):
    // true frees the parameters after forward (FULL_SHARD), false keeps them (SHARD_GRAD_OP).
    ReadFsdpKey(key, v, ctx);
  } else if (key == "custom_sharded_layers") {
    // torchtune/training/_distributed.py get_shard_conditions: the named modules become FSDP units
    // of their own. The estimate models the pair the recipes name (the embedding and the output).
    bool embedding = false, output = false, other = false;
    if (v.is_array()) {
      for (const auto& n : v) {
        if (n == "tok_embeddings") embedding = true;
        else if (n == "output") output = true;
        else other = true;
      }
    }
    if (!v.is_array() || other || embedding != output) {
      ctx->Unsupported(key, "only ['tok_embeddings', 'output'] (or none) is modeled");
    } else {
      ctx->Read(key, "parallel.fsdp_embedding_units", embedding);
    }
  } else if (key == "optimizer_in_bwd") {
    if (auto b = ctx->Bool(v, key)) ctx->Read(key, "train.optimizer_in_backward", *b);
  } else if (key == "device") {
    if (v == "cpu") ctx->Read(key, "framework.device", "cpu");
    else ctx->Ignored(key, "cuda");
  } else if (key == "tensor_parallel_dim" || key == "tensor_parallel_plan" || key == "data_parallel_shard_dim" || key == "data_parallel_replicate_dim" ||
             key == "context_parallel_dim") {
    ctx->Unsupported(key, "torchtune's device mesh: set the parallel degrees in the scenario");
  } else if (key == "output_dir" || key == "checkpointer" || key == "resume_from_checkpoint" || key == "save_adapter_weights_only" ||
             key == "seed" || key == "shuffle" || key == "lr_scheduler" || key == "epochs" || key == "max_steps_per_epoch" ||
             key == "metric_logger" || key == "log_every_n_steps" || key == "log_peak_memory_stats" || key == "profiler" ||
             key == "clip_grad_norm" || key == "dataset" || key == "log_level" || key == "run_val_every_n_steps" ||
             key == "dataset_val" || key == "dataloader" || key == "cudnn_deterministic_mode" || key == "low_cpu_ram" || key == "ac_mode" ||
             key == "ac_option") {
    ctx->Ignored(key);
  } else {
    ctx->Unsupported(key, "not a recipe key the estimate reads");
  }
}

}  // namespace

void ImportTorchtune(std::string_view text, ImportContext* ctx) {
  // Split the text into YAML lines, override lines and a `tune run` command.
  std::string yaml;
  std::vector<std::string> overrides;
  std::string command;
  size_t start = 0;
  bool continued = false;  // the previous command line ended with a backslash
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string line(text.substr(start, end - start));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::string trimmed = line;
    while (!trimmed.empty() && (trimmed.front() == ' ' || trimmed.front() == '\t')) trimmed.erase(0, 1);
    if (trimmed.rfind("tune ", 0) == 0 || continued) {
      command += line + "\n";
      continued = !line.empty() && line.back() == '\\';
    } else if (IsOverride(trimmed) && trimmed.find(": ") == std::string::npos) {
      overrides.push_back(trimmed);
    } else {
      yaml += line + "\n";
    }
    start = end + 1;
  }
  std::vector<io::Json> docs;
  if (!ParseYamlDocuments(yaml, &docs, &ctx->errors)) return;
  io::Json doc = docs.empty() || docs[0].is_null() ? io::Json::object() : docs[0];
  if (!doc.is_object()) return ctx->Error("", "a torchtune config is a YAML map", "invalid_config");
  ctx->Set("mode", "train");
  std::string recipe;
  if (!command.empty()) {
    CommandArgs args;
    if (!ReadCommand(command, [](const std::string& w) { return w == "run"; }, {}, "tune run", &args, ctx)) return;
    for (const CommandOption& o : args.options) {
      if ((o.key == "nproc_per_node" || o.key == "nproc-per-node") && o.value) {
        if (auto n = ctx->Int(io::Json(*o.value), "--nproc_per_node", 1, 1 << 20)) ctx->Read("--nproc_per_node", "parallel.gpus", *n);
      } else if ((o.key == "nnodes") && o.value) {
        ctx->Unsupported("--nnodes", "several nodes: set parallel.gpus and gpus_per_node");
      } else if (o.key == "config" && o.value) {
        std::string method;
        std::string name = *o.value;
        // "llama3_1/8B_lora_single_device" -> builder "llama3_1_8b", method from the config name.
        const size_t slash = name.find('/');
        if (slash != std::string::npos && docs.empty()) {
          std::string size = name.substr(slash + 1, name.find('_', slash) - slash - 1);
          for (char& c : size) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
          std::string family = name.substr(0, slash);
          const std::string prefix = name.find("qlora") != std::string::npos ? "qlora_" : name.find("lora") != std::string::npos ? "lora_" : "";
          std::replace(size.begin(), size.end(), '.', '_');
          if (!doc.contains("model")) Override(&doc, "model._component_", "torchtune.models." + family + "." + prefix + family + "_" + size, false);
          ctx->AddNote("unsupported", "--config", "the built-in config " + io::Quote(name, 60) + " is not included: its model and method are read from its name, the rest are the recipe's defaults");
        } else {
          ctx->Ignored("--config", "the config given here");
        }
      } else {
        ctx->Ignored("--" + o.key);
      }
    }
    for (const std::string& w : args.positionals) {
      if (IsOverride(w)) overrides.push_back(w);
      else if (recipe.empty()) recipe = w;
    }
  }
  for (const std::string& o : overrides) {
    const size_t eq = o.find('=');
    const bool remove = o[0] == '~';
    const std::string key = o.substr(remove ? 1 : 0, eq - (remove ? 1 : 0));
    std::vector<io::Json> value;
    if (!ParseYamlDocuments("v: " + o.substr(eq + 1), &value, &ctx->errors)) return;
    Override(&doc, key, value.empty() || !value[0].is_object() ? io::Json(nullptr) : value[0]["v"], remove);
    ctx->AddNote("read", key, "override " + io::Quote(o, 60));
  }
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (it.value().is_null()) ctx->Ignored(it.key(), "empty: the default");  // YAML "key:" with nothing after it
    else ReadTop(it.key(), it.value(), ctx);
  }
  if (!ctx->errors.empty()) return;
  const bool distributed = recipe.find("distributed") != std::string::npos;
  if (!recipe.empty() && !distributed) ctx->Default("parallel.gpus", 1, "a single-device recipe");
  if (distributed) ctx->Set("parallel.fsdp", true);
  if (distributed && !ctx->IsSet("parallel.gpus")) ctx->AddNote("default", "parallel.gpus", "a distributed recipe without --nproc_per_node: set parallel.gpus");
  if (doc.contains("fsdp_cpu_offload") || doc.contains("fsdp_sharding_strategy") || doc.contains("fsdp_reshard_after_forward")) ctx->Set("parallel.fsdp", true);
  // torchtune checkpoints with torch's non-reentrant checkpoint_wrapper (training.set_activation_checkpointing
  // -> apply_activation_checkpointing) and shards with FSDP2 since 0.3: FSDP1's hook on a recompute's
  // detached input (parallel/fsdp_frozen_unit_hooks.h) never holds anything.
  if (ctx->IsSet("parallel.fsdp")) ctx->Set("parallel.fsdp_frozen_unit_hooks", false);
  ctx->Default("train.method", "full", "no model builder");
  ctx->Default("train.precision", "bf16", "torchtune's configs train in bf16");
  ctx->Set("train.autocast", false);
  ctx->Set("train.lora.adapter_dtype", "base");
  ctx->Default("train.gradient_checkpointing", false, "the recipes' default enable_activation_checkpointing: false");
  ctx->Default("train.optimizer", "adamw", "no optimizer: AdamW assumed");
  ctx->Default("train.loss", "standard", "no loss: torch.nn.CrossEntropyLoss");
  ctx->Default("train.grad_accum_steps", 1, "the recipes' default gradient_accumulation_steps");
  ctx->Default("train.attention", "sdpa", "torchtune's attention runs F.scaled_dot_product_attention");
  const std::string method = ctx->Get("train.method")->get<std::string>();
  if (method == "lora" || method == "qlora") {
    ctx->Default("train.lora.targets", io::Json::array({"q_proj", "v_proj"}), "the builders' default lora_attn_modules");
  }
  NoModel(ctx, "this torchtune config");
}

ExportText ExportTorchtune(const Scenario& s) {
  ExportText out;
  const TrainConfig& t = s.train;
  const Builder* builder = nullptr;
  for (const Builder& b : kBuilders) {
    if (b.preset == s.model_id) {
      builder = &b;
      break;
    }
  }
  const bool lora = t.method == TrainMethod::kLora || t.method == TrainMethod::kQlora;
  const std::string prefix = t.method == TrainMethod::kQlora ? "qlora_" : lora ? "lora_" : "";
  OrderedJson y = OrderedJson::object();
  y["output_dir"] = "/tmp/torchtune/vramplan-job";
  OrderedJson m = OrderedJson::object();
  if (builder != nullptr) m["_component_"] = "torchtune.models." + std::string(builder->module) + "." + prefix + std::string(builder->name);
  else {
    m["_component_"] = "torchtune.models.llama3_1." + prefix + "llama3_1_8b";
    out.notes.push_back(Note{"model", "model._component_", "torchtune has no builder for this model: the component names Llama 3.1 8B; replace it"});
  }
  if (lora) {
    OrderedJson attn = OrderedJson::array();
    bool mlp = false;
    std::vector<std::string> targets = t.lora.targets;
    if (t.lora.all_linear) targets = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"};
    for (const std::string& x : targets) {
      if (x == "q_proj" || x == "k_proj" || x == "v_proj") attn.push_back(x);
      else if (x == "o_proj") attn.push_back("output_proj");
      else if (x == "gate_proj" || x == "up_proj" || x == "down_proj") mlp = true;
    }
    if (attn.empty()) attn = OrderedJson::array({"q_proj", "v_proj"});
    m["lora_attn_modules"] = attn;
    m["apply_lora_to_mlp"] = mlp;
    m["apply_lora_to_output"] = false;
    m["lora_rank"] = t.lora.rank;
    m["lora_alpha"] = t.lora.alpha;
    m["lora_dropout"] = t.lora.dropout;
    if (t.lora.use_dora) m["use_dora"] = true;
  }
  y["model"] = m;
  // The tokenizer and checkpointer the recipe instantiates, at the paths `tune download` uses
  // (recipes/configs/<family>/*.yaml); the checkpoint's file names are the user's to fill in.
  const std::string family = builder != nullptr ? std::string(builder->module) : "llama3_1";
  const std::string dir = "/tmp/" + (s.model_id.empty() ? std::string("model") : s.model_id.substr(s.model_id.find('/') + 1)) + "/";
  struct Family {
    const char* prefix;
    const char* tokenizer;
    const char* model_type;
    bool bpe;  // vocab.json + merges.txt instead of a SentencePiece / tiktoken model
  };
  static constexpr Family kFamilies[] = {
      {"llama2", "torchtune.models.llama2.llama2_tokenizer", "LLAMA2", false}, {"llama3_2", "torchtune.models.llama3.llama3_tokenizer", "LLAMA3_2", false},
      {"llama3", "torchtune.models.llama3.llama3_tokenizer", "LLAMA3", false}, {"mistral", "torchtune.models.mistral.mistral_tokenizer", "MISTRAL", false},
      {"gemma2", "torchtune.models.gemma.gemma_tokenizer", "GEMMA2", false},   {"gemma", "torchtune.models.gemma.gemma_tokenizer", "GEMMA", false},
      {"qwen2_5", "torchtune.models.qwen2_5.qwen2_5_tokenizer", "QWEN2", true}, {"qwen3", "torchtune.models.qwen3.qwen3_tokenizer", "QWEN3", true},
      {"phi3", "torchtune.models.phi3.phi3_mini_tokenizer", "PHI3_MINI", false}, {"phi4", "torchtune.models.phi4.phi4_tokenizer", "PHI4", true}};
  const Family* fam = &kFamilies[2];
  for (const Family& f : kFamilies) {
    if (family.rfind(f.prefix, 0) == 0) {
      fam = &f;
      break;
    }
  }
  OrderedJson tok = OrderedJson::object();
  tok["_component_"] = fam->tokenizer;
  if (fam->bpe) {
    tok["path"] = dir + "vocab.json";
    tok["merges_file"] = dir + "merges.txt";
  } else {
    tok["path"] = dir + (family.rfind("llama3", 0) == 0 ? "original/tokenizer.model" : "tokenizer.model");
  }
  tok["max_seq_len"] = t.seq_len;
  y["tokenizer"] = tok;
  y["checkpointer"] = {{"_component_", "torchtune.training.FullModelHFCheckpointer"}, {"checkpoint_dir", dir},
                       {"checkpoint_files", {{"filename_format", "model-{}-of-{}.safetensors"}, {"max_filename", "00004"}}},
                       {"recipe_checkpoint", nullptr}, {"output_dir", "/tmp/torchtune/vramplan-job"}, {"model_type", fam->model_type}};
  y["resume_from_checkpoint"] = false;
  out.notes.push_back(Note{"ignored", "checkpointer.checkpoint_files", "set max_filename to the checkpoint's shard count (the paths are where `tune download` puts the model)"});
  y["dataset"] = {{"_component_", "torchtune.datasets.alpaca_cleaned_dataset"}, {"packed", false}};
  y["seed"] = nullptr;
  y["shuffle"] = true;
  y["batch_size"] = t.micro_batch_size;
  OrderedJson opt = OrderedJson::object();
  switch (t.optimizer) {
    case Optimizer::kAdamW8bit: opt["_component_"] = "bitsandbytes.optim.AdamW8bit"; break;
    case Optimizer::kPagedAdamW8bit: opt["_component_"] = "bitsandbytes.optim.PagedAdamW8bit"; break;
    case Optimizer::kSgd: opt["_component_"] = "torch.optim.SGD"; break;
    case Optimizer::kSgdMomentum: opt["_component_"] = "torch.optim.SGD"; opt["momentum"] = 0.9; break;
    default: opt["_component_"] = "torch.optim.AdamW";
  }
  if (t.optimizer == Optimizer::kAdamW && t.optimizer_impl == OptimizerImpl::kFused) opt["fused"] = true;
  if (t.optimizer == Optimizer::kAdamW && t.optimizer_impl == OptimizerImpl::kForLoop) opt["foreach"] = false;
  opt["lr"] = lora ? 3e-4 : 2e-5;
  y["optimizer"] = opt;
  y["loss"] = {{"_component_", t.loss == LossImpl::kStandard ? "torch.nn.CrossEntropyLoss" : "torchtune.modules.loss.CEWithChunkedOutputLoss"}};
  y["epochs"] = 1;
  y["max_steps_per_epoch"] = nullptr;
  y["gradient_accumulation_steps"] = t.grad_accum_steps;
  y["compile"] = s.framework.torch_compile;
  y["device"] = s.framework.device == Device::kCpu ? "cpu" : "cuda";
  y["enable_activation_checkpointing"] = t.gradient_checkpointing != Checkpointing::kNone;
  y["enable_activation_offloading"] = t.activation_offload;
  if (t.optimizer_in_backward) y["optimizer_in_bwd"] = true;
  y["dtype"] = t.precision == Precision::kFp32 ? "fp32" : "bf16";
  if (s.parallel.fsdp) {
    // What the distributed recipes read (cfg.get in recipes/*_distributed.py, torchtune v0.6):
    // FSDP2 has no sharding-strategy key; no_shard / hybrid_shard ride in the vramplan comment.
    y["fsdp_cpu_offload"] = s.parallel.offload_params != Offload::kNone;
    y["fsdp_reshard_after_forward"] = s.parallel.fsdp_sharding != FsdpSharding::kShardGradOp;
    if (s.parallel.fsdp_embedding_units) y["custom_sharded_layers"] = io::Json::array({"tok_embeddings", "output"});
  }
  const std::string recipe = std::string(lora ? "lora" : "full") + (s.parallel.gpus > 1 ? "_finetune_distributed" : "_finetune_single_device");
  out.text = "# tune run " + (s.parallel.gpus > 1 ? "--nproc_per_node " + std::to_string(s.parallel.gpus) + " " : std::string()) + recipe +
             " --config job.yaml\n" + ToYaml(y);
  return out;
}

}  // namespace vramplan::launch
