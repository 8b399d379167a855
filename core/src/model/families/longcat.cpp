// LongCat-Flash (Meituan; transformers models/longcat_flash/modular_longcat_flash.py, v4.57:
// LongcatFlashDecoderLayer, LongcatFlashMoE, LongcatFlashTopkRouter, LongcatFlashMLA; the Hub's
// remote modeling_longcat_flash.py stores the same tensors). Each of num_layers decoder layers holds
// two MLA sublayers (self_attn.0 / .1, DeepSeek-V2's q_a / kv_a low-rank projections), two dense
// SwiGLU MLPs of ffn_hidden_size (mlps.0 / .1), four RMSNorms (input_layernorm.0 / .1,
// post_attention_layernorm.0 / .1) and one shortcut MoE: a router classifier over n_routed_experts
// + zero_expert_num slots with its e_score_correction_bias, and n_routed_experts SwiGLU experts of
// expert_ffn_hidden_size. The zero experts are nn.Identity: no weights.
//
// The layer list holds the 2 x num_layers sublayers, as transformers' cache does (the model sets
// config.num_hidden_layers = 2 * num_layers) and as vLLM's KV cache counts its MLA layers: sublayer
// 2i is MLA + mlps.0, sublayer 2i+1 is MLA + mlps.1 + the MoE. The MoE reads
// post_attention_layernorm.0's output in the model and adds its result after mlps.1: it is carried
// with the second sublayer, beside that sublayer's dense MLP (a shared expert's place: same input
// width, summed output), so the parameter count is exact and the saved tensors have the same sizes.
#include <algorithm>
#include <string>

#include "model/families/builders.h"
#include "model/families/layer_kit.h"

namespace vramplan::families {

Expected<ModelSpec> BuildLongcatFlash(ConfigReader& c, ModelSpec spec) {
  Dims m;
  m.h = c.Required({"hidden_size"});
  const int64_t decoder_layers = c.Required({"num_layers"}, 1, 2048);
  m.a = c.Required({"num_attention_heads"}, 1, kMaxHeadsOrExperts);
  m.vocab = c.Required({"vocab_size"});
  // LongcatFlashConfig defaults (configuration_longcat_flash.py) where a key is absent;
  // attribute_map: intermediate_size -> ffn_hidden_size, num_local_experts -> n_routed_experts,
  // num_experts_per_tok -> moe_topk.
  m.inter = c.Int({"ffn_hidden_size", "intermediate_size"}, 1).value_or(12288);
  const int64_t expert_inter = c.Int({"expert_ffn_hidden_size"}, 1).value_or(2048);
  // LongcatFlashMLA.forward always runs q_a_proj / q_a_layernorm / q_b_proj.
  const int64_t q_lora = c.Int({"q_lora_rank"}, 1, kMaxHeadsOrExperts).value_or(1536);
  const int64_t kv_lora = c.Int({"kv_lora_rank"}, 1, kMaxHeadsOrExperts).value_or(512);
  const int64_t nope = c.Int({"qk_nope_head_dim"}, 1, kMaxHeadsOrExperts).value_or(128);
  const int64_t rope = c.Int({"qk_rope_head_dim"}, 1, kMaxHeadsOrExperts).value_or(64);
  const int64_t v_dim = c.Int({"v_head_dim"}, 1, kMaxHeadsOrExperts).value_or(128);
  const int64_t experts = c.Int({"n_routed_experts", "num_local_experts"}, 1, kMaxHeadsOrExperts).value_or(512);
  // `config.zero_expert_num or 0`: null means none; absent, the config's default 256.
  int64_t zero_experts = c.Int({"zero_expert_num"}, 0, kMaxHeadsOrExperts).value_or(256);
  if (auto it = c.raw().find("zero_expert_num"); it != c.raw().end() && it->is_null()) zero_experts = 0;
  const int64_t top_k = c.Int({"moe_topk", "num_experts_per_tok"}, 1, kMaxHeadsOrExperts).value_or(12);
  // The router takes torch.topk over every slot, real and zero.
  CheckTopK(c, "moe_topk", top_k, experts + zero_experts);
  const bool bias = c.Bool("attention_bias", false);
  const bool router_bias = c.Bool("router_bias", false);
  const ActivationFn act = ParseActivation(c.String("hidden_act", "silu"));
  if (!c.errors()->empty()) return *c.errors();

  m.layers = 2 * decoder_layers;
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kRmsNorm, false);
  const int64_t slots = experts + zero_experts;
  BuildLayers(&spec, m.layers, [&](int64_t i) {
    LayerKind k;
    AddMlaAttention(&k, m.h, MlaDims{m.a, q_lora, kv_lora, rope, nope, v_dim, bias});
    AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, false);
    AddNorm(&k, "post_attention_layernorm", NormSlot::kPreMlp, m.h, false);
    k.mlp.kind = MlpKind::kGated;
    k.mlp.activation = act;
    if (i % 2 == 0) {
      AddGatedMlp(&k, m.h, m.inter, false, GatedMlpOwner::kDense);
      k.mlp.intermediate = m.inter;
      return k;
    }
    AddLinear(&k, "classifier", LinearSlot::kRouter, m.h, slots, router_bias);
    k.extra_router_params = slots;  // router.e_score_correction_bias, one per slot
    AddGatedMlp(&k, m.h, expert_inter, false, GatedMlpOwner::kExperts, experts);
    AddGatedMlp(&k, m.h, m.inter, false, GatedMlpOwner::kSharedExperts);
    // All moe_topk slots count as routed rows: vLLM (fused_moe zero_experts_compute_triton) sends a
    // token's zero-expert slots to expert 0 with weight 0 and runs the fused experts on every slot,
    // llama.cpp (LongCat-Flash support) adds an all-zero expert for them; transformers' loop runs a
    // real expert only for the slots that chose one (docs/models.md "LongCat-Flash").
    SetMoeMlp(&k, expert_inter, experts, std::min(top_k, experts), m.inter);
    k.mlp.zero_experts = zero_experts;
    k.mlp.norm_topk_prob = false;  // LongcatFlashTopkRouter scales the softmax weights, never renormalises
    return k;
  });

  // The checkpoint's MTP layer (model.mtp.*; transformers: _keys_to_ignore_on_load_unexpected;
  // vLLM longcat_flash_mtp.py LongCatFlashMTP): enorm, hnorm, eh_proj (2h -> h), one MLA sublayer
  // with a dense MLP of ffn_hidden_size and its two norms, a final norm, and its own embed_tokens;
  // it stores no head (vLLM's MTP maps no lm_head weight).
  const int64_t mtp = c.Int({"num_nextn_predict_layers"}, 0, 64).value_or(1);
  if (mtp > 0) {
    spec.checkpoint.mtp_layers = mtp;
    spec.checkpoint.mtp_kind = spec.layer_kind.front();
    spec.checkpoint.mtp_stores_embeddings = false;
    spec.checkpoint.mtp_extra_params = m.vocab * m.h;  // model.mtp.embed_tokens
    spec.notes.push_back("the checkpoint's multi-token-prediction layer (model.mtp.*: one MLA sublayer with a dense MLP, "
                         "enorm / hnorm / eh_proj, its own embed_tokens) is not loaded by transformers: counted in "
                         "params.checkpoint_total and by_module.mtp, not in params.total");
  }
  spec.notes.push_back("LongCat-Flash: " + std::to_string(decoder_layers) + " decoder layers counted as " +
                       std::to_string(m.layers) + " MLA sublayers (two per layer, each with a dense MLP; the shortcut MoE "
                       "with the second); " + std::to_string(zero_experts) +
                       " zero-computation (identity) experts hold no weights but take router slots");
  spec.approximations.training =
      "LongCat-Flash's MoE: each token's moe_topk (" + std::to_string(top_k) +
      ") router slots are all counted as real-expert rows, as vLLM and llama.cpp compute them; transformers' loop runs a "
      "real expert only for the slots that did not pick a zero (identity) expert, on average about 8 of 12 in the "
      "released model (the technical report's 27B of 18.6B-31.3B activated), so the routed-expert activations are an "
      "upper bound; gradient checkpointing is counted per sublayer (transformers checkpoints the pair)";
  return spec;
}

}  // namespace vramplan::families
