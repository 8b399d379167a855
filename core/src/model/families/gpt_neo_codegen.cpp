// GPT-Neo (transformers models/gpt_neo/modeling_gpt_neo.py) and CodeGen
// (models/codegen/modeling_codegen.py): EleutherAI-era decoders with LayerNorms carrying a bias and
// plain GELU MLPs: GPT-Neo with learned positions and alternating global / local layers, CodeGen
// with GPT-J's parallel block behind one ln_1 and a fused qkv_proj.
#include <string>

#include <utility>

#include "model/families/builders.h"
#include "model/families/layer_kit.h"

namespace vramplan::families {

// GPTNeoForCausalLM: wte (vocab x h), wpe (max_position_embeddings x h), GPTNeoBlock x num_layers,
// ln_f, lm_head tied to wte. A block: ln_1, attn.attention.k_proj / v_proj / q_proj (no bias) and
// out_proj (bias), ln_2, mlp.c_fc h -> intermediate_size (4h when null) and c_proj back, both with
// bias, act activation_function (gelu_new). GPTNeoConfig expands attention_types
// ([[["global", "local"], 12]]) into one type per layer; a local layer only masks keys beyond
// window_size (GPTNeoSelfAttention builds its causal `bias` buffer with the window cut out), it has
// the same weights, keeps the whole cache and computes the full score matrix, so no layer is
// windowed here. Dropouts embed_dropout / attention_dropout / resid_dropout (GPTNeoConfig: 0.0).
Expected<ModelSpec> BuildGptNeo(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  if (m.inter == 0) m.inter = 4 * m.h;  // intermediate_size null -> 4 * hidden_size (GPTNeoMLP)
  CheckDims(c, m, true);
  // The registered causal-mask buffer is positions^2 bytes per layer (as GPT-2's n_positions).
  const int64_t positions = c.Int({"max_position_embeddings"}, 1, int64_t{1} << 20).value_or(2048);
  const ActivationFn act = ParseActivation(c.String("activation_function", "gelu_new"));
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", true), NormKind::kLayerNorm, true, "ln_f");
  spec.position_embedding_rows = positions;
  spec.rope_fraction = 0.0;
  spec.legacy_buffer_bytes_per_layer = positions * positions;  // GPTNeoSelfAttention `bias` (max_positions^2)
  spec.attention_dropout = c.Fraction("attention_dropout", 0.0, true);
  spec.hidden_dropout = c.Fraction("resid_dropout", 0.0, true);
  spec.embedding_dropout = c.Fraction("embed_dropout", 0.0, true);
  if (!c.errors()->empty()) return *c.errors();
  // GPT_NEO_ATTENTION_CLASSES (modeling_gpt_neo.py) has "eager" and "flash_attention_2" only.
  spec.notes.push_back(
      "transformers runs GPT-Neo's attention eager (q and k cast to float32) or with flash_attention_2; it has no SDPA "
      "path, so an sdpa estimate is optimistic for it: choose eager or flash_attention_2");
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k;
    AddQkvo(&k, m, false, true);
    k.linears.back().name = "out_proj";
    AddPlainMlp(&k, m.h, m.inter, act, true, {"c_fc", "c_proj"});
    AddNorm(&k, "ln_1", NormSlot::kPreAttention, m.h, true);
    AddNorm(&k, "ln_2", NormSlot::kPreMlp, m.h, true);
    SetAttention(&k, m, 0);
    return k;
  });
  return spec;
}

// CodeGenForCausalLM: wte, CodeGenBlock x n_layer, ln_f, an untied lm_head WITH bias. A block is
// GPT-J's parallel one behind a single ln_1: attn.qkv_proj h -> 3h without bias (CodeGen's fused
// projection, split in mp_num = 4 groups: a layout, not a parameter), attn.out_proj without bias,
// mlp.fc_in h -> n_inner (4h when null) and fc_out back, both with bias, act activation_function
// (gelu_new). Rotary on the first rotary_dim dimensions of each head (null: the whole head).
// CodeGenConfig: tie_word_embeddings false, attn_pdrop / resid_pdrop / embd_pdrop 0.0.
Expected<ModelSpec> BuildCodeGen(ConfigReader& c, ModelSpec spec) {
  return BuildGptJStyle(c, std::move(spec), GptJAttention::kFusedQkv);
}

}  // namespace vramplan::families
