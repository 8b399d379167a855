#include "inference/kv_cache.h"

#include <algorithm>

#include "format.h"
#include "parallel/shard.h"
#include "units.h"
#include "util/checked_math.h"

namespace vramplan {

KvElementSize ResolveKvDtype(KvDtype kv, WeightFormat weights, Engine engine) {
  if (kv == KvDtype::kAuto) {
    if (engine == Engine::kLlamaCpp) return {"f16", 2, 1, 1};  // common/common.h cache_type_k/v = F16
    if (weights == WeightFormat::kFp32) return {"fp32", 4, 1, 1};
    if (weights == WeightFormat::kFp16) return {"fp16", 2, 1, 1};
    return {"bf16", 2, 1, 1};
  }
  switch (kv) {
    case KvDtype::kFp32: return {engine == Engine::kLlamaCpp ? "f32" : "fp32", 4, 1, 1};
    case KvDtype::kFp16: return {engine == Engine::kLlamaCpp ? "f16" : "fp16", 2, 1, 1};
    case KvDtype::kBf16: return {engine == Engine::kLlamaCpp ? "bf16" : "bf16", 2, 1, 1};
    case KvDtype::kFp8: return {"fp8", 1, 1, 1};
    case KvDtype::kInt8:
      if (engine == Engine::kLlamaCpp) return {"q8_0", 34, 32, 32};
      return {"int8 (quanto, group 64)", 64 + 4, 64, 1};
    case KvDtype::kInt4:
      if (engine == Engine::kLlamaCpp) return {"q4_0", 18, 32, 32};
      return {"int4 (quanto, group 64)", 32 + 4, 64, 1};
    default: return {"bf16", 2, 1, 1};
  }
}

bool HasSparseIndexer(const ModelSpec& spec) {
  for (const LayerKind& k : spec.kinds) {
    if (k.attention.index_head_dim > 0) return true;
  }
  return false;
}

int64_t VllmBlockTokens(const ModelSpec& spec, int64_t block_size) {
  return HasSparseIndexer(spec) ? kVllmSparseMlaBlockTokens : std::max<int64_t>(1, block_size);
}

std::vector<KvGroup> KvGroups(const ModelSpec& spec, Engine engine, int64_t tp, int64_t model_dtype_bytes) {
  tp = std::max<int64_t>(tp, 1);
  std::vector<int64_t> count(spec.kinds.size(), 0);
  for (uint8_t k : spec.layer_kind) ++count[k];
  std::vector<KvGroup> out;
  for (size_t i = 0; i < spec.kinds.size(); ++i) {
    if (count[i] == 0) continue;
    const AttentionGeometry& a = spec.kinds[i].attention;
    if (a.num_heads == 0) continue;  // a Mamba / linear-attention / MLP-only layer keeps no K/V
    if (a.kv_shared || a.cross_attention) continue;  // reuses another layer's K/V; K/V of image tokens
    KvGroup g;
    g.layers = count[i];
    g.window_tokens = a.sliding_window;
    g.chunked = a.chunked && a.sliding_window > 0;
    if (a.mla && engine != Engine::kTransformers) {
      g.k_elems = a.kv_lora_rank + a.qk_rope_head_dim;
      g.v_elems = 0;
    } else {
      int64_t kv = a.num_kv_heads > 0 ? a.num_kv_heads : a.num_heads;
      int64_t per_gpu = KvHeadsPerRank(kv, tp);
      int64_t v_dim = a.v_head_dim > 0 ? a.v_head_dim : a.head_dim;
      g.k_elems = per_gpu * a.head_dim;
      g.v_elems = per_gpu * v_dim;
    }
    if (a.index_head_dim > 0) {
      // An IndexCache "shared" layer (GLM-5.2) has no indexer and so no indexer keys, in any engine.
      const int64_t index_dim = a.index_shared ? 0 : a.index_head_dim;
      switch (engine) {
        case Engine::kVllm:
          // DeepseekV32IndexerCache: head_dim + head_dim // quant_block_size(128) x 4 B, uint8.
          g.index_bytes = index_dim + index_dim / 128 * 4;
          // fp8_ds_mla: kv_lora_rank fp8 values + one fp32 scale per 128 of them + the RoPE part
          // in bf16 = 512 + 16 + 128 = 656 B for the only geometry FlashMLA sparse runs (576).
          if (a.mla) g.fp8_latent_bytes = a.kv_lora_rank + a.kv_lora_rank / 128 * 4 + 2 * a.qk_rope_head_dim;
          break;
        case Engine::kLlamaCpp: g.index_k_elems = index_dim; break;
        default: g.index_bytes = checked::Mul(index_dim, model_dtype_bytes); break;
      }
    }
    // Merge with an identical group (kinds that differ only in their MLP).
    bool merged = false;
    for (auto& o : out) {
      if (o.k_elems == g.k_elems && o.v_elems == g.v_elems && o.window_tokens == g.window_tokens && o.chunked == g.chunked && o.index_k_elems == g.index_k_elems &&
          o.index_bytes == g.index_bytes && o.fp8_latent_bytes == g.fp8_latent_bytes) {
        o.layers += g.layers;
        merged = true;
        break;
      }
    }
    if (!merged) out.push_back(g);
  }
  return out;
}

// Checked products and sums (util/checked_math.h): tokens x sequences x layers is where inference
// sizes grow fastest (DeepSeek-V3's decompressed cache is ~5 MB per token).
int64_t KvLayerBytes(const KvGroup& g, const KvElementSize& e, int64_t tokens) {
  // ggml rows: ggml_row_size(type, n_embd) per token; other engines: elements x num/den.
  auto row = [&](int64_t elems) { return elems == 0 ? 0 : CeilDiv(checked::Mul(elems, e.bytes), e.elements); };
  const int64_t k = g.fp8_latent_bytes > 0 && e.name == "fp8" ? g.fp8_latent_bytes : row(g.k_elems);
  return checked::Mul(k + row(g.v_elems) + row(g.index_k_elems) + g.index_bytes, tokens);
}

int64_t KvBytesPerToken(const std::vector<KvGroup>& groups, const KvElementSize& e) {
  int64_t total = 0;
  for (const auto& g : groups) total = checked::Add(total, checked::Mul(g.layers, KvLayerBytes(g, e, 1)));
  return total;
}

int64_t KvBytes(const std::vector<KvGroup>& groups, const KvElementSize& e, int64_t tokens, int64_t seqs) {
  int64_t total = 0;
  for (const auto& g : groups) {
    int64_t t = g.window_tokens > 0 ? std::min(g.window_tokens, tokens) : tokens;
    total = checked::Add(total, checked::Mul(g.layers, KvLayerBytes(g, e, t), seqs));
  }
  return total;
}

std::string KvExplainPerToken(const std::vector<KvGroup>& groups, const KvElementSize& e) {
  std::string s;
  std::string bytes = e.elements == 1 ? std::to_string(e.bytes) + " B" : std::to_string(e.bytes) + "/" + std::to_string(e.elements) + " B";
  for (const auto& g : groups) {
    if (!s.empty()) s += " + ";
    s += std::to_string(g.layers) + " layers x ";
    // "576 (MLA latent) x 2 B", "(576 MLA latent + 128 indexer keys) x 2 B",
    // "(576 (MLA latent) x 2 B + 132 B indexer keys)", "(656 B fp8_ds_mla latent + 132 B indexer keys)".
    const bool fp8_latent = g.fp8_latent_bytes > 0 && e.name == "fp8";
    std::string row;
    if (fp8_latent) row = std::to_string(g.fp8_latent_bytes) + " B fp8_ds_mla latent";
    else if (g.index_k_elems > 0) row = "(" + std::to_string(g.k_elems) + " MLA latent + " + std::to_string(g.index_k_elems) + " indexer keys) x " + bytes;
    else if (g.v_elems == 0) row = std::to_string(g.k_elems) + " (MLA latent) x " + bytes;
    else if (g.k_elems == g.v_elems) row = "2 x " + std::to_string(g.k_elems) + " x " + bytes;
    else row = "(" + std::to_string(g.k_elems) + " + " + std::to_string(g.v_elems) + ") x " + bytes;
    if (g.index_bytes > 0) row = "(" + row + " + " + std::to_string(g.index_bytes) + " B indexer keys)";
    s += row;
    if (g.window_tokens > 0) s += (g.chunked ? " (chunks of " : " (sliding ") + std::to_string(g.window_tokens) + ")";
  }
  return s + " = " + WithCommas(KvBytesPerToken(groups, e)) + " B/token";
}

}  // namespace vramplan
