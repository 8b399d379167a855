// Exact parameter counts: every nn.Parameter the transformers model instantiates, tied tensors once.
// Products and sums are checked (util/checked_math.h): an inline config can multiply its widths,
// layers and expert counts past int64; the pre-flight size check refuses such models first.
#include "model/packed_linears.h"
#include "model/unquantized_modules.h"
#include "util/checked_math.h"
#include "vramplan/model_spec.h"

namespace vramplan {
namespace {

using checked::Add;
using checked::Mul;

int64_t LinearParams(const LinearSpec& l) { return Mul(l.copies, Add(Mul(l.in_features, l.out_features), l.bias ? l.out_features : 0)); }

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The quantization scale tensors one layer of `kind` stores (CheckpointLayout): FP8 block scales
// on every linear but the router and the indexer's weights_proj (DeepSeek-V3's checkpoint:
// weight_scale_inv per 128 x 128 block; "gate" and "weights_proj" stay bf16) and, with
// fp8_o_proj_16bit, o_proj (MiMo-V2-Flash), MXFP4 scales (one per 32 values) on the routed experts.
int64_t LayerScales(const LayerKind& kind, const CheckpointLayout& ck) {
  int64_t n = 0;
  for (const auto& l : kind.linears) {
    const bool fp4 = ck.fp4_packed_experts && l.role == ModuleRole::kExperts;
    if (fp4) n = Add(n, Mul(l.copies, Mul(l.out_features, l.in_features / 32)));
    const bool unscaled = l.slot == LinearSlot::kRouter || l.slot == LinearSlot::kIndexerWeights ||
                          (ck.fp8_o_proj_16bit && l.slot == LinearSlot::kO);
    if (!fp4 && ck.fp8_block_rows > 0 && ck.fp8_block_cols > 0 && !unscaled) {
      n = Add(n, Mul(l.copies, Mul(CeilDiv(l.out_features, ck.fp8_block_rows), CeilDiv(l.in_features, ck.fp8_block_cols))));
    }
    if (ck.mxfp4_experts && l.role == ModuleRole::kExperts) n = Add(n, Mul(l.copies, Mul(l.in_features, l.out_features)) / 32);
    if (ck.ternary_packed_linears) n = Add(n, l.copies);  // BitLinear's one-element weight_scale
  }
  return n;
}

// The expert elements FP4 packing (two per stored element) leaves out of one layer of `kind`.
int64_t LayerFp4Saved(const LayerKind& kind, const CheckpointLayout& ck) {
  if (!ck.fp4_packed_experts) return 0;
  int64_t n = 0;
  for (const auto& l : kind.linears) {
    if (l.role == ModuleRole::kExperts) n = Add(n, Mul(l.copies, Mul(l.out_features, l.in_features)) / 2);
  }
  return n;
}

// The linear elements BitNet's packing (four ternary values per uint8, along the output rows:
// weight [out / 4, in]) leaves out of one layer of `kind`.
int64_t LayerTernarySaved(const LayerKind& kind, const CheckpointLayout& ck) {
  if (!ck.ternary_packed_linears) return 0;
  int64_t n = 0;
  for (const auto& l : kind.linears) n = Add(n, Mul(l.copies, Mul(l.out_features - CeilDiv(l.out_features, 4), l.in_features)));
  return n;
}

// GPTQ / AWQ / pack-quantized linears (model/packed_linears.h): the weight elements the int32
// packing leaves out go to int32_packing_saved, the zero points, scales and g_idx to
// quantization_scales. Walked layer by layer: quantization_config's list of modules kept in 16-bit
// (modules_to_not_convert, compressed-tensors `ignore`) names layers by index.
void AddPackedLinears(const ModelSpec& spec, ParamCounts* c) {
  const PackedLinears& p = spec.checkpoint.packed_linears;
  if (p.layout == PackedLinearLayout::kNone) return;
  auto add = [&](const LinearSpec& l, int64_t layer) {
    if (!StoredPacked(l, p)) return;
    if (layer >= 0 && !spec.unquantized_modules.empty() && KeptUnquantized(spec.unquantized_modules, LinearModulePath(layer, l))) return;
    const PackedElements e = PackedLinearElements(l, p);
    c->int32_packing_saved = Add(c->int32_packing_saved, Mul(l.copies, Mul(l.in_features, l.out_features) - e.weight));
    c->quantization_scales = Add(c->quantization_scales, Mul(l.copies, e.metadata));
  };
  for (size_t layer = 0; layer < spec.layer_kind.size(); ++layer) {
    for (const auto& l : spec.kinds[spec.layer_kind[layer]].linears) add(l, static_cast<int64_t>(layer));
  }
  const CheckpointLayout& ck = spec.checkpoint;
  if (ck.mtp_layers > 0 && ck.mtp_kind < spec.kinds.size()) {
    for (int64_t i = 0; i < ck.mtp_layers; ++i) {
      for (const auto& l : spec.kinds[ck.mtp_kind].linears) add(l, -1);
    }
  }
}

// What the checkpoint stores beyond `c.total` (CheckpointLayout), and the checkpoint total.
void AddCheckpointTerms(const ModelSpec& spec, const int64_t* uses, ParamCounts* c) {
  const CheckpointLayout& ck = spec.checkpoint;
  const int64_t h = spec.hidden_size;
  const int64_t embedding = Mul(spec.vocab_size, h);
  for (size_t idx = 0; idx < spec.kinds.size(); ++idx) {
    c->quantization_scales = Add(c->quantization_scales, Mul(uses[idx], LayerScales(spec.kinds[idx], ck)));
    c->fp4_packing_saved = Add(c->fp4_packing_saved, Mul(uses[idx], LayerFp4Saved(spec.kinds[idx], ck)));
    c->ternary_packing_saved = Add(c->ternary_packing_saved, Mul(uses[idx], LayerTernarySaved(spec.kinds[idx], ck)));
  }
  if (ck.mtp_layers > 0 && ck.mtp_kind < spec.kinds.size()) {
    const LayerKind& kind = spec.kinds[ck.mtp_kind];
    // enorm + hnorm + shared_head.norm (h each) and eh_proj (2h -> h, no bias), around one decoder layer.
    int64_t one = Add(LayerKindParams(kind), Mul(3, h), Mul(Mul(2, h), h));
    one = Add(one, ck.mtp_extra_params);
    if (ck.mtp_stores_embeddings) one = Add(one, Mul(2, embedding));
    c->mtp = Mul(ck.mtp_layers, one);
    c->quantization_scales = Add(c->quantization_scales, Mul(ck.mtp_layers, LayerScales(kind, ck)));
    c->fp4_packing_saved = Add(c->fp4_packing_saved, Mul(ck.mtp_layers, LayerFp4Saved(kind, ck)));
    if (ck.mtp_eh_scaled && ck.fp8_block_rows > 0 && ck.fp8_block_cols > 0) {
      const int64_t eh = Mul(CeilDiv(h, ck.fp8_block_rows), CeilDiv(h, ck.fp8_block_cols));
      c->quantization_scales = Add(c->quantization_scales, Mul(ck.mtp_layers, Mul(2, eh)));
    }
  }
  AddPackedLinears(spec, c);
  c->vision = ck.vision_params;
  c->projector = ck.projector_params;
  c->audio = ck.audio_params;
  c->unloaded = ck.unloaded_params;
  c->tied_lm_head_copy = spec.tied_embeddings && ck.tied_lm_head_stored ? embedding : 0;
  c->checkpoint_total = Add(c->total, c->mtp, c->vision, c->projector, c->quantization_scales, c->tied_lm_head_copy, c->audio,
                            c->unloaded) - c->fp4_packing_saved - c->ternary_packing_saved - c->int32_packing_saved;
}

}  // namespace

int64_t LayerKindParams(const LayerKind& kind) {
  int64_t n = Add(kind.extra_attention_params, kind.extra_router_params);
  for (const auto& l : kind.linears) n = Add(n, LinearParams(l));
  for (const auto& norm : kind.norms) n = Add(n, norm.Params());
  return n;
}

ParamCounts CountParams(const ModelSpec& spec) {
  ParamCounts c;
  c.embedding = Add(Mul(spec.vocab_size, spec.hidden_size), Mul(spec.position_embedding_rows, spec.hidden_size),
                    spec.extra_embedding_params);
  c.lm_head = spec.tied_embeddings ? 0 : Mul(spec.vocab_size, spec.hidden_size);
  if (spec.lm_head_bias) c.lm_head = Add(c.lm_head, spec.vocab_size);
  c.norms = spec.final_norm.Params();
  int64_t active = Add(c.embedding, c.lm_head, c.norms);
  // Count each distinct layer kind once, weighted by how many layers use it.
  int64_t uses[256] = {0};
  for (uint8_t idx : spec.layer_kind) ++uses[idx];
  for (size_t idx = 0; idx < spec.kinds.size(); ++idx) {
    const int64_t n = uses[idx];
    if (n == 0) continue;
    const LayerKind& kind = spec.kinds[idx];
    ParamCounts one;
    one.attention += kind.extra_attention_params;
    one.router += kind.extra_router_params;
    int64_t layer_active = Add(kind.extra_attention_params, kind.extra_router_params);
    for (const auto& l : kind.linears) {
      int64_t p = LinearParams(l);
      switch (l.role) {
        case ModuleRole::kAttention: one.attention = Add(one.attention, p); break;
        case ModuleRole::kMlp: one.mlp = Add(one.mlp, p); break;
        case ModuleRole::kExperts: one.experts = Add(one.experts, p); break;
        case ModuleRole::kSharedExperts: one.shared_experts = Add(one.shared_experts, p); break;
        case ModuleRole::kRouter: one.router = Add(one.router, p); break;
        default: one.mlp = Add(one.mlp, p); break;
      }
      // A token touches experts_per_token of the routed copies.
      if (l.role == ModuleRole::kExperts && l.copies > 0 && kind.mlp.experts_per_token > 0) {
        layer_active = Add(layer_active, Mul(p / l.copies, kind.mlp.experts_per_token));
      } else {
        layer_active = Add(layer_active, p);
      }
    }
    for (const auto& norm : kind.norms) {
      one.norms = Add(one.norms, norm.Params());
      layer_active = Add(layer_active, norm.Params());
    }
    c.attention = Add(c.attention, Mul(n, one.attention));
    c.mlp = Add(c.mlp, Mul(n, one.mlp));
    c.experts = Add(c.experts, Mul(n, one.experts));
    c.shared_experts = Add(c.shared_experts, Mul(n, one.shared_experts));
    c.router = Add(c.router, Mul(n, one.router));
    c.norms = Add(c.norms, Mul(n, one.norms));
    active = Add(active, Mul(n, layer_active));
  }
  c.total = Add(c.embedding, c.attention, c.mlp, c.experts, c.shared_experts, c.router, c.norms, c.lm_head);
  c.active_per_token = active;
  AddCheckpointTerms(spec, uses, &c);
  return c;
}

}  // namespace vramplan
