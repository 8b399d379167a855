// `vllm serve MODEL [options]` (or `python -m vllm.entrypoints.openai.api_server --model MODEL`).
// Options and defaults: vllm/engine/arg_utils.py EngineArgs and its add_cli_args (vLLM v0.10);
// --max-model-len accepts vLLM's human-readable sizes (vllm/engine/arg_utils.py human_readable_int:
// 1k = 1000, 1K = 1024, m/M likewise).
#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "inference/packed_linear_bytes.h"
#include "io/enum_names.h"
#include "io/message_text.h"
#include "launch/command_args.h"
#include "launch/formats.h"
#include "launch/model_match.h"
#include "model/catalog.h"

namespace vramplan::launch {
namespace {

std::string Canonical(std::string key) {
  std::replace(key.begin(), key.end(), '_', '-');
  return key;
}

// Options that carry no memory effect on the GPU (serving front end, logging, tokenizer, sampling defaults).
bool NoEffect(std::string_view k) {
  return OneOf(k, {"host", "port", "served-model-name", "api-key", "trust-remote-code", "download-dir", "seed", "disable-log-requests",
                   "enable-log-requests", "disable-log-stats", "uvicorn-log-level", "chat-template", "chat-template-content-format",
                   "tokenizer", "tokenizer-mode", "tokenizer-revision", "revision", "code-revision", "load-format", "config-format",
                   "enable-auto-tool-choice", "tool-call-parser", "reasoning-parser", "root-path", "allowed-origins", "allowed-methods",
                   "allowed-headers", "ssl-keyfile", "ssl-certfile", "ssl-ca-certs", "generation-config", "override-generation-config",
                   "max-logprobs", "response-role", "distributed-executor-backend", "worker-cls", "hf-token", "disable-fastapi-docs",
                   "middleware", "enable-prefix-caching", "no-enable-prefix-caching", "enable-chunked-prefill", "no-enable-chunked-prefill",
                   "max-seq-len-to-capture", "disable-custom-all-reduce", "swap-space", "return-tokens-as-token-ids", "enable-request-id-headers",
                   "disable-frontend-multiprocessing", "api-server-count", "headless", "log-config-file", "max-log-len", "prefix-caching-hash-algo",
                   "scheduling-policy", "async-scheduling", "enable-prompt-tokens-details", "hf-overrides", "override-pooler-config",
                   "guided-decoding-backend", "structured-outputs-config", "disable-uvicorn-access-log", "lora-dtype", "enable-force-include-usage"});
}

const std::vector<std::string_view>& Flags() {
  static const std::vector<std::string_view> flags = {
      "enforce-eager", "enable-prefix-caching", "no-enable-prefix-caching", "enable-chunked-prefill", "no-enable-chunked-prefill",
      "trust-remote-code", "disable-log-requests", "enable-log-requests", "disable-log-stats", "enable-auto-tool-choice",
      "disable-custom-all-reduce", "enable-expert-parallel", "disable-frontend-multiprocessing", "enable-lora", "headless",
      "async-scheduling", "disable-fastapi-docs", "return-tokens-as-token-ids", "enable-request-id-headers", "enable-prompt-tokens-details",
      "disable-uvicorn-access-log", "enable-force-include-usage", "enable_prefix_caching", "enforce_eager", "trust_remote_code"};
  return flags;
}

std::optional<int64_t> HumanInt(const std::string& s) {
  if (s.empty()) return std::nullopt;
  double scale = 1;
  std::string digits = s;
  const char last = s.back();
  if (last == 'k') scale = 1e3;
  else if (last == 'K') scale = 1024;
  else if (last == 'm') scale = 1e6;
  else if (last == 'M') scale = 1024.0 * 1024;
  else if (last == 'g') scale = 1e9;
  else if (last == 'G') scale = 1024.0 * 1024 * 1024;
  if (scale != 1) digits.pop_back();
  char* end = nullptr;
  const double v = std::strtod(digits.c_str(), &end);
  if (digits.empty() || end != digits.c_str() + digits.size() || !std::isfinite(v)) return std::nullopt;
  const double total = v * scale;
  if (total < 0 || total > 9e15 || std::floor(total) != total) return std::nullopt;
  return static_cast<int64_t>(total);
}

}  // namespace

void ImportVllm(std::string_view text, ImportContext* ctx) {
  CommandArgs args;
  auto is_program = [](const std::string& w) {
    const size_t slash = w.find_last_of('/');
    const std::string base = slash == std::string::npos ? w : w.substr(slash + 1);
    return base == "vllm" || w == "vllm.entrypoints.openai.api_server";
  };
  if (!ReadCommand(text, is_program, Flags(), "vllm serve", &args, ctx)) return;
  ctx->Set("mode", "inference");
  ctx->Set("inference.engine", "vllm");
  for (const std::string& w : args.before) {
    if (w.find('=') != std::string::npos) ctx->Ignored(w.substr(0, w.find('=')), "environment variable: the GPU count comes from the parallel sizes");
  }
  std::vector<std::string> positionals = args.positionals;
  if (!positionals.empty() && positionals[0] == "serve") positionals.erase(positionals.begin());
  std::string model = positionals.empty() ? "" : positionals[0];
  int64_t tp = 1, pp = 1, dp = 1;
  std::string dtype, quantization;
  for (const CommandOption& o : args.options) {
    const std::string k = Canonical(o.key);
    const std::string key = "--" + k;
    const io::Json v = o.value ? io::Json(*o.value) : io::Json(nullptr);
    auto need = [&]() {
      if (!o.value) ctx->Error(key, "needs a value");
      return o.value.has_value();
    };
    if (k == "model") {
      if (need()) model = *o.value;
    } else if (k == "tensor-parallel-size" || k == "tp") {
      if (need()) if (auto n = ctx->Int(v, key, 1, 65536)) tp = *n, ctx->Read(key, "parallel.tp", *n);
    } else if (k == "pipeline-parallel-size" || k == "pp") {
      if (need()) if (auto n = ctx->Int(v, key, 1, 65536)) pp = *n, ctx->Read(key, "parallel.pp", *n);
    } else if (k == "data-parallel-size" || k == "dp") {
      if (need()) if (auto n = ctx->Int(v, key, 1, 65536)) dp = *n, ctx->AddNote("read", key, "-> parallel.gpus (replicas)");
    } else if (k == "max-model-len") {
      if (!need()) continue;
      const auto n = HumanInt(*o.value);
      if (n && *n >= 1 && *n <= (int64_t{1} << 24)) ctx->Read(key, "inference.max_model_len", *n);
      else ctx->Error(key, "expected a token count from 1 to 16777216 (such as 32768 or 32k), got " + io::Preview(v), "out_of_range");
    } else if (k == "gpu-memory-utilization") {
      if (need()) if (auto x = ctx->Number(v, key, 0.05, 1.0)) ctx->Read(key, "inference.gpu_memory_utilization", *x);
    } else if (k == "max-num-seqs") {
      if (need()) if (auto n = ctx->Int(v, key, 1, 65536)) ctx->Read(key, "inference.max_num_seqs", *n);
    } else if (k == "max-num-batched-tokens") {
      if (!need()) continue;
      const auto n = HumanInt(*o.value);
      if (n && *n >= 1 && *n <= (int64_t{1} << 24)) ctx->Read(key, "inference.max_num_batched_tokens", *n);
      else ctx->Error(key, "expected a token count from 1 to 16777216, got " + io::Preview(v), "out_of_range");
    } else if (k == "limit-mm-per-prompt") {
      // vllm/engine/arg_utils.py: a JSON object ({"image": 2, "video": 1} or {"image": {"count": 2}}),
      // or the older image=2,video=1 form; the image and video counts are modelled.
      if (!need()) continue;
      const std::string& spec = *o.value;
      const io::Json j = io::Json::parse(spec, nullptr, false);
      auto count_of = [&](const char* modality) -> std::optional<int64_t> {
        if (j.is_object()) {
          if (!j.contains(modality)) return std::nullopt;
          const io::Json& m = j[modality];
          const io::Json& n = m.is_object() && m.contains("count") ? m["count"] : m;
          if (n.is_number_integer() && n.get<int64_t>() >= 0 && n.get<int64_t>() <= 65536) return n.get<int64_t>();
          return std::nullopt;
        }
        const std::string key_eq = std::string(modality) + "=";
        const auto at = spec.find(key_eq);
        if (at == std::string::npos) return std::nullopt;
        const auto from = at + key_eq.size();
        const auto comma = spec.find(',', from);
        const auto n = HumanInt(spec.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
        if (n && *n >= 0 && *n <= 65536) return *n;
        return std::nullopt;
      };
      const std::optional<int64_t> images = count_of("image"), videos = count_of("video");
      if (images) ctx->Read(key, "inference.limit_mm_per_prompt", *images);
      if (videos) ctx->Read(key, "inference.limit_mm_video_per_prompt", *videos);
      if (!images && !videos) ctx->Unsupported(key, "no image or video count read from " + io::Preview(v) + " (only those limits are modelled)");
    } else if (k == "mm-processor-kwargs") {
      if (!need()) continue;
      const io::Json j = io::Json::parse(*o.value, nullptr, false);
      if (j.is_object() && j.contains("max_pixels") && j["max_pixels"].is_number_integer() && j["max_pixels"].get<int64_t>() > 0) {
        ctx->Read(key, "inference.mm_max_pixels", j["max_pixels"].get<int64_t>());
      } else {
        ctx->Unsupported(key, "only max_pixels is modelled");
      }
    } else if (k == "speculative-config") {
      // vllm/config/speculative.py SpeculativeConfig: {"method": "mtp", "num_speculative_tokens": N}
      // (the per-model MTP method names are mapped to "mtp"); other methods are not modelled.
      if (!need()) continue;
      const io::Json j = io::Json::parse(*o.value, nullptr, false);
      const io::Json* method = j.is_object() && j.contains("method") ? &j["method"] : nullptr;
      const std::string name = method != nullptr && method->is_string() ? method->get<std::string>() : std::string();
      bool mtp = false;
      for (const auto& n : io::kSpeculativeMethodNames) mtp = mtp || (n.value == SpeculativeMethod::kMtp && name == n.name);
      if (!mtp) {
        ctx->Unsupported(key, "only method \"mtp\" (the checkpoint's MTP layers) is modelled, got " + io::Preview(v));
        continue;
      }
      ctx->Read(key, "inference.speculative.method", "mtp");
      if (j.contains("num_speculative_tokens")) {
        if (auto n = ctx->Int(j["num_speculative_tokens"], key, 1, 64)) ctx->Read(key, "inference.speculative.num_speculative_tokens", *n);
      }
    } else if (k == "block-size") {
      if (need()) if (auto n = ctx->Int(v, key, 1, 1024)) ctx->Read(key, "inference.block_size", *n);
    } else if (k == "kv-cache-dtype") {
      if (!need()) continue;
      const std::string& d = *o.value;
      if (d == "auto") ctx->Read(key, "inference.kv_cache", "auto");
      else if (d.rfind("fp8", 0) == 0) ctx->Read(key, "inference.kv_cache", "fp8");
      else if (d == "bfloat16") ctx->Read(key, "inference.kv_cache", "bf16");
      else if (d == "float16" || d == "half") ctx->Read(key, "inference.kv_cache", "fp16");
      else ctx->Error(key, "expected auto, fp8, fp8_e4m3, fp8_e5m2, bfloat16 or float16, got " + io::Preview(v));
    } else if (k == "dtype") {
      if (need()) dtype = *o.value;
    } else if (k == "quantization" || k == "q") {
      if (need()) quantization = *o.value;
    } else if (k == "enforce-eager") {
      if (!o.value || *o.value == "true" || *o.value == "True") ctx->Read(key, "inference.cuda_graphs", false);
      else ctx->Ignored(key, "false: CUDA graphs captured");
    } else if (k == "cpu-offload-gb" || k == "kv-cache-memory-bytes" || k == "num-gpu-blocks-override" || k == "enable-lora" ||
               k == "max-lora-rank" || k == "max-loras" || k == "lora-modules" || k == "limit-mm-per-prompt" ||
               k == "enable-expert-parallel" || k == "kv-transfer-config" || k == "compilation-config" || k == "max-cpu-loras") {
      ctx->Unsupported(key, "changes GPU memory in a way the vLLM estimate does not model");
    } else if (k == "config") {
      ctx->Unsupported(key, "a YAML file of options: paste its options on the command line");
    } else if (NoEffect(k)) {
      ctx->Ignored(key);
    } else {
      ctx->Unsupported(key, "not a vLLM engine option the estimate reads (vllm/engine/arg_utils.py)");
    }
  }
  if (!ctx->errors.empty()) return;
  if (model.empty()) ctx->AddNote("model", "model", "no model on the command line: choose one");
  else ReadModel(ctx, "model", model);
  ctx->Set("parallel.gpus", tp * pp * dp);
  // Weights: --quantization wins over --dtype (the checkpoint's own quantization otherwise).
  if (!quantization.empty()) {
    static constexpr std::array<std::pair<std::string_view, const char*>, 7> kQuant = {{
        {"awq", "awq_4bit"}, {"awq_marlin", "awq_4bit"}, {"gptq", "gptq_4bit"}, {"gptq_marlin", "gptq_4bit"}, {"fp8", "fp8"},
        {"bitsandbytes", "nf4"}, {"gptq_marlin_24", "gptq_4bit"}}};
    bool known = false;
    for (const auto& [name, format] : kQuant) {
      if (quantization == name) {
        ctx->Read("--quantization", "inference.weights", format);
        known = true;
      }
    }
    if (!known) ctx->Unsupported("--quantization", "quantization " + io::Preview(io::Json(quantization)) + " is not modeled; set inference.weights");
  } else if (!dtype.empty() && dtype != "auto") {
    if (dtype == "bfloat16") ctx->Read("--dtype", "inference.weights", "bf16");
    else if (dtype == "float16" || dtype == "half") ctx->Read("--dtype", "inference.weights", "fp16");
    else if (dtype == "float32" || dtype == "float") ctx->Read("--dtype", "inference.weights", "fp32");
    else ctx->Error("--dtype", "expected auto, bfloat16, float16, half, float32 or float, got " + io::Preview(io::Json(dtype)));
  } else {
    // Left unset: the estimate takes a quantized checkpoint's own format from its
    // quantization_config, as vLLM does, and bf16 otherwise (model/checkpoint_format.h).
    ctx->AddNote("default", "--dtype", "auto: the checkpoint's own format (its quantization_config), else bf16");
  }
  if (!ctx->IsSet("inference.max_model_len")) {
    const io::Json* m = ctx->Get("model");
    const PresetEntry* p = m && m->is_string() ? FindPreset(m->get<std::string>()) : nullptr;
    if (p != nullptr && p->spec.max_position_embeddings > 0) {
      ctx->Default("inference.max_model_len", std::min<int64_t>(p->spec.max_position_embeddings, int64_t{1} << 24),
                   "vLLM's default max_model_len is the model's context length (max_position_embeddings)");
    } else {
      ctx->AddNote("default", "inference.max_model_len", "vLLM uses the model's context length: set inference.max_model_len");
    }
  }
}

ExportText ExportVllm(const Scenario& s) {
  ExportText out;
  const InferenceConfig& inf = s.inference;
  const ParallelConfig& p = s.parallel;
  std::vector<std::string> lines;
  const std::string model = s.model_id.empty() ? "./model" : s.model_id;
  if (s.model_id.empty()) out.notes.push_back(Note{"model", "model", "the model is an inline config: replace ./model with its checkpoint directory"});
  lines.push_back("vllm serve " + ShellQuote(model));
  const int64_t tp_pp = std::max<int64_t>(1, p.tp * p.pp);
  if (p.tp > 1) lines.push_back("--tensor-parallel-size " + std::to_string(p.tp));
  if (p.pp > 1) lines.push_back("--pipeline-parallel-size " + std::to_string(p.pp));
  if (p.gpus > tp_pp && p.gpus % tp_pp == 0) lines.push_back("--data-parallel-size " + std::to_string(p.gpus / tp_pp));
  const int64_t max_model_len = inf.max_model_len > 0 ? inf.max_model_len : inf.prompt_len + inf.new_tokens;
  lines.push_back("--max-model-len " + std::to_string(max_model_len));
  char util[32];
  std::snprintf(util, sizeof util, "%.15g", inf.gpu_memory_utilization);  // the shortest that reads back the same
  if (std::strtod(util, nullptr) != inf.gpu_memory_utilization) std::snprintf(util, sizeof util, "%.17g", inf.gpu_memory_utilization);
  lines.push_back(std::string("--gpu-memory-utilization ") + util);
  lines.push_back("--max-num-seqs " + std::to_string(inf.max_num_seqs));
  if (inf.max_num_batched_tokens > 0) lines.push_back("--max-num-batched-tokens " + std::to_string(inf.max_num_batched_tokens));
  lines.push_back("--block-size " + std::to_string(inf.block_size));
  switch (inf.weights) {
    case WeightFormat::kBf16: lines.push_back("--dtype bfloat16"); break;
    case WeightFormat::kFp16: lines.push_back("--dtype float16"); break;
    case WeightFormat::kFp32: lines.push_back("--dtype float32"); break;
    case WeightFormat::kFp8: lines.push_back("--quantization fp8"); break;
    case WeightFormat::kAwq4: lines.push_back("--quantization awq"); break;
    // An explicit "gptq" forces vLLM's plain GPTQ kernel even where the checkpoint could run
    // gptq_marlin (GPTQMarlinConfig.override_quantization_method), which keeps qzeros: name the
    // Marlin method the estimate counts (inference/packed_linear_bytes.h) when the config's layout
    // allows it.
    case WeightFormat::kGptq4:
      lines.push_back(VllmGptqMarlin(s.model.checkpoint.packed_linears) ? "--quantization gptq_marlin" : "--quantization gptq");
      break;
    case WeightFormat::kNf4: lines.push_back("--quantization bitsandbytes"); break;
    default: break;  // int8 and GGUF: the checkpoint decides; read back as bf16 and kept in the comment
  }
  if (inf.kv_cache == KvDtype::kFp8) lines.push_back("--kv-cache-dtype fp8");
  else if (inf.kv_cache == KvDtype::kAuto) lines.push_back("--kv-cache-dtype auto");
  if (!inf.cuda_graphs) lines.push_back("--enforce-eager");
  if (inf.speculative.method == SpeculativeMethod::kMtp) {
    lines.push_back("--speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": " +
                    std::to_string(inf.speculative.num_speculative_tokens) + "}'");
  }
  for (size_t i = 0; i < lines.size(); ++i) out.text += (i ? "  " : "") + lines[i] + (i + 1 < lines.size() ? " \\\n" : "\n");
  return out;
}

}  // namespace vramplan::launch
