// Upper bounds of the estimate's dominant byte counts, per mode and engine (see size_limits.h).
// Each bound has the shape of the formula it covers, with that formula's largest coefficient
// (fp32 everywhere, every optional tensor present), so it is never below the exact value the
// engine computes. Doubles are exact enough: the decision has a factor-of-two margin to int64's
// end, and the largest products (~2^120) are far inside the double range.
#include "util/size_limits.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "format.h"
#include "inference/kv_cache.h"
#include "inference/weight_formats.h"
#include "train/vision_memory.h"
#include "util/checked_math.h"

namespace vramplan {
namespace {

double D(int64_t v) { return static_cast<double>(v); }

}  // namespace

ModelSizes MeasureModel(const ModelSpec& m) {
  ModelSizes z;
  const double h = D(m.hidden_size), V = D(m.vocab_size);
  z.layers = D(m.num_layers);
  z.params = 2 * V * h + V + D(m.position_embedding_rows) * h + D(m.extra_embedding_params) + 2 * D(m.final_norm.dim);
  int64_t uses[256] = {0};  // layer_kind holds uint8_t indices
  for (uint8_t k : m.layer_kind) ++uses[k];
  for (size_t i = 0; i < m.kinds.size() && i < 256; ++i) {
    if (uses[i] == 0) continue;
    const double n = D(uses[i]);
    const LayerKind& kind = m.kinds[i];
    const AttentionGeometry& g = kind.attention;
    const double a = D(g.num_heads), kvh = D(g.num_kv_heads > 0 ? g.num_kv_heads : g.num_heads);
    const double d = D(g.head_dim), dv = D(g.v_head_dim > 0 ? g.v_head_dim : g.head_dim);
    const double E = D(kind.mlp.num_experts), I = D(kind.mlp.intermediate), SI = D(kind.mlp.shared_intermediate);
    const double topk = D(std::max<int64_t>(1, kind.mlp.experts_per_token));
    double layer_params = D(kind.extra_attention_params) + D(kind.extra_router_params);
    for (const LinearSpec& l : kind.linears) {
      const double in = D(l.in_features), out = D(l.out_features), copies = D(l.copies);
      const bool expert = l.role == ModuleRole::kExperts;
      // Routed experts: top-k rows per token (top-1 walks every copy with all rows).
      const double rows = expert ? (topk == 1 ? copies : topk) : copies;
      layer_params += (in * out + out) * (expert ? std::max(copies, topk) : copies);
      z.max_linear = std::max(z.max_linear, in * out);
      z.max_in_in_out = std::max(z.max_in_in_out, in * (in + out));
      if (l.lora_targetable) z.lora_per_rank += n * (in + 2 * out) * copies;
      z.token_io += n * (in + out) * rows;
      z.token_linears += n * rows;
    }
    for (const NormSpec& norm : kind.norms) layer_params += 2 * D(norm.dim);
    z.params += n * layer_params;
    const double attn = 2 * (a + kvh) * (d + dv);
    z.token_other += n * (attn + 4 * h + 4 * I * topk + 4 * I + 4 * SI + E + 4);
    z.heads_layers += n * a;
    z.max_heads = std::max(z.max_heads, a);
    z.max_head_dim = std::max(z.max_head_dim, d);
    z.kv_full += n * kvh * (d + dv);
    z.kv_max_layer = std::max(z.kv_max_layer, kvh * std::max(d, dv));
    z.kv_latent += n * (g.mla ? D(g.kv_lora_rank) + D(g.qk_rope_head_dim) : kvh * (d + dv));
    // At most 4 B per indexer key element (transformers' fp32, llama.cpp f32) + vLLM's scales (4 B
    // per 128) + the fp8_ds_mla latent's extra over 576 fp8 values (80 B).
    if (g.index_head_dim > 0 && !g.index_shared) z.kv_index_bytes += n * (4 * D(g.index_head_dim) + 4 + 80);
    z.max_index_heads = std::max(z.max_index_heads, D(g.index_n_heads));
    z.max_inter = std::max(z.max_inter, E > 0 ? I * topk : I);
    z.prefill_width = std::max(z.prefill_width, 5 * h + 2 * attn + E + 3 * SI + 3 * I * topk + 3 * I);
    z.vllm_width = std::max(z.vllm_width, 2 * h + 2 * a * d + 2 * kvh * d + topk * (3 * I + h) + E);
  }
  return z;
}

namespace {

constexpr double kLimit = static_cast<double>(checked::kMaxDeviceBytes);
constexpr double kMiB = 1024.0 * 1024.0;

// One bounded quantity and what to tell the user about it.
enum class Part {
  kModel, kLora, kTrainScores, kTrainLogits, kTrainActivations, kBuckets,
  kInferScores, kInferKv, kInferPrefill, kInferLogits, kVllmActivations, kVllmSampler, kLlamaKq, kLlamaCompute,
};

struct Bound {
  Part part;
  double bytes;
};

constexpr size_t kMaxParts = 8;
struct Bounds {
  Bound items[kMaxParts];
  size_t size = 0;
  void Add(Part p, double bytes) {
    if (size < kMaxParts) items[size++] = Bound{p, bytes};
  }
  double Total() const {
    double t = 0;
    for (size_t i = 0; i < size; ++i) t += items[i].bytes;
    return t;
  }
  const Bound& Largest() const {
    size_t best = 0;
    for (size_t i = 1; i < size; ++i) {
      if (items[i].bytes > items[best].bytes) best = i;
    }
    return items[best];
  }
};

double Tokens(const Scenario& s) { return D(s.inference.prompt_len) + D(s.inference.new_tokens); }

// Bytes per cached element as the engine resolves the cache dtype (engine_*.cpp: transformers runs
// GGUF weights in bf16, vLLM stores int8/int4 requests as fp8, llama.cpp fp8 as q8_0).
double KvElementBytes(const Scenario& s) {
  const InferenceConfig& inf = s.inference;
  KvDtype kv = inf.kv_cache;
  WeightFormat wf = inf.weights;
  if (inf.engine == Engine::kTransformers && IsGguf(wf)) wf = WeightFormat::kBf16;
  if (inf.engine == Engine::kVllm && (kv == KvDtype::kInt8 || kv == KvDtype::kInt4)) kv = KvDtype::kFp8;
  if (inf.engine == Engine::kLlamaCpp && kv == KvDtype::kFp8) kv = KvDtype::kInt8;
  const KvElementSize e = ResolveKvDtype(kv, wf, inf.engine);
  return D(e.bytes) / D(e.elements);
}

// Bytes per cached token over all layers (tp = 1: sharding only lowers it), each layer's K and V
// rows rounded up to whole bytes (+2).
double KvBytesPerTokenBound(const Scenario& s, const ModelSizes& z) {
  const bool latent = s.inference.engine != Engine::kTransformers;  // MLA's latent in vLLM and llama.cpp
  return KvElementBytes(s) * (latent ? z.kv_latent : z.kv_full) + 2 * z.layers + z.kv_index_bytes;
}

int64_t VllmBatchedTokens(const Scenario& s) {
  const InferenceConfig& inf = s.inference;
  if (inf.max_num_batched_tokens > 0) return inf.max_num_batched_tokens;
  return s.gpu.memory_bytes >= 70LL * 1024 * 1024 * 1024 ? 8192 : 2048;  // engine_vllm.cpp
}

double LlamaCtx(const Scenario& s) {
  const InferenceConfig& inf = s.inference;
  return (inf.n_ctx > 0 ? D(inf.n_ctx) : D(std::max<int64_t>(1, inf.batch_size)) * std::max(1.0, Tokens(s))) + 256;
}

double LlamaUbatch(const Scenario& s) {
  const InferenceConfig& inf = s.inference;
  return std::max(1.0, std::min({D(inf.n_ubatch), D(inf.n_batch), LlamaCtx(s)}));
}

// The decoder tokens of one training sample (text + images + videos). VisionLlmTokens sums in
// checked int64; its own scope keeps an overflow there from setting the caller's sticky flag (this
// pre-flight runs before the estimate's scope): an overflowed count is read as the byte limit itself
// (finite, so a product with a zero stays 0 instead of NaN), which the sizes it enters exceed.
double SampleTokensBound(const Scenario& s) {
  checked::OverflowScope scope;
  const int64_t n = VisionLlmTokens(s);
  return scope.overflowed() ? kLimit : D(n);
}

Bounds Assess(const Scenario& s, const ModelSizes& z) {
  Bounds out;
  const ModelSpec& m = s.model;
  const double h = D(m.hidden_size), V = D(m.vocab_size);
  if (s.mode == Mode::kTrain) {
    const TrainConfig& t = s.train;
    // A VLM sample's decoder runs over its text and its images' tokens (train/vision_memory.h).
    const double b = D(t.micro_batch_size), sl = SampleTokensBound(s), T = b * sl;
    const bool lora = t.method == TrainMethod::kLora || t.method == TrainMethod::kQlora;
    const double rank = lora ? D(t.lora.rank) : 0;
    // Weights, gradients, master weights, optimizer states, step temporaries, AMP casts, the load
    // replay and ZeRO-3's gathered units: at most 64 B per parameter (fp32 throughout: 4 + 4 + 4 +
    // 8 + 12 + 2 + load and gathers); weight-sized transients of the largest linear (dequantized
    // weights, NF4 quantization scratch, DoRA's eye(in) product), the RoPE tables and the
    // transformers <= 4.45 GPT-2 mask buffers (inside the weights, so also in the gathered units).
    const double rot = z.max_head_dim * std::fabs(m.rope_fraction);
    out.Add(Part::kModel, 64 * (z.params + 2 * V * h) + 64 * z.max_linear + 16 * z.max_inter * h +
                              (t.lora.use_dora ? 32 * z.max_in_in_out : 0) + 4 * z.layers * D(m.legacy_buffer_bytes_per_layer) +
                              16 * (sl + 1) * rot + 5056 * z.layers);
    if (rank > 0) out.Add(Part::kLora, 64 * rank * z.lora_per_rank);
    // Eager attention: each layer saves up to 9 B per score (fp32 softmax, dropout mask, dropped
    // probabilities), the peak layer adds 10 B (scores, softmax, cast), backward 8 B and the
    // forward scratch 6 B; the 4-D mask b x s x s x 4 B.
    if (t.attention == AttentionImpl::kEager) out.Add(Part::kTrainScores, b * sl * sl * (9 * z.heads_layers + 24 * z.max_heads + 4));
    // The loss head: logits, fp32 upcast, log-probs, their gradients, a kept output copy.
    out.Add(Part::kTrainLogits, 24 * T * V);
    // Saved activations and backward temporaries: at most 16 B per element of every layer's
    // linear inputs/outputs, LoRA ranks, attention/norm/MLP widths, plus the head and batch.
    out.Add(Part::kTrainActivations, 16 * T * (z.token_io + rank * z.token_linears + z.token_other + 8 * h + 8));
    const double bucket = D(s.parallel.reduce_bucket_size.value_or(500'000'000));
    out.Add(Part::kBuckets, 8 * bucket);
    return out;
  }
  const InferenceConfig& inf = s.inference;
  const double b = D(std::max<int64_t>(1, inf.batch_size)), prompt = D(inf.prompt_len);
  out.Add(Part::kModel, 4 * z.params + 2 * z.max_linear + 64 * kMiB);
  switch (inf.engine) {
    case Engine::kVllm: {
      const double mnbt = D(VllmBatchedTokens(s));
      const double len = inf.max_model_len > 0 ? D(inf.max_model_len) : std::max(1.0, Tokens(s));
      // Profile run (+ CUDA graphs of up to 512 tokens), dummy sampler, one max_model_len
      // request's KV blocks (+ the pool, at most the GPU's memory).
      out.Add(Part::kVllmActivations, 4 * (mnbt + 512) * z.vllm_width);
      out.Add(Part::kVllmSampler, 12 * std::min(D(inf.max_num_seqs), mnbt) * V);
      out.Add(Part::kInferKv, (len + 2 * D(inf.block_size) + mnbt) * KvBytesPerTokenBound(s, z) + D(s.gpu.memory_bytes));
      break;
    }
    case Engine::kLlamaCpp: {
      const double ctx = LlamaCtx(s), ub = LlamaUbatch(s);
      out.Add(Part::kInferKv, ctx * KvBytesPerTokenBound(s, z));
      if (!inf.flash_attn) out.Add(Part::kLlamaKq, 4 * z.max_heads * ctx * ub);
      // Attention / feed-forward / output phases of the GPU compute buffer, the host compute and
      // output buffers.
      out.Add(Part::kLlamaCompute, 4 * ub * (12 * h + 3 * z.max_inter + 2 * V) + 4 * b * V);
      break;
    }
    default: {
      const double T = b * prompt;
      // The final cache; DynamicCache.update's torch.cat copy of one layer's K or V (with the prefill).
      const double cached = b * std::max(1.0, Tokens(s));
      out.Add(Part::kInferKv, cached * KvBytesPerTokenBound(s, z));
      // Eager: scores in the compute dtype + fp32 softmax + its cast (2 dt + 4 B) per head, the
      // 4-D mask (dt); the logits of every prompt position (dt + fp32 copy) when kept.
      const double dt = D(ComputeDtypeBytes(inf.weights));
      if (inf.attention == AttentionImpl::kEager) out.Add(Part::kInferScores, b * prompt * prompt * ((2 * dt + 4) * z.max_heads + dt));
      // DSA: the indexer's two fp32 score tensors per head (engine_transformers.cpp).
      if (z.max_index_heads > 0) out.Add(Part::kInferScores, 8 * b * prompt * prompt * z.max_index_heads);
      out.Add(Part::kInferPrefill, 4 * T * z.prefill_width + cached * (KvElementBytes(s) * z.kv_max_layer + 1));
      out.Add(Part::kInferLogits, T * ((dt + 4) * V + 4 * h) + 12 * b * V + 4 * b * (2 * h + 3 * z.max_inter + 3));
      break;
    }
  }
  return out;
}

// "~2.7e21" (two significant digits); small values with thousands separators.
std::string Approx(double bytes) {
  if (bytes < 1e9) return "~" + WithCommas(static_cast<int64_t>(bytes));
  char buf[32];
  int e = static_cast<int>(std::floor(std::log10(bytes)));
  double mant = bytes / std::pow(10.0, e);
  if (mant >= 9.95) mant /= 10, ++e;  // 9.96e21 prints as 1.0e22, not 10.0e21
  std::snprintf(buf, sizeof buf, "~%.1fe%d", mant, e);
  return buf;
}

std::string N(int64_t v) { return WithCommas(v); }

// The context fields of an inference scenario, as the engine uses them.
std::string ContextFields(const Scenario& s) {
  const InferenceConfig& inf = s.inference;
  const std::string len = "(inference.prompt_len + inference.new_tokens = " + N(inf.prompt_len + inf.new_tokens) + ")";
  switch (inf.engine) {
    case Engine::kVllm:
      return inf.max_model_len > 0 ? "inference.max_model_len (" + N(inf.max_model_len) + ")" : "the context " + len;
    case Engine::kLlamaCpp:
      return inf.n_ctx > 0 ? "inference.n_ctx (" + N(inf.n_ctx) + ")"
                           : "n_ctx = inference.batch_size (" + N(inf.batch_size) + ") x " + len;
    default:
      return "inference.batch_size (" + N(inf.batch_size) + ") x " + len;
  }
}

std::string ContextField(const Scenario& s) {
  const InferenceConfig& inf = s.inference;
  if (inf.engine == Engine::kVllm && inf.max_model_len > 0) return "inference.max_model_len";
  if (inf.engine == Engine::kLlamaCpp && inf.n_ctx > 0) return "inference.n_ctx";
  return inf.new_tokens > inf.prompt_len ? "inference.new_tokens" : "inference.prompt_len";
}

struct Wording {
  std::string field_path;
  std::string what;  // "<fields whose product is too large>: <the tensors they size>"
  std::string fix;   // what to lower or change
};

Wording Describe(const Scenario& s, const ModelSizes& z, Part part) {
  const TrainConfig& t = s.train;
  const InferenceConfig& inf = s.inference;
  const std::string heads = N(static_cast<int64_t>(z.max_heads)) + " attention heads";
  const std::string vocab = "the vocabulary (" + N(s.model.vocab_size) + ")";
  const std::string train_tokens = "train.micro_batch_size (" + N(t.micro_batch_size) + ") x train.seq_len (" + N(t.seq_len) + ")" +
                                   (t.images_per_sample > 0 ? " plus train.images_per_sample (" + N(t.images_per_sample) + ") x the tokens per image" : "") +
                                   (t.videos_per_sample > 0 ? " plus train.videos_per_sample (" + N(t.videos_per_sample) + ") x the tokens per video" : "");
  const std::string lower_train = "lower train.seq_len or train.micro_batch_size";
  const std::string infer_tokens = "inference.batch_size (" + N(inf.batch_size) + ") x inference.prompt_len (" + N(inf.prompt_len) + ")";
  const std::string lower_infer = "lower inference.prompt_len or inference.batch_size";
  switch (part) {
    case Part::kModel:
      return {"model", "the model's ~" + Approx(z.params).substr(1) + " parameters at " + (s.mode == Mode::kTrain ? "up to 64 B each (weights, gradients, optimizer states, step temporaries)" : "up to 4 B each"),
              "choose a smaller model"};
    case Part::kLora:
      return {"train.lora.rank", "train.lora.rank (" + N(t.lora.rank) + ") x the adaptable layers' widths: the LoRA adapters, their gradients and optimizer states",
              "lower train.lora.rank"};
    case Part::kTrainScores:
      return {"train.seq_len", "train.micro_batch_size (" + N(t.micro_batch_size) + ") x train.seq_len\xC2\xB2 (" + N(t.seq_len) + "\xC2\xB2) x " + heads + " in " +
                                   N(s.model.num_layers) + " layers: eager attention's score matrices",
              "use train.attention \"sdpa\" or \"flash\", or " + lower_train};
    case Part::kTrainLogits:
      return {"train.seq_len", train_tokens + " x " + vocab + ": the logits and the loss", lower_train};
    case Part::kTrainActivations:
      return {"train.seq_len", train_tokens + " x the widths of " + N(s.model.num_layers) + " layers: the saved activations", lower_train};
    case Part::kBuckets:
      return {"parallel.reduce_bucket_size", "parallel.reduce_bucket_size (" + N(s.parallel.reduce_bucket_size.value_or(0)) + ") x 8 B: DeepSpeed's gradient buckets",
              "lower parallel.reduce_bucket_size"};
    case Part::kInferScores:
      return {"inference.prompt_len", "inference.batch_size (" + N(inf.batch_size) + ") x inference.prompt_len\xC2\xB2 (" + N(inf.prompt_len) + "\xC2\xB2) x " + heads +
                                          ": eager attention's scores",
              "use inference.attention \"sdpa\" or \"flash\", or " + lower_infer};
    case Part::kInferKv: {
      return {ContextField(s), ContextFields(s) + " x ~" + N(static_cast<int64_t>(KvBytesPerTokenBound(s, z))) + " B per token: the KV cache",
              "lower " + ContextField(s) + (inf.engine == Engine::kTransformers ? " or inference.batch_size" : "")};
    }
    case Part::kInferPrefill:
      return {"inference.prompt_len", infer_tokens + " x the layer widths: the prefill's temporaries", lower_infer};
    case Part::kInferLogits:
      return {"inference.prompt_len", infer_tokens + " x " + vocab + ": the logits",
              std::string(inf.logits == LogitsKept::kAll ? "use inference.logits \"last\", or " : "") + lower_infer};
    case Part::kVllmActivations:
      return {"inference.max_num_batched_tokens", "inference.max_num_batched_tokens (" + N(VllmBatchedTokens(s)) + ") x the layer widths: vLLM's profile run",
              "lower inference.max_num_batched_tokens"};
    case Part::kVllmSampler:
      return {"inference.max_num_seqs", "inference.max_num_seqs (" + N(inf.max_num_seqs) + ") x " + vocab + ": vLLM's dummy sampler", "lower inference.max_num_seqs"};
    case Part::kLlamaKq:
      return {inf.n_ctx > 0 ? "inference.n_ctx" : ContextField(s),
              heads + " x " + ContextFields(s) + " x n_ubatch (" + N(static_cast<int64_t>(LlamaUbatch(s))) + ", inference.n_ubatch) x 4 B: llama.cpp's KQ scores without flash attention",
              "set inference.flash_attn, or lower inference.n_ubatch or " + ContextField(s)};
    case Part::kLlamaCompute:
      return {"inference.n_ubatch", "n_ubatch (" + N(static_cast<int64_t>(LlamaUbatch(s))) + ", inference.n_ubatch) x the layer widths and " + vocab + ": llama.cpp's compute buffers",
              "lower inference.n_ubatch"};
  }
  return {"", "", ""};
}

Issue TooLarge(const Scenario& s, const ModelSizes& z, const Bounds& bounds) {
  const Bound& worst = bounds.Largest();
  const double total = bounds.Total();
  Wording w = Describe(s, z, worst.part);
  std::string message = w.what + " would take up to " + Approx(worst.bytes) + " B";
  if (total > 1.5 * worst.bytes) message += " (the whole estimate " + Approx(total) + " B)";
  message += ", more than 2^62 B (4 EiB), the most one device's estimate can hold in exact 64-bit byte counts; " + w.fix;
  return Issue{"too_large", w.field_path, message};
}

}  // namespace

bool WithinSizeLimits(const Scenario& s, const ModelSizes& sizes) { return Assess(s, sizes).Total() <= kLimit; }

bool WithinSizeLimits(const Scenario& s) { return WithinSizeLimits(s, MeasureModel(s.model)); }

Issues CheckSizeLimits(const Scenario& s) { return CheckSizeLimits(s, MeasureModel(s.model)); }

Issues CheckSizeLimits(const Scenario& s, const ModelSizes& z) {
  const Bounds bounds = Assess(s, z);
  if (bounds.Total() <= kLimit) return {};
  return {TooLarge(s, z, bounds)};
}

Issues CheckModelSizeLimits(const ModelSpec& m, const std::string& field_path) {
  const ModelSizes z = MeasureModel(m);
  if (4 * z.params <= kLimit) return {};
  return {Issue{"too_large", field_path,
                "the model's ~" + Approx(z.params).substr(1) + " parameters at 4 B each would take " + Approx(4 * z.params) +
                    " B, more than 2^62 B (4 EiB), the most one device's estimate can hold in exact 64-bit byte counts; check hidden_size, intermediate_size, num_hidden_layers and the expert counts"}};
}

Issue OverflowIssue(const Scenario& s) {
  if (s.mode == Mode::kTrain) {
    return Issue{"too_large", "train.seq_len",
                 "train.micro_batch_size (" + N(s.train.micro_batch_size) + ") x train.seq_len (" + N(s.train.seq_len) +
                     ") with this model needs a byte count beyond 2^62 B (4 EiB), the most one device's estimate can hold in exact 64-bit byte counts; lower train.seq_len or train.micro_batch_size"};
  }
  return Issue{"too_large", ContextField(s),
               ContextFields(s) + " with this model needs a byte count beyond 2^62 B (4 EiB), the most one device's estimate can hold in exact 64-bit byte counts; lower " +
                   ContextField(s) + " or inference.batch_size"};
}

}  // namespace vramplan
