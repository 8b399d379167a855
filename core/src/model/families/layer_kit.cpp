#include "model/families/layer_kit.h"

#include <algorithm>

namespace vramplan::families {
namespace {

bool SameLinear(const LinearSpec& x, const LinearSpec& y) {
  return x.name == y.name && x.in_features == y.in_features && x.out_features == y.out_features && x.bias == y.bias &&
         x.copies == y.copies && x.role == y.role && x.lora_targetable == y.lora_targetable && x.slot == y.slot &&
         x.parallel == y.parallel;
}

bool SameKind(const LayerKind& x, const LayerKind& y) {
  if (x.linears.size() != y.linears.size() || x.norms.size() != y.norms.size()) return false;
  for (size_t i = 0; i < x.linears.size(); ++i) {
    if (!SameLinear(x.linears[i], y.linears[i])) return false;
  }
  for (size_t i = 0; i < x.norms.size(); ++i) {
    const NormSpec &a = x.norms[i], &b = y.norms[i];
    if (a.name != b.name || a.dim != b.dim || a.bias != b.bias || a.has_weight != b.has_weight || a.slot != b.slot) return false;
  }
  const RecurrentGeometry &r = x.recurrent, &t = y.recurrent;
  if (r.kind != t.kind || r.num_heads != t.num_heads || r.num_k_heads != t.num_k_heads || r.head_dim != t.head_dim ||
      r.k_head_dim != t.k_head_dim || r.inner != t.inner || r.groups != t.groups || r.state_size != t.state_size ||
      r.conv_kernel != t.conv_kernel || r.dt_rank != t.dt_rank) {
    return false;
  }
  const AttentionGeometry &p = x.attention, &q = y.attention;
  const MlpGeometry &u = x.mlp, &v = y.mlp;
  return x.extra_attention_params == y.extra_attention_params && x.extra_router_params == y.extra_router_params &&
         x.parallel_residual == y.parallel_residual && p.num_heads == q.num_heads && p.num_kv_heads == q.num_kv_heads &&
         p.head_dim == q.head_dim && p.v_head_dim == q.v_head_dim && p.sliding_window == q.sliding_window &&
         p.chunked == q.chunked && p.no_rope == q.no_rope &&
         p.mla == q.mla && p.kv_lora_rank == q.kv_lora_rank && p.qk_rope_head_dim == q.qk_rope_head_dim &&
         p.q_lora_rank == q.q_lora_rank && p.kv_shared == q.kv_shared &&
         p.index_head_dim == q.index_head_dim && p.index_n_heads == q.index_n_heads && p.index_topk == q.index_topk &&
         p.index_shared == q.index_shared &&
         p.cross_attention == q.cross_attention && p.sinks == q.sinks && u.kind == v.kind && u.activation == v.activation &&
         u.intermediate == v.intermediate && u.num_experts == v.num_experts &&
         u.experts_per_token == v.experts_per_token && u.shared_intermediate == v.shared_intermediate && u.zero_experts == v.zero_experts &&
         u.norm_topk_prob == v.norm_topk_prob;
}

}  // namespace

ActivationFn ParseActivation(const std::string& name) {
  if (name == "silu" || name == "swish") return ActivationFn::kSilu;
  if (name == "gelu_new" || name == "gelu_fast") return ActivationFn::kGeluNew;
  if (name == "gelu_pytorch_tanh" || name == "gelu_tanh") return ActivationFn::kGeluTanh;
  if (name == "relu") return ActivationFn::kRelu;
  return ActivationFn::kGelu;
}

ModuleRole RoleOf(LinearSlot slot) {
  switch (slot) {
    case LinearSlot::kGate: case LinearSlot::kUp: case LinearSlot::kGateUp: case LinearSlot::kDown:
      return ModuleRole::kMlp;
    case LinearSlot::kRouter:
      return ModuleRole::kRouter;
    case LinearSlot::kExpertGate: case LinearSlot::kExpertUp: case LinearSlot::kExpertGateUp: case LinearSlot::kExpertDown:
      return ModuleRole::kExperts;
    case LinearSlot::kSharedExpertGate: case LinearSlot::kSharedExpertUp: case LinearSlot::kSharedExpertDown:
    case LinearSlot::kSharedExpertScale:
      return ModuleRole::kSharedExperts;
    default:
      return ModuleRole::kAttention;
  }
}

ParallelStyle DefaultParallelStyle(LinearSlot slot) {
  switch (slot) {
    case LinearSlot::kQ: case LinearSlot::kK: case LinearSlot::kV: case LinearSlot::kQkv:
    case LinearSlot::kMlaQB: case LinearSlot::kMlaKvB:
    case LinearSlot::kGate: case LinearSlot::kUp: case LinearSlot::kGateUp:
    case LinearSlot::kSharedExpertGate: case LinearSlot::kSharedExpertUp:
    case LinearSlot::kMixerIn:  // vLLM MergedColumnParallelLinear / ColumnParallelLinear (mamba_mixer2.py, qwen3_next.py)
      return ParallelStyle::kColumn;
    case LinearSlot::kO: case LinearSlot::kDown: case LinearSlot::kSharedExpertDown: case LinearSlot::kMixerOut:
      return ParallelStyle::kRow;
    case LinearSlot::kMlaQA: case LinearSlot::kMlaKvA: case LinearSlot::kRouter: case LinearSlot::kSharedExpertScale:
    // vLLM deepseek_v2.py Indexer: wq_b, wk and weights_proj are ReplicatedLinear.
    case LinearSlot::kIndexerQk: case LinearSlot::kIndexerWeights:
    // transformers ships DeepSeek-V4 with no tensor-parallel plan (expert parallel only).
    case LinearSlot::kOGrouped:
      return ParallelStyle::kReplicated;
    case LinearSlot::kExpertGate: case LinearSlot::kExpertUp: case LinearSlot::kExpertGateUp: case LinearSlot::kExpertDown:
      return ParallelStyle::kExpert;
    case LinearSlot::kUnset:
      break;
  }
  return ParallelStyle::kUnset;
}

void AddLinear(LayerKind* k, std::string_view name, LinearSlot slot, int64_t in, int64_t out, bool bias, int64_t copies,
               bool lora_targetable) {
  k->linears.push_back(LinearSpec{name, in, out, bias, copies, RoleOf(slot), lora_targetable, slot, DefaultParallelStyle(slot)});
}

void AddMlaAttention(LayerKind* k, int64_t h, const MlaDims& d) {
  const int64_t qk_dim = d.nope + d.rope;
  if (d.q_lora > 0) {
    AddLinear(k, "q_a_proj", LinearSlot::kMlaQA, h, d.q_lora, d.bias);
    AddLinear(k, "q_b_proj", LinearSlot::kMlaQB, d.q_lora, d.heads * qk_dim, false);
    AddNorm(k, "q_a_layernorm", NormSlot::kMlaQA, d.q_lora, false);
  } else {
    AddLinear(k, "q_proj", LinearSlot::kQ, h, d.heads * qk_dim, false);
  }
  AddLinear(k, "kv_a_proj_with_mqa", LinearSlot::kMlaKvA, h, d.kv_lora + d.rope, d.bias);
  AddNorm(k, "kv_a_layernorm", NormSlot::kMlaKvA, d.kv_lora, false);
  AddLinear(k, "kv_b_proj", LinearSlot::kMlaKvB, d.kv_lora, d.heads * (d.nope + d.v_dim), false);
  AddLinear(k, "o_proj", LinearSlot::kO, d.heads * d.v_dim, h, d.bias);
  AttentionGeometry& g = k->attention;
  g.num_heads = d.heads;
  g.num_kv_heads = d.heads;
  g.head_dim = qk_dim;
  g.v_head_dim = d.v_dim;
  g.mla = true;
  g.kv_lora_rank = d.kv_lora;
  g.qk_rope_head_dim = d.rope;
  g.qk_nope_head_dim = d.nope;
  g.q_lora_rank = d.q_lora;
}

void AddNorm(LayerKind* k, std::string_view name, NormSlot slot, int64_t dim, bool bias, bool has_weight) {
  k->norms.push_back(NormSpec{name, dim, bias, has_weight, slot});
}

void AddQkvo(LayerKind* k, const Dims& m, bool qkv_bias, bool o_bias) {
  AddLinear(k, "q_proj", LinearSlot::kQ, m.h, m.a * m.d, qkv_bias);
  AddLinear(k, "k_proj", LinearSlot::kK, m.h, m.kv * m.d, qkv_bias);
  AddLinear(k, "v_proj", LinearSlot::kV, m.h, m.kv * m.d, qkv_bias);
  AddLinear(k, "o_proj", LinearSlot::kO, m.a * m.d, m.h, o_bias);
}

void AddGatedMlp(LayerKind* k, int64_t h, int64_t inter, bool bias, GatedMlpOwner owner, int64_t copies, GatedNames names) {
  using S = LinearSlot;
  const S gate = owner == GatedMlpOwner::kDense ? S::kGate : owner == GatedMlpOwner::kExperts ? S::kExpertGate : S::kSharedExpertGate;
  const S up = owner == GatedMlpOwner::kDense ? S::kUp : owner == GatedMlpOwner::kExperts ? S::kExpertUp : S::kSharedExpertUp;
  const S down = owner == GatedMlpOwner::kDense ? S::kDown : owner == GatedMlpOwner::kExperts ? S::kExpertDown : S::kSharedExpertDown;
  AddLinear(k, names.gate, gate, h, inter, bias, copies);
  AddLinear(k, names.up, up, h, inter, bias, copies);
  AddLinear(k, names.down, down, inter, h, bias, copies);
}

void AddPlainMlp(LayerKind* k, int64_t h, int64_t inter, ActivationFn act, bool bias, PlainNames names) {
  AddLinear(k, names.up, LinearSlot::kUp, h, inter, bias);
  AddLinear(k, names.down, LinearSlot::kDown, inter, h, bias);
  SetDenseMlp(k, MlpKind::kPlain, act, inter);
}

void SetAttention(LayerKind* k, const Dims& m, int64_t window) {
  k->attention.num_heads = m.a;
  k->attention.num_kv_heads = m.kv;
  k->attention.head_dim = m.d;
  k->attention.v_head_dim = m.d;
  k->attention.sliding_window = window;
}

LayerKind NeoxStyleLayer(const Dims& m, bool attention_bias, bool parallel_residual, ActivationFn act) {
  LayerKind k;
  AddLinear(&k, "query_key_value", LinearSlot::kQkv, m.h, 3 * m.h, attention_bias);
  AddLinear(&k, "dense", LinearSlot::kO, m.h, m.h, attention_bias);
  AddPlainMlp(&k, m.h, m.inter, act, true, {"dense_h_to_4h", "dense_4h_to_h"});
  AddNorm(&k, "input_layernorm", NormSlot::kPreAttention, m.h, true);
  AddNorm(&k, "post_attention_layernorm", NormSlot::kPreMlp, m.h, true);
  k.parallel_residual = parallel_residual;
  SetAttention(&k, m, 0);
  return k;
}

void SetDenseMlp(LayerKind* k, MlpKind kind, ActivationFn act, int64_t inter) {
  k->mlp.kind = kind;
  k->mlp.activation = act;
  k->mlp.intermediate = inter;
}

void SetMoeMlp(LayerKind* k, int64_t expert_inter, int64_t experts, int64_t top_k, int64_t shared_inter) {
  k->mlp.intermediate = expert_inter;
  k->mlp.num_experts = experts;
  k->mlp.experts_per_token = top_k;
  k->mlp.shared_intermediate = shared_inter;
}

// Builds the layer list from a per-layer builder, storing each distinct kind once.
void BuildLayers(ModelSpec* spec, int64_t num_layers, const std::function<LayerKind(int64_t)>& build) {
  spec->num_layers = num_layers;
  spec->layer_kind.resize(static_cast<size_t>(num_layers));
  for (int64_t i = 0; i < num_layers; ++i) {
    LayerKind kind = build(i);
    size_t idx = 0;
    while (idx < spec->kinds.size() && !SameKind(spec->kinds[idx], kind)) ++idx;
    if (idx == spec->kinds.size()) spec->kinds.push_back(std::move(kind));
    spec->layer_kind[static_cast<size_t>(i)] = static_cast<uint8_t>(idx);
  }
}

void EditLayerAttention(ModelSpec* spec, const std::function<void(int64_t, AttentionGeometry*)>& edit) {
  std::vector<LayerKind> kinds;
  for (size_t i = 0; i < spec->layer_kind.size(); ++i) {
    LayerKind kind = spec->kinds[spec->layer_kind[i]];
    edit(static_cast<int64_t>(i), &kind.attention);
    size_t idx = 0;
    while (idx < kinds.size() && !SameKind(kinds[idx], kind)) ++idx;
    if (idx == kinds.size()) kinds.push_back(std::move(kind));
    spec->layer_kind[i] = static_cast<uint8_t>(idx);
  }
  spec->kinds = std::move(kinds);
}

Dims ReadDims(ConfigReader& c) {
  Dims m;
  m.h = c.Required({"hidden_size", "n_embd", "d_model"});
  m.layers = c.Required({"num_hidden_layers", "n_layer", "num_layers"}, 1, 4096);
  m.a = c.Required({"num_attention_heads", "n_head", "num_heads"}, 1, kMaxHeadsOrExperts);
  m.vocab = c.Required({"vocab_size"});
  m.kv = c.Int({"num_key_value_heads", "num_kv_heads", "n_head_kv"}, 1, kMaxHeadsOrExperts).value_or(m.a);
  m.d = c.Int({"head_dim"}, 1, kMaxHeadsOrExperts).value_or(m.a > 0 ? m.h / m.a : 0);
  m.inter = c.Int({"intermediate_size", "n_inner", "ffn_hidden_size", "ffn_dim"}).value_or(0);
  return m;
}

bool CheckDenseIntermediate(ConfigReader& c, const Dims& m, const std::function<bool(int64_t)>& is_moe_layer) {
  for (int64_t i = 0; i < m.layers && m.inter <= 0; ++i) {
    if (is_moe_layer(i)) continue;
    io::AddError(c.errors(), "missing_key", io::JoinPath(c.path(), "intermediate_size"),
                 "layer " + std::to_string(i) + " is a dense layer: the config needs intermediate_size");
    return false;
  }
  return true;
}

void CheckDims(ConfigReader& c, const Dims& m, bool needs_intermediate) {
  if (c.errors()->empty() && m.kv > 0 && m.a % m.kv != 0) {
    io::AddError(c.errors(), "invalid_value", io::JoinPath(c.path(), "num_key_value_heads"),
                 "num_attention_heads (" + std::to_string(m.a) + ") must be a multiple of num_key_value_heads (" + std::to_string(m.kv) + ")");
  }
  if (c.errors()->empty() && !c.Has("head_dim") && m.a > 0 && m.h % m.a != 0) {
    io::AddError(c.errors(), "invalid_value", io::JoinPath(c.path(), "num_attention_heads"),
                 "hidden_size must be divisible by num_attention_heads when head_dim is not given");
  }
  if (c.errors()->empty() && needs_intermediate && m.inter <= 0) {
    io::AddError(c.errors(), "missing_key", io::JoinPath(c.path(), "intermediate_size"),
                 "the model config is missing the required key \"intermediate_size\"");
  }
}

void CheckTopK(ConfigReader& c, const char* key, int64_t top_k, int64_t experts) {
  if (top_k <= experts || experts <= 0 || top_k <= 0) return;
  const std::string p = io::JoinPath(c.path(), key);
  io::AddError(c.errors(), "out_of_range", p,
               p + " must be an integer from 1 to the number of routed experts (" + std::to_string(experts) + "), got " + std::to_string(top_k));
}

void FinishCommon(ModelSpec* spec, const Dims& m, bool tied, NormKind norm, bool norm_bias, std::string_view final_norm) {
  spec->vocab_size = m.vocab;
  spec->hidden_size = m.h;
  spec->tied_embeddings = tied;
  spec->norm_kind = norm;
  spec->final_norm = NormSpec{final_norm, m.h, norm_bias, true, NormSlot::kFinal};
}

std::vector<bool> SlidingFlags(ConfigReader& c, int64_t layers, const std::function<bool(int64_t)>& default_rule) {
  if (auto lt = c.SlidingLayers(layers)) return *lt;
  std::vector<bool> flags(static_cast<size_t>(layers));
  for (int64_t i = 0; i < layers; ++i) flags[static_cast<size_t>(i)] = default_rule(i);
  return flags;
}

void AddMtpLayers(ConfigReader& c, ModelSpec* spec, bool stores_embeddings, int64_t default_layers) {
  const int64_t n = c.Int({"num_nextn_predict_layers", "mtp_num_hidden_layers"}, 0, 64).value_or(default_layers);
  if (n <= 0 || spec->layer_kind.empty()) return;
  // The MTP layer is a full-attention decoder layer: the last such layer's kind (in a hybrid
  // model the last layers may be linear-attention ones).
  uint8_t kind = spec->layer_kind.back();
  for (size_t i = spec->layer_kind.size(); i-- > 0;) {
    // (GLM-5.2: the MTP layer owns its indexer, as the IndexCache "full" layers do)
    const AttentionGeometry& a = spec->kinds[spec->layer_kind[i]].attention;
    if (a.num_heads > 0 && !a.index_shared) {
      kind = spec->layer_kind[i];
      break;
    }
  }
  spec->checkpoint.mtp_layers = n;
  spec->checkpoint.mtp_kind = kind;
  spec->checkpoint.mtp_stores_embeddings = stores_embeddings;
  spec->notes.push_back("the checkpoint's " + std::to_string(n) +
                        " multi-token-prediction layer(s) (num_nextn_predict_layers) are not loaded by transformers: "
                        "counted in params.checkpoint_total and by_module.mtp, not in params.total");
}

}  // namespace vramplan::families
