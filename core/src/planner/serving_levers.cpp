// The serving levers (docs/planner.md, "Levers"): weight format, KV cache dtype, the engines'
// knobs, tensor parallelism / more GPUs, concurrency and (when allowed) a shorter context.
#include <algorithm>
#include <string>
#include <utility>

#include "inference/weight_formats.h"
#include "planner/levers.h"

namespace vramplan {
namespace {

// Fidelity points off 100 per weight format (docs/planner.md, "Fidelity"): ordered by the
// perplexity increases llama.cpp's quantize tool prints for Llama-3-8B (tools/quantize README table)
// and the GPTQ/AWQ/NF4 papers' 4-bit results; 16-bit is the reference.
int WeightLoss(WeightFormat f) {
  switch (f) {
    case WeightFormat::kFp32:
    case WeightFormat::kFp16:
    case WeightFormat::kBf16: return 0;
    case WeightFormat::kFp8: return 2;
    case WeightFormat::kInt8:
    case WeightFormat::kGptq8:
    case WeightFormat::kGgufQ8_0: return 3;
    case WeightFormat::kGgufQ6_K: return 5;
    case WeightFormat::kGgufQ5_K_M: return 7;
    case WeightFormat::kGgufQ5_K_S: return 8;
    case WeightFormat::kGgufQ4_K_M:
    case WeightFormat::kGgufIq4_Xs:
    case WeightFormat::kGptq4:
    case WeightFormat::kAwq4:
    case WeightFormat::kMxfp4: return 10;
    case WeightFormat::kGgufQ4_K_S: return 11;
    case WeightFormat::kNf4:
    case WeightFormat::kGgufQ4_0: return 12;
    case WeightFormat::kGgufQ3_K_M: return 18;
    case WeightFormat::kGgufIq3_Xxs: return 20;
    case WeightFormat::kGgufQ2_K: return 28;
    case WeightFormat::kGgufIq2_Xxs: return 30;
  }
  return 0;
}

int KvLoss(KvDtype k) {
  switch (k) {
    case KvDtype::kFp8: return 2;
    case KvDtype::kInt8: return 3;
    case KvDtype::kInt4: return 8;
    default: return 0;
  }
}


// FP8 weights: transformers' FP8 paths (fbgemm_fp8, finegrained_fp8) need compute capability 8.9+
// (Ada, Hopper, Blackwell); vLLM also runs FP8 checkpoints on Ampere through its weight-only FP8
// Marlin kernel (vllm/model_executor/layers/quantization/fp8.py, "Marlin" fallback below sm89).
bool Fp8Capable(Engine engine, const GpuEntry* gpu) {
  if (gpu == nullptr) return true;
  const std::string& a = gpu->arch;
  if (a == "ada" || a == "hopper" || a == "blackwell" || a.rfind("cdna3", 0) == 0 || a.rfind("cdna4", 0) == 0) return true;
  return engine == Engine::kVllm && a == "ampere";
}

LeverDim WeightsDim(const Scenario& user, const GpuEntry* gpu) {
  LeverDim d{"weights", {LeverOption{}}, {}};
  std::vector<WeightFormat> formats;
  switch (user.inference.engine) {
    case Engine::kTransformers:
      formats = {WeightFormat::kFp8, WeightFormat::kInt8, WeightFormat::kAwq4, WeightFormat::kGptq4, WeightFormat::kNf4};
      break;
    case Engine::kVllm: formats = {WeightFormat::kFp8, WeightFormat::kAwq4, WeightFormat::kGptq4}; break;
    case Engine::kLlamaCpp:
      formats = {WeightFormat::kGgufQ8_0, WeightFormat::kGgufQ6_K, WeightFormat::kGgufQ5_K_M, WeightFormat::kGgufQ4_K_M,
                 WeightFormat::kGgufIq4_Xs, WeightFormat::kGgufQ3_K_M, WeightFormat::kGgufQ2_K};
      break;
  }
  const int base = WeightLoss(user.inference.weights);
  for (WeightFormat f : formats) {
    if (WeightLoss(f) <= base || f == user.inference.weights) continue;
    if (f == WeightFormat::kFp8 && !Fp8Capable(user.inference.engine, gpu)) continue;
    d.options.push_back({WeightFormatName(f) + " weights", WeightLoss(f) - base, "quantized weights", {{Knob::kWeights, static_cast<int64_t>(f)}}});
  }
  Incomparable(&d);
  return d;
}

LeverDim KvDim(const Scenario& user, const GpuEntry* gpu) {
  LeverDim d{"kv_cache", {LeverOption{}}, {}};
  std::vector<std::pair<KvDtype, const char*>> kinds;
  switch (user.inference.engine) {
    // vLLM's fp8 KV cache (kv_cache_dtype fp8): the CUDA cache kernels convert on sm80+.
    case Engine::kVllm:
      if (gpu == nullptr || gpu->arch != "turing") kinds = {{KvDtype::kFp8, "fp8 KV cache"}};
      break;
    // llama.cpp: a quantized V cache needs flash attention (ApplyAssign turns it on).
    case Engine::kLlamaCpp: kinds = {{KvDtype::kInt8, "q8_0 KV cache with flash attention"}, {KvDtype::kInt4, "q4_0 KV cache with flash attention"}}; break;
    case Engine::kTransformers: kinds = {{KvDtype::kInt8, "8-bit quantized KV cache"}, {KvDtype::kInt4, "4-bit quantized KV cache"}}; break;
  }
  const int base = KvLoss(user.inference.kv_cache);
  for (const auto& [k, label] : kinds) {
    if (KvLoss(k) <= base) continue;
    d.options.push_back({label, KvLoss(k) - base, "quantized KV cache", {{Knob::kKvCache, static_cast<int64_t>(k)}}});
  }
  ChainOrder(&d);
  return d;
}

void AddKnobDims(const Scenario& user, std::vector<LeverDim>* dims) {
  const InferenceConfig& inf = user.inference;
  if (inf.engine == Engine::kLlamaCpp) {
    if (!inf.flash_attn) {
      LeverDim d{"flash_attn", {LeverOption{}, {"flash attention (-fa)", 0, "", {{Knob::kFlashAttn, 1}}}}, {}};
      ChainOrder(&d);
      dims->push_back(std::move(d));
    }
    LeverDim u{"n_ubatch", {LeverOption{}}, {}};
    for (int64_t n : {int64_t{256}, int64_t{128}}) {
      if (n >= inf.n_ubatch) continue;
      u.options.push_back({"n_ubatch " + std::to_string(n), 0, "", {{Knob::kUbatch, n}}});
    }
    ChainOrder(&u);
    dims->push_back(std::move(u));
  }
  if (inf.engine == Engine::kVllm) {
    if (inf.gpu_memory_utilization < 0.95) {
      LeverDim d{"gpu_memory_utilization", {LeverOption{}, {"gpu_memory_utilization 0.95", 0, "", {{Knob::kGpuMemoryUtilization95, 1}}}}, {}};
      Incomparable(&d);
      dims->push_back(std::move(d));
    }
    if (inf.cuda_graphs) {
      LeverDim d{"cuda_graphs", {LeverOption{}, {"no CUDA graphs (enforce_eager)", 0, "", {{Knob::kNoCudaGraphs, 1}}}}, {}};
      Incomparable(&d);
      dims->push_back(std::move(d));
    }
    // The profile run samples max_num_seqs dummy requests (vllm/v1/worker/gpu_model_runner.py
    // _dummy_sampler_run): fewer sequences, a smaller activation peak, more KV.
    const int64_t seqs = std::max<int64_t>(16, inf.batch_size);
    if (seqs < inf.max_num_seqs) {
      LeverDim d{"max_num_seqs", {LeverOption{}, {"max_num_seqs " + std::to_string(seqs), 0, "", {{Knob::kMaxNumSeqs, seqs}}}}, {}};
      Incomparable(&d);
      dims->push_back(std::move(d));
    }
    if (inf.max_num_batched_tokens == 0 || inf.max_num_batched_tokens > 2048) {
      LeverDim d{"max_num_batched_tokens", {LeverOption{}, {"max_num_batched_tokens 2048", 0, "", {{Knob::kMaxBatchedTokens, 2048}}}}, {}};
      Incomparable(&d);
      dims->push_back(std::move(d));
    }
  }
  if (inf.engine == Engine::kTransformers) {
    LeverDim d{"attention", {LeverOption{}}, {}};
    if (inf.attention == AttentionImpl::kEager) d.options.push_back({"SDPA attention", 0, "", {{Knob::kServeAttention, static_cast<int64_t>(AttentionImpl::kSdpa)}}});
    if (inf.attention != AttentionImpl::kFlash) d.options.push_back({"FlashAttention-2", 0, "", {{Knob::kServeAttention, static_cast<int64_t>(AttentionImpl::kFlash)}}});
    Incomparable(&d);
    dims->push_back(std::move(d));
  }
}

LeverDim GpusDim(const Scenario& user, int64_t max_gpus) {
  LeverDim d{"gpus", {LeverOption{}}, {}};
  for (int64_t g = 2; g <= max_gpus; g *= 2) {
    if (g <= user.parallel.gpus) continue;
    const bool tensor = user.inference.engine == Engine::kVllm;
    d.options.push_back({std::to_string(g) + (tensor ? " GPUs, tensor parallel" : " GPUs, layers split"), 0, "", {{Knob::kServeGpus, g}}});
  }
  Incomparable(&d);
  return d;
}

LeverDim ContextDim(const Scenario& user) {
  LeverDim d{"context", {LeverOption{}}, {}};
  int loss = 0;
  for (int64_t div = 2; div <= 8 && user.inference.prompt_len / div >= 256; div *= 2) {
    loss += 10;
    d.options.push_back({"prompt " + std::to_string(user.inference.prompt_len / div) + " tokens", loss, "a shorter context", {{Knob::kContextDivisor, div}}});
  }
  ChainOrder(&d);
  return d;
}


}  // namespace

LeverSpace ServingLevers(const Scenario& user, const LeverSwitches& on, const PlanBudget& budget, const GpuEntry* gpu) {
  LeverSpace space;
  const InferenceConfig& inf = user.inference;
  if (on.weights) space.dims.push_back(WeightsDim(user, gpu));
  if (on.kv_cache) space.dims.push_back(KvDim(user, gpu));
  if (on.engine_knobs) AddKnobDims(user, &space.dims);
  const int64_t max_gpus = budget.max_gpus > 0 ? budget.max_gpus : DefaultMaxGpus(user);
  if (on.gpus && max_gpus > user.parallel.gpus) space.dims.push_back(GpusDim(user, max_gpus));
  if (on.context) space.dims.push_back(ContextDim(user));
  const bool llama = inf.engine == Engine::kLlamaCpp;
  if (llama && on.concurrency && inf.batch_size > 1) {
    LeverDim d{"concurrency", {LeverOption{}}, {}};
    for (int64_t b = inf.batch_size / 2; b >= 1; b /= 2) {
      d.options.push_back({std::to_string(b) + " sequences at once (the rest queue)", 0, "", {{Knob::kBatch, b}}});
    }
    ChainOrder(&d);
    space.dims.push_back(std::move(d));
  }
  space.dims.erase(std::remove_if(space.dims.begin(), space.dims.end(), [](const LeverDim& d) { return d.options.size() < 2; }),
                   space.dims.end());
  space.inner = llama ? Knob::kGpuLayers : Knob::kBatch;
  space.inner_free = llama ? on.engine_knobs : on.concurrency;
  return space;
}

}  // namespace vramplan
