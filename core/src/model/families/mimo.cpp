// Xiaomi MiMo-V2-Flash (model_type "mimo_v2_flash", MiMoV2FlashForCausalLM). Two spellings of one
// architecture share the model_type:
//  * the Hub's remote-code config (hybrid_layer_pattern, moe_layer_freq, swa_* keys), as vLLM
//    builds it (vllm/model_executor/models/mimo_v2_flash.py MiMoV2FlashDecoderLayer, MiMoV2Attention,
//    MiMoV2MoE, MiMoV2MLP): hybrid_layer_pattern[l] == 1 makes a sliding-window layer with
//    swa_num_attention_heads / swa_num_key_value_heads / swa_head_dim / swa_v_head_dim and window
//    sliding_window_size, and an attention_sink_bias of one logit per head when
//    add_swa_attention_sink_bias; the other layers take num_attention_heads / num_key_value_heads /
//    head_dim / v_head_dim with no sink; moe_layer_freq[l] makes a MoE layer;
//  * transformers' native port (models/mimo_v2_flash/modular_mimo_v2_flash.py MiMoV2FlashAttention,
//    converted by convert_mimo_v2_flash_weights_to_hf.py): layer_types / mlp_layer_types, sliding
//    layers with twice num_key_value_heads and `sinks`, window sliding_window; by default layer 0
//    and every sixth layer full, layer 0 dense.
// Every layer: q_proj (h -> heads x head_dim), k_proj (h -> kv x head_dim), v_proj (h -> kv x
// v_head_dim), o_proj (heads x v_head_dim -> h), no q/k norm, input_layernorm and
// post_attention_layernorm; a dense SwiGLU MLP of intermediate_size, or a router "gate" (h ->
// n_routed_experts, no bias) with its e_score_correction_bias and n_routed_experts SwiGLU experts of
// moe_intermediate_size, no shared expert (neither engine builds one); untied lm_head.
#include "model/families/builders.h"
#include "model/families/layer_kit.h"

namespace vramplan::families {
namespace {

struct AttentionShape {
  int64_t heads = 0, kv = 0, d = 0, vd = 0;
  bool sinks = false;
};

// The multi-token-prediction blocks of Xiaomi's checkpoint (model.mtp.layers.0-2): the Hub
// config names no count (vLLM's and SGLang's main models skip every "mtp" key; Megatron-Bridge's
// MiMo bridge counts them from the checkpoint's keys), and the model card says "we also open-source
// 3-layer MTP weights".
constexpr int64_t kCheckpointMtpLayers = 3;

LayerKind Layer(int64_t h, const AttentionShape& a, int64_t window, bool qkv_bias, bool moe, int64_t inter,
                int64_t moe_inter, int64_t experts, int64_t top_k, bool norm_topk) {
  LayerKind k;
  AddLinear(&k, "q_proj", LinearSlot::kQ, h, a.heads * a.d, qkv_bias);
  AddLinear(&k, "k_proj", LinearSlot::kK, h, a.kv * a.d, qkv_bias);
  AddLinear(&k, "v_proj", LinearSlot::kV, h, a.kv * a.vd, qkv_bias);
  AddLinear(&k, "o_proj", LinearSlot::kO, a.heads * a.vd, h, false);  // RowParallelLinear(bias=False)
  if (a.sinks) k.extra_attention_params = a.heads;  // attention_sink_bias [heads] (transformers: sinks)
  AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, h, false);
  AddNorm(&k, "post_attention_layernorm", NormSlot::kPreMlp, h, false);
  k.attention.num_heads = a.heads;
  k.attention.num_kv_heads = a.kv;
  k.attention.head_dim = a.d;
  k.attention.v_head_dim = a.vd;
  k.attention.sliding_window = window;
  k.attention.sinks = a.sinks;
  SetDenseMlp(&k, MlpKind::kGated, ActivationFn::kSilu, inter);
  if (!moe) {
    AddGatedMlp(&k, h, inter, false, GatedMlpOwner::kDense);
    return k;
  }
  AddLinear(&k, "gate", LinearSlot::kRouter, h, experts, false);
  k.extra_router_params = experts;  // gate.e_score_correction_bias (vLLM MiMoV2MoE: always built)
  AddGatedMlp(&k, h, moe_inter, false, GatedMlpOwner::kExperts, experts);
  SetMoeMlp(&k, moe_inter, experts, top_k);
  k.mlp.norm_topk_prob = norm_topk;
  return k;
}

// A per-layer 0/1 list of the Hub config (hybrid_layer_pattern, moe_layer_freq): vLLM indexes it
// by layer, so an integer or a shorter list is refused.
std::vector<int64_t> BinaryPerLayer(ConfigReader& c, const char* key, int64_t layers) {
  if (!c.raw().contains(key) || !c.raw()[key].is_array()) {
    io::AddError(c.errors(), "wrong_type", io::JoinPath(c.path(), key),
                 io::JoinPath(c.path(), key) + " must be a list of " + std::to_string(layers) +
                     " 0/1 entries, one per layer (vLLM's MiMoV2FlashDecoderLayer reads it by layer index)");
    return {};
  }
  return c.IntPerLayer(key, layers, 0, 1).value_or(std::vector<int64_t>{});
}

}  // namespace

Expected<ModelSpec> BuildMiMoV2Flash(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  CheckDims(c, m, false);
  const int64_t experts = c.Required({"n_routed_experts", "num_local_experts"}, 1, kMaxHeadsOrExperts);
  const int64_t top_k = c.Required({"num_experts_per_tok"}, 1, kMaxHeadsOrExperts);
  CheckTopK(c, "num_experts_per_tok", top_k, experts);
  const int64_t moe_inter = c.Required({"moe_intermediate_size"});
  const int64_t v_dim = c.Int({"v_head_dim"}, 1, kMaxHeadsOrExperts).value_or(m.d);
  const bool qkv_bias = c.Bool("attention_bias", false);
  const bool norm_topk = c.Bool("norm_topk_prob", true);
  spec.rope_fraction = c.Fraction("partial_rotary_factor", 1.0, false);
  const bool hub = c.Has("hybrid_layer_pattern");
  AttentionShape full{m.a, m.kv, m.d, v_dim, false};
  AttentionShape swa;
  int64_t window = 0;
  std::vector<bool> sliding, moe;
  if (hub) {
    swa.heads = c.Int({"swa_num_attention_heads"}, 1, kMaxHeadsOrExperts).value_or(m.a);
    swa.kv = c.Int({"swa_num_key_value_heads"}, 1, kMaxHeadsOrExperts).value_or(m.kv);
    swa.d = c.Int({"swa_head_dim"}, 1, kMaxHeadsOrExperts).value_or(m.d);
    swa.vd = c.Int({"swa_v_head_dim"}, 1, kMaxHeadsOrExperts).value_or(v_dim);
    swa.sinks = c.Bool("add_swa_attention_sink_bias", false);
    window = c.Int({"sliding_window_size", "sliding_window"}, 1).value_or(0);
    // vLLM builds the full layers without a sink whatever add_full_attention_sink_bias says; what
    // the remote code would add is not modelled, so a config asking for one is refused.
    if (c.Bool("add_full_attention_sink_bias", false)) {
      io::AddError(c.errors(), "unsupported_model", io::JoinPath(c.path(), "add_full_attention_sink_bias"),
                   "add_full_attention_sink_bias true is not modelled (vLLM's MiMoV2Attention builds no sink on full-attention "
                   "layers; the released MiMo-V2-Flash config has false)");
    }
    for (int64_t p : BinaryPerLayer(c, "hybrid_layer_pattern", m.layers)) sliding.push_back(p == 1);
    for (int64_t f : BinaryPerLayer(c, "moe_layer_freq", m.layers)) moe.push_back(f == 1);
    if (!c.errors()->empty()) return *c.errors();
    if (window <= 0) {
      io::AddError(c.errors(), "missing_key", io::JoinPath(c.path(), "sliding_window_size"),
                   "the model config is missing the required key \"sliding_window_size\" (the sliding layers' window)");
    }
  } else {
    // MiMoV2FlashAttention: a sliding layer has num_key_value_heads * 2 kv heads and sinks.
    swa = AttentionShape{m.a, 2 * m.kv, m.d, v_dim, true};
    window = c.Int({"sliding_window"}, 1).value_or(128);
    sliding = SlidingFlags(c, m.layers, [](int64_t i) { return !(i == 0 || (i + 1) % 6 == 0); });
    if (auto types = c.StringList("mlp_layer_types", m.layers)) {
      for (const std::string& t : *types) moe.push_back(t == "sparse");
    } else {
      for (int64_t i = 0; i < m.layers; ++i) moe.push_back(i > 0);
    }
  }
  if (!c.errors()->empty()) return *c.errors();
  if (!CheckDenseIntermediate(c, m, [&](int64_t i) { return moe[static_cast<size_t>(i)]; })) return *c.errors();
  // The MTP blocks: sliding-window attention (k_proj of swa kv heads, an attention_sink_bias) and a
  // dense MLP of intermediate_size (the MTP shard's header: q_proj [12288, 4096], k_proj
  // [1536, 4096], v_proj [1024, 4096], o_proj [4096, 8192], attention_sink_bias [64], mlp gate/up
  // [16384, 4096], down [4096, 16384]), plus enorm, hnorm, eh_proj [4096, 8192] and
  // final_layernorm: the DeepSeek-V3 MTP layout without embeddings (CheckpointLayout).
  const int64_t mtp = c.Int({"num_nextn_predict_layers"}, 0, 64).value_or(kCheckpointMtpLayers);
  if (mtp > 0 && m.inter <= 0) {
    io::AddError(c.errors(), "missing_key", io::JoinPath(c.path(), "intermediate_size"),
                 "the MTP blocks have a dense MLP: the config needs intermediate_size");
    return *c.errors();
  }
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kRmsNorm, false);
  BuildLayers(&spec, m.layers + (mtp > 0 ? 1 : 0), [&](int64_t i) {
    if (i == m.layers) return Layer(m.h, swa, window, qkv_bias, false, m.inter, moe_inter, experts, top_k, norm_topk);
    const bool s = sliding[static_cast<size_t>(i)];
    return Layer(m.h, s ? swa : full, s ? window : 0, qkv_bias, moe[static_cast<size_t>(i)], m.inter, moe_inter, experts, top_k,
                 norm_topk);
  });
  if (mtp > 0) {
    // The MTP kind is built past the last layer and kept as a kind no layer uses (as DeepSeek-V4's).
    spec.checkpoint.mtp_layers = mtp;
    spec.checkpoint.mtp_kind = spec.layer_kind[static_cast<size_t>(m.layers)];
    spec.checkpoint.mtp_stores_embeddings = false;
    spec.checkpoint.mtp_draft_unmodelled = true;
    spec.layer_kind.resize(static_cast<size_t>(m.layers));
    spec.num_layers = m.layers;
    spec.notes.push_back("MiMo-V2-Flash: the checkpoint's " + std::to_string(mtp) +
                         " multi-token-prediction blocks (model.mtp.layers.*; sliding-window attention and a dense MLP each) are "
                         "skipped by vLLM, SGLang and transformers when loading: counted in params.checkpoint_total and by_module.mtp, "
                         "not in params.total");
  }
  // Xiaomi's FP8 checkpoints keep every o_proj in bf16 without a weight_scale_inv: the MTP shard's
  // header lists o_proj [4096, 8192] BF16 with no scale, MiMo-V2.5's config.json (the same backbone)
  // lists model.layers.0-47.self_attn.o_proj in quantization_config.ignored_layers, and the Neuron
  // port's preprocess_mimo_v2_fp8.py says "o_proj is always BF16 (in modules_to_not_convert)".
  spec.checkpoint.fp8_o_proj_16bit = true;
  spec.notes.push_back("MiMo-V2-Flash: vLLM builds the router gate in moe_router_dtype (float32 by default); the weights term holds it "
                       "at the weight dtype");
  return spec;
}

}  // namespace vramplan::families
