// transformers `model.generate()` under torch.inference_mode: nothing is saved for backward, so
// the peak is the weights + the KV cache + the largest set of temporaries alive at one moment.
//  * prefill (prompt_len tokens x batch) in the last decoder layer, when the cache already holds
//    the whole prompt: gated MLP  down(act(gate(x)) * up(x))  keeps act(gate), up and their
//    product alive at once: 3 x tokens x intermediate x dtype, plus the residual and the normed input
//    (models/llama/modeling_llama.py LlamaMLP.forward, LlamaDecoderLayer.forward);
//    attention: eager materializes the b x heads x s x s scores in the dtype and softmaxes them in
//    fp32 (eager_attention_forward: softmax(..., dtype=torch.float32).to(query.dtype)); sdpa expands
//    K/V to all heads (repeat_kv) and needs no s x s matrix without padding (is_causal);
//    flash_attention_2 needs neither.
//  * logits: generate() asks for the last position only (num_logits_to_keep / logits_to_keep=1,
//    generation/utils.py _prepare_generation_config, transformers >= 4.45) and upcasts it
//    (next_token_logits = outputs.logits[:, -1, :].to(torch.float32)); `logits: all` models
//    older releases that returned fp32 logits for every prompt position.
//  * decode: the cache grows to prompt+new tokens; DynamicCache.update concatenates
//    (torch.cat) so one layer's K (or V) exists twice for a moment (cache_utils.py DynamicLayer.update).
//  * the prefill keeps four hidden-size tensors alive in the last layer: inputs_embeds (a local
//    of the model's forward), the layer input (the decoder loop's variable), the residual and the
//    normed input (LlamaModel.forward / LlamaDecoderLayer.forward).
//  * device_map="auto" over several GPUs (parallel.gpus > 1, tp = 1) splits the layers: each GPU
//    holds its share of weights and cache but reaches its own full activation peak.
//  * quantized kernels: AutoGPTQ exllama v2 allocates one scratch buffer of the largest
//    dequantized weight (in x out x 2 B, exllamav2 post_init temp_dq); AutoAWQ GEMM dequantizes a
//    whole weight to fp16 for inputs of >= 1024 rows (awq/modules/linear/gemm.py, FP16 matmul heuristic);
//    AutoGPTQ 8-bit (no exllama kernel: qlinear_cuda_old) dequantizes the whole weight to fp16 for
//    inputs of >= kernel_switch_threshold = 128 rows and runs torch.matmul on it.
// Calibrated against the Qwen2.5 speed benchmark (docs/accuracy_inference.md).
#include <algorithm>

#include "format.h"
#include "gpu/device_overhead.h"
#include "inference/engines.h"
#include "model/image_tokens.h"
#include "inference/kv_cache.h"
#include "inference/recurrent_state.h"
#include "inference/vllm_multimodal.h"
#include "model/cross_attention_kv.h"
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

struct LayerPeak {
  int64_t bytes = 0;
  std::string what;
};

// Largest set of live temporaries inside one decoder layer for `tokens` tokens (batch x seq).
LayerPeak PrefillLayerPeak(const ModelSpec& m, const InferenceConfig& inf, int64_t batch, int64_t seq, const RankShard& rank, int64_t dt) {
  const int64_t T = Mul(batch, seq), h = m.hidden_size;
  LayerPeak best;
  for (size_t ki = 0; ki < m.kinds.size(); ++ki) {
    const LayerKind& k = m.kinds[ki];
    const AttentionGeometry& a = k.attention;
    int64_t heads = rank.Columns(a.num_heads);
    int64_t kv = a.mla ? heads : rank.KvHeads(a.num_kv_heads);
    int64_t d = a.head_dim, vd = a.v_head_dim > 0 ? a.v_head_dim : a.head_dim;
    // Hidden-size tensors alive in the last layer: inputs_embeds (held by the model's forward),
    // the layer's input (held by the decoder loop), the residual and the normed input.
    int64_t base = Mul(4, T, h, dt);
    // q, k, v projections + rotary copies of q and k + attention output
    int64_t attn = Add(base, Mul(T, heads * d + kv * (d + vd), dt), Mul(T, heads + kv, d, dt), Mul(T, heads, vd, dt));
    int64_t s_window = a.sliding_window > 0 ? std::min(a.sliding_window, seq) : seq;
    // DeepSeek sparse attention (modeling_glm_moe_dsa.py GlmMoeDsaIndexer.forward, after the
    // layer's q / k / v): `scores = einsum(q.float(), k.float()) * softmax_scale` and then
    // `F.relu(scores)` each hold two fp32 [batch, seq, index_n_heads, seq] tensors at once.
    if (a.index_n_heads > 0 && !a.index_shared) {
      const int64_t indexer = Add(attn, Mul(2, batch, seq, a.index_n_heads, seq, 4));
      if (indexer > best.bytes) best = {indexer, "indexer scores"};
    }
    if (inf.attention == AttentionImpl::kEager) {
      // scores (dtype) + fp32 softmax + its cast back, and the 4-D causal mask (b x 1 x s x s, dtype)
      attn = Add(attn, Mul(batch, heads, seq, seq, 2 * dt + 4), Mul(batch, seq, seq, dt));
      (void)s_window;
    } else if (inf.attention == AttentionImpl::kSdpa) {
      attn = Add(attn, Mul(2, T, heads, std::max(d, vd), dt));  // repeat_kv
    }
    int64_t mlp = 0;
    if (k.mlp.num_experts > 0) {
      int64_t inter = rank.Columns(k.mlp.intermediate), shared = rank.Columns(k.mlp.shared_intermediate);
      int64_t routed_rows = CeilDiv(Mul(T, std::max<int64_t>(k.mlp.experts_per_token, 1)), k.mlp.num_experts);
      mlp = Add(base, Mul(T, h, dt), Mul(T, k.mlp.RouterSlots(), 4), Mul(std::max(Mul(3, inter, routed_rows), Mul(3, shared, T)), dt));
    } else {
      int64_t inter = rank.Columns(k.mlp.intermediate);
      mlp = Add(base, Mul(k.mlp.kind == MlpKind::kGated ? 3 : 2, T, inter, dt));
    }
    if (attn > best.bytes) best = {attn, "attention"};
    if (mlp > best.bytes) best = {mlp, "mlp"};
  }
  return best;
}

// Largest dequantization buffer of the quantized kernels (see header comment).
int64_t KernelScratch(const ModelSpec& m, WeightFormat f, int64_t prefill_rows, int64_t tp) {
  const bool dequantizes = f == WeightFormat::kGptq4 || (f == WeightFormat::kAwq4 && prefill_rows >= 1024) ||
                           (f == WeightFormat::kGptq8 && prefill_rows >= 128);
  if (!dequantizes) return 0;
  int64_t best = 0;
  for (const auto& k : m.kinds) {
    for (const auto& l : k.linears) {
      if (l.role == ModuleRole::kRouter) continue;
      best = std::max(best, CeilDiv(Mul(l.in_features, l.out_features, 2), tp));  // the largest rank's shard
    }
  }
  return best;
}

}  // namespace

void EstimateTransformersEngine(const Scenario& s, const RankShard& rank, const Prepared& prepared, Result* r, bool explain) {
  const ModelSpec& m = s.model;
  const InferenceConfig& inf = s.inference;
  const int64_t tp = rank.tp;
  const int64_t b = inf.batch_size, prompt = inf.prompt_len, total_len = engine_util::PromptPlusNew(s);
  const int64_t dt = ComputeDtypeBytes(inf.weights);
  const int64_t V = rank.Columns(m.vocab_size), h = m.hidden_size;

  if (IsGguf(inf.weights)) Warn(r, explain, WarningCode::kSubstituted, "inference.weights", "GGUF weights are run by llama.cpp; transformers dequantizes GGUF to 16-bit on load, so the weights are counted in bf16");
  const WeightFormat wf = IsGguf(inf.weights) ? WeightFormat::kBf16 : inf.weights;
  WeightBytes w = prepared.WeightBytesFor(m, wf, tp);  // a copy: split below
  // A VLM's vision tower and projector, loaded with the model in its 16-bit dtype (fp32 for fp32
  // weights); the text prompt already carries the image tokens (RunInferenceEngine).
  if (m.vision.kind != VisionKind::kNone) {
    const int64_t tower = m.checkpoint.vision_params + m.checkpoint.projector_params + m.checkpoint.audio_params;
    const int64_t tower_bytes = Mul(tower, wf == WeightFormat::kFp32 ? 4 : 2);
    w.total_bytes = Add(w.total_bytes, tower_bytes);
    if (explain) w.explain += " + vision tower and projector " + WithCommas(tower) + " params (16-bit)";
    VisionResult& vr = r->vision;
    vr.present = true;
    const ImageTokens one = TokensForImage(m.vision, inf.image_height, inf.image_width, 0);
    vr.tokens_per_image = DecoderTokens(one);
    vr.patches_per_image = one.patches;
    vr.image_tokens = inf.images_per_request * DecoderTokens(one);
    vr.llm_tokens = inf.prompt_len;
    vr.tower_params = tower;
    vr.tower_weight_bytes = tower_bytes;
    FillVideoResult(s, &vr);
  }
  std::vector<KvGroup> groups = KvGroups(m, Engine::kTransformers, tp, dt);
  KvElementSize e = ResolveKvDtype(inf.kv_cache, wf, Engine::kTransformers);
  if (inf.kv_cache == KvDtype::kFp8) Warn(r, explain, WarningCode::kSubstituted, "inference.kv_cache", "transformers has no fp8 KV cache; counted at 1 B/element as an offloaded/quantized cache would be");

  const int64_t split = rank.layer_split;  // device_map="auto" (parallel/topology.h)
  if (split > 1) {
    w.total_bytes = rank.LayerSplitBytes(w.total_bytes);
    w.explain += ", split by layers over " + std::to_string(split) + " GPUs (device_map=\"auto\", about 1/" + std::to_string(split) + " each)";
  }
  // Hybrid models: each linear-attention / Mamba layer's cache holds its conv and SSM state per
  // sequence, the same size at every length (inference/recurrent_state.h).
  const RecurrentState state = RecurrentStateOf(m, Engine::kTransformers, tp, dt);
  // Llama 3.2 Vision: the cross-attention cache of the images' K / V (model/cross_attention_kv.h),
  // filled at prefill and kept for the whole generation.
  const int64_t cross_states = CrossAttentionStates(m, Mul(b, inf.images_per_request));
  const int64_t cross_kv = rank.LayerSplitBytes(TransformersCrossKvBytes(CrossAttentionOf(m), cross_states, e.elements == 1 ? e.bytes : dt, false));
  if (cross_kv > 0) r->vision.cross_attention_kv_bytes = cross_kv;
  const int64_t state_bytes = Add(rank.LayerSplitBytes(Mul(state.BytesPerSequence(), b)), cross_kv);
  const int64_t kv_prompt = Add(rank.LayerSplitBytes(KvBytes(groups, e, prompt, b)), state_bytes);
  const int64_t kv_final = Add(rank.LayerSplitBytes(KvBytes(groups, e, total_len, b)), state_bytes);
  const std::string state_explain =
      (state.layers > 0 ? " + recurrent state " + RecurrentStateExplain(state) + " x " + WithCommas(b) + " sequences" : "") +
      (cross_kv > 0 ? " + cross-attention K/V of " + WithCommas(cross_states) + " vision positions (expanded to the query heads) " + Gib(cross_kv) : "");
  // torch.cat in DynamicCache.update: one layer's K (the largest) exists twice for a moment.
  int64_t cat_transient = 0;
  for (const auto& g : groups) {
    int64_t t = g.window_tokens > 0 ? std::min(g.window_tokens, total_len) : total_len;
    cat_transient = std::max(cat_transient, Mul(CeilDiv(Mul(std::max(g.k_elems, g.v_elems), e.bytes), e.elements), t, b));
  }
  const int64_t workspace = CublasWorkspaceBytes(s, prepared.device);
  const int64_t scratch = KernelScratch(m, wf, Mul(b, prompt), tp);

  // Prefill.
  LayerPeak layer = PrefillLayerPeak(m, inf, b, prompt, rank, dt);
  const int64_t last_logits = Mul(b, V, dt + 4 + 4);  // last-position logits, the fp32 copy, softmax/probs
  int64_t prefill_logits = Add(last_logits, Mul(b, prompt, h, dt));
  if (inf.logits == LogitsKept::kAll) prefill_logits = Add(Mul(b, prompt, V, dt + 4), Mul(b, prompt, h, dt), last_logits);
  const bool logits_peak = prefill_logits > layer.bytes;
  const int64_t prefill_act = logits_peak ? 0 : layer.bytes;
  const int64_t prefill_peak = Add(w.total_bytes, kv_prompt, std::max(layer.bytes, prefill_logits), workspace, scratch);
  // Decode: one token per sequence; activations are negligible next to the cache.
  const int64_t decode_act = Mul(b, 2 * h + 3 * std::max<int64_t>(m.kinds.empty() ? 0 : rank.Columns(m.kinds[0].mlp.intermediate), 1), dt);
  const int64_t decode_peak = Add(w.total_bytes, kv_final, cat_transient, last_logits, decode_act, workspace, scratch);

  const bool prefill_wins = prefill_peak >= decode_peak;
  r->timeline.push_back({"load", "weights", w.total_bytes + workspace + scratch});
  r->timeline.push_back({"prefill", logits_peak ? "lm_head" : "last layer " + layer.what, prefill_peak});
  r->timeline.push_back({"decode", "token " + std::to_string(total_len), decode_peak});
  r->peak_phase = prefill_wins ? "prefill" : "decode";
  r->peak_at = prefill_wins ? (logits_peak ? "lm_head + logits" : "layer " + std::to_string(m.num_layers - 1) + " " + layer.what)
                            : "decode step at " + std::to_string(total_len) + " tokens";

  const std::string X = " x ";
  SetTerm(r, "weights", w.total_bytes, explain ? w.explain : "");
  if (prefill_wins) {
    SetTerm(r, "activations", prefill_act,
            explain ? (logits_peak ? std::string("freed before the lm_head") :
                       "prefill " + layer.what + " temporaries of the last layer, " + WithCommas(b) + X + WithCommas(prompt) + " tokens (" +
                           (layer.what == "indexer scores" ? "DeepSeek sparse attention: 2 x b x s x index_n_heads x s fp32 indexer scores" :
                            inf.attention == AttentionImpl::kEager ? "eager: b x heads x s x s scores materialized" :
                            inf.attention == AttentionImpl::kSdpa ? "sdpa: no s x s matrix" : "flash: no s x s matrix") + ") = " + BytesExplained(prefill_act))
                    : "");
    SetTerm(r, "logits_and_loss", logits_peak ? prefill_logits : 0,
            explain ? (logits_peak ? (inf.logits == LogitsKept::kAll ? "all " : "last ") + std::string("position logits: ") + BytesExplained(prefill_logits) : "not alive at the peak") : "");
    SetTerm(r, "kv_cache", kv_prompt, explain ? KvExplainPerToken(groups, e) + X + WithCommas(prompt) + " prompt tokens" + X + WithCommas(b) + state_explain + " = " + BytesExplained(kv_prompt) : "");
    SetTerm(r, "temporary", workspace + scratch, explain ? "cuBLAS workspace " + WithCommas(workspace) + " B" + (scratch ? " + quantized-kernel dequantization buffer " + WithCommas(scratch) + " B" : "") : "");
  } else {
    SetTerm(r, "activations", decode_act, explain ? "one decode token per sequence: " + BytesExplained(decode_act) : "");
    SetTerm(r, "logits_and_loss", last_logits, explain ? WithCommas(b) + X + WithCommas(V) + " vocab x (" + std::to_string(dt) + " + 4 + 4) B (logits, fp32 copy, probabilities) = " + BytesExplained(last_logits) : "");
    SetTerm(r, "kv_cache", kv_final, explain ? KvExplainPerToken(groups, e) + X + WithCommas(total_len) + " tokens" + X + WithCommas(b) + state_explain + " = " + BytesExplained(kv_final) : "");
    SetTerm(r, "temporary", workspace + scratch + cat_transient,
            explain ? "cuBLAS workspace " + WithCommas(workspace) + " B + torch.cat copy of one layer's cache " + WithCommas(cat_transient) + " B" + (scratch ? " + dequantization buffer " + WithCommas(scratch) + " B" : "") : "");
  }
  InferenceCapacity& c = r->inference;
  c.present = true;
  c.kv_bytes_per_token = KvBytesPerToken(groups, e);
  c.kv_token_capacity = 0;
  c.max_concurrency = 0;
  c.concurrent_sequences = s.inference.batch_size;  // generate() runs the whole batch together
  c.max_model_len_fits = true;
  c.state_bytes_per_sequence = state.BytesPerSequence();
  c.recurrent_layers = state.layers;
  if (explain) {
    if (split > 1) Warn(r, explain, WarningCode::kApproximate, "parallel.gpus", "device_map=\"auto\" splits layers evenly in this estimate; accelerate's real split is by module size and may put more on some GPUs");
    if (inf.max_model_len || inf.max_num_batched_tokens || inf.n_ctx) Warn(r, explain, WarningCode::kNoEffect, "inference", "vLLM / llama.cpp settings are ignored by the transformers engine");
  }
}

}  // namespace vramplan
