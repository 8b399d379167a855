// vLLM (V1 engine) start-up memory accounting:
//  1. the engine may use requested = gpu_memory_utilization x total GPU memory
//     (vllm/v1/worker/gpu_worker.py Worker.determine_available_memory);
//  2. it loads the weights, then profile_run() runs one forward pass of max_num_batched_tokens dummy
//     tokens plus a dummy sampler over max_num_seqs requests and records the torch peak
//     (vllm/v1/worker/gpu_model_runner.py profile_run, _dummy_run, _dummy_sampler_run);
//  3. available KV = requested - weights - activation peak - non-torch memory (cuBLAS/NCCL);
//  4. the KV pool is cut into blocks of block_size tokens, every layer the same number:
//     num_blocks = available // (page_size_bytes x num_layers), page = 2 x block x kv_heads x head
//     x dtype (MLA: block x (kv_lora_rank + rope) x dtype) (vllm/v1/core/kv_cache_utils.py
//     get_num_blocks, vllm/v1/kv_cache_interface.py AttentionSpec.page_size_bytes); models with
//     sliding-window or chunked local layers besides full ones are grouped by the hybrid KV-cache
//     manager (inference/vllm_kv_groups.h); DeepSeek sparse attention adds each layer's indexer key
//     page to the block (inference/kv_cache.h);
//  5. it refuses to start if one max_model_len request does not fit
//     (kv_cache_utils.py check_enough_kv_cache_memory) and logs
//     "GPU KV cache size: N tokens" (= num_blocks x block_size) and
//     "Maximum concurrency for L tokens per request: N / L".
// CUDA graphs are captured after the KV pool is allocated (Worker.compile_or_warm_up_model ->
// capture_model) and so come on top of the requested budget before 0.21; from 0.21 the profiler's
// graph estimate is subtracted from the KV budget (inference/vllm_overheads.cpp).
#include <algorithm>
#include <cmath>

#include "format.h"
#include "gpu/device_overhead.h"
#include "inference/engines.h"
#include "inference/kv_cache.h"
#include "inference/recurrent_state.h"
#include "inference/vllm_kv_groups.h"
#include "inference/vllm_multimodal.h"
#include "model/cross_attention_kv.h"
#include "inference/vllm_overheads.h"
#include "inference/vllm_speculative.h"
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

// The hybrid (attention + Mamba / linear attention) KV cache of vLLM V1:
//  - HybridAttentionMambaModelConfig.verify_and_update_config (vllm/model_executor/models/config.py)
//    raises the attention block size to 16 x cdiv(mamba_page, 16 x attention page of one token),
//    unless the user's block_size is larger, and pads the Mamba page to the attention page;
//  - _get_kv_cache_groups_uniform_page_size (vllm/v1/core/kv_cache_utils.py) splits each layer type
//    into groups of group_size layers (the smallest type's count, or the largest's when they are
//    within 25%), padding the last group; the pool is group_size tensors of num_blocks pages;
//  - a request holds cdiv(len, block) blocks in every attention group and one block (its state)
//    in every Mamba group (MambaSpec, prefix caching off).
struct HybridPaging {
  int64_t block = 0, page = 0, group_size = 1, attention_groups = 0, state_groups = 0, num_blocks = 0;
  int64_t BlocksPerRequest(int64_t tokens) const { return Add(Mul(attention_groups, CeilDiv(tokens, block)), state_groups); }
  // What vLLM logs as "GPU KV cache size: N tokens": num_blocks / groups x the smallest block size.
  int64_t TokenCapacity() const {
    const int64_t groups = attention_groups + state_groups;
    return groups > 0 ? num_blocks / groups * block : 0;
  }
};

HybridPaging PageHybrid(const std::vector<KvGroup>& groups, const KvElementSize& e, const RecurrentState& st, int64_t user_block,
                        int64_t available) {
  HybridPaging h;
  int64_t attn_layers = 0, attn_1tok = 0;
  for (const auto& g : groups) {
    attn_layers += g.layers;
    attn_1tok = std::max(attn_1tok, KvLayerBytes(g, e, 1));
  }
  const int64_t mamba_page = st.largest_layer_bytes;
  if (attn_1tok > 0) {
    h.block = std::max(user_block, 16 * CeilDiv(mamba_page, 16 * attn_1tok));
    h.page = Mul(h.block, attn_1tok);
  } else {
    h.block = user_block;
    h.page = mamba_page;
  }
  const int64_t lo = attn_layers > 0 ? std::min(attn_layers, st.layers) : st.layers;
  const int64_t hi = std::max(attn_layers, st.layers);
  h.group_size = VllmHybridGroupSize(lo, hi);
  h.attention_groups = CeilDiv(attn_layers, h.group_size);
  h.state_groups = CeilDiv(st.layers, h.group_size);
  const int64_t per_block = Mul(h.page, h.group_size);
  h.num_blocks = available > 0 && per_block > 0 ? available / per_block : 0;
  return h;
}

}  // namespace

void EstimateVllmEngine(const Scenario& s, const RankShard& rank, const Prepared& prepared, Result* r, bool explain) {
  const ModelSpec& m = s.model;
  const InferenceConfig& inf = s.inference;
  const int64_t tp = rank.tp;
  const int64_t dt = ComputeDtypeBytes(inf.weights);
  const int64_t h = m.hidden_size, V = m.vocab_size;
  const int64_t capacity = s.gpu.memory_bytes;
  const int64_t max_model_len = inf.max_model_len > 0 ? inf.max_model_len : engine_util::PromptPlusNew(s);
  // Default token budget of the profile run (V1 `vllm serve`: 8192 / 2048 by GPU memory; V0: max_model_len).
  int64_t mnbt = inf.max_num_batched_tokens;
  if (mnbt <= 0) mnbt = VllmDefaultBatchedTokens(inf.vllm_version, capacity, max_model_len);
  const int64_t max_seqs = std::max<int64_t>(1, inf.max_num_seqs);
  // DeepSeek sparse attention: one group of every layer's latent and indexer pages
  // (UniformTypeKVCacheSpecs, vllm/v1/core/kv_cache_utils.py get_kv_cache_groups: both are
  // full-attention MLAAttentionSpecs of different page sizes, so num_blocks = available // the
  // sum of all layers' pages and a request holds cdiv(len, block) blocks), in 64-token blocks.
  const int64_t block_size = VllmBlockTokens(m, inf.block_size);

  if (IsGguf(inf.weights)) Warn(r, explain, WarningCode::kApproximate, "inference.weights", "vLLM's GGUF support dequantizes through its own kernels; the file's tensor types are counted as stored");
  if (inf.weights == WeightFormat::kNf4 || inf.weights == WeightFormat::kInt8) Warn(r, explain, WarningCode::kNotModeled, "inference.weights", "bitsandbytes checkpoints in vLLM keep the same stored bytes; kernel workspaces are not modelled");
  const WeightBytes& w = prepared.WeightBytesFor(m, inf.weights, tp, PackedLoader::kVllm);
  // Vision-language models (inference/vllm_multimodal.h): the tower's weights, and the encoder's
  // share of the profile run.
  const VllmMultimodal mm = VllmMultimodalProfile(s, mnbt, max_model_len, max_seqs, dt, tp);
  // MTP speculative decoding (inference/vllm_speculative.h): the drafter's layers load beside the
  // target's, sharing its embedding and head.
  const bool mtp = VllmMtpOn(s);
  const VllmMtpDraft draft = mtp ? VllmMtpDraftOf(s, tp) : VllmMtpDraft{};
  const int64_t weights_total = Add(w.total_bytes, mm.tower_weight_bytes, draft.WeightBytes());

  KvDtype kvd = inf.kv_cache;
  if (kvd == KvDtype::kInt8 || kvd == KvDtype::kInt4) {
    Warn(r, explain, WarningCode::kSubstituted, "inference.kv_cache", "vLLM supports kv_cache_dtype auto/fp8 only; int8/int4 counted as fp8");
    kvd = KvDtype::kFp8;
  }
  KvElementSize e = ResolveKvDtype(kvd, inf.weights, Engine::kVllm);
  // The draft's attention layers take a page in every block beside the target's (kv_cache_utils
  // groups them together). Without a draft the model is read in place: `mtp ? copy : m` would copy
  // the whole ModelSpec on every estimate (a prvalue conditional).
  std::vector<KvGroup> groups = mtp ? KvGroups(WithDraftLayers(m, draft.layers), Engine::kVllm, tp) : KvGroups(m, Engine::kVllm, tp);

  // Profile run activations: the fused gate_up output (2 x intermediate) and SiluAndMul output
  // (intermediate) for every batched token, plus four hidden-size tensors (the layer input, the
  // residual, the normed input and the down_proj / o_proj output before the residual add; the same
  // four as transformers' prefill, docs/accuracy_inference.md); fused MoE caches tokens x top_k x
  // (2I + I + h) (model_executor/layers/fused_moe/fused_moe.py fused_experts).
  int64_t layer_act = 0;
  for (const auto& k : m.kinds) {
    const AttentionGeometry& a = k.attention;
    int64_t heads = rank.Columns(a.num_heads), kvh = a.mla ? 1 : rank.KvHeads(a.num_kv_heads);
    int64_t attn = Mul(mnbt, 4 * h + heads * a.head_dim * 2 + kvh * 2 * a.head_dim, dt);
    int64_t mlp;
    if (k.mlp.num_experts > 0) {
      int64_t inter = rank.Columns(k.mlp.intermediate);
      mlp = Add(Mul(mnbt, Add(4 * h, Mul(k.mlp.experts_per_token, 3 * inter + h)), dt), Mul(mnbt, k.mlp.RouterSlots(), 4));
    } else {
      mlp = Mul(mnbt, 4 * h + 3 * rank.Columns(k.mlp.intermediate), dt);
    }
    layer_act = std::max({layer_act, attn, mlp});
  }
  // The dummy sampler (V0 Sampler with top_p 0.99 / top_k vocab-1; V1 _dummy_sampler_run) runs on
  // min(max_num_seqs, max_num_batched_tokens) rows of the whole vocabulary (the logits are gathered
  // over tp) after the forward's buffers are freed: per row and vocabulary entry the logits (dt), an
  // fp32 copy, the sort's fp32 values and int64 indices, the sorted softmax and its cumulative sum,
  // the scattered logits, probabilities and log-probabilities (4 B each) and two masks: dt + 38 B
  // (model_executor/layers/sampler.py _apply_top_k_top_p; 1.42 GiB printed for 256 x 152,064 in bf16,
  // docs/accuracy_inference.md). It adds to the peak only where it exceeds the forward's.
  const int64_t mm_extra = VllmMultimodalExtra(mm, layer_act);
  const int64_t decoder_act = layer_act;
  layer_act = Add(layer_act, mm_extra);
  if (mm.loaded) {
    VisionResult& vr = r->vision;
    vr.present = true;
    const ImageTokens one = TokensForImage(m.vision, inf.image_height, inf.image_width, inf.mm_max_pixels);
    vr.tokens_per_image = DecoderTokens(one);
    vr.patches_per_image = one.patches;
    vr.image_tokens = inf.images_per_request * DecoderTokens(one);
    vr.llm_tokens = inf.prompt_len;  // already prompt + image tokens (RunInferenceEngine)
    vr.tower_params = m.checkpoint.vision_params + m.checkpoint.projector_params + m.checkpoint.audio_params;
    vr.tower_weight_bytes = mm.tower_weight_bytes;
    vr.profile_items = mm.items;
    vr.profile_tokens_per_item = mm.tokens_per_item;
    vr.profile_bytes = mm_extra;
    vr.profile_modality = mm.modality;
    FillVideoResult(s, &vr);
  }
  const int64_t sampler_rows = std::min(max_seqs, mnbt);
  const int64_t sampler_run = Mul(sampler_rows, V, dt + 38);
  const int64_t sampler = std::max<int64_t>(0, sampler_run - layer_act);
  // The cuBLAS workspace is allocated through torch (inside the activation peak's baseline), so
  // non-torch memory is what vLLM's profiler prints (vllm_overheads.cpp).
  const int64_t non_torch = VllmNonTorchBytes(tp, prepared.device);
  const int64_t requested = static_cast<int64_t>(std::floor(inf.gpu_memory_utilization * static_cast<double>(capacity)));
  const int64_t layers_total = static_cast<int64_t>(m.layer_kind.size());
  const int64_t graphs = inf.cuda_graphs ? VllmCudaGraphBytes(inf.vllm_version, layers_total, max_seqs) : 0;
  const bool graphs_in_budget = VllmGraphsInsideBudget(inf.vllm_version);
  int64_t available = requested - Add(weights_total, layer_act, sampler, non_torch, graphs_in_budget ? graphs : 0);

  const RecurrentState state = RecurrentStateOf(m, Engine::kVllm, tp, dt);
  const CrossAttentionLayers cross = CrossAttentionOf(m);
  if (cross.layers > 0 && inf.vllm_version != VllmVersion::kV0Engine) {
    Warn(r, explain, WarningCode::kApproximate, "inference.vllm_version",
         "vLLM ran Llama 3.2 Vision only on its V0 encoder-decoder runner (0.8-0.10 fell back to it; removed in 0.11, PR #24907): its "
         "cross-attention cache is counted the V0 way");
  }
  // Page bytes per block over all layers (the V0 engine's one block table for every layer).
  int64_t page_all_layers = 0;
  int64_t num_blocks = 0, kv_pool = 0, kv_tokens = 0, need_one = 0, per_request_blocks = 0, blocks_per_seq = 0;
  int64_t block = block_size;
  HybridPaging hybrid;
  VllmKvPaging paging;
  if (state.layers > 0) {
    hybrid = PageHybrid(groups, e, state, block_size, available);
    block = hybrid.block;
    num_blocks = hybrid.num_blocks;
    kv_pool = Mul(num_blocks, hybrid.page, hybrid.group_size);
    kv_tokens = hybrid.TokenCapacity();
    per_request_blocks = hybrid.BlocksPerRequest(max_model_len);
    need_one = Mul(per_request_blocks, hybrid.page, hybrid.group_size);
    blocks_per_seq = hybrid.BlocksPerRequest(Add(engine_util::PromptPlusNew(s), draft.lookahead_tokens));
  } else if (cross.layers == 0 && inf.vllm_version != VllmVersion::kV0Engine) {
    // V1: full, sliding-window and chunked-local layers as kv_cache_utils.py groups them
    // (inference/vllm_kv_groups.h).
    bool has_chunked = false;
    for (const auto& g : groups) has_chunked = has_chunked || g.chunked;
    const bool hybrid_allocator = !has_chunked || VllmHybridAllocatorForChunked(inf.vllm_version);
    paging = PageVllmAttention(groups, e, block_size, mnbt, available, hybrid_allocator);
    num_blocks = paging.num_blocks;
    kv_pool = paging.pool_bytes;
    kv_tokens = paging.token_capacity;
    per_request_blocks = paging.RequestBlocks(max_model_len);
    need_one = paging.RequestBytes(max_model_len);
    // With speculative decoding the scheduler allocates num_speculative_tokens lookahead slots too.
    blocks_per_seq = paging.RequestBlocks(Add(engine_util::PromptPlusNew(s), draft.lookahead_tokens));
    if (has_chunked && !hybrid_allocator && explain) {
      Warn(r, true, WarningCode::kApproximate, "inference.vllm_version",
           "vLLM 0.10.1 until PR #29627 disables the hybrid KV-cache manager for chunked local attention by default "
           "(VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=0): every layer holds every token, as counted; 0.8-0.9.1 had no hybrid "
           "manager either, but 0.9.2-0.10.0 and the releases after #29627 page the chunked layers apart (vllm_version 0.21+ counts that)");
    }
    if (paging.page_mismatch && explain) {
      Warn(r, true, WarningCode::kWouldNotStart, "model", "the layers' KV page sizes do not divide the largest: vLLM's unify_kv_cache_spec_page_size raises NotImplementedError");
    }
  } else {
    for (const auto& g : groups) page_all_layers = Add(page_all_layers, Mul(g.layers, KvLayerBytes(g, e, block)));
    // Llama 3.2 Vision on the V0 encoder-decoder runner (the only one vLLM ran it on: V1 fell back
    // to V0 for encoder-decoder models, and PR #24907, 2025-09, removed both): worker/cache_engine.py
    // allocates every attention layer's cache, the cross-attention layers' too, so each block spans
    // all of them, and core/block_manager.py SelfAttnBlockSpaceManager.allocate gives each request a
    // cross block table for its encoder tokens (images x tiles x 1601) from the same pool.
    if (cross.layers > 0) {
      KvGroup g;
      g.layers = cross.layers;
      g.k_elems = g.v_elems = Mul(rank.KvHeads(cross.kv_heads), cross.head_dim);
      page_all_layers = Add(page_all_layers, Mul(g.layers, KvLayerBytes(g, e, block)));
    }
    num_blocks = available > 0 && page_all_layers > 0 ? available / page_all_layers : 0;
    kv_pool = num_blocks * page_all_layers;
    kv_tokens = num_blocks * block;
    // One request of max_model_len: full layers need cdiv(len, block) blocks; sliding layers
    // cdiv(min(window - 1 + max_num_batched_tokens, len), block) + 1 (SlidingWindowSpec.max_memory_usage_bytes).
    for (const auto& g : groups) {
      // (V0 pages chunked local attention like full attention.)
      int64_t blocks = g.window_tokens > 0 && !g.chunked ? CeilDiv(std::min(g.window_tokens - 1 + mnbt, max_model_len), block) + 1 : CeilDiv(max_model_len, block);
      need_one = Add(need_one, Mul(g.layers, KvLayerBytes(g, e, block), blocks));
    }
    const int64_t cross_blocks = CeilDiv(CrossAttentionStates(m, inf.images_per_request), block);
    need_one = Add(need_one, Mul(cross_blocks, page_all_layers));
    per_request_blocks = Add(CeilDiv(max_model_len, block), cross_blocks);
    // With speculative decoding the scheduler allocates num_speculative_tokens lookahead slots too.
    blocks_per_seq = Add(CeilDiv(Add(engine_util::PromptPlusNew(s), draft.lookahead_tokens), block), cross_blocks);
    if (cross_blocks > 0) r->vision.cross_attention_kv_bytes = Mul(std::max<int64_t>(1, inf.batch_size), cross_blocks, page_all_layers);
  }
  const bool len_fits = available > 0 && need_one <= available;
  const int64_t concurrency = per_request_blocks > 0 ? std::min(max_seqs, num_blocks / per_request_blocks) : 0;

  const std::string X = " x ";
  SetTerm(r, "weights", weights_total,
          explain ? w.explain + (mm.loaded ? " + vision tower and projector (16-bit) " + Gib(mm.tower_weight_bytes) : std::string()) +
                        (mtp ? " + " + draft.explain + " = " + BytesExplained(draft.WeightBytes()) : std::string())
                  : "");
  SetTerm(r, "activations", layer_act,
          explain ? "profile_run peak for max_num_batched_tokens = " + WithCommas(mnbt) + " tokens: " + BytesExplained(decoder_act) +
                        (mm_extra > 0 ? " + multimodal profile: " + WithCommas(mm.items) + " dummy images of " + WithCommas(mm.tokens_per_item) +
                                            " tokens (" + WithCommas(mm.largest.patches) + " tower positions each): encoder forward " +
                                            Gib(mm.encoder_peak_bytes) + ", encoder cache " + Gib(mm.encoder_cache_bytes) + " under the decoder's run, adds " +
                                            BytesExplained(mm_extra)
                                      : std::string())
                  : "");
  SetTerm(r, "logits_and_loss", sampler,
          explain ? "dummy sampler: " + WithCommas(sampler_rows) + " requests x " + WithCommas(V) + " vocab x (" + std::to_string(dt) + " + 38) B = " +
                        BytesExplained(sampler_run) + "; it runs after the forward's buffers are freed, so the peak grows by " + BytesExplained(sampler)
                  : "");
  SetTerm(r, "kv_cache", kv_pool,
          explain && state.layers > 0
              ? "available = " + Gib(std::max<int64_t>(available, 0)) + "; " + WithCommas(num_blocks) + " blocks x " + WithCommas(hybrid.group_size) +
                    " layers x " + WithCommas(hybrid.page) + " B pages (attention: " + WithCommas(block) + " tokens; recurrent layers: one sequence's state, " +
                    RecurrentStateExplain(state) + ")" + (mtp ? "; the attention layers include the " + WithCommas(draft.layers) + " MTP draft layer(s)" : std::string()) +
                    " = " + BytesExplained(kv_pool)
          : explain && paging.layout == VllmKvPaging::Layout::kHybrid
              ? "available = " + Gib(std::max<int64_t>(available, 0)) + "; hybrid KV-cache manager (" + paging.Explain() + "): " + WithCommas(num_blocks) +
                    " blocks x " + WithCommas(paging.group_size) + " tensors x " + WithCommas(paging.page) + " B pages = " + BytesExplained(kv_pool) +
                    "; per token " + KvExplainPerToken(groups, e) + (mtp ? " (with the " + WithCommas(draft.layers) + " MTP draft layer(s))" : std::string())
          : explain ? "available = " + Gib(requested) + " (" + std::to_string(inf.gpu_memory_utilization) + " x " + Gib(capacity) + ") - weights - activation peak - non-torch = " +
                        Gib(std::max<int64_t>(available, 0)) + "; " + WithCommas(num_blocks) + " blocks x " + WithCommas(block) + " tokens x " +
                        KvExplainPerToken(groups, e) + (mtp ? " (with the " + WithCommas(draft.layers) + " MTP draft layer(s))" : std::string()) +
                        " = " + BytesExplained(kv_pool)
                  : "");
  SetTerm(r, "temporary", non_torch + graphs,
          explain ? "non-torch memory (kernels" + std::string(tp > 1 ? ", NCCL / custom all-reduce buffers" : "") + ") " + Gib(non_torch) +
                        (graphs ? " + CUDA graphs " + Gib(graphs) + " (" + WithCommas(VllmCapturedGraphs(inf.vllm_version, max_seqs)) + " sizes x " +
                                      WithCommas(layers_total) + " layers; " +
                                      (graphs_in_budget ? "vLLM 0.21+ subtracts them from the KV budget)" : "captured after the KV pool, outside gpu_memory_utilization)")
                                : "")
                  : "");
  // The CUDA context is in the worker's baseline snapshot, outside the budget; the NCCL buffers are
  // not (created after it, they are in non_torch above), so no communicator here.
  const int64_t context = CudaContextBytes(s, prepared.device);
  SetTerm(r, "cuda_context", context, explain ? "CUDA context + lazily loaded kernels, outside gpu_memory_utilization: " + Gib(context) +
                                                     (tp > 1 ? " (NCCL buffers are in the non-torch memory, inside it)" : "")
                                               : "");
  SetTerm(r, "allocator_overhead", 0, explain ? "vLLM sizes its KV pool to what is left of the budget; allocator slack is inside gpu_memory_utilization" : "");

  r->timeline.push_back({"load", "weights", weights_total});
  r->timeline.push_back({"prefill", "profile_run (" + std::to_string(mnbt) + " tokens)", Add(weights_total, layer_act, sampler, non_torch)});
  r->timeline.push_back({"decode", "serving (KV pool allocated)", Add(weights_total, kv_pool, layer_act, sampler, non_torch, graphs)});
  r->peak_phase = "decode";
  r->peak_at = "serving: weights + KV pool + activation budget";

  InferenceCapacity& c = r->inference;
  c.present = true;
  c.kv_bytes_per_token = KvBytesPerToken(groups, e);
  c.kv_token_capacity = kv_tokens;
  c.max_concurrency = concurrency;
  // Sequences of prompt + new tokens that run at once: whole blocks each, at most max_num_seqs
  // (the V1 scheduler admits a request only when its blocks can be allocated; the rest wait).
  c.concurrent_sequences = std::min({inf.batch_size, max_seqs, blocks_per_seq > 0 ? num_blocks / blocks_per_seq : 0});
  c.max_model_len_fits = len_fits;
  c.state_bytes_per_sequence = state.BytesPerSequence();
  c.recurrent_layers = state.layers;
  if (explain) {
    if (state.layers > 0) {
      Warn(r, true, WarningCode::kApproximate, "model",
           "hybrid model: " + RecurrentStateExplain(state) + " (conv + SSM state, model dtype); vLLM sets the attention block size to " +
               WithCommas(block) + " tokens so one attention page (" + WithCommas(hybrid.page) + " B) holds a layer's state, groups " +
               WithCommas(hybrid.group_size) + " layers per KV-cache tensor (" + WithCommas(hybrid.attention_groups) + " attention + " +
               WithCommas(hybrid.state_groups) + " state groups) and gives each request one state block per state group; prefix caching is off for these models");
    }
    if (HasSparseIndexer(m) && inf.block_size != kVllmSparseMlaBlockTokens) {
      Warn(r, true, WarningCode::kNoEffect, "inference.block_size",
           "DeepSeek sparse attention: vLLM forces 64-token blocks for the FlashMLA sparse backend (vllm/platforms/cuda.py); the latent and "
           "the indexer keys of every layer are paged together in them");
    }
    if (available <= 0) {
      Warn(r, true, WarningCode::kWouldNotStart, "inference.gpu_memory_utilization", "no memory left for the KV cache: weights + activations exceed " + Gib(requested) + "; vLLM would not start");
    } else if (!len_fits) {
      Warn(r, true, WarningCode::kWouldNotStart, "inference.max_model_len", "one request of max_model_len " + WithCommas(max_model_len) + " needs " + Gib(need_one) + " of KV cache, more than the " + Gib(available) + " available; vLLM refuses to start");
    }
    if (num_blocks > 0 && c.concurrent_sequences < inf.batch_size) {
      Warn(r, true, WarningCode::kWouldQueue, "inference.batch_size", WithCommas(inf.batch_size) + " concurrent sequences do not fit the KV pool (" + WithCommas(kv_tokens) + " tokens) or max_num_seqs: " + WithCommas(c.concurrent_sequences) + " run at once; the scheduler queues or preempts the rest");
    }
    if (inf.attention != AttentionImpl::kSdpa || inf.logits != LogitsKept::kLast) Warn(r, true, WarningCode::kNoEffect, "inference.attention", "vLLM picks its own attention backend and keeps only sampled-position logits; attention/logits settings are ignored");
    if (inf.n_ctx) Warn(r, true, WarningCode::kNoEffect, "inference.n_ctx", "llama.cpp settings are ignored by the vLLM engine");
  }
}

}  // namespace vramplan
