// Inverse questions, answered exactly by searching over the same pure estimate (no per-token
// loops): each probe is the pipeline's simulation without explain strings (planner/simulate.h),
// from the estimate's preparation (the weight bytes per format are computed once).
//  * max_context_fits: largest prompt+new length (vLLM: max_model_len; llama.cpp: n_ctx per
//    sequence) that still fits, by binary search (memory is monotone in the length), at most the
//    model's context limit (vLLM refuses a longer max_model_len); max_context_bound says which ended it;
//  * max_batch_fits: largest batch (concurrent sequences) at the scenario's length, by binary
//    search (vLLM: whole-block concurrency of the KV pool, capped by max_num_seqs);
//  * smallest_format_fits: the highest-fidelity weight format this engine runs that fits, i.e.
//    the smallest step down from the chosen precision (formats tried from most to fewest bytes);
//  * min_gpus: smallest tensor-parallel degree (1, 2, 4, 8, ... 64 dividing the attention heads)
//    that fits; llama.cpp splits layers, so its GPUs are counted from the per-GPU share.
#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "inference/engines.h"
#include "inference/kv_cache.h"
#include "inference/weight_formats.h"
#include "planner/context_limit_check.h"
#include "planner/simulate.h"
#include "units.h"
#include "util/size_limits.h"

namespace vramplan {
namespace {


// A probe (planner/simulate.h) that fits; one whose byte counts would not be representable does
// not, which bounds every search by the model's representable range.
bool Fits(const Scenario& s, const Prepared& prepared) {
  std::optional<Result> r = Probe(s, prepared);
  return r && InferenceFits(s, *r);
}

// Sets the context length on `s` (a working copy; the model is never copied per probe).
void SetContext(const Scenario& base, Scenario& s, int64_t len) {
  s.inference = base.inference;
  InferenceConfig& i = s.inference;
  if (i.engine == Engine::kVllm) {
    i.max_model_len = len;
  } else if (i.engine == Engine::kLlamaCpp) {
    i.n_ctx = len * std::max<int64_t>(1, i.batch_size);
  }
  int64_t gen = std::min(base.inference.new_tokens, len / 2);
  i.new_tokens = gen;
  i.prompt_len = len - gen;
}

// Largest x in [1, hi] with pred(x) true, assuming monotone; 0 if pred(1) is false.
template <typename Pred>
int64_t LargestTrue(int64_t hi, Pred pred) {
  if (!pred(1)) return 0;
  int64_t lo = 1;
  if (pred(hi)) return hi;
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    if (pred(mid)) lo = mid;
    else hi = mid;
  }
  return lo;
}

std::vector<WeightFormat> EngineFormats(Engine e) {
  using W = WeightFormat;
  if (e == Engine::kLlamaCpp) {
    return {W::kFp16, W::kGgufQ8_0, W::kGgufQ6_K, W::kGgufQ5_K_M, W::kGgufQ5_K_S, W::kGgufQ4_K_M, W::kGgufQ4_K_S,
            W::kGgufIq4_Xs, W::kGgufQ4_0, W::kGgufQ3_K_M, W::kGgufIq3_Xxs, W::kGgufQ2_K, W::kGgufIq2_Xxs};
  }
  return {W::kFp32, W::kBf16, W::kFp8, W::kInt8, W::kGptq4, W::kAwq4, W::kNf4};
}

}  // namespace

int64_t InferenceMinGpus(const Scenario& s, const Prepared& prepared) {
  if (s.inference.engine == Engine::kLlamaCpp) {
    // Layer split: every GPU holds its layers' weights and KV plus its own compute buffer.
    std::optional<Result> one = Probe(s, prepared);
    int64_t cap = s.gpu.memory_bytes, total = one ? one->gpu.device_total_bytes : 0;
    int64_t compute = 0;
    if (one) {
      for (const auto& t : one->gpu.breakdown) {
        if (t.key == "activations" || t.key == "cuda_context") compute += t.bytes;
      }
    }
    for (int64_t g = 1; one && g <= 64; ++g) {
      if ((total - compute) / g + compute + (total - compute) % g <= cap) return g;
    }
  } else {
    // tp must split every layer's attention heads and (hybrid models) its linear-attention / Mamba
    // heads; a layer without them (0) puts no constraint.
    const auto splits = [&](int64_t tp) {
      for (const LayerKind& k : s.model.kinds) {
        if (k.attention.num_heads % tp != 0 || k.recurrent.num_heads % tp != 0) return false;
      }
      return true;
    };
    Scenario work = s;
    for (int64_t tp = 1; tp <= 64; tp *= 2) {
      if (!splits(tp)) continue;
      work.parallel.tp = tp;
      work.parallel.gpus = std::max(s.parallel.gpus, tp);
      if (Fits(work, prepared)) return tp;
    }
  }
  return 0;
}

void SolveInverseQuestions(const Scenario& s, const Prepared& prepared, Result* r) {
  InferenceCapacity& c = r->inference;
  const int64_t len = std::max<int64_t>(1, s.inference.prompt_len + s.inference.new_tokens);

  // One working copy for every probe: copying a Scenario copies its ModelSpec.
  Scenario work = s;
  // llama.cpp's context holds every sequence (n_ctx = length x batch), and n_ctx is itself
  // bounded by the validator: the longest context per sequence is kMaxTokens / batch.
  const int64_t context_bound = s.inference.engine == Engine::kLlamaCpp
                                    ? std::max<int64_t>(1, kMaxTokens / std::max<int64_t>(1, s.inference.batch_size))
                                    : kMaxTokens;
  // Never beyond the model's own context limit (planner/context_limit_check.h).
  const int64_t context_hi = CapAtModelContext(s.model, context_bound);
  c.max_context_fits = LargestTrue(context_hi, [&](int64_t L) {
    SetContext(s, work, L);
    return Fits(work, prepared);
  });
  c.max_context_bound = SearchBound(s.model, c.max_context_fits, context_hi);
  work.inference = s.inference;

  if (s.inference.engine == Engine::kVllm) {
    Scenario v = s;
    if (v.inference.max_model_len <= 0) v.inference.max_model_len = len;
    std::optional<Result> p = Probe(v, prepared);
    int64_t block = VllmBlockTokens(s.model, s.inference.block_size);
    int64_t per_req = CeilDiv(len, block);
    int64_t blocks = p ? p->inference.kv_token_capacity / block : 0;
    c.max_batch_fits = p && InferenceFits(v, *p) ? std::min(std::max<int64_t>(1, s.inference.max_num_seqs), blocks / per_req) : 0;
    if (p && p->inference.recurrent_layers > 0) {
      // Hybrid models: a request also holds one state block per state group and the attention
      // block size is the engine's (engine_vllm.cpp HybridPaging): ask the engine how many
      // sequences of this length it runs at once.
      Scenario most = v;
      most.inference.batch_size = std::max<int64_t>(1, s.inference.max_num_seqs);
      std::optional<Result> pm = Probe(most, prepared);
      c.max_batch_fits = pm && InferenceFits(v, *p) ? pm->inference.concurrent_sequences : 0;
    }
  } else {
    // llama.cpp scales n_ctx with the batch: the batch is bounded so that n_ctx stays within kMaxTokens.
    int64_t batch_bound = kMaxBatch;
    if (s.inference.engine == Engine::kLlamaCpp && s.inference.n_ctx > 0) {
      const int64_t per_seq = std::max<int64_t>(1, s.inference.n_ctx / std::max<int64_t>(1, s.inference.batch_size));
      batch_bound = std::max<int64_t>(1, std::min(kMaxBatch, kMaxTokens / per_seq));
    }
    c.max_batch_fits = LargestTrue(batch_bound, [&](int64_t b) {
      work.inference = s.inference;
      work.inference.batch_size = b;
      if (work.inference.engine == Engine::kLlamaCpp && s.inference.n_ctx > 0) work.inference.n_ctx = s.inference.n_ctx / std::max<int64_t>(1, s.inference.batch_size) * b;
      return Fits(work, prepared);
    });
    work.inference = s.inference;
  }

  // Formats from most to fewest stored bytes; the first that fits is the smallest step down.
  std::vector<std::pair<int64_t, WeightFormat>> formats;
  for (WeightFormat f : EngineFormats(s.inference.engine)) formats.push_back({prepared.WeightBytesFor(work.model, f, s.parallel.tp, PackedLoaderFor(s.inference.engine)).total_bytes, f});
  std::stable_sort(formats.begin(), formats.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  c.smallest_format_fits.clear();
  for (const auto& [bytes, f] : formats) {
    work.inference.weights = f;
    if (Fits(work, prepared)) {
      c.smallest_format_fits = WeightFormatName(f);
      break;
    }
  }
  work.inference = s.inference;

  c.min_gpus = InferenceMinGpus(s, prepared);
}

}  // namespace vramplan
