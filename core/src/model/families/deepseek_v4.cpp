// DeepSeek-V4 (V4-Flash, V4-Pro and their -Base; transformers models/deepseek_v4/modeling_deepseek_v4.py
// and configuration_deepseek_v4.py, huggingface/transformers main as of 2026-11, file stamped
// "Copyright 2026"). Every parameter and persistent buffer, per decoder layer:
//   attention (DeepseekV4Attention): q_a_proj (h -> q_lora_rank), q_a_norm, q_b_proj (q_lora_rank ->
//     heads x head_dim), q_b_norm (no weight), kv_proj (h -> head_dim: one shared K=V head), kv_norm,
//     o_a_proj (DeepseekV4GroupedLinear: o_groups blocks of heads x head_dim / o_groups -> o_lora_rank),
//     o_b_proj (o_groups x o_lora_rank -> h), sinks (one logit per head);
//   its compressor by layer type (sliding_attention: none):
//     heavily_compressed_attention (DeepseekV4HCACompressor): kv_proj and gate_proj (h -> head_dim),
//       position_bias (rate x head_dim), kv_norm (head_dim);
//     compressed_sparse_attention (DeepseekV4CSACompressor): kv_proj and gate_proj (h -> 2 x head_dim),
//       position_bias (rate x 2 x head_dim), kv_norm (head_dim), and its lightning indexer
//       (DeepseekV4Indexer): kv_proj and gate_proj (h -> 2 x index_head_dim), position_bias
//       (rate x 2 x index_head_dim), kv_norm (index_head_dim), q_b_proj (q_lora_rank -> index heads x
//       index_head_dim), scorer.weights_proj (h -> index heads);
//   attn_hc and ffn_hc (DeepseekV4HyperConnection): fn ((2 + hc_mult) x hc_mult rows of hc_mult x h),
//     base ((2 + hc_mult) x hc_mult), scale (3);
//   MoE (DeepseekV4SparseMoeBlock): gate.weight (experts x h) with, on "moe" layers, the persistent
//     buffer e_score_correction_bias (experts) and, on "hash_moe" layers, the persistent buffer
//     tid2eid (vocab x top_k, int64); experts gate_up_proj (experts x 2I x h) and down_proj
//     (experts x h x I) as 3-D parameters; one shared expert (DeepseekV4MLP of moe_intermediate_size:
//     the config maps intermediate_size to it, n_shared_experts is not read);
//   input_layernorm and post_attention_layernorm (h).
// Model: embed_tokens, norm, hc_head (DeepseekV4HyperHead: hc_fn hc_mult x hc_mult x h, hc_base
// hc_mult, hc_scale 1), lm_head (never tied by default). The rotary inv_freq buffers are not persistent.
#include "model/families/builders.h"
#include "model/families/deepseek_v4_layers.h"
#include "model/families/layer_kit.h"

#include <string>
#include <vector>

namespace vramplan::families {
namespace {

// DeepseekV4Config's defaults (the V4-Flash geometry).
struct V4 {
  Dims m;
  int64_t q_lora = 1024, o_groups = 8, o_lora = 1024, index_heads = 64, index_dim = 128, hc = 4, window = 128;
  int64_t experts = 256, top_k = 6, moe_inter = 2048, mtp = 1;
  V4LayerPlan plan;
};

// One mHC module's parameters: fn, base and scale (DeepseekV4HyperConnection.__init__).
int64_t HyperConnectionParams(int64_t hc, int64_t h) { return (2 + hc) * hc * hc * h + (2 + hc) * hc + 3; }

LayerKind Layer(const V4& g, V4Attention type, bool hash) {
  const Dims& m = g.m;
  LayerKind k;
  AddLinear(&k, "q_a_proj", LinearSlot::kMlaQA, m.h, g.q_lora, false);
  AddNorm(&k, "q_a_norm", NormSlot::kMlaQA, g.q_lora, false);
  AddLinear(&k, "q_b_proj", LinearSlot::kMlaQB, g.q_lora, m.a * m.d, false);
  // One K head whose output is also the value (like Gemma 4's attention_k_eq_v layers).
  AddLinear(&k, "kv_proj", LinearSlot::kK, m.h, m.d, false);
  AddNorm(&k, "kv_norm", NormSlot::kMlaKvA, m.d, false);
  // The grouped projection's weight is (o_groups x o_lora_rank) x (heads x head_dim / o_groups); each
  // token multiplies heads x head_dim inputs into o_lora_rank per group, the same parameters and
  // FLOPs as heads x head_dim -> o_lora_rank. Its forward is a bmm over the weight's view, so a
  // LoRA wrapper around it would not compose: not a LoRA target.
  AddLinear(&k, "o_a_proj", LinearSlot::kOGrouped, m.a * m.d, g.o_lora, false, 1, false);
  AddLinear(&k, "o_b_proj", LinearSlot::kO, g.o_groups * g.o_lora, m.h, false);
  k.extra_attention_params = m.a + 2 * HyperConnectionParams(g.hc, m.h);  // sinks, attn_hc, ffn_hc
  // The compressor's and indexer's kv / gate projections ship in bf16 in the FP8 checkpoints
  // (DeepseekV4PreTrainedModel._keep_in_fp32_modules): the slot that keeps them out of the FP8
  // block scales.
  if (type == V4Attention::kHca) {
    AddLinear(&k, "compressor.kv_proj", LinearSlot::kIndexerWeights, m.h, m.d, false);
    AddLinear(&k, "compressor.gate_proj", LinearSlot::kIndexerWeights, m.h, m.d, false);
    AddNorm(&k, "compressor.kv_norm", NormSlot::kIndexerK, m.d, false);
    k.extra_attention_params += g.plan.hca_rate * m.d;  // compressor.position_bias
  } else if (type == V4Attention::kCsa) {
    AddLinear(&k, "compressor.kv_proj", LinearSlot::kIndexerWeights, m.h, 2 * m.d, false);
    AddLinear(&k, "compressor.gate_proj", LinearSlot::kIndexerWeights, m.h, 2 * m.d, false);
    AddNorm(&k, "compressor.kv_norm", NormSlot::kIndexerK, m.d, false);
    AddLinear(&k, "compressor.indexer.kv_proj", LinearSlot::kIndexerWeights, m.h, 2 * g.index_dim, false);
    AddLinear(&k, "compressor.indexer.gate_proj", LinearSlot::kIndexerWeights, m.h, 2 * g.index_dim, false);
    AddNorm(&k, "compressor.indexer.kv_norm", NormSlot::kIndexerK, g.index_dim, false);
    AddLinear(&k, "compressor.indexer.q_b_proj", LinearSlot::kIndexerQk, g.q_lora, g.index_heads * g.index_dim, false);
    AddLinear(&k, "compressor.indexer.scorer.weights_proj", LinearSlot::kIndexerWeights, m.h, g.index_heads, false);
    k.extra_attention_params += g.plan.csa_rate * 2 * m.d + g.plan.csa_rate * 2 * g.index_dim;  // position_bias x 2
  }
  AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, false);
  AddNorm(&k, "post_attention_layernorm", NormSlot::kPreMlp, m.h, false);
  k.attention.num_heads = m.a;
  k.attention.num_kv_heads = 1;  // shared K=V: kv_proj writes one head whatever num_key_value_heads says
  k.attention.head_dim = m.d;
  k.attention.v_head_dim = m.d;
  k.attention.sliding_window = g.window;  // every layer's own keys slide; compressed entries come on top
  k.attention.q_lora_rank = g.q_lora;
  AddLinear(&k, "gate", LinearSlot::kRouter, m.h, g.experts, false);
  // Persistent buffers the checkpoint stores and transformers holds: tid2eid on hash layers,
  // e_score_correction_bias on the others (counted like DeepSeek-V3's correction bias).
  k.extra_router_params = hash ? m.vocab * g.top_k : g.experts;
  // DeepseekV4Experts: fused 3-D parameters, not nn.Linear.
  AddLinear(&k, "gate_up_proj", LinearSlot::kExpertGateUp, m.h, 2 * g.moe_inter, false, g.experts, false);
  AddLinear(&k, "down_proj", LinearSlot::kExpertDown, g.moe_inter, m.h, false, g.experts, false);
  AddGatedMlp(&k, m.h, g.moe_inter, false, GatedMlpOwner::kSharedExperts);
  SetDenseMlp(&k, MlpKind::kGated, ActivationFn::kSilu, g.moe_inter);
  SetMoeMlp(&k, g.moe_inter, g.experts, g.top_k, g.moe_inter);
  return k;
}

}  // namespace

Expected<ModelSpec> BuildDeepseekV4(ConfigReader& c, ModelSpec spec) {
  V4 g;
  g.m.h = c.Required({"hidden_size"});
  g.m.layers = c.Required({"num_hidden_layers"}, 1, 4096);
  g.m.a = c.Required({"num_attention_heads"}, 1, kMaxHeadsOrExperts);
  g.m.vocab = c.Required({"vocab_size"});
  g.m.d = c.Int({"head_dim"}, 1, kMaxHeadsOrExperts).value_or(512);
  g.q_lora = c.Int({"q_lora_rank"}, 1, kMaxHeadsOrExperts).value_or(g.q_lora);
  g.o_groups = c.Int({"o_groups"}, 1, kMaxHeadsOrExperts).value_or(g.o_groups);
  g.o_lora = c.Int({"o_lora_rank"}, 1, kMaxHeadsOrExperts).value_or(g.o_lora);
  g.index_heads = c.Int({"index_n_heads"}, 1, kMaxHeadsOrExperts).value_or(g.index_heads);
  g.index_dim = c.Int({"index_head_dim"}, 1, kMaxHeadsOrExperts).value_or(g.index_dim);
  g.hc = c.Int({"hc_mult"}, 1, 64).value_or(g.hc);
  g.window = c.Int({"sliding_window"}, 1).value_or(g.window);
  g.experts = c.Int({"n_routed_experts"}, 1, kMaxHeadsOrExperts).value_or(g.experts);
  g.top_k = c.Int({"num_experts_per_tok"}, 1, kMaxHeadsOrExperts).value_or(g.top_k);
  CheckTopK(c, "num_experts_per_tok", g.top_k, g.experts);
  g.moe_inter = c.Int({"moe_intermediate_size"}, 1).value_or(g.moe_inter);
  g.mtp = c.Int({"num_nextn_predict_layers"}, 0, 64).value_or(g.mtp);
  if (!c.errors()->empty()) return *c.errors();
  if ((g.m.a * g.m.d) % g.o_groups != 0) {
    io::AddError(c.errors(), "invalid_value", io::JoinPath(c.path(), "o_groups"),
                 "num_attention_heads x head_dim (" + std::to_string(g.m.a * g.m.d) + ") must be a multiple of o_groups (" +
                     std::to_string(g.o_groups) + ")");
    return *c.errors();
  }
  g.plan = ReadV4LayerPlan(c, g.m.layers, g.mtp);
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, g.m, c.Bool("tie_word_embeddings", false), NormKind::kRmsNorm, false);
  // qk_rope_head_dim / head_dim: DeepseekV4Config.partial_rotary_factor (64 / 512 by default).
  spec.rope_fraction = c.Fraction("partial_rotary_factor", 64.0 / 512.0, false);
  // hc_head (DeepseekV4HyperHead) sits between the last layer and the final norm; counted with the
  // model-level embedding terms.
  spec.extra_embedding_params = g.hc * g.hc * g.m.h + g.hc + 1;
  // The MTP layers (the checkpoint's layers num_hidden_layers.., skipped by transformers'
  // _keys_to_ignore_on_load_unexpected) are built as decoder layers past the last and kept as kinds
  // no layer uses, so the checkpoint terms can count them.
  const int64_t built = g.m.layers + g.mtp;
  BuildLayers(&spec, built, [&](int64_t i) {
    const size_t at = static_cast<size_t>(i);
    return Layer(g, g.plan.attention[at], g.plan.hash[at]);
  });
  if (g.mtp > 0) {
    spec.checkpoint.mtp_layers = g.mtp;
    spec.checkpoint.mtp_kind = spec.layer_kind[static_cast<size_t>(g.m.layers)];
    spec.checkpoint.mtp_stores_embeddings = false;
    // DeepSeek's MTPBlock: e_proj and h_proj (h x h each, together the V3 layout's eh_proj), enorm,
    // hnorm and norm (the V3 layout's three norms), plus its own hc_head_fn / hc_head_base / hc_head_scale.
    spec.checkpoint.mtp_extra_params = g.hc * g.hc * g.m.h + g.hc + 1;
    spec.checkpoint.mtp_eh_scaled = true;  // MTPBlock's e_proj / h_proj are FP8 Linears with scales
  }
  // DeepSeek's config.json: "expert_dtype": "fp4" (FP4 routed experts, MTP layer's included).
  spec.checkpoint.fp4_packed_experts = c.String("expert_dtype", "") == "fp4";
  spec.layer_kind.resize(static_cast<size_t>(g.m.layers));
  spec.num_layers = g.m.layers;
  spec.notes.push_back("DeepSeek-V4: the checkpoint's " + std::to_string(g.mtp) +
                       " multi-token-prediction layer(s) are not loaded by transformers: counted in params.checkpoint_total and by_module.mtp. "
                       "tid2eid (int64) and the mHC / sink / position_bias / norm parameters transformers keeps in fp32 are counted at the weight dtype");
  spec.approximations.kv_cache =
      "DeepSeek-V4 KV cache: counted as one shared K=V head of head_dim per token over the sliding window on every layer, as K and V; "
      "the compressed KV entries (head_dim per compress_rate tokens on CSA / HCA layers), the indexer keys (index_head_dim per CSA entry), "
      "the compressor buffers and K=V sharing are not modelled";
  spec.approximations.training =
      "DeepSeek-V4 training activations: the hc_mult residual streams and hyper-connection mixing (attn_hc / ffn_hc), the compressors, "
      "the lightning indexer and the clamped SwiGLU are not modelled as saved tensors (the layer is walked as attention + MoE)";
  return spec;
}

}  // namespace vramplan::families
