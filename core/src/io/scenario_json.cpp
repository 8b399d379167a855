// Scenario JSON (schema v1) -> Scenario, with every problem reported as an Issue naming its path.
// Each field's type, range, allowed values and place in the structs come from the field table
// (scenario/fields.h); what is left here is the unions (model, gpu, LoRA targets) and the checks
// that span fields.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "diagnostics/warning_codes.h"
#include "inference/vllm_speculative.h"
#include "inference/weight_formats.h"
#include "io/enum_names.h"
#include "io/input_limits.h"
#include "io/json_reader.h"
#include "io/message_text.h"
#include "io/scenario_json.h"
#include "model/catalog.h"
#include "model/families/registry.h"
#include "model/hf_config.h"
#include "parallel/topology.h"
#include "scenario/fields.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace {

using io::Json;
using io::ObjectReader;

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
    f->loss_function_shift_copy = false;
  } else {
    // What users run today: PyTorch >= 2.2 on CUDA, transformers >= 4.49 (ForCausalLMLoss pads the
    // labels); torch_2_hf_4_46: the same with transformers 4.46-4.48, whose ForCausalLMLoss copies
    // the shifted fp32 logits (huggingface/transformers PR #35646 removed the copy, in 4.49).
    f->device = Device::kCuda;
    f->rmsnorm_saves_squared_input = false;
    f->loss_shift_logits_copy = false;
    f->adamw_foreach_denom_copy = false;
    f->loss_function_shift_copy = preset == FrameworkPreset::kTorch2Hf446;
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
  auto spec = ModelSpecFromHfConfig(v, "model", warnings, s->model_reading);
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

// A catalogue GPU (the string form of "gpu").
void ParseGpuId(const std::string& id, GpuChoice* g, Issues* errors) {
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
}

// "train.lora.targets": "all-linear" or a list of module names (at least one).
void ReadLoraTargets(const fields::Field& f, const Json& t, LoraConfig* lora, Issues* errors) {
  const std::string path(f.path);
  if (t.is_string() && t.get_ref<const std::string&>() == f.values[0]) {
    lora->all_linear = true;
    lora->targets.clear();
  } else if (t.is_array()) {
    lora->all_linear = false;
    io::ReadStringList(t, path, &lora->targets, static_cast<size_t>(f.max), errors);
    if (lora->targets.empty() && t.empty()) {
      io::AddError(errors, "out_of_range", path, path + " must name at least one module, or be \"all-linear\"");
    }
  } else {
    io::AddError(errors, "wrong_type", path, path + " " + std::string(f.message));
  }
}

void ReadCustomGpu(const Json& v, Scenario* s, Issues* errors);
void ReadObject(const Json& v, const fields::Field* object, Scenario* s, Issues* errors, Issues* warnings);

// One field of the object `r` reads, by its row in the field table.
void ReadField(ObjectReader& r, const fields::Field& f, Scenario* s, Issues* errors, Issues* warnings) {
  using fields::Slot;
  using fields::Type;
  const std::string_view key = f.key();
  switch (f.type) {
    case Type::kObject:
      if (const Json* v = r.Raw(key)) ReadObject(*v, &f, s, errors, warnings);
      else if (f.path == "framework") ApplyFrameworkPreset(FrameworkPreset::kCurrent, &s->framework);
      return;
    case Type::kModel:
      if (const Json* m = r.Raw(key)) ParseModel(*m, s, errors, warnings);
      else io::AddError(errors, "missing_key", std::string(f.path), std::string(f.message));
      return;
    case Type::kGpu: {
      const Json* g = r.Raw(key);
      if (g != nullptr && !g->is_string()) ReadCustomGpu(*g, s, errors);
      else ParseGpuId(g != nullptr ? g->get<std::string>() : s->gpu.id, &s->gpu, errors);
      return;
    }
    case Type::kListOrConst:
      if (const Json* t = r.Raw(key)) ReadLoraTargets(f, *t, &s->train.lora, errors);
      return;
    default: break;
  }
  const Slot slot = f.slot(*s);
  switch (f.type) {
    case Type::kInt:
      if (f.gap_min <= f.gap_max) {
        // A range with a gap (an int or int64 member), reported in the field's own words.
        const Json* g = r.Raw(key);
        if (g == nullptr) return;
        // SmallInteger, not get<int64_t>(): 2^64-1 (an unsigned JSON integer) would wrap to -1.
        const std::optional<int64_t> n = SmallInteger(*g);
        const bool ok = n && *n >= f.min && *n <= f.max && !(*n >= f.gap_min && *n <= f.gap_max);
        if (!ok) io::AddError(errors, g->is_number_integer() ? "out_of_range" : "wrong_type", std::string(f.path),
                              std::string(f.path) + " " + std::string(f.message));
        else if (slot.kind == Slot::Kind::kInt64) *static_cast<int64_t*>(slot.p) = *n;
        else *static_cast<int*>(slot.p) = static_cast<int>(*n);
      } else if (slot.kind == Slot::Kind::kInt64) {
        r.Int(key, static_cast<int64_t*>(slot.p), f.min, f.max);
      } else if (slot.kind == Slot::Kind::kInt) {
        r.Int(key, static_cast<int*>(slot.p), static_cast<int>(f.min), static_cast<int>(f.max));
      } else {
        r.Int(key, static_cast<std::optional<int64_t>*>(slot.p), f.min, f.max);
      }
      return;
    case Type::kNumber:
      r.Number(key, static_cast<double*>(slot.p), f.min_number, f.max_number);
      return;
    case Type::kBool:
      if (slot.kind == Slot::Kind::kOptBool) r.Bool(key, static_cast<std::optional<bool>*>(slot.p));
      else r.Bool(key, static_cast<bool*>(slot.p));
      return;
    case Type::kString:
      r.String(key, static_cast<std::string*>(slot.p), static_cast<size_t>(f.max));
      return;
    case Type::kStringList:
      r.StringList(key, static_cast<std::vector<std::string>*>(slot.p), static_cast<size_t>(f.max));
      return;
    case Type::kIntList: {
      const Json* v = r.Raw(key);
      if (v == nullptr) return;
      const std::string path(f.path);
      if (!v->is_array() || static_cast<int64_t>(v->size()) > f.max) {
        io::AddError(errors, "wrong_type", path, path + " must be a list of at most " + std::to_string(f.max) + " integers");
        return;
      }
      std::vector<int64_t> items;
      for (size_t i = 0; i < v->size(); ++i) {
        const std::optional<int64_t> n = SmallInteger((*v)[i]);
        if (!n || *n < f.min || *n > f.max_item) {
          const std::string ipath = path + "[" + std::to_string(i) + "]";
          io::AddError(errors, n ? "out_of_range" : "wrong_type", ipath,
                       ipath + " must be an integer from " + std::to_string(f.min) + " to " + std::to_string(f.max_item));
          return;
        }
        items.push_back(*n);
      }
      *static_cast<std::vector<int64_t>*>(slot.p) = std::move(items);
      return;
    }
    case Type::kEnum: {
      size_t i = 0;
      if (r.Choice(key, f.values, &i)) slot.set_enum(slot.p, f.enum_codes[i]);
      return;
    }
    case Type::kIntChoice: {
      const Json* v = r.Raw(key);
      if (v == nullptr) return;
      const std::optional<int64_t> n = SmallInteger(*v);
      if (n && std::find(f.int_values.begin(), f.int_values.end(), *n) != f.int_values.end()) {
        *static_cast<int*>(slot.p) = static_cast<int>(*n);
      } else {
        io::AddError(errors, "unknown_value", std::string(f.path), std::string(f.path) + " " + std::string(f.message));
      }
      return;
    }
    case Type::kBoolOrEnum: {
      const Json* v = r.Raw(key);
      if (v == nullptr) return;
      // true / false are the boolean branch; the other names are strings.
      std::string_view name;
      if (v->is_boolean()) name = v->get<bool>() ? "true" : "false";
      else if (v->is_string() && v->get_ref<const std::string&>() != "true" && v->get_ref<const std::string&>() != "false") name = v->get_ref<const std::string&>();
      for (size_t i = 0; i < f.values.size(); ++i) {
        if (!name.empty() && f.values[i] == name) {
          slot.set_enum(slot.p, f.enum_codes[i]);
          return;
        }
      }
      io::AddError(errors, v->is_string() ? "unknown_value" : "wrong_type", std::string(f.path),
                   std::string(f.path) + " " + std::string(f.message));
      return;
    }
    default: return;
  }
}

// Cross-field checks of one object, once its fields are read.
void CheckTrain(const TrainConfig& t, Issues* errors) {
  if (t.qlora_backend == QloraBackend::kTorchao && t.qlora_bits != 4) {
    io::AddError(errors, "unsupported_combination", "train.qlora_backend",
                 "train.qlora_backend \"torchao\" is torchao's NF4Tensor: 4-bit only (train.qlora_bits 4)");
  }
  if (t.autocast && (t.precision == Precision::kFp32 || t.precision == Precision::kAmpBf16 || t.precision == Precision::kAmpFp16)) {
    io::AddError(errors, "invalid_value", "train.autocast",
                 "train.autocast applies to 16-bit weights (bf16, fp16, mixed_*); amp_* already runs under autocast and fp32 does not");
  }
}

// The two transformers versions' shifted-logits copies are exclusive: <= 4.45 upcasts in the model
// forward, 4.46-4.48 inside ForCausalLMLoss.
void CheckFramework(const FrameworkConfig& f, Issues* errors) {
  if (f.loss_shift_logits_copy && f.loss_function_shift_copy) {
    io::AddError(errors, "unsupported_combination", "framework.loss_function_shift_copy",
                 "framework.loss_function_shift_copy (transformers 4.46-4.48) and framework.loss_shift_logits_copy "
                 "(transformers <= 4.45) describe different versions: set at most one");
  }
}

// Cross-field checks of the degrees, validated once into the job's topology (parallel/topology.h).
void CheckParallel(const ParallelConfig& p, Issues* errors) {
  if (!errors->empty()) return;
  ValidateTopology(p, errors);
}

// Reads the fields of `object` (nullptr: the document) from `v` in the table's order, rejects every
// other key, then runs the object's cross-field checks.
void ReadObject(const Json& v, const fields::Field* object, Scenario* s, Issues* errors, Issues* warnings) {
  const std::string_view path = object == nullptr ? std::string_view() : object->path;
  ObjectReader r(v, std::string(path), errors);
  for (const fields::Field* f : fields::Children(object)) {
    ReadField(r, *f, s, errors, warnings);
    // The preset sets the framework's defaults; the fields after it override them.
    if (f->path == "framework.preset") ApplyFrameworkPreset(s->framework.preset, &s->framework);
  }
  r.RejectUnknownKeys();
  if (path == "train") CheckTrain(s->train, errors);
  else if (path == "parallel") CheckParallel(s->parallel, errors);
  else if (path == "framework") CheckFramework(s->framework, errors);
}

// A custom GPU (the object form of "gpu").
void ReadCustomGpu(const Json& v, Scenario* s, Issues* errors) {
  GpuChoice* g = &s->gpu;
  ObjectReader r(v, "gpu", errors);
  if (!r.valid()) return;
  g->id = "custom";
  g->name.clear();
  g->memory_bytes = 0;
  for (const fields::Field* f : fields::Children(fields::Find("gpu"))) ReadField(r, *f, s, errors, nullptr);
  r.RejectUnknownKeys();
  const fields::Field* memory = fields::Find("gpu.memory_bytes");
  if (errors->empty() && g->memory_bytes == 0) io::AddError(errors, "missing_key", std::string(memory->path), std::string(memory->message));
  if (g->name.empty()) g->name = "custom GPU";
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

// A quantized checkpoint is served in its own format (model/checkpoint_format.h): with
// inference.weights absent, vLLM and transformers scenarios take the checkpoint's; llama.cpp runs
// GGUF files, which a config.json does not describe. A format the estimate does not model, or an
// explicit inference.weights that contradicts the checkpoint, is said in a warning.
void ResolveCheckpointWeights(const Json& doc, Scenario* s, Issues* warnings) {
  const ModelSpec& m = s->model;
  if (s->mode != Mode::kInference || m.checkpoint_quantization.empty() || s->inference.engine == Engine::kLlamaCpp) return;
  auto inference = doc.find("inference");
  const bool given = inference != doc.end() && inference->is_object() && inference->contains("weights");
  const std::optional<WeightFormat> stored = io::ValueOf(m.checkpoint_weights, io::kWeightFormatNames);
  const std::string what = "the checkpoint's quantization_config says " + m.checkpoint_quantization;
  if (!given) {
    if (stored) {
      s->inference.weights = *stored;
      if (*stored == WeightFormat::kMxfp4 && s->inference.engine == Engine::kTransformers) {
        warnings->push_back(MakeWarning(WarningCode::kApproximate, "inference.weights",
                                        what + ": counted as mxfp4; transformers keeps MXFP4 weights only with its triton kernels "
                                               "installed (Mxfp4HfQuantizer) and otherwise dequantizes them to bf16 on load"));
      }
    } else {
      warnings->push_back(MakeWarning(WarningCode::kNotModeled, "inference.weights",
                                      what + ", a format the estimate does not model: the weights are counted as " +
                                          WeightFormatName(s->inference.weights) + "; set inference.weights to the nearest format"));
    }
    return;
  }
  if (stored && s->inference.weights != *stored) {
    warnings->push_back(MakeWarning(WarningCode::kApproximate, "inference.weights",
                                    what + ": vLLM and transformers load it as " + m.checkpoint_weights + ", and the estimate counts " +
                                        WeightFormatName(s->inference.weights) + " as set (leave inference.weights out to use the checkpoint's)"));
  }
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
      const std::vector<std::string_view>& allowed = fields::Find("train.lora.modules_to_save")->item_values;
      if (std::find(allowed.begin(), allowed.end(), m) == allowed.end()) {
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
  CheckSpeculative(s, errors);  // inference/vllm_speculative.h
  ValidateTopologyForModel(s.parallel, s.model, errors);  // parallel/topology.h
  if (s.mode == Mode::kTrain) ValidateTrainingTopology(s, errors);
}

}  // namespace

Expected<Scenario> ParseScenarioWithWarnings(std::string_view text, Issues* warnings) {
  // The input limits hold before anything copies, dumps or walks the tree (io/input_limits.h).
  Json doc;
  Issues errors;
  if (!io::ParseUserJson(text, "", "scenario", &doc, &errors)) return errors;
  Scenario s;
  if (!doc.is_object()) {
    ObjectReader r(doc, "", &errors);  // records "the document must be an object"
    return errors;
  }
  ReadObject(doc, nullptr, &s, &errors, warnings);
  if (errors.empty()) {
    ResolveLoraDefaults(&s);
    ResolveCheckpointWeights(doc, &s, warnings);
    ValidateAgainstModel(s, &errors);
  }
  if (!errors.empty()) {
    io::CapIssues(&errors);
    return errors;
  }
  return s;
}

Issues ValidateCombination(const Scenario& s) {
  Issues errors;
  CheckTrain(s.train, &errors);
  if (errors.empty()) CheckFramework(s.framework, &errors);
  if (errors.empty()) CheckParallel(s.parallel, &errors);
  if (errors.empty()) ValidateAgainstModel(s, &errors);
  return errors;
}

Expected<Scenario> ParseScenario(std::string_view text) {
  Issues warnings;
  return ParseScenarioWithWarnings(text, &warnings);
}

}  // namespace vramplan
