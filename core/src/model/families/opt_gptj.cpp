// OPT (transformers models/opt/modeling_opt.py) and GPT-J (models/gptj/modeling_gptj.py): the
// 2021-2022 decoders with plain fc1 / fc2 (fc_in / fc_out) MLPs, biased LayerNorms and, for OPT,
// learned positions.
#include <utility>

#include "model/families/builders.h"
#include "model/families/layer_kit.h"

namespace vramplan::families {

// OPTForCausalLM: decoder.embed_tokens (vocab x word_embed_proj_dim), embed_positions
// (OPTLearnedPositionalEmbedding: max_position_embeddings + 2 rows, the offset of 2 fairseq kept),
// OPTDecoderLayer x num_hidden_layers (self_attn q_proj / k_proj / v_proj / out_proj and fc1 / fc2
// with bias enable_bias, self_attn_layer_norm and final_layer_norm with elementwise_affine
// layer_norm_elementwise_affine), decoder.final_layer_norm only when do_layer_norm_before and not
// _remove_final_layer_norm; lm_head tied. OPTConfig defaults: relu, dropout 0.1, attention_dropout 0.
Expected<ModelSpec> BuildOpt(ConfigReader& c, ModelSpec spec) {
  Dims m = ReadDims(c);
  if (m.inter == 0) m.inter = c.Int({"ffn_dim"}).value_or(3072);
  CheckDims(c, m, true);
  const int64_t positions = c.Int({"max_position_embeddings"}, 1, int64_t{1} << 20).value_or(2048);
  const bool bias = c.Bool("enable_bias", true);
  const bool affine = c.Bool("layer_norm_elementwise_affine", true);
  const bool final_norm = c.Bool("do_layer_norm_before", true) && !c.Bool("_remove_final_layer_norm", false);
  const ActivationFn act = ParseActivation(c.String("activation_function", "relu"));
  // word_embed_proj_dim below hidden_size (OPT-350m: 512 of 1024) makes the embedding and the
  // lm_head narrower than the decoder, with project_in / project_out between them; ModelSpec's
  // embedding is vocab x hidden_size, so such a config is refused rather than counted wrong.
  const int64_t proj = c.Int({"word_embed_proj_dim"}).value_or(m.h);
  if (c.errors()->empty() && proj != m.h) {
    io::AddError(c.errors(), "invalid_value", io::JoinPath(c.path(), "word_embed_proj_dim"),
                 "word_embed_proj_dim different from hidden_size (OPT-350m's project_in / project_out) is not read yet");
  }
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", true), NormKind::kLayerNorm, true, "final_layer_norm");
  spec.final_norm.has_weight = final_norm && affine;
  spec.position_embedding_rows = positions + 2;
  spec.rope_fraction = 0.0;
  spec.attention_dropout = c.Fraction("attention_dropout", 0.0, true);
  spec.hidden_dropout = c.Fraction("dropout", 0.1, true);
  if (!c.errors()->empty()) return *c.errors();
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k;
    AddLinear(&k, "q_proj", LinearSlot::kQ, m.h, m.h, bias);
    AddLinear(&k, "k_proj", LinearSlot::kK, m.h, m.h, bias);
    AddLinear(&k, "v_proj", LinearSlot::kV, m.h, m.h, bias);
    AddLinear(&k, "out_proj", LinearSlot::kO, m.h, m.h, bias);
    AddPlainMlp(&k, m.h, m.inter, act, bias, {"fc1", "fc2"});
    AddNorm(&k, "self_attn_layer_norm", NormSlot::kPreAttention, m.h, true, affine);
    AddNorm(&k, "final_layer_norm", NormSlot::kPreMlp, m.h, true, affine);
    SetAttention(&k, m, 0);
    return k;
  });
  return spec;
}

// GPTJForCausalLM: wte, GPTJBlock x n_layer (one ln_1 feeding attention and MLP in parallel;
// attn.q_proj / k_proj / v_proj / out_proj without bias; mlp.fc_in h -> n_inner (4h when null) and
// fc_out with bias), ln_f, and an untied lm_head WITH bias. Rotary on the first rotary_dim
// dimensions of each head (GPTJConfig default 64; null: the whole head).
// GPT-J's block and model around it, shared with CodeGen (gpt_neo_codegen.cpp), whose block differs
// only in its fused qkv_proj (h -> 3h, no bias) in place of q_proj / k_proj / v_proj.
Expected<ModelSpec> BuildGptJStyle(ConfigReader& c, ModelSpec spec, GptJAttention attention) {
  Dims m = ReadDims(c);
  if (m.inter == 0) m.inter = 4 * m.h;
  CheckDims(c, m, true);
  const int64_t rotary_dim = c.Int({"rotary_dim"}, 1, kMaxHeadsOrExperts).value_or(m.d);
  const ActivationFn act = ParseActivation(c.String("activation_function", "gelu_new"));
  if (c.errors()->empty() && rotary_dim > m.d) {
    io::AddError(c.errors(), "out_of_range", io::JoinPath(c.path(), "rotary_dim"),
                 "rotary_dim must not exceed the head dimension (" + std::to_string(m.d) + ")");
  }
  if (!c.errors()->empty()) return *c.errors();
  FinishCommon(&spec, m, c.Bool("tie_word_embeddings", false), NormKind::kLayerNorm, true, "ln_f");
  spec.lm_head_bias = true;  // GPTJForCausalLM / CodeGenForCausalLM: nn.Linear(n_embd, vocab_size), bias on
  spec.rope_fraction = static_cast<double>(rotary_dim) / static_cast<double>(m.d);
  spec.attention_dropout = c.Fraction("attn_pdrop", 0.0, true);
  spec.hidden_dropout = c.Fraction("resid_pdrop", 0.0, true);
  spec.embedding_dropout = c.Fraction("embd_pdrop", 0.0, true);
  if (!c.errors()->empty()) return *c.errors();
  BuildLayers(&spec, m.layers, [&](int64_t) {
    LayerKind k;
    if (attention == GptJAttention::kFusedQkv) {
      AddLinear(&k, "qkv_proj", LinearSlot::kQkv, m.h, 3 * m.h, false);
      AddLinear(&k, "out_proj", LinearSlot::kO, m.h, m.h, false);
    } else {
      AddQkvo(&k, m, false, false);
      k.linears.back().name = "out_proj";
    }
    AddPlainMlp(&k, m.h, m.inter, act, true, {"fc_in", "fc_out"});
    AddNorm(&k, "ln_1", NormSlot::kPreAttention, m.h, true);
    k.parallel_residual = true;
    SetAttention(&k, m, 0);
    return k;
  });
  return spec;
}

Expected<ModelSpec> BuildGptJ(ConfigReader& c, ModelSpec spec) {
  return BuildGptJStyle(c, std::move(spec), GptJAttention::kSeparateQkv);
}

}  // namespace vramplan::families
