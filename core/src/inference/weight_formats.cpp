// Stored weight bytes per format. Sources are cited in weight_formats.h and docs/inference.md.
#include "inference/weight_formats.h"

#include <algorithm>

#include "format.h"
#include "inference/packed_linear_bytes.h"
#include "model/packed_linears.h"
#include "model/quantized_layouts.h"
#include "model/unquantized_modules.h"
#include "units.h"

namespace vramplan {
namespace {

// sizeof(block_*) from ggml/src/ggml-common.h (QK_K = 256):
//  q8_0: d(2) + qs[32] = 34 / 32      q4_0: d(2) + qs[16] = 18 / 32     q4_1: d,m(4) + qs[16] = 20 / 32
//  q5_0: d(2) + qh[4] + qs[16] = 22   q5_1: d,m(4) + qh[4] + qs[16] = 24
//  q2_K: scales[16] + qs[64] + d,dmin(4) = 84        q3_K: hmask[32] + qs[64] + scales[12] + d(2) = 110
//  q4_K: d,dmin(4) + scales[12] + qs[128] = 144      q5_K: d,dmin(4) + scales[12] + qh[32] + qs[128] = 176
//  q6_K: ql[128] + qh[64] + scales[16] + d(2) = 210  iq2_xxs: d(2) + qs[32] uint16 = 66
//  iq2_s: d(2) + qs[64] + qh[8] + scales[8] = 82     iq3_xxs: d(2) + qs[96] = 98
//  iq3_s: d(2) + qs[64] + qh[8] + signs[32] + scales[4] = 110
//  iq4_nl: d(2) + qs[16] = 18 / 32                   iq4_xs: d(2) + scales_h(2) + scales_l[4] + qs[128] = 136
const GgmlTypeInfo kGgmlInfo[] = {
    {"f32", 1, 4},      {"f16", 1, 2},      {"bf16", 1, 2},     {"q8_0", 32, 34},   {"q4_0", 32, 18},
    {"q4_1", 32, 20},   {"q5_0", 32, 22},   {"q5_1", 32, 24},   {"q2_K", 256, 84},  {"q3_K", 256, 110},
    {"q4_K", 256, 144}, {"q5_K", 256, 176}, {"q6_K", 256, 210}, {"iq2_xxs", 256, 66}, {"iq2_s", 256, 82},
    {"iq3_xxs", 256, 98}, {"iq3_s", 256, 110}, {"iq4_nl", 32, 18}, {"iq4_xs", 256, 136}};

// llama.cpp ftype -> default ggml type (llama_model_quantize_impl, switch on ftype).
GgmlType DefaultGgufType(WeightFormat f) {
  switch (f) {
    case WeightFormat::kGgufQ8_0: return GgmlType::kQ8_0;
    case WeightFormat::kGgufQ6_K: return GgmlType::kQ6_K;
    case WeightFormat::kGgufQ5_K_M:
    case WeightFormat::kGgufQ5_K_S: return GgmlType::kQ5_K;
    case WeightFormat::kGgufQ4_K_M:
    case WeightFormat::kGgufQ4_K_S: return GgmlType::kQ4_K;
    case WeightFormat::kGgufQ4_0: return GgmlType::kQ4_0;
    case WeightFormat::kGgufQ3_K_M: return GgmlType::kQ3_K;
    case WeightFormat::kGgufQ2_K: return GgmlType::kQ2_K;
    case WeightFormat::kGgufIq4_Xs: return GgmlType::kIq4_Xs;
    case WeightFormat::kGgufIq3_Xxs: return GgmlType::kIq3_Xxs;
    case WeightFormat::kGgufIq2_Xxs: return GgmlType::kIq2_Xxs;
    default: return GgmlType::kF16;
  }
}

// llama-quant.cpp use_more_bits: the first and last eighth of the layers plus every third between.
bool UseMoreBits(int64_t i, int64_t n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

// tensor_type_fallback: a row length that is not a multiple of the block size.
GgmlType Fallback(GgmlType t, int64_t cols) {
  if (cols % GgmlInfo(t).block_elems == 0) return t;
  GgmlType r = GgmlType::kF16;
  switch (t) {
    case GgmlType::kIq2_Xxs: case GgmlType::kIq2_S: case GgmlType::kIq3_Xxs: case GgmlType::kIq3_S:
    case GgmlType::kIq4_Xs: r = GgmlType::kIq4_Nl; break;
    case GgmlType::kQ2_K: case GgmlType::kQ3_K: r = GgmlType::kQ4_0; break;
    case GgmlType::kQ4_K: r = GgmlType::kQ5_0; break;
    case GgmlType::kQ5_K: r = GgmlType::kQ5_1; break;
    case GgmlType::kQ6_K: r = GgmlType::kQ8_0; break;
    default: r = GgmlType::kF16; break;
  }
  return cols % GgmlInfo(r).block_elems == 0 ? r : GgmlType::kF16;
}

// llama.cpp's tensor names by slot (gguf-py tensor_mapping.py), which its quantization recipe
// (llama_tensor_get_type) keys on.
GgufCategory CategoryOf(const LinearSpec& l) {
  switch (l.slot) {
    case LinearSlot::kQ: return GgufCategory::kAttnQ;
    case LinearSlot::kK: return GgufCategory::kAttnK;
    case LinearSlot::kV: return GgufCategory::kAttnV;
    case LinearSlot::kQkv: return GgufCategory::kAttnQkv;
    case LinearSlot::kMlaKvB: return GgufCategory::kAttnKvB;
    case LinearSlot::kO: return GgufCategory::kAttnOutput;
    case LinearSlot::kGate: case LinearSlot::kExpertGate: case LinearSlot::kSharedExpertGate:
      return GgufCategory::kFfnGate;
    // gate_up_proj (Phi-3, gpt-oss experts) is split into ffn_gate and ffn_up by the converter; the
    // recipe treats both alike.
    case LinearSlot::kUp: case LinearSlot::kGateUp: case LinearSlot::kExpertUp: case LinearSlot::kExpertGateUp:
    case LinearSlot::kSharedExpertUp:
      return GgufCategory::kFfnUp;
    case LinearSlot::kDown: case LinearSlot::kExpertDown: case LinearSlot::kSharedExpertDown:
      return GgufCategory::kFfnDown;
    default:  // q_a_proj, kv_a_proj_with_mqa, q_b_proj, routers, shared_expert_gate
      return GgufCategory::kOther;
  }
}

int64_t Bytes16(int64_t params) { return params * 2; }

struct LinearCost {
  int64_t bytes = 0;
  int64_t replicated_bytes = 0;  // held whole on every tp rank besides `bytes` (packed_linear_bytes.h)
  bool quantized = false;
};

// The checkpoint's packed layout when it is the one the format loads (LayoutServesFormat), and the
// engine that loads it.
struct PackedServing {
  const PackedLinears* layout = nullptr;  // nullptr: the format's defaults (group 128)
  PackedLoader loader = PackedLoader::kModules;
  int64_t tp = 1;
};

// One linear (all its copies), in `format`, sharded by tp. `gguf_type` is used for GGUF formats.
LinearCost LinearBytes(const LinearSpec& l, WeightFormat f, GgmlType gguf_type, const std::string& model_type,
                       const std::string& quantization_method, const PackedServing& packed) {
  const int64_t in = l.in_features, out = l.out_features, n = in * out;
  const int64_t bias = l.bias ? out : 0;
  LinearCost c;
  if (packed.layout != nullptr) {
    // The checkpoint's own tensors (model/packed_linears.h), as the engine keeps them
    // (inference/packed_linear_bytes.h); a linear the checkpoint does not pack stays 16-bit.
    if (!StoredPacked(l, *packed.layout)) {
      c.bytes = Bytes16(n + bias) * l.copies;
      return c;
    }
    const PackedResidentBytes r = PackedLinearResidentBytes(l, *packed.layout, packed.loader, packed.tp);
    c.quantized = true;
    c.bytes = (r.sharded + Bytes16(bias)) * l.copies;
    c.replicated_bytes = r.replicated * l.copies;
    return c;
  }
  bool quantizable = l.role != ModuleRole::kRouter;
  switch (f) {
    case WeightFormat::kFp32: c.bytes = (n + bias) * 4; break;
    case WeightFormat::kFp16:
    case WeightFormat::kBf16: c.bytes = Bytes16(n + bias); break;
    case WeightFormat::kFp8:
      if (!quantizable) { c.bytes = Bytes16(n + bias); break; }
      c.quantized = true;
      if (model_type == "deepseek_v3") {
        c.bytes = n + CeilDiv(out, 128) * CeilDiv(in, 128) * 4 + Bytes16(bias);  // weight_scale_inv per 128x128 block
      } else if (quantization_method == "fbgemm_fp8") {
        // transformers integrations/fbgemm_fp8.py FbgemmFp8Linear: weight fp8 [out, in] + weight_scale
        // fp32 [out, 1] (row-wise); input_scale_ub is a non-persistent buffer, not stored.
        c.bytes = n + out * 4 + Bytes16(bias);
      } else {
        c.bytes = n + 4 + 4 + Bytes16(bias);  // weight_scale + input_scale (per tensor, fp32)
      }
      break;
    case WeightFormat::kInt8:
      // bnb replaces every nn.Linear (routers too); fused expert tensors that are not nn.Linear stay 16-bit.
      if (!l.lora_targetable) { c.bytes = Bytes16(n + bias); break; }
      c.quantized = true;
      c.bytes = Int8RowwiseBytes(in, out) + Bytes16(bias);
      break;
    case WeightFormat::kNf4:  // with double quantization (compress_statistics), as weight_formats.h documents
      if (!l.lora_targetable) { c.bytes = Bytes16(n + bias); break; }
      c.quantized = true;
      c.bytes = Nf4Bytes(n, /*double_quant=*/true) + Bytes16(bias);
      break;
    case WeightFormat::kGptq4:
    case WeightFormat::kGptq8:
    case WeightFormat::kAwq4:  // no quantization_config layout: group 128 assumed; AWQ has no g_idx
      if (!quantizable) { c.bytes = Bytes16(n + bias); break; }
      c.quantized = true;
      c.bytes = GroupQuantBytes(in, out, f == WeightFormat::kGptq8 ? 8 : 4, 128, /*g_idx=*/f != WeightFormat::kAwq4) + Bytes16(bias);
      break;
    case WeightFormat::kMxfp4:
      // Only the routed experts: everything else is in quantization_config.modules_to_not_convert
      // (gpt-oss: self_attn, mlp.router, embed_tokens, lm_head) and stays bf16.
      if (l.role != ModuleRole::kExperts) { c.bytes = Bytes16(n + bias); break; }
      c.quantized = true;
      c.bytes = Mxfp4Bytes(n) + Bytes16(bias);
      break;
    default: {  // GGUF: 2-D weight in the recipe's type, bias in f32
      if (!quantizable) { c.bytes = (n + bias) * 4; break; }
      c.quantized = gguf_type != GgmlType::kF16 && gguf_type != GgmlType::kF32 && gguf_type != GgmlType::kBF16;
      c.bytes = GgmlTensorBytes(gguf_type, out, in) + bias * 4;
      break;
    }
  }
  c.bytes *= l.copies;
  return c;
}

}  // namespace

const GgmlTypeInfo& GgmlInfo(GgmlType type) { return kGgmlInfo[static_cast<int>(type)]; }

int64_t GgmlTensorBytes(GgmlType type, int64_t rows, int64_t cols) {
  const GgmlTypeInfo& t = GgmlInfo(type);
  return rows * (cols / t.block_elems) * t.block_bytes;
}

bool IsGguf(WeightFormat f) { return static_cast<int>(f) >= static_cast<int>(WeightFormat::kGgufQ8_0); }

bool IsQuantized(WeightFormat f) {
  return f != WeightFormat::kFp32 && f != WeightFormat::kFp16 && f != WeightFormat::kBf16;
}

std::string WeightFormatName(WeightFormat f) {
  static const char* kNames[] = {"fp32",        "fp16",        "bf16",        "fp8",          "int8",
                                 "nf4",         "gptq_4bit",   "awq_4bit",    "gptq_8bit",    "mxfp4",
                                 "gguf_q8_0",   "gguf_q6_k",
                                 "gguf_q5_k_m", "gguf_q5_k_s", "gguf_q4_k_m", "gguf_q4_k_s",  "gguf_q4_0",
                                 "gguf_q3_k_m", "gguf_q2_k",   "gguf_iq4_xs", "gguf_iq3_xxs", "gguf_iq2_xxs"};
  return kNames[static_cast<int>(f)];
}

int64_t ComputeDtypeBytes(WeightFormat f) { return f == WeightFormat::kFp32 ? 4 : 2; }

GgmlType GgufTensorType(WeightFormat f, GgufCategory cat, int64_t i, int64_t n, int64_t cols, const GgufRecipeContext& ctx) {
  const GgmlType def = DefaultGgufType(f);
  using W = WeightFormat;
  using T = GgmlType;
  const bool iq2 = f == W::kGgufIq2_Xxs, iq3 = f == W::kGgufIq3_Xxs;
  T t = def;
  if (cat == GgufCategory::kOutput || (ctx.tied_embeddings && cat == GgufCategory::kTokenEmbd)) {
    if (ctx.falcon || cols % GgmlInfo(def).block_elems != 0) t = T::kQ8_0;
    else if (iq2 || iq3) t = T::kQ5_K;
    else if (def != T::kQ8_0) t = T::kQ6_K;
  } else if (cat == GgufCategory::kTokenEmbd) {
    if (iq2) t = T::kQ2_K;
    else if (iq3) t = T::kIq3_S;
  } else if (cat == GgufCategory::kAttnQkv) {
    // A fused QKV (GPT-NeoX, Falcon, Phi-2, GPT-2) has its own rule in llama_tensor_get_type
    // (src/llama-quant.cpp, the name.find("attn_qkv.weight") branch, as the published GGUF files
    // were quantized): Q3_K_M -> Q4_K, Q4_K_M -> Q5_K, Q5_K_M -> Q6_K, otherwise the file type's
    // default. The attn_v rule (Q2_K -> Q3_K/Q4_K, the use_more_bits layers) does not apply to it.
    // llama.cpp's later tensor_get_category rewrite routes ATTENTION_QKV through
    // category_is_attn_v instead; files made since then follow the attn_v rule.
    if (f == W::kGgufQ3_K_M) t = T::kQ4_K;
    else if (f == W::kGgufQ4_K_M) t = T::kQ5_K;
    else if (f == W::kGgufQ5_K_M) t = T::kQ6_K;
  } else if (iq2) {
    if (cat == GgufCategory::kAttnV || cat == GgufCategory::kAttnKvB) {
      t = (ctx.n_gqa >= 4 || ctx.n_expert >= 4) ? T::kQ4_K : T::kQ2_K;
    } else if (ctx.n_expert == 8 && cat == GgufCategory::kAttnK) {
      t = T::kQ4_K;
    } else if (cat == GgufCategory::kFfnDown) {
      if (i < n / 8) t = T::kQ2_K;
    } else if (cat == GgufCategory::kAttnOutput && ctx.n_expert == 8) {
      t = T::kQ5_K;
    }
  } else if (cat == GgufCategory::kAttnV || cat == GgufCategory::kAttnKvB) {
    if (f == W::kGgufQ2_K) t = ctx.n_gqa >= 4 ? T::kQ4_K : T::kQ3_K;
    else if (iq3) t = ctx.n_gqa >= 4 ? T::kQ4_K : T::kIq3_Xxs;  // imatrix assumed for IQ types
    else if (f == W::kGgufIq4_Xs && ctx.n_gqa >= 4) t = T::kQ5_K;
    else if (f == W::kGgufQ3_K_M) t = i < 2 ? T::kQ5_K : T::kQ4_K;
    else if ((f == W::kGgufQ4_K_M || f == W::kGgufQ5_K_M) && UseMoreBits(i, n)) t = T::kQ6_K;
    else if (f == W::kGgufQ4_K_S && i < 4) t = T::kQ5_K;
    if (ctx.is_70b && (t == T::kQ3_K || t == T::kQ4_K)) t = T::kQ5_K;
    if (ctx.n_expert == 8) t = T::kQ8_0;
  } else if (cat == GgufCategory::kAttnK) {
    if (ctx.n_expert == 8) t = T::kQ8_0;
    else if (iq3) t = T::kIq2_S;
  } else if (cat == GgufCategory::kAttnQ) {
    if (iq3) t = T::kIq2_S;
  } else if (cat == GgufCategory::kFfnDown) {
    if (f == W::kGgufQ2_K) t = T::kQ3_K;
    else if (f == W::kGgufQ3_K_M) t = i < n / 16 ? T::kQ5_K : (!ctx.falcon || UseMoreBits(i, n)) ? T::kQ4_K : T::kQ3_K;
    else if (f == W::kGgufQ4_K_M) {
      if (ctx.falcon) t = i < n / 16 ? T::kQ6_K : UseMoreBits(i, n) ? T::kQ5_K : T::kQ4_K;
      else if (UseMoreBits(i, n)) t = T::kQ6_K;
    } else if (f == W::kGgufQ5_K_M && UseMoreBits(i, n)) t = T::kQ6_K;
    else if (f == W::kGgufQ4_K_S && !ctx.falcon && i < n / 8) t = T::kQ5_K;
  } else if (cat == GgufCategory::kAttnOutput) {
    if (!ctx.falcon) {
      if (ctx.n_expert == 8) {
        if (f == W::kGgufQ2_K || iq3 || f == W::kGgufQ3_K_M || f == W::kGgufQ4_K_S || f == W::kGgufQ4_K_M || f == W::kGgufIq4_Xs) t = T::kQ5_K;
      } else if (f == W::kGgufQ2_K) t = T::kQ3_K;
      else if (iq3) t = T::kIq3_S;
      else if (f == W::kGgufQ3_K_M) t = T::kQ4_K;
    }
  }
  return Fallback(t, cols);
}

WeightBytes ComputeWeightBytes(const ModelSpec& spec, WeightFormat f, int64_t tp, PackedLoader loader) {
  WeightBytes w;
  tp = std::max<int64_t>(tp, 1);
  const PackedLinears& layout = spec.checkpoint.packed_linears;
  const bool from_config = LayoutServesFormat(layout, f);
  const PackedServing packed{from_config ? &layout : nullptr, loader, tp};
  const bool gguf = IsGguf(f);
  const int64_t scalar = f == WeightFormat::kFp32 || gguf ? 4 : 2;  // norms, biases, sinks (GGUF keeps 1-D tensors in f32)
  auto shard = [tp](int64_t bytes) { return CeilDiv(bytes, tp); };

  GgufRecipeContext ctx;
  ctx.tied_embeddings = spec.tied_embeddings;
  ctx.falcon = spec.model_type == "falcon";
  ctx.is_70b = spec.num_layers == 80 && (spec.model_type == "llama" || spec.model_type == "qwen2");
  if (!spec.kinds.empty()) {
    const AttentionGeometry& a = spec.kinds[spec.layer_kind.empty() ? 0 : spec.layer_kind[0]].attention;
    ctx.n_gqa = a.num_kv_heads > 0 ? a.num_heads / a.num_kv_heads : 1;
    for (const auto& k : spec.kinds) ctx.n_expert = std::max(ctx.n_expert, k.mlp.num_experts);
  }

  // Embeddings and lm_head.
  const int64_t emb_params = spec.vocab_size * spec.hidden_size;
  // Learned positions and the other embedding tables (extra_embedding_params: Gemma 4's per-layer
  // embeddings) stay unquantized like the embedding: F32 positions and F16 tables in GGUF.
  const int64_t pos_params = spec.position_embedding_rows * spec.hidden_size + spec.extra_embedding_params;
  int64_t quantized = 0, unquantized = 0;
  if (gguf) {
    GgmlType et = GgufTensorType(f, GgufCategory::kTokenEmbd, 0, 1, spec.hidden_size, ctx);
    w.token_embedding_bytes = GgmlTensorBytes(et, spec.vocab_size, spec.hidden_size) +
                              (pos_params - spec.extra_embedding_params) * 4 + spec.extra_embedding_params * 2;
    (et == GgmlType::kF16 ? unquantized : quantized) += emb_params;
    unquantized += pos_params;
    if (!spec.tied_embeddings) {
      GgmlType ot = GgufTensorType(f, GgufCategory::kOutput, 0, 1, spec.hidden_size, ctx);
      w.output_bytes = GgmlTensorBytes(ot, spec.vocab_size, spec.hidden_size) + (spec.lm_head_bias ? spec.vocab_size * 4 : 0);
      quantized += emb_params;
    }
  } else {
    int64_t b = f == WeightFormat::kFp32 ? 4 : 2;  // every format keeps embeddings and lm_head in 16-bit
    w.token_embedding_bytes = shard((emb_params + pos_params) * b);
    unquantized += emb_params + pos_params;
    if (!spec.tied_embeddings) {
      w.output_bytes = shard((emb_params + (spec.lm_head_bias ? spec.vocab_size : 0)) * b);
      unquantized += emb_params;
    }
  }
  w.final_norm_bytes = spec.final_norm.Params() * scalar;
  unquantized += spec.final_norm.Params();

  // Per-tensor counters of the llama.cpp recipe: attn_v and ffn_down tensors in file order.
  int64_t n_attn_v = 0, n_ffn_down = 0;
  if (gguf) {
    for (uint8_t idx : spec.layer_kind) {
      for (const auto& l : spec.kinds[idx].linears) {
        GgufCategory c = CategoryOf(l);
        if (c == GgufCategory::kAttnV || c == GgufCategory::kAttnQkv || c == GgufCategory::kAttnKvB) ++n_attn_v;
        if (c == GgufCategory::kFfnDown) ++n_ffn_down;
      }
    }
  }
  int64_t i_attn_v = 0, i_ffn_down = 0;
  const bool keep_list = !spec.unquantized_modules.empty() && ListDescribesFormat(spec.quantization_method, f);
  int64_t replicated_params = 0;  // linears every tp rank holds whole (routers, MLA q_a/kv_a)
  w.layer_bytes.reserve(spec.layer_kind.size());
  for (size_t layer = 0; layer < spec.layer_kind.size(); ++layer) {
    const LayerKind& k = spec.kinds[spec.layer_kind[layer]];
    int64_t bytes = 0;
    for (const auto& l : k.linears) {
      GgmlType t = GgmlType::kF16;
      if (gguf) {
        GgufCategory c = CategoryOf(l);
        int64_t i = 0, n = 1;
        if (c == GgufCategory::kAttnV || c == GgufCategory::kAttnQkv || c == GgufCategory::kAttnKvB) { i = i_attn_v++; n = n_attn_v; }
        if (c == GgufCategory::kFfnDown) {
          // MoE: layer_info parses the layer index from the name (blk.N.) but keeps n = all ffn_down tensors.
          i = ctx.n_expert > 1 ? static_cast<int64_t>(layer) : i_ffn_down;
          ++i_ffn_down;
          n = n_ffn_down;
        }
        t = GgufTensorType(f, c, i, n, l.in_features, ctx);
      }
      LinearCost c = LinearBytes(l, f, t, spec.model_type, spec.quantization_method, packed);
      // A module the checkpoint keeps in 16-bit (quantization_config.modules_to_not_convert).
      if (c.quantized && !gguf && keep_list &&
          KeptUnquantized(spec.unquantized_modules, LinearModulePath(static_cast<int64_t>(layer), l))) {
        c = LinearCost{Bytes16(l.Params()), false};
      }
      // Tensor parallelism splits a linear by its parallel style (set by the family builder):
      // column/row-parallel layers and the experts' weights are divided over the tp ranks, while
      // routers, MLA's low-rank q_a/kv_a projections and Qwen2-MoE's shared-expert gate are
      // replicated on every rank (vLLM model_executor/models/deepseek_v2.py
      // DeepseekV2MLAAttention: q_a_proj / kv_a_proj_with_mqa = ReplicatedLinear; mixtral.py
      // MixtralMoE and deepseek_v2.py DeepseekV2MoE: gate = ReplicatedLinear). llama.cpp keeps
      // every tensor whole (tp does not apply to it).
      const bool replicated = l.parallel == ParallelStyle::kReplicated;
      bytes += (gguf || replicated ? c.bytes : shard(c.bytes)) + c.replicated_bytes;
      if (replicated && !gguf && tp > 1) replicated_params += l.Params();
      (c.quantized ? quantized : unquantized) += l.Params();
    }
    int64_t extras = k.extra_attention_params + k.extra_router_params;
    for (const auto& nm : k.norms) extras += nm.Params();
    bytes += extras * scalar;
    unquantized += extras;
    w.layer_bytes.push_back(bytes);
    w.all_layers_bytes += bytes;
  }
  w.total_bytes = w.token_embedding_bytes + w.output_bytes + w.final_norm_bytes + w.all_layers_bytes;
  w.quantized_params = quantized;
  w.unquantized_params = unquantized;
  std::string fmt = WeightFormatName(f);
  if (!IsQuantized(f)) {
    w.explain = WithCommas(quantized + unquantized) + " params x " + std::to_string(scalar == 4 ? 4 : 2) + " B (" + fmt + ")";
  } else {
    const std::string kept_modules = !keep_list || gguf ? std::string()
        : ", the " + std::to_string(spec.unquantized_modules.size()) + " entries of quantization_config.modules_to_not_convert";
    w.explain = WithCommas(quantized) + " params in " + fmt + " + " + WithCommas(unquantized) + " params kept in " +
                (gguf ? "f16/f32" : "16-bit") + " (" + (f == WeightFormat::kMxfp4 ? "attention, router, " : "") + "embeddings, norms" +
                (gguf ? "" : ", lm_head") + kept_modules + ")";
    if (from_config) {
      w.explain += " [" + PackedResidencyText(layout, loader) + "]";
    } else if (f == WeightFormat::kGptq4 || f == WeightFormat::kGptq8 || f == WeightFormat::kAwq4) {
      w.explain += std::string(" [no ") + (f == WeightFormat::kAwq4 ? "AWQ" : "GPTQ") +
                   " layout in the model's quantization_config: group 128 assumed, with qzeros" +
                   (f == WeightFormat::kAwq4 ? "" : " and g_idx") + ", no stored biases]";
    }
  }
  if (tp > 1 && !gguf) {
    w.explain += ", sharded over tp=" + std::to_string(tp);
    if (replicated_params > 0) w.explain += " (" + WithCommas(replicated_params) + " params of routers / MLA q_a, kv_a replicated on every rank)";
  }
  w.explain += " = " + BytesExplained(w.total_bytes);
  return w;
}

}  // namespace vramplan
