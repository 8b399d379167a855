// `llama-server ...` and `llama-cli ...` (llama.cpp). Options, their short forms and defaults:
// common/arg.cpp common_params_parser_init and common/common.h common_params (llama.cpp b6500;
// `-fa` takes on|off|auto since b6325 and was a bare flag before; both are read).
#include <algorithm>
#include <array>
#include <cctype>

#include "io/message_text.h"
#include "launch/command_args.h"
#include "launch/formats.h"
#include "launch/model_match.h"
#include "model/catalog.h"

namespace vramplan::launch {
namespace {

const std::vector<std::string_view>& Flags() {
  static const std::vector<std::string_view> flags = {
      "mlock", "no-mmap", "jinja", "cb", "cont-batching", "nocb", "no-cont-batching", "metrics", "slots", "no-slots", "no-webui", "cnv",
      "conversation", "no-cnv", "nkvo", "no-kv-offload", "swa-full", "cmoe", "cpu-moe", "embedding", "embeddings", "reranking", "rerank",
      "v", "verbose", "log-disable", "no-warmup", "check-tensors", "kvu", "kv-unified", "verbose-prompt", "no-display-prompt", "i",
      "interactive", "e", "escape", "color", "offline", "no-context-shift", "context-shift", "log-colors", "log-timestamps", "log-prefix",
      "no-perf", "perf", "st", "single-turn", "ignore-eos", "special", "sp", "no-escape", "mmproj-offload", "no-mmproj-offload"};
  return flags;
}

// A GGUF tensor type in a file name or a -hf tag ("Q4_K_M") -> inference.weights.
const char* WeightsFromTag(std::string name) {
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  static constexpr std::array<std::pair<std::string_view, const char*>, 15> kTags = {{
      {"IQ4_XS", "gguf_iq4_xs"}, {"IQ3_XXS", "gguf_iq3_xxs"}, {"IQ2_XXS", "gguf_iq2_xxs"}, {"Q8_0", "gguf_q8_0"}, {"Q6_K", "gguf_q6_k"},
      {"Q5_K_M", "gguf_q5_k_m"}, {"Q5_K_S", "gguf_q5_k_s"}, {"Q4_K_M", "gguf_q4_k_m"}, {"Q4_K_S", "gguf_q4_k_s"}, {"Q4_0", "gguf_q4_0"},
      {"Q3_K_M", "gguf_q3_k_m"}, {"Q2_K", "gguf_q2_k"}, {"BF16", "bf16"}, {"F16", "fp16"}, {"F32", "fp32"}}};
  for (const auto& [tag, format] : kTags) {
    const size_t at = name.rfind(tag);
    if (at == std::string::npos) continue;
    const bool left = at == 0 || !std::isalnum(static_cast<unsigned char>(name[at - 1]));
    const size_t end = at + tag.size();
    const bool right = end == name.size() || !std::isalnum(static_cast<unsigned char>(name[end]));
    if (left && right) return format;
  }
  return nullptr;
}

const char* TagOf(WeightFormat w) {
  switch (w) {
    case WeightFormat::kGgufQ8_0: return "Q8_0";
    case WeightFormat::kGgufQ6_K: return "Q6_K";
    case WeightFormat::kGgufQ5_K_M: return "Q5_K_M";
    case WeightFormat::kGgufQ5_K_S: return "Q5_K_S";
    case WeightFormat::kGgufQ4_K_M: return "Q4_K_M";
    case WeightFormat::kGgufQ4_K_S: return "Q4_K_S";
    case WeightFormat::kGgufQ4_0: return "Q4_0";
    case WeightFormat::kGgufQ3_K_M: return "Q3_K_M";
    case WeightFormat::kGgufQ2_K: return "Q2_K";
    case WeightFormat::kGgufIq4_Xs: return "IQ4_XS";
    case WeightFormat::kGgufIq3_Xxs: return "IQ3_XXS";
    case WeightFormat::kGgufIq2_Xxs: return "IQ2_XXS";
    case WeightFormat::kBf16: return "BF16";
    case WeightFormat::kFp16: return "F16";
    case WeightFormat::kFp32: return "F32";
    default: return nullptr;
  }
}

// ggml cache types (common/arg.cpp kv_cache_types) -> inference.kv_cache.
const char* KvFromCacheType(const std::string& t) {
  if (t == "f32") return "fp32";
  if (t == "f16") return "fp16";
  if (t == "bf16") return "bf16";
  if (t == "q8_0") return "int8";
  if (t == "q4_0" || t == "q4_1" || t == "iq4_nl") return "int4";
  return nullptr;
}

}  // namespace

void ImportLlamaCpp(std::string_view text, ImportContext* ctx) {
  CommandArgs args;
  auto is_program = [](const std::string& w) {
    const size_t slash = w.find_last_of('/');
    const std::string base = slash == std::string::npos ? w : w.substr(slash + 1);
    return base.rfind("llama-server", 0) == 0 || base.rfind("llama-cli", 0) == 0;
  };
  if (!ReadCommand(text, is_program, Flags(), "llama-server or llama-cli", &args, ctx)) return;
  ctx->Set("mode", "inference");
  ctx->Set("inference.engine", "llama_cpp");
  ctx->Set("parallel.gpus", 1);
  std::string model, cache_k, cache_v;
  for (size_t i = 0; i < args.options.size(); ++i) {
    const CommandOption& o = args.options[i];
    const std::string& k = o.key;
    const std::string key = (k.size() <= 3 ? "-" : "--") + k;
    const io::Json v = o.value ? io::Json(*o.value) : io::Json(nullptr);
    auto need = [&]() {
      if (!o.value) ctx->Error(key, "needs a value");
      return o.value.has_value();
    };
    if (OneOf(k, {"m", "model", "hf", "hfr", "hf-repo", "hff", "hf-file", "mu", "model-url"})) {
      if (!need()) continue;
      if (OneOf(k, {"hff", "hf-file"}) || model.empty() || OneOf(k, {"m", "model"})) model = *o.value;
    } else if (OneOf(k, {"c", "ctx-size"})) {
      if (!need()) continue;
      if (auto n = ctx->Int(v, key, 0, int64_t{1} << 24)) {
        if (*n > 0) {
          ctx->Read(key, "inference.n_ctx", *n);
        } else {
          ctx->AddNote("read", key, "0: the model's training context");
          ctx->Set("inference.n_ctx", -1);  // resolved below from the model
        }
      }
    } else if (OneOf(k, {"np", "parallel"})) {
      if (need()) if (auto n = ctx->Int(v, key, 1, 65536)) ctx->Read(key, "inference.batch_size", *n);
    } else if (OneOf(k, {"b", "batch-size"})) {
      if (need()) if (auto n = ctx->Int(v, key, 1, int64_t{1} << 24)) ctx->Read(key, "inference.n_batch", *n);
    } else if (OneOf(k, {"ub", "ubatch-size"})) {
      if (need()) if (auto n = ctx->Int(v, key, 1, int64_t{1} << 24)) ctx->Read(key, "inference.n_ubatch", *n);
    } else if (OneOf(k, {"ngl", "gpu-layers", "n-gpu-layers"})) {
      if (!need()) continue;
      if (*o.value == "all" || *o.value == "auto") ctx->Read(key, "inference.n_gpu_layers", -1);
      else if (auto n = ctx->Int(v, key, -1, 1 << 20)) ctx->Read(key, "inference.n_gpu_layers", std::min<int64_t>(*n, 4096));
    } else if (OneOf(k, {"fa", "flash-attn"})) {
      if (!o.value) {
        ctx->Read(key, "inference.flash_attn", true);
      } else if (OneOf(*o.value, {"on", "1", "true", "auto", "enabled"})) {
        ctx->Read(key, "inference.flash_attn", true);
        if (*o.value == "auto") ctx->AddNote("read", key, "auto: on where the backend supports it (CUDA does)");
      } else if (OneOf(*o.value, {"off", "0", "false", "disabled"})) {
        ctx->Read(key, "inference.flash_attn", false);
      } else {
        ctx->Error(key, "expected on, off or auto, got " + io::Preview(v));
      }
    } else if (OneOf(k, {"ctk", "cache-type-k", "ctv", "cache-type-v"})) {
      if (!need()) continue;
      if (KvFromCacheType(*o.value) == nullptr) {
        ctx->Unsupported(key, "cache type " + io::Preview(v) + " is not modeled (f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl are)");
        continue;
      }
      (OneOf(k, {"ctk", "cache-type-k"}) ? cache_k : cache_v) = *o.value;
      ctx->AddNote("read", key, "-> inference.kv_cache");
    } else if (OneOf(k, {"n", "n-predict", "predict"})) {
      if (!need()) continue;
      if (auto n = ctx->Int(v, key, -2, int64_t{1} << 24)) {
        if (*n >= 0) ctx->Read(key, "inference.new_tokens", *n);
        else ctx->Ignored(key, "until end of text: the context bounds it");
      }
    } else if (OneOf(k, {"sm", "split-mode"})) {
      if (o.value && *o.value == "none") ctx->Ignored(key, "one GPU");
      else ctx->Unsupported(key, "several GPUs: the estimate models the GPU holding the offloaded layers");
    } else if (k == "no-mmproj-offload") {
      ctx->Unsupported(key, "the projector on the CPU is not modelled: --mmproj's buffers are counted on the GPU");
    } else if (k == "mmproj-offload") {
      ctx->Ignored(key, "the default: the projector on the GPU");
    } else if (OneOf(k, {"mm", "mmproj"})) {
      // tools/mtmd: the projector GGUF, loaded on the GPU (docs/inference.md "llama.cpp: --mmproj");
      // its file type from the usual file names (mmproj-model-f16.gguf, mmproj-BF16.gguf, ...-Q8_0.gguf).
      if (!need()) continue;
      std::string name = *o.value;
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      const char* type = name.find("bf16") != std::string::npos   ? "bf16"
                         : name.find("f32") != std::string::npos  ? "f32"
                         : name.find("q8_0") != std::string::npos ? "q8_0"
                                                                  : "f16";
      ctx->Read(key, "inference.mmproj", type);
      if (name.find("f16") == std::string::npos && std::string(type) == "f16") ctx->AddNote("read", key, "file type not in the name: f16 assumed (the usual mmproj)");
    } else if (OneOf(k, {"ts", "tensor-split", "ot", "override-tensor", "cmoe", "cpu-moe", "ncmoe", "n-cpu-moe", "nkvo", "no-kv-offload",
                         "swa-full", "lora", "lora-scaled", "md", "model-draft", "kvu", "kv-unified", "cram", "cache-ram"})) {
      ctx->Unsupported(key, "changes what sits on the GPU in a way the llama.cpp estimate does not model");
    } else if (OneOf(k, {"t", "threads", "tb", "threads-batch", "host", "port", "temp", "top-k", "top-p", "min-p", "repeat-penalty", "seed", "s",
                         "jinja", "chat-template", "chat-template-file", "mlock", "no-mmap", "numa", "v", "verbose", "log-disable", "log-file",
                         "metrics", "slots", "no-slots", "api-key", "a", "alias", "no-webui", "cb", "cont-batching", "nocb", "no-cont-batching",
                         "cache-reuse", "cnv", "conversation", "no-cnv", "reasoning-format", "reasoning-budget", "p", "prompt", "f", "file",
                         "sys", "system-prompt", "mg", "main-gpu", "dev", "device", "no-warmup", "i", "interactive", "color", "e", "escape",
                         "offline", "no-context-shift", "context-shift", "timeout", "to", "threads-http", "path", "log-colors", "log-verbosity",
                         "lv", "log-prefix", "log-timestamps", "keep", "ctx-checkpoints", "swa-checkpoints", "st", "single-turn", "ignore-eos",
                         "sp", "special", "no-perf", "perf", "prio", "poll", "cpu-mask", "C", "cpu-range", "Cr", "hf-token", "hft", "ssl-key-file",
                         "ssl-cert-file", "props", "n-probs", "slot-save-path", "slot-prompt-similarity", "sps", "webui", "embeddings",
                         "embedding", "pooling", "rerank", "reranking", "rope-scaling", "rope-scale", "rope-freq-base", "rope-freq-scale",
                         "yarn-orig-ctx", "grp-attn-n", "grp-attn-w", "check-tensors", "override-kv", "no-escape", "verbose-prompt",
                         "no-display-prompt", "dry-multiplier", "presence-penalty", "frequency-penalty", "mirostat", "samplers", "grammar",
                         "json-schema", "j"})) {
      ctx->Ignored(key);
    } else {
      ctx->Unsupported(key, "not an option the llama.cpp estimate reads (common/arg.cpp)");
    }
  }
  if (!ctx->errors.empty()) return;
  if (!cache_k.empty() || !cache_v.empty()) {
    // One KV dtype for both: the larger of K and V (the default f16 for the one not given).
    const std::string k = cache_k.empty() ? "f16" : cache_k, v = cache_v.empty() ? "f16" : cache_v;
    auto rank = [](const std::string& t) { return t == "f32" ? 4 : (t == "f16" || t == "bf16") ? 3 : t == "q8_0" ? 2 : 1; };
    const std::string& wider = rank(k) >= rank(v) ? k : v;
    ctx->Set("inference.kv_cache", KvFromCacheType(wider));
    if (k != v) ctx->AddNote("read", "-ctk/-ctv", "K and V differ (" + k + ", " + v + "): estimated with both as " + wider);
  }
  if (model.empty()) {
    ctx->AddNote("model", "-m", "no model on the command line: choose one");
  } else {
    ReadModel(ctx, "-m", model);
    if (const char* w = WeightsFromTag(model)) ctx->Read("-m", "inference.weights", w);
    else ctx->AddNote("unsupported", "-m", "no GGUF type (Q4_K_M, Q8_0, F16, ...) in the file name: set inference.weights");
  }
  const PresetEntry* preset = nullptr;
  if (const io::Json* m = ctx->Get("model"); m && m->is_string()) preset = FindPreset(m->get<std::string>());
  const io::Json* n_ctx = ctx->Get("inference.n_ctx");
  if (n_ctx != nullptr && *n_ctx == -1) {
    if (preset != nullptr) ctx->Set("inference.n_ctx", std::min<int64_t>(preset->spec.max_position_embeddings, int64_t{1} << 24));
    else ctx->Set("inference.n_ctx", 0);
  }
  const io::Json* ngl = ctx->Get("inference.n_gpu_layers");
  if (ngl != nullptr && preset != nullptr && ngl->is_number_integer() && ngl->get<int64_t>() >= preset->spec.num_layers) {
    ctx->Set("inference.n_gpu_layers", -1);  // every layer (the output layer too: llama.cpp counts it as layer n_layer)
  }
  // common_params defaults (common/common.h): n_ctx 4096, n_batch 2048, n_ubatch 512, one slot.
  ctx->Default("inference.n_ctx", 4096, "llama.cpp's default context (common_params.n_ctx)");
  ctx->Default("inference.n_batch", 2048, "llama.cpp's default n_batch");
  ctx->Default("inference.n_ubatch", 512, "llama.cpp's default n_ubatch");
  ctx->Default("inference.n_gpu_layers", -1, "all layers on the GPU assumed (recent llama.cpp offloads every layer by default; older builds default to 0)");
  ctx->Default("inference.flash_attn", false, "llama.cpp's flash attention default before b6325 (auto since, on for CUDA): give -fa on|off");
  ctx->Default("inference.batch_size", 1, "one slot (-np 1)");
}

ExportText ExportLlamaCpp(const Scenario& s) {
  ExportText out;
  const InferenceConfig& inf = s.inference;
  const std::string name = s.model_id.empty() ? "model" : s.model_id.substr(s.model_id.find_last_of('/') + 1);
  const char* tag = TagOf(inf.weights);
  if (s.model_id.empty()) out.notes.push_back(Note{"model", "-m", "the model is an inline config: replace model.gguf with its GGUF file"});
  std::vector<std::string> lines;
  lines.push_back("llama-server -m " + ShellQuote(name + (tag ? std::string("-") + tag : "") + ".gguf"));
  const int64_t n_ctx = inf.n_ctx > 0 ? inf.n_ctx : std::max<int64_t>(1, inf.batch_size) * (inf.prompt_len + inf.new_tokens);
  lines.push_back("--ctx-size " + std::to_string(n_ctx));
  lines.push_back("--parallel " + std::to_string(inf.batch_size));
  lines.push_back("--batch-size " + std::to_string(inf.n_batch));
  lines.push_back("--ubatch-size " + std::to_string(inf.n_ubatch));
  lines.push_back("--n-gpu-layers " + (inf.n_gpu_layers < 0 ? std::string("999") : std::to_string(inf.n_gpu_layers)));
  lines.push_back(std::string("--flash-attn ") + (inf.flash_attn ? "on" : "off"));
  const char* cache = nullptr;
  switch (inf.kv_cache) {
    case KvDtype::kFp32: cache = "f32"; break;
    case KvDtype::kFp16: cache = "f16"; break;
    case KvDtype::kBf16: cache = "bf16"; break;
    case KvDtype::kInt8: cache = "q8_0"; break;
    case KvDtype::kInt4: cache = "q4_0"; break;
    default: break;
  }
  if (cache) lines.push_back(std::string("--cache-type-k ") + cache + " --cache-type-v " + cache);
  for (size_t i = 0; i < lines.size(); ++i) out.text += (i ? "  " : "") + lines[i] + (i + 1 < lines.size() ? " \\\n" : "\n");
  return out;
}

}  // namespace vramplan::launch
