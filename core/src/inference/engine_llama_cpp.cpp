// llama.cpp (llama-server / llama-cli) device buffers, as printed at start-up:
//  * "CUDA0 model buffer size": the tensors of offloaded layers. With n_gpu_layers = N the last N
//    repeating layers go to the GPU and the output layer only when N > n_layer ("offloaded
//    N/n_layer+1 layers"); token_embd always stays in host memory (src/llama-model.cpp
//    load_tensors: i_gpu_start = max(n_layer - n_gpu_layers, 0), dev_input = CPU, dev_output =
//    the device of layer n_layer).
//  * "CUDA0 KV buffer size": per layer n_ctx cells x ggml_row_size(type_k, n_embd_k_gqa) +
//    ggml_row_size(type_v, n_embd_v_gqa) on the layer's device (src/llama-kv-cache.cpp); sliding
//    and chunked (Llama 4) layers get min(n_ctx, pad(n_swa x n_seq + n_ubatch, 256)) cells
//    (src/llama-kv-cache-iswa.cpp; swa_full, off by default, would give them n_ctx);
//    DeepSeek MLA caches kv_lora_rank + rope per cell; DeepSeek sparse attention (DeepSeek-V3.2,
//    GLM-5: LLM_ARCH_DEEPSEEK32 / LLM_ARCH_GLM_DSA) adds a second cache of the lightning indexer's
//    keys, indexer_head_size per cell in type_k (src/llama-kv-cache-dsa.cpp llama_kv_cache_dsa,
//    ggml-org/llama.cpp PR #23346). n_ctx is padded to 256.
//  * "CUDA0 compute buffer size": the ggml graph allocator's peak for one n_ubatch micro-batch at
//    full context. Without flash attention the f32 KQ scores n_head x n_ctx x n_ubatch dominate
//    (llm_graph_context::build_attn_mha: ggml_mul_mat(k, q) then in-place soft_max); with flash
//    attention the peak is the output layer, n_ubatch x (n_vocab + n_embd) x 4 B. Calibrated on
//    start-up logs (docs/accuracy_inference.md): attention phase = KQ + 6 x n_ubatch x n_embd x 4 B.
//  * quantized V cache requires flash attention (llama_context: "V cache quantization requires flash_attn").
#include <algorithm>

#include "format.h"
#include "inference/engines.h"
#include "inference/kv_cache.h"
#include "inference/llama_cpp_mmproj.h"
#include "model/image_tokens.h"
#include "inference/recurrent_state.h"
#include "inference/weight_formats.h"
#include "planner/prepared.h"
#include "units.h"
#include "util/checked_math.h"

namespace vramplan {

using checked::Add;
using checked::Mul;
using engine_util::SetTerm;
using engine_util::Warn;

namespace {

int64_t Pad(int64_t a, int64_t p) { return Mul(CeilDiv(a, p), p); }

}  // namespace

void EstimateLlamaCppEngine(const Scenario& s, const RankShard& rank, const Prepared& prepared, Result* r, bool explain) {
  (void)rank;  // llama.cpp's layer split over several GPUs is not modeled: the rank holds every offloaded layer
  const ModelSpec& m = s.model;
  const InferenceConfig& inf = s.inference;
  const int64_t L = m.num_layers, h = m.hidden_size, V = m.vocab_size;
  const int64_t n_seq = std::max<int64_t>(1, inf.batch_size);
  int64_t n_ctx = inf.n_ctx > 0 ? inf.n_ctx : Mul(n_seq, engine_util::PromptPlusNew(s));
  n_ctx = Pad(n_ctx, 256);
  const int64_t n_ubatch = std::max<int64_t>(1, std::min({inf.n_ubatch, inf.n_batch, n_ctx}));
  const int64_t ngl = inf.n_gpu_layers < 0 ? L + 1 : std::min(inf.n_gpu_layers, L + 1);
  const int64_t first_gpu_layer = std::max<int64_t>(L - ngl, 0);
  const bool output_on_gpu = ngl > L;

  WeightFormat wf = inf.weights;
  if (!IsGguf(wf) && wf != WeightFormat::kFp32 && wf != WeightFormat::kFp16 && wf != WeightFormat::kBf16) {
    Warn(r, explain, WarningCode::kSubstituted, "inference.weights", "llama.cpp runs GGUF files; " + WeightFormatName(wf) + " is counted as gguf_q8_0 (8-bit) or gguf_q4_0 (4-bit)");
    wf = (wf == WeightFormat::kFp8 || wf == WeightFormat::kInt8 || wf == WeightFormat::kGptq8) ? WeightFormat::kGgufQ8_0 : WeightFormat::kGgufQ4_0;
  }
  const WeightBytes& w = prepared.WeightBytesFor(m, wf, 1);
  KvElementSize e = ResolveKvDtype(inf.kv_cache, wf, Engine::kLlamaCpp);
  if (inf.kv_cache == KvDtype::kFp8) {
    Warn(r, explain, WarningCode::kSubstituted, "inference.kv_cache", "llama.cpp has no fp8 cache type; counted as q8_0");
    e = ResolveKvDtype(KvDtype::kInt8, wf, Engine::kLlamaCpp);
  }
  if (e.block_elements > 1 && !inf.flash_attn) Warn(r, explain, WarningCode::kWouldNotStart, "inference.flash_attn", "llama.cpp requires flash attention for a quantized V cache");

  int64_t gpu_weights = output_on_gpu ? w.output_bytes + w.final_norm_bytes : 0;
  int64_t cpu_weights = w.token_embedding_bytes + (output_on_gpu ? 0 : w.output_bytes + w.final_norm_bytes);
  int64_t gpu_kv = 0, cpu_kv = 0, max_heads = 0, swa_cells = 0;
  auto row = [&](int64_t elems) { return elems == 0 ? 0 : CeilDiv(Mul(elems, e.bytes), e.elements); };
  for (int64_t i = 0; i < L; ++i) {
    const LayerKind& k = m.kinds[m.layer_kind[static_cast<size_t>(i)]];
    const AttentionGeometry& a = k.attention;
    int64_t k_el, v_el;
    if (a.mla) {
      k_el = a.kv_lora_rank + a.qk_rope_head_dim;
      v_el = 0;
    } else {
      k_el = a.num_kv_heads * a.head_dim;
      v_el = a.num_kv_heads * (a.v_head_dim > 0 ? a.v_head_dim : a.head_dim);
    }
    int64_t cells = n_ctx;
    if (a.sliding_window > 0) {
      // Llama 4's chunked layers are the SWA cache too (is_swa with LLAMA_SWA_TYPE_CHUNKED,
      // set_swa_pattern(4): three chunked, one full), with n_swa = 8192 set in load_hparams for
      // LLM_ARCH_LLAMA4 whatever the config's attention_chunk_size (src/llama-model.cpp).
      const int64_t n_swa = a.chunked ? 8192 : a.sliding_window;
      cells = std::min(n_ctx, Pad(Add(Mul(n_swa, n_seq), n_ubatch), 256));
      swa_cells = cells;
    }
    // No K/V without attention, on a layer that reuses another layer's K/V (Gemma 4's KV-shared
    // layers) or on a cross-attention layer (image K/V, not per text token).
    const bool caches = a.num_heads > 0 && !a.kv_shared && !a.cross_attention;
    // DeepSeek sparse attention: llama_kv_cache_dsa's second cache holds the indexer key, one
    // head of indexer_head_size per cell in type_k (src/llama-kv-cache-dsa.cpp).
    int64_t kv = caches ? Mul(row(k_el) + row(v_el) + row(a.index_head_dim), cells) : 0;
    // A recurrent layer's r_l / s_l rows, F32, one per sequence (src/llama-memory-recurrent.cpp;
    // mem_size = max(1, n_seq_max)).
    if (k.recurrent.kind != MixerKind::kNone) kv = Add(kv, Mul(RecurrentLayerBytes(k.recurrent, Engine::kLlamaCpp, 1, 4), n_seq));
    bool on_gpu = i >= first_gpu_layer;
    int64_t& layer_weights = on_gpu ? gpu_weights : cpu_weights;
    int64_t& layer_kv = on_gpu ? gpu_kv : cpu_kv;
    layer_weights = Add(layer_weights, w.layer_bytes[static_cast<size_t>(i)]);
    layer_kv = Add(layer_kv, kv);
    if (on_gpu) max_heads = std::max(max_heads, a.num_heads);
  }
  // Compute buffer on the GPU (present when any layer is offloaded).
  int64_t compute = 0;
  std::string compute_what;
  if (ngl > 0) {
    int64_t inter = 0;
    for (const auto& k : m.kinds) inter = std::max(inter, k.mlp.num_experts > 0 ? Mul(k.mlp.intermediate, k.mlp.experts_per_token) : k.mlp.intermediate);
    int64_t attn = Mul(6, n_ubatch, h, 4);
    if (!inf.flash_attn) attn = Add(attn, Mul(max_heads, n_ctx, n_ubatch, 4));
    int64_t ffn = Mul(n_ubatch, Add(Mul(3, inter), 2 * h), 4);
    int64_t out = output_on_gpu ? Mul(n_ubatch, V + h, 4) : 0;
    compute = std::max({attn, ffn, out});
    compute_what = compute == attn ? (inf.flash_attn ? "attention" : "KQ scores " + WithCommas(max_heads) + " heads x " + WithCommas(n_ctx) + " x " + WithCommas(n_ubatch) + " x 4 B") : compute == out ? "output logits " + WithCommas(n_ubatch) + " x (" + WithCommas(V) + " + " + WithCommas(h) + ") x 4 B" : "feed-forward";
  }
  // Host side: the CPU compute buffer when layers run on the CPU, and the output buffer (n_seq x vocab floats).
  int64_t cpu_compute = first_gpu_layer > 0 ? Mul(n_ubatch, 3 * h + V, 4) : Mul(n_ubatch, h, 4);
  int64_t output_buf = Mul(n_seq, V, 4);

  // --mmproj (inference/llama_cpp_mmproj.h): the projector file's tensors and its compute buffer,
  // on the GPU beside the model (mtmd_context_params.use_gpu, true unless --no-mmproj-offload).
  const LlamaCppMmproj mmproj = LlamaCppMmprojBuffers(s);
  gpu_weights = Add(gpu_weights, mmproj.weight_bytes);
  compute = Add(compute, mmproj.compute_bytes);
  if (mmproj.loaded) {
    VisionResult& vr = r->vision;
    vr.present = true;
    const ImageTokens one = TokensForImage(m.vision, inf.image_height, inf.image_width, 0);
    vr.tokens_per_image = DecoderTokens(one);
    vr.patches_per_image = one.patches;
    vr.image_tokens = Mul(inf.images_per_request, DecoderTokens(one));
    vr.llm_tokens = inf.prompt_len;  // already prompt + image tokens (RunInferenceEngine)
    vr.tower_params = mmproj.params;
    vr.tower_weight_bytes = mmproj.weight_bytes;
    vr.mmproj_compute_bytes = mmproj.compute_bytes;
    // The product's rule: no guess without an `approximate` warning. The file's weights follow the
    // tower's exact parameter count; the compute buffer is derived from clip.cpp's warm-up graph.
    Warn(r, explain, WarningCode::kApproximate, "inference.mmproj",
         "the projector's compute buffer is derived from clip.cpp's warm-up graph (F32 activations of one image of " +
             WithCommas(mmproj.warmup_side) + " px), not checked against a printed compute buffer size; its weights follow the tower's exact count");
  } else if (explain && inf.mmproj != MmprojType::kNone) {
    Warn(r, true, WarningCode::kNoEffect, "inference.mmproj", "this model has no modelled vision tower (docs/models.md): no projector to load");
  }

  const std::string X = " x ";
  SetTerm(r, "weights", gpu_weights,
          explain ? std::to_string(std::min(ngl, L + 1)) + "/" + std::to_string(L + 1) + " layers offloaded (output layer included); token_embd stays in host memory; " + w.explain +
                        (mmproj.loaded ? "; + " + mmproj.explain.substr(0, mmproj.explain.find(';')) : std::string())
                  : "");
  SetTerm(r, "activations", compute,
          explain ? (ngl > 0 ? "compute buffer: " + compute_what + " = " + BytesExplained(compute - mmproj.compute_bytes) : "no layer offloaded") +
                        (mmproj.loaded ? "; + the projector's compute buffer " + BytesExplained(mmproj.compute_bytes) : std::string())
                  : "");
  SetTerm(r, "kv_cache", gpu_kv,
          explain ? WithCommas(n_ctx) + " cells (n_ctx, padded to 256" + (swa_cells ? "; sliding layers " + WithCommas(swa_cells) + " cells" : "") + ") x per-layer rows (" + e.name + ") on offloaded layers = " + BytesExplained(gpu_kv) : "");
  SetTerm(r, "logits_and_loss", 0, explain ? "logits live in the compute buffer and a host output buffer" : "");
  SetTerm(r, "temporary", 0, "");
  SetTerm(r, "allocator_overhead", 0, explain ? "ggml allocates exact buffers; no caching allocator" : "");
  r->cpu.breakdown.push_back({"weights", cpu_weights, explain ? "token_embd + layers not offloaded (mmap'd model file)" : ""});
  r->cpu.breakdown.push_back({"kv_cache", cpu_kv, explain ? "KV of the layers kept on the CPU" : ""});
  r->cpu.breakdown.push_back({"compute", Add(cpu_compute, output_buf), explain ? "host compute buffer + output buffer " + WithCommas(n_seq) + X + WithCommas(V) + " x 4 B" : ""});
  r->cpu.bytes = Add(cpu_weights, cpu_kv, cpu_compute, output_buf);

  const int64_t peak = Add(gpu_weights, gpu_kv, compute);
  r->timeline.push_back({"load", "model buffers", gpu_weights});
  r->timeline.push_back({"prefill", "context created (KV + compute buffers)", peak});
  r->timeline.push_back({"decode", "decode (same buffers)", peak});
  r->peak_phase = "prefill";
  r->peak_at = "buffers allocated at context creation";

  InferenceCapacity& c = r->inference;
  c.present = true;
  std::vector<KvGroup> groups = KvGroups(m, Engine::kLlamaCpp, 1);
  c.kv_bytes_per_token = KvBytesPerToken(groups, e);
  c.kv_token_capacity = n_ctx;
  c.max_concurrency = n_seq;
  c.concurrent_sequences = n_seq;  // one slot per sequence (n_seq_max = batch_size)
  c.max_model_len_fits = true;
  const RecurrentState state = RecurrentStateOf(m, Engine::kLlamaCpp, 1, 4);
  c.state_bytes_per_sequence = state.BytesPerSequence();
  c.recurrent_layers = state.layers;
  // llama.cpp implements no Lightning attention: src/llama-arch.cpp (ggml-org/llama.cpp commit
  // 00395eb2) has LLM_ARCH_MINIMAX_M2 ("minimax-m2") but no MiniMax-Text-01 / M1 architecture, so
  // no GGUF of these models loads ("unknown model architecture").
  bool lightning = false;
  for (const LayerKind& k : m.kinds) lightning = lightning || k.recurrent.kind == MixerKind::kLightning;
  if (lightning) {
    Warn(r, true, WarningCode::kWouldNotStart, "inference.engine",
         "llama.cpp has no MiniMax-Text-01 / MiniMax-M1 architecture (Lightning attention; src/llama-arch.cpp lists "
         "minimax-m2 only): it cannot load this model. The figures count the Lightning state as a recurrent layer's "
         "F32 row for comparison only; use engine vllm or transformers");
  }
  if (explain) {
    if (state.layers > 0) {
      Warn(r, true, WarningCode::kApproximate, "model",
           "hybrid model: the KV cache term also holds the recurrent state, " + RecurrentStateExplain(state) + " (F32 r/s buffers) x " +
               WithCommas(n_seq) + " sequences (n_seq_max)");
    }
    if (inf.attention != AttentionImpl::kSdpa || inf.logits != LogitsKept::kLast) Warn(r, true, WarningCode::kNoEffect, "inference.attention", "llama.cpp uses flash_attn instead of inference.attention; logits settings are ignored");
    if (s.parallel.tp > 1) Warn(r, true, WarningCode::kNoEffect, "parallel.tp", "llama.cpp splits layers across GPUs (split-mode layer), not tensors; tp is ignored");
    if (inf.max_model_len || inf.max_num_batched_tokens) Warn(r, true, WarningCode::kNoEffect, "inference", "vLLM settings are ignored by the llama.cpp engine");
  }
}

}  // namespace vramplan
