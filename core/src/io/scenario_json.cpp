// Scenario JSON (schema v1) -> Scenario, with every problem reported as an Issue naming its path.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "io/enum_names.h"
#include "io/input_limits.h"
#include "io/json_reader.h"
#include "io/message_text.h"
#include "io/scenario_json.h"
#include "model/catalog.h"
#include "model/families/registry.h"
#include "model/hf_config.h"
#include "parallel/topology.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace {

using io::Json;
using io::ObjectReader;

constexpr int64_t kMaxGpus = 1 << 20;
constexpr int64_t kMaxMemoryBytes = int64_t{1} << 50;  // 1 PiB per device: beyond any real GPU

// A JSON integer that fits in int64 (an unsigned one above 2^63-1 does not), else nullopt.
std::optional<int64_t> SmallInteger(const Json& v) {
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  return std::nullopt;
}

void ApplyFrameworkPreset(FrameworkPreset preset, FrameworkConfig* f) {
  f->preset = preset;
  if (preset == FrameworkPreset::kTorch113Hf444) {
    // The measured fixtures' environment (shared/measure): PyTorch 1.13 on CPU, transformers 4.44.
    f->device = Device::kCpu;
    f->rmsnorm_saves_squared_input = true;
    f->loss_shift_logits_copy = true;
    f->adamw_foreach_denom_copy = true;
  } else {
    // What users run today: PyTorch >= 2.2 on CUDA, transformers >= 4.46 (ForCausalLMLoss).
    f->device = Device::kCuda;
    f->rmsnorm_saves_squared_input = false;
    f->loss_shift_logits_copy = false;
    f->adamw_foreach_denom_copy = false;
  }
}

void ParseModel(const Json& v, Scenario* s, Issues* errors, Issues* warnings) {
  if (v.is_string()) {
    const std::string& id = v.get_ref<const std::string&>();
    const PresetEntry* preset = FindPreset(id);
    if (preset == nullptr) {
      std::string msg = "unknown preset " + io::Quote(id, 80);
      std::string hint = io::Suggest(id, PresetIds());
      if (hint.empty()) {
        // Also try matching without the organisation prefix.
        for (const auto& p : Presets()) {
          auto slash = p.id.find('/');
          std::string tail = slash == std::string::npos ? p.id : p.id.substr(slash + 1);
          if (tail == id) hint = p.id;
        }
      }
      msg += hint.empty() ? "; run `vramplan models` for the list, or pass the model's config.json object" : " (did you mean \"" + hint + "\"?)";
      io::AddError(errors, "unknown_preset", "model", msg);
      return;
    }
    s->model_id = preset->id;
    s->model = preset->spec;
    return;
  }
  if (!v.is_object()) {
    io::AddError(errors, "wrong_type", "model", "model must be a preset id (string) or a config.json object, got " + io::Describe(v));
    return;
  }
  auto spec = ModelSpecFromHfConfig(v, "model", warnings);
  if (!spec.ok()) {
    errors->insert(errors->end(), spec.errors().begin(), spec.errors().end());
    return;
  }
  s->model = std::move(spec.value());
  s->inline_config_json = io::Dump(v);
  auto name = v.find("_name_or_path");
  s->model.display_name = name != v.end() && name->is_string() && !name->get_ref<const std::string&>().empty()
                              ? name->get<std::string>().substr(0, 120)
                              : (s->model.model_type.empty() ? "custom model" : "custom " + s->model.model_type);
}

void ParseLora(const Json& v, LoraConfig* lora, Issues* errors) {
  ObjectReader r(v, "train.lora", errors);
  r.Int("rank", &lora->rank, 1, 65536);
  r.Number("alpha", &lora->alpha, 0, 1e6);
  if (const Json* t = r.Raw("targets")) {
    if (t->is_string() && t->get_ref<const std::string&>() == "all-linear") {
      lora->all_linear = true;
      lora->targets.clear();
    } else if (t->is_array()) {
      lora->all_linear = false;
      io::ReadStringList(*t, "train.lora.targets", &lora->targets, 64, errors);
      if (lora->targets.empty() && t->empty()) {
        io::AddError(errors, "out_of_range", "train.lora.targets", "train.lora.targets must name at least one module, or be \"all-linear\"");
      }
    } else {
      io::AddError(errors, "wrong_type", "train.lora.targets",
                   "train.lora.targets must be a list of module names (e.g. [\"q_proj\", \"v_proj\"]) or \"all-linear\"");
    }
  }
  r.StringList("modules_to_save", &lora->modules_to_save);
  r.Bool("use_dora", &lora->use_dora);
  r.Number("dropout", &lora->dropout, 0, 0.99);
  r.Enum("adapter_dtype", &lora->adapter_dtype, io::kAdapterDtypeNames);
  r.RejectUnknownKeys();
}

void ParseTrain(const Json& v, TrainConfig* t, Issues* errors) {
  ObjectReader r(v, "train", errors);
  r.Enum("method", &t->method, io::kMethodNames);
  r.Enum("precision", &t->precision, io::kPrecisionNames);
  r.Bool("autocast", &t->autocast);
  r.Enum("optimizer", &t->optimizer, io::kOptimizerNames);
  r.Enum("optimizer_impl", &t->optimizer_impl, io::kOptimizerImplNames);
  r.Int("micro_batch_size", &t->micro_batch_size, 1, kMaxBatch);
  r.Int("seq_len", &t->seq_len, 1, kMaxTokens);
  r.Int("grad_accum_steps", &t->grad_accum_steps, 1, 1 << 20);
  if (const Json* gc = r.Raw("gradient_checkpointing")) {
    if (gc->is_boolean()) {
      t->gradient_checkpointing = gc->get<bool>() ? Checkpointing::kFull : Checkpointing::kNone;
    } else if (gc->is_string() && gc->get_ref<const std::string&>() == "selective") {
      t->gradient_checkpointing = Checkpointing::kSelective;
    } else {
      io::AddError(errors, gc->is_string() ? "unknown_value" : "wrong_type", "train.gradient_checkpointing",
                   "train.gradient_checkpointing must be false, true (every decoder layer) or \"selective\" (attention core only)");
    }
  }
  r.Enum("attention", &t->attention, io::kAttentionNames);
  r.Enum("loss", &t->loss, io::kLossNames);
  if (const Json* lora = r.Raw("lora")) ParseLora(*lora, &t->lora, errors);
  if (const Json* bits = r.Raw("qlora_bits")) {
    const std::optional<int64_t> b = SmallInteger(*bits);
    if (!b || (*b != 2 && *b != 4 && *b != 8)) {
      io::AddError(errors, "unknown_value", "train.qlora_bits", "train.qlora_bits must be 4 (NF4), 8 (LLM.int8) or 2");
    } else {
      t->qlora_bits = static_cast<int>(*b);
    }
  }
  r.Bool("qlora_double_quant", &t->qlora_double_quant);
  r.Enum("qlora_backend", &t->qlora_backend, io::kQloraBackendNames);
  if (const Json* g = r.Raw("qlora_group_size")) {
    // SmallInteger, not get<int64_t>(): 2^64-1 (an unsigned JSON integer) would wrap to -1.
    const std::optional<int64_t> size = SmallInteger(*g);
    const bool ok = size && (*size == -1 || (*size >= 16 && *size <= 4096));
    if (ok) t->qlora_group_size = static_cast<int>(*size);
    else io::AddError(errors, g->is_number_integer() ? "out_of_range" : "wrong_type", "train.qlora_group_size",
                      "train.qlora_group_size must be -1 (per channel) or an integer from 16 to 4096 (GPTQ: usually 32, 64 or 128)");
  }
  if (const Json* fz = r.Raw("freeze")) {
    ObjectReader f(*fz, "train.freeze", errors);
    f.Int("trainable_layers", &t->freeze.trainable_layers, 0, 4096);
    f.Bool("train_embeddings", &t->freeze.train_embeddings);
    f.Bool("train_lm_head", &t->freeze.train_lm_head);
    f.RejectUnknownKeys();
  }
  r.RejectUnknownKeys();
  if (t->qlora_backend == QloraBackend::kTorchao && t->qlora_bits != 4) {
    io::AddError(errors, "unsupported_combination", "train.qlora_backend",
                 "train.qlora_backend \"torchao\" is torchao's NF4Tensor: 4-bit only (train.qlora_bits 4)");
  }
  if (t->autocast && (t->precision == Precision::kFp32 || t->precision == Precision::kAmpBf16 || t->precision == Precision::kAmpFp16)) {
    io::AddError(errors, "invalid_value", "train.autocast",
                 "train.autocast applies to 16-bit weights (bf16, fp16, mixed_*); amp_* already runs under autocast and fp32 does not");
  }
}

void ParseInference(const Json& v, InferenceConfig* c, Issues* errors) {
  ObjectReader r(v, "inference", errors);
  r.Int("batch_size", &c->batch_size, 1, kMaxBatch);
  r.Int("prompt_len", &c->prompt_len, 1, kMaxTokens);
  r.Int("new_tokens", &c->new_tokens, 0, kMaxTokens);
  r.Enum("weights", &c->weights, io::kWeightFormatNames);
  r.Enum("kv_cache", &c->kv_cache, io::kKvDtypeNames);
  r.Enum("attention", &c->attention, io::kAttentionNames);
  r.Enum("engine", &c->engine, io::kEngineNames);
  r.Enum("logits", &c->logits, io::kLogitsNames);
  r.Number("gpu_memory_utilization", &c->gpu_memory_utilization, 0.05, 1.0);
  r.Int("max_model_len", &c->max_model_len, 0, kMaxTokens);
  r.Int("max_num_batched_tokens", &c->max_num_batched_tokens, 0, kMaxTokens);
  r.Int("max_num_seqs", &c->max_num_seqs, 1, kMaxBatch);
  r.Int("block_size", &c->block_size, 1, 1024);
  r.Bool("cuda_graphs", &c->cuda_graphs);
  r.Int("n_ctx", &c->n_ctx, 0, kMaxTokens);
  r.Int("n_batch", &c->n_batch, 1, kMaxTokens);
  r.Int("n_ubatch", &c->n_ubatch, 1, kMaxTokens);
  r.Int("n_gpu_layers", &c->n_gpu_layers, -1, 4096);
  r.Bool("flash_attn", &c->flash_attn);
  r.RejectUnknownKeys();
}

void ParseParallel(const Json& v, ParallelConfig* p, Issues* errors) {
  ObjectReader r(v, "parallel", errors);
  r.Int("gpus", &p->gpus, 1, kMaxGpus);
  r.Int("gpus_per_node", &p->gpus_per_node, 1, kMaxGpus);
  r.Int("tp", &p->tp, 1, 65536);
  r.Int("pp", &p->pp, 1, 65536);
  r.Int("cp", &p->cp, 1, 65536);
  r.Int("ep", &p->ep, 1, 65536);
  r.Int("zero", &p->zero, 0, 3);
  r.Bool("fsdp", &p->fsdp);
  r.Enum("offload_optimizer", &p->offload_optimizer, io::kOffloadNames);
  r.Enum("offload_params", &p->offload_params, io::kOffloadNames);
  r.Bool("sequence_parallel", &p->sequence_parallel);
  r.Int("reduce_bucket_size", &p->reduce_bucket_size, 0, int64_t{1} << 40);
  r.Bool("overlap_comm", &p->overlap_comm);
  r.Bool("contiguous_gradients", &p->contiguous_gradients);
  r.RejectUnknownKeys();
  if (!errors->empty()) return;
  ValidateTopology(*p, errors);  // parallel/topology.h
}

void ParseGpu(const Json& v, GpuChoice* g, Issues* errors) {
  if (v.is_string()) {
    const std::string& id = v.get_ref<const std::string&>();
    const GpuEntry* gpu = FindGpu(id);
    if (gpu == nullptr) {
      std::string hint = io::Suggest(id, GpuIds());
      io::AddError(errors, "unknown_gpu", "gpu",
                   "unknown GPU " + io::Quote(id, 80) +
                       (hint.empty() ? "; run `vramplan gpus` for the list, or pass {\"name\", \"memory_bytes\"}" : " (did you mean \"" + hint + "\"?)"));
      return;
    }
    g->id = gpu->id;
    g->name = gpu->name;
    g->memory_bytes = gpu->usable_memory_bytes > 0 ? gpu->usable_memory_bytes : gpu->memory_bytes;
    return;
  }
  ObjectReader r(v, "gpu", errors);
  if (!r.valid()) return;
  g->id = "custom";
  g->name.clear();
  g->memory_bytes = 0;
  r.String("name", &g->name, 80);
  r.Int("memory_bytes", &g->memory_bytes, 1, kMaxMemoryBytes);
  r.RejectUnknownKeys();
  if (errors->empty() && g->memory_bytes == 0) {
    io::AddError(errors, "missing_key", "gpu.memory_bytes", "a custom gpu needs memory_bytes (integer bytes, e.g. 25769803776 for 24 GiB)");
  }
  if (g->name.empty()) g->name = "custom GPU";
}

void ParseFramework(const Json& v, FrameworkConfig* f, Issues* errors) {
  ObjectReader r(v, "framework", errors);
  FrameworkPreset preset = f->preset;
  r.Enum("preset", &preset, io::kFrameworkPresetNames);
  ApplyFrameworkPreset(preset, f);
  r.Enum("device", &f->device, io::kDeviceNames);
  r.Bool("rmsnorm_saves_squared_input", &f->rmsnorm_saves_squared_input);
  r.Bool("loss_shift_logits_copy", &f->loss_shift_logits_copy);
  r.Bool("adamw_foreach_denom_copy", &f->adamw_foreach_denom_copy);
  r.Bool("loss_upcast_logits", &f->loss_upcast_logits);
  r.Bool("keep_outputs", &f->keep_outputs);
  r.Bool("use_cache", &f->use_cache);
  r.Bool("attention_mask", &f->attention_mask);
  r.Bool("batch_on_device", &f->batch_on_device);
  r.Bool("cuda_lazy_loading", &f->cuda_lazy_loading);
  r.Bool("variable_shapes", &f->variable_shapes);
  r.Bool("expandable_segments", &f->expandable_segments);
  r.Enum("model_load", &f->model_load, io::kModelLoadNames);
  r.Bool("cpu_onednn_bf16_buffers", &f->cpu_onednn_bf16_buffers);
  r.Bool("cpu_kv_alive_at_scores", &f->cpu_kv_alive_at_scores);
  r.RejectUnknownKeys();
}

// The family's default LoRA targets (PEFT's, see model/families/registry.h); an unknown type gets
// the generic (Llama-style) ones.
void ResolveLoraDefaults(Scenario* s) {
  LoraConfig& lora = s->train.lora;
  if (lora.all_linear || !lora.targets.empty()) return;
  const families::ModelFamily* family = families::FindModelFamily(s->model.model_type);
  const families::LoraDefaults& d = (family != nullptr ? *family : families::GenericFamily()).lora;
  lora.all_linear = d.all_linear;
  lora.targets.assign(d.targets.begin(), d.targets.end());
}

// Checks that need the resolved model (layer counts, module names).
void ValidateAgainstModel(const Scenario& s, Issues* errors) {
  const TrainConfig& t = s.train;
  if (s.mode == Mode::kTrain && t.method == TrainMethod::kFreeze && t.freeze.trainable_layers > s.model.num_layers) {
    io::AddError(errors, "out_of_range", "train.freeze.trainable_layers",
                 "train.freeze.trainable_layers must be at most the model's " + std::to_string(s.model.num_layers) + " layers");
  }
  if (s.mode == Mode::kTrain && (t.method == TrainMethod::kLora || t.method == TrainMethod::kQlora) && !t.lora.all_linear) {
    std::vector<std::string> names;
    for (const auto& kind : s.model.kinds) {
      for (const auto& l : kind.linears) {
        if (l.lora_targetable && std::find(names.begin(), names.end(), l.name) == names.end()) names.emplace_back(l.name);
      }
    }
    for (size_t i = 0; i < t.lora.targets.size(); ++i) {
      const std::string& target = t.lora.targets[i];
      if (std::find(names.begin(), names.end(), target) != names.end()) continue;
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      std::string hint = io::Suggest(target, names);
      io::AddError(errors, "unknown_module", "train.lora.targets[" + std::to_string(i) + "]",
                   "this model has no linear module named " + io::Quote(target) +
                       (hint.empty() ? "" : " (did you mean \"" + hint + "\"?)") + "; its linear modules are: " + list);
    }
  }
  if (s.mode == Mode::kTrain) {
    for (size_t i = 0; i < t.lora.modules_to_save.size(); ++i) {
      const std::string& m = t.lora.modules_to_save[i];
      if (m != "embed_tokens" && m != "wte" && m != "lm_head") {
        io::AddError(errors, "unknown_module", "train.lora.modules_to_save[" + std::to_string(i) + "]",
                     "train.lora.modules_to_save entries must be \"embed_tokens\" (or \"wte\", GPT-2 and Qwen1) or \"lm_head\"");
      }
    }
  }
  // Keep every byte count far inside int64: absurd shapes are rejected, not wrapped.
  const double tokens = static_cast<double>(t.micro_batch_size) * static_cast<double>(t.seq_len);
  if (s.mode == Mode::kTrain && tokens > 2147483648.0) {
    io::AddError(errors, "out_of_range", "train.seq_len", "train.micro_batch_size x train.seq_len must be at most 2^31 tokens per micro-batch");
  }
  for (const auto& kind : s.model.kinds) {
    const double scores = tokens * static_cast<double>(t.seq_len) * static_cast<double>(kind.attention.num_heads);
    if (s.mode == Mode::kTrain && t.attention == AttentionImpl::kEager && scores > 1.4e17) {
      io::AddError(errors, "out_of_range", "train.seq_len",
                   "eager attention would materialize more than 10^17 score elements per layer; use sdpa or flash, or a shorter seq_len");
      break;
    }
  }
  ValidateTopologyForModel(s.parallel, s.model, errors);  // parallel/topology.h
}

}  // namespace

Expected<Scenario> ParseScenarioWithWarnings(std::string_view text, Issues* warnings) {
  // The input limits hold before anything copies, dumps or walks the tree (io/input_limits.h).
  Json doc;
  Issues errors;
  if (!io::ParseUserJson(text, "", "scenario", &doc, &errors)) return errors;
  Scenario s;
  ObjectReader r(doc, "", &errors);
  if (!r.valid()) return errors;
  r.Int("schema", &s.schema, 1, kSchemaVersion);
  if (const Json* f = r.Raw("framework")) ParseFramework(*f, &s.framework, &errors);
  else ApplyFrameworkPreset(FrameworkPreset::kCurrent, &s.framework);
  if (const Json* m = r.Raw("model")) ParseModel(*m, &s, &errors, warnings);
  else io::AddError(&errors, "missing_key", "model", "the scenario needs a model: a preset id such as \"meta-llama/Llama-3.1-8B\" or a config.json object");
  r.Enum("mode", &s.mode, io::kModeNames);
  if (const Json* t = r.Raw("train")) ParseTrain(*t, &s.train, &errors);
  if (const Json* i = r.Raw("inference")) ParseInference(*i, &s.inference, &errors);
  if (const Json* p = r.Raw("parallel")) ParseParallel(*p, &s.parallel, &errors);
  if (const Json* g = r.Raw("gpu")) ParseGpu(*g, &s.gpu, &errors);
  else ParseGpu(Json(s.gpu.id), &s.gpu, &errors);
  r.RejectUnknownKeys();
  if (errors.empty()) {
    ResolveLoraDefaults(&s);
    ValidateAgainstModel(s, &errors);
  }
  if (!errors.empty()) {
    io::CapIssues(&errors);
    return errors;
  }
  return s;
}

Expected<Scenario> ParseScenario(std::string_view text) {
  Issues warnings;
  return ParseScenarioWithWarnings(text, &warnings);
}

}  // namespace vramplan
