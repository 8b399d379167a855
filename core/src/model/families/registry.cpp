#include "model/families/registry.h"

#include "model/gemma3n_towers.h"

// The page's module links only the readers it needs at once (VRAMPLAN_ALL_READERS=0, WASM only:
// core/CMakeLists.txt compiles this file once per module): the families of the presets, whose
// scenarios must estimate without a second download, and the builders they share. The other
// families' rows stay (their names and LoRA targets) with no builder, and reading their
// config answers `reader_on_demand` (hf_config.cpp); the page then loads vramplan-full, which has
// every reader, and asks it instead (web/core.js). docs/web.md, "Readers on demand".
#ifndef VRAMPLAN_ALL_READERS
#define VRAMPLAN_ALL_READERS 1
#endif
#if VRAMPLAN_ALL_READERS
#define ON_DEMAND(builder) builder
#else
#define ON_DEMAND(builder) nullptr
#endif
// The notes document the table (docs/models.md, model_families_test.cpp); no WASM module reads them.
#ifdef __EMSCRIPTEN__
#define NOTE(text) ""
#else
#define NOTE(text) text
#endif

namespace vramplan::families {
namespace {

// Functions, not globals: the tables may be read during another file's static initialization.
LoraDefaults Qv() { return LoraDefaults{{"q_proj", "v_proj"}, false}; }
LoraDefaults AllLinear() { return LoraDefaults{{}, true}; }

std::vector<ModelFamily> MakeFamilies() {
  return {
      {"llama", "", BuildLlama, Qv(), NOTE("Llama 1-3: q/k/v/o (attention_bias), SwiGLU MLP (mlp_bias), RMSNorm")},
      {"mistral", "", BuildMistral, Qv(), NOTE("Llama layout; sliding_window on every layer when set")},
      {"mixtral", "", BuildMixtral, Qv(), NOTE("Mistral attention; router \"gate\" and experts w1/w3/w2 of intermediate_size")},
      {"qwen2", "", BuildQwen2, Qv(), NOTE("Llama layout with q/k/v bias; sliding windows from max_window_layers when use_sliding_window")},
      {"qwen2_moe", "", BuildQwen2Moe, Qv(),
       NOTE("Qwen2 attention; experts of moe_intermediate_size, a shared expert with its sigmoid gate, mlp_only_layers, decoder_sparse_step")},
      {"qwen3", "", BuildQwen3, Qv(), NOTE("Llama layout with RMSNorm(head_dim) on q and k")},
      {"qwen3_moe", "", BuildQwen3Moe, Qv(), NOTE("Qwen3 attention; experts of moe_intermediate_size, mlp_only_layers, decoder_sparse_step")},
      {"gemma", "", BuildGemma, Qv(), NOTE("Llama layout, tied embeddings, tanh-GELU MLP (hidden_activation)")},
      {"gemma2", "", BuildGemma2, Qv(), NOTE("Gemma with sandwich norms (4 per layer) and sliding windows on even layers")},
      {"gemma3_text", "", BuildGemma3Text, Qv(),
       NOTE("Gemma 2 layout with q/k norms and sliding_window_pattern (also the text decoder of multimodal gemma3)")},
      {"phi", "", BuildPhi, Qv(), NOTE("Phi-2: q/k/v/dense with biases, fc1/fc2 GELU MLP, parallel residual, LayerNorm, lm_head bias")},
      {"phi3", "", BuildPhi3, LoraDefaults{{"qkv_proj"}, false}, NOTE("Phi-3/Phi-4: fused qkv_proj and gate_up_proj, RMSNorm")},
      {"gpt2", "", BuildGpt2, LoraDefaults{{"c_attn"}, false},
       NOTE("Conv1D c_attn/c_proj/c_fc/c_proj, learned positions (n_positions), dropout 0.1 by default, causal-mask buffer")},
      {"gpt_neox", "", BuildGptNeox, LoraDefaults{{"query_key_value"}, false},
       NOTE("fused query_key_value, plain GELU MLP, parallel residual (use_parallel_residual), rotary_pct")},
      {"falcon", "", BuildFalcon, LoraDefaults{{"query_key_value"}, false},
       NOTE("fused query_key_value with multi-query or grouped kv (new_decoder_architecture), parallel attention")},
      {"deepseek_v2", "", BuildDeepseekV2, AllLinear(),
       NOTE("multi-head latent attention, first_k_dense_replace dense layers, routed and shared experts")},
      {"deepseek_v3", "", BuildDeepseekV3, AllLinear(),
       NOTE("DeepSeek-V2 layout with the router's correction bias; the multi-token-prediction layer and the FP8 block scales count in checkpoint_total")},
      {"minimax_m2", "", BuildMiniMaxM2, AllLinear(),
       NOTE("MiniMax-M2: q/k/v/o, RMSNorm over all q / k heads (qk_norm_type per_layer), router with correction bias, experts w1/w3/w2 in every layer")},
      {"deepseek_v32", "", BuildDeepseekV32, AllLinear(),
       NOTE("DeepSeek-V3.2: the DeepSeek-V3 layout plus the sparse-attention indexer (wq_b, wk, k_norm, weights_proj) in every layer")},
      {"deepseek_v4", "", BuildDeepseekV4, AllLinear(),
       NOTE("DeepSeek-V4: shared-KV MQA with low-rank q, grouped output projection and sinks, a compressor per layer_types "
       "(compress_ratios) with the lightning indexer on CSA layers, mHC hyper-connections, hash-routed then top-k MoE "
       "with a shared expert; the MTP layer counts in checkpoint_total")},
      {"glm_moe_dsa", "", BuildGlmMoeDsa, AllLinear(),
       NOTE("GLM-5: the DeepSeek-V3.2 layout (MLA, indexer, routed and shared experts); the MTP layer shares the embedding and head")},
      {"gpt_oss", "", BuildGptOss, AllLinear(),
       NOTE("attention sinks, alternating 128-token sliding windows, fused expert tensors (not nn.Linear, not LoRA targets)")},
      {"olmo2", "", BuildOlmo2, Qv(), NOTE("norms on the attention and MLP outputs only, RMSNorm over all q / k heads")},
      {"olmo3", "", BuildOlmo3, Qv(), NOTE("OLMo 2 layout with sliding-window layers (layer_types; by default three of every four)")},
      {"seed_oss", "", BuildSeedOss, Qv(), NOTE("Seed-OSS: the Llama layout with q/k/v bias (attention_bias) and a separate attention_out_bias for o_proj")},
      {"smollm3", "", BuildSmolLm3, AllLinear(), NOTE("SmolLM3: the Llama layout, tied embeddings by default; NoPE layers (no_rope_layers) change no weight")},
      {"exaone4", "", BuildExaone4, Qv(),
       NOTE("EXAONE 4.0: norms on the attention and MLP outputs only, RMSNorm(head_dim) on q and k, sliding layers from layer_types or sliding_window_pattern")},
      {"glm", "", ON_DEMAND(BuildGlm), AllLinear(),  // PEFT lists none: all linears
       NOTE("GLM-4 (glm-4-9b-*-hf): q/k/v bias (attention_bias), o_proj without, fused gate_up_proj, two RMSNorms per layer "
       "(Llama's), partial rotary (partial_rotary_factor 0.5), untied")},
      {"glm4", "", BuildGlm4, Qv(),
       NOTE("GLM-4-0414: q/k/v bias (attention_bias), fused gate_up_proj, four RMSNorms per layer (on the attention and MLP inputs and outputs), partial rotary")},
      {"glm4_moe_lite", "", BuildGlm4MoeLite, AllLinear(),
       NOTE("GLM-4.7-Flash: DeepSeek-V3's multi-head latent attention with GLM-4.5's router, experts and shared expert; dense / MoE layers from mlp_layer_types")},
      {"glm4_moe", "", BuildGlm4Moe, AllLinear(),
       NOTE("GLM-4.5 / 4.6: q/k/v bias (attention_bias), q/k RMSNorm (use_qk_norm), first_k_dense_replace dense layers, "
       "router with correction bias, routed and shared experts; the MTP layer counts in checkpoint_total")},
      {"qwen", "", BuildQwen1, LoraDefaults{{"c_attn", "c_proj", "w1", "w2"}, false},  // PEFT lists none: Qwen's finetune.py
       NOTE("Qwen1 remote code: fused c_attn, w1/w2 of intermediate_size / 2, loss on the logits without .float()")},
      // Hybrids: linear-attention / state-space mixers beside attention (PEFT lists none: all linears).
      {"qwen3_next", "", BuildQwen3Next, AllLinear(),
       NOTE("Gated DeltaNet layers and gated full attention (layer_types / full_attention_interval), 512 experts with a gated shared expert; MTP layer not counted")},
      {"qwen3_5_text", "", BuildQwen35Text, AllLinear(),
       NOTE("Qwen3.5 text decoder (text_config of qwen3_5): Gated DeltaNet with split in_proj_qkv/z/b/a and gated full attention, SwiGLU MLP")},
      {"qwen3_5_moe_text", "", BuildQwen35MoeText, AllLinear(),
       NOTE("Qwen3.5 MoE text decoder (text_config of qwen3_5_moe): Qwen3.5 mixers, experts with a gated shared expert")},
      {"kimi_linear", "", ON_DEMAND(BuildKimiLinear), AllLinear(),
       NOTE("Kimi Linear: Kimi Delta Attention layers (q/k/v_proj, q/k/v_conv1d, low-rank f_a/f_b and g_a/g_b gates, b_proj, o_norm, "
       "o_proj) and MLA layers per linear_attn_config's 1-based kda_layers / full_attn_layers; first_k_dense_replace dense "
       "layers, then a router with correction bias, experts w1/w3/w2 and shared experts")},
      {"nemotron_h", "", BuildNemotronH, AllLinear(),
       NOTE("hybrid_override_pattern: M Mamba-2, * attention, - ReLU^2 MLP, E MoE (router correction bias, shared expert)")},
      {"granitemoehybrid", "", BuildGraniteMoeHybrid, AllLinear(),
       NOTE("Granite 4.0: Mamba-2 / attention per layer_types, fused ParallelExperts (not nn.Linear) and a shared SwiGLU MLP")},
      {"falcon_h1", "", BuildFalconH1, AllLinear(), NOTE("attention and Mamba-2 side by side in every layer, SwiGLU MLP")},
      {"jamba", "", BuildJamba, AllLinear(),
       NOTE("Mamba-1 layers with one attention layer per attn_layer_period, MoE every expert_layer_period-th layer")},
      {"bamba", "", ON_DEMAND(BuildBamba), AllLinear(),
       NOTE("Bamba: Mamba-2 mixers (in_proj, conv1d, dt_bias, A_log, D, gated norm, out_proj) with attention on "
       "attn_layer_indices, a SwiGLU feed_forward and two RMSNorms in every layer, untied")},
      {"lfm2", "", BuildLfm2, AllLinear(),
       NOTE("LFM2: gated short-convolution blocks (in_proj h->3h, depthwise conv1d of conv_L_cache, out_proj) and GQA blocks with "
       "q/k RMSNorm per layer_types / full_attn_idxs, SwiGLU w1/w3/w2 of the adjusted block_ff_dim, embedding_norm, tied embeddings")},
      {"lfm2_moe", "", BuildLfm2Moe, AllLinear(),
       NOTE("LFM2-MoE: the LFM2 mixers; SwiGLU MLP of intermediate_size on the first num_dense_layers layers, then a sigmoid router "
       "\"gate\" with expert_bias and experts w1/w3/w2 of moe_intermediate_size")},
      {"minimax", "", ON_DEMAND(BuildMiniMaxText01), AllLinear(),
       NOTE("MiniMax-Text-01 / M1 (transformers): Lightning attention (qkv_proj, output_gate, norm, out_proj) on \"linear_attention\" "
       "layers and GQA q/k/v/o on \"full_attention\" layers (layer_types), router \"gate\" and experts w1/w3/w2 in every layer")},
      {"minimax_text_01", "", ON_DEMAND(BuildMiniMaxText01), AllLinear(),
       NOTE("MiniMax-Text-01 remote code: the minimax layout with attn_type_list (0 Lightning, 1 softmax attention)")},
      {"minimax_m1", "", ON_DEMAND(BuildMiniMaxText01), AllLinear(),
       NOTE("MiniMax-M1 remote code: the MiniMax-Text-01 architecture (attn_type_list, 32 experts, top 2)")},
      {"ernie4_5", "", BuildErnie45, AllLinear(), NOTE("ERNIE 4.5 dense: the Llama layout with use_bias on every linear, tied embeddings by default")},
      {"ernie4_5_moe", "", BuildErnie45Moe, AllLinear(),
       NOTE("ERNIE 4.5 MoE: moe_num_experts experts and moe_num_shared_experts shared experts on layers moe_layer_start_index..end_index, "
       "router with correction bias (moe_statics); MTP weights not loaded")},
      {"llama4_text", "", BuildLlama4Text, AllLinear(),
       NOTE("Llama 4 text decoder (text_config of llama4): MoE every interleave_moe_layer_step-th layer (router, fused experts, shared expert), "
       "dense layers of intermediate_size_mlp, chunked attention on RoPE layers")},
      {"gemma4_text", "", BuildGemma4Text, AllLinear(),
       NOTE("Gemma 4 text decoder (text_config of gemma4): sliding layers of head_dim / num_key_value_heads and full layers of "
       "global_head_dim (attention_k_eq_v: num_global_key_value_heads, no v_proj), KV-shared last layers, per-layer "
       "embeddings, MoE block beside the dense MLP (enable_moe_block)")},
      {"gemma3n_text", "", ON_DEMAND(BuildGemma3nText), AllLinear(),
       NOTE("Gemma 3n text decoder (text_config of gemma3n): Gemma 3 attention with q/k norms on sliding / full layers "
       "(layer_types), MLP widths per layer (intermediate_size list, MatFormer), AltUp (altup_num_inputs streams, "
       "altup_projections), LAuReL (laurel_rank), per-layer embeddings, KV-shared last layers that keep their k/v weights")},
      {"starcoder2", "", ON_DEMAND(BuildStarcoder2), AllLinear(),
       NOTE("StarCoder2: q/k/v/o and a plain GELU MLP c_fc / c_proj, all with bias (use_bias), LayerNorms with bias, tied embeddings, "
       "sliding_window on every layer")},
      {"gpt_bigcode", "", ON_DEMAND(BuildGptBigCode), LoraDefaults{{"c_attn"}, false},
       NOTE("StarCoder 1 / SantaCoder: fused multi-query c_attn (multi_query), c_proj, GELU c_fc / c_proj, LayerNorms, learned positions (n_positions), tied embeddings")},
      {"cohere", "", ON_DEMAND(BuildCohere), AllLinear(),
       NOTE("Command-R: one LayerNorm without bias feeding attention and the SwiGLU MLP in parallel, q/k/v/o bias with attention_bias, "
       "LayerNorm q/k norms per head with use_qk_norm, tied embeddings; logit_scale adds no weight")},
      {"cohere2", "", ON_DEMAND(BuildCohere2), AllLinear(),
       NOTE("Command R7B / Command A: the Cohere layer without q/k norms; sliding layers from layer_types or sliding_window_pattern "
       "(every 4th layer global by default)")},
      {"granite", "", ON_DEMAND(BuildGranite), AllLinear(),
       NOTE("Granite 3.x dense: the Llama layout (attention_bias, mlp_bias), untied unless tie_word_embeddings; "
       "embedding / residual / attention multipliers and logits_scaling add no weight")},
      {"granitemoe", "", ON_DEMAND(BuildGraniteMoe), AllLinear(),
       NOTE("Granite 3.x MoE: Llama attention, router.layer and fused experts input_linear (gate and up) / output_linear "
       "(GraniteMoeParallelExperts, not nn.Linear, not LoRA targets) of intermediate_size in every layer")},
      {"granitemoeshared", "", ON_DEMAND(BuildGraniteMoeShared), AllLinear(),
       NOTE("Granite MoE with a shared expert (GraniteMoeShared): the granitemoe layer plus shared_mlp input_linear "
       "(h -> 2 x shared_intermediate_size, gate and up) / output_linear, nn.Linear, in every layer (none when 0)")},
      {"olmoe", "", ON_DEMAND(BuildOlmoe), AllLinear(),
       NOTE("OLMoE: q/k/v/o (attention_bias), RMSNorm over all q / k heads, router \"gate\" and num_experts experts "
       "gate_proj / up_proj / down_proj of intermediate_size in every layer (norm_topk_prob)")},
      // PEFT lists none of the types below (peft/utils/constants.py): all linears.
      {"hunyuan_v1_dense", "", ON_DEMAND(BuildHunyuanV1Dense), AllLinear(),
       NOTE("Hunyuan dense (0.5B-7B, Hunyuan-MT): the Llama layout with per-head RMSNorms query_layernorm / key_layernorm on the "
       "rotated q and k, attention_bias on q/k/v/o, MLP without bias")},
      {"hunyuan_v1_moe", "", ON_DEMAND(BuildHunyuanV1Moe), AllLinear(),
       NOTE("Hunyuan-A13B: Hunyuan dense attention; every layer a float32 router gate.wg, num_experts experts and one shared_mlp "
       "of intermediate_size (num_experts / moe_topk per layer or one integer)")},
      {"exaone", "", ON_DEMAND(BuildExaone), AllLinear(),
       NOTE("EXAONE 3.0 / 3.5 remote code: the Llama layer named wte, ln_1 / ln_2, attn.attention.q_proj / k_proj / v_proj / "
       "out_proj, mlp.c_fc_0 / c_fc_1 / c_proj, ln_f; no biases, num_layers, tied embeddings by default")},
      {"dots1", "", ON_DEMAND(BuildDots1), AllLinear(),
       NOTE("dots.llm1: Qwen3 attention (q/k RMSNorm, attention_bias) with DeepSeek-V3's MoE: first_k_dense_replace dense layers, "
       "router with correction bias, n_routed_experts experts and n_shared_experts shared experts of moe_intermediate_size")},
      {"bailing_moe", "", ON_DEMAND(BuildBailingMoe), AllLinear(),
       NOTE("Ling / Ring (1.x BailingMoeForCausalLM, 2.0 BailingMoeV2ForCausalLM): fused query_key_value, dense, q/k RMSNorm "
       "(use_qk_norm), first_k_dense_replace dense layers, router gate (with expert_bias in 2.0), experts and shared experts")},
      {"apertus", "", ON_DEMAND(BuildApertus), AllLinear(),
       NOTE("Apertus: Llama attention with q/k RMSNorm (q_norm, k_norm), attention_layernorm / feedforward_layernorm, "
       "non-gated up_proj / down_proj MLP without bias, xIELU activation with two parameters and two stored buffers per layer")},
      {"nemotron", "", ON_DEMAND(BuildNemotron), AllLinear(),
       NOTE("Nemotron-4 / Minitron: q/k/v/o of head_dim (bias with attention_bias), non-gated relu2 MLP up_proj / down_proj "
       "(bias with mlp_bias), LayerNorm1P with bias, partial rotary, untied lm_head")},
      {"bitnet", "", ON_DEMAND(BuildBitNet), AllLinear(),
       NOTE("BitNet b1.58: the Llama layout plus attn_sub_norm before o_proj and ffn_sub_norm before down_proj, relu2 gated MLP; "
       "the packed checkpoint (quant_method bitnet, offline) stores four ternary values per element and a scale per linear")},
      {"flex_olmo", "", ON_DEMAND(BuildFlexOlmo), AllLinear(),
       NOTE("FlexOlmo: the OLMoE layer (q/k/v/o with attention_bias, RMSNorm over all q / k heads, router and num_experts experts "
       "of intermediate_size) with OLMo 2's post-norms on the attention and MLP outputs")},
      // PEFT lists neither gemma4 nor mllama (utils/constants.py TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING).
      {"mllama_text_model", "", BuildMllamaText, AllLinear(),
       NOTE("Llama 3.2 Vision text decoder (text_config of mllama): Llama 3 layers, cross-attention layers "
       "(cross_attention_layers: q/k/v/o, q/k RMSNorm, two tanh gates) and 8 extra embedding rows")},
      // The 2021-2023 decoders (PEFT's mapping lists all four).
      {"bloom", "", ON_DEMAND(BuildBloom), LoraDefaults{{"query_key_value"}, false},
       NOTE("BLOOM: ALiBi, word_embeddings_layernorm, fused query_key_value and dense with biases, LayerNorms with bias, "
       "dense_h_to_4h / dense_4h_to_h GELU MLP, tied embeddings")},
      {"opt", "", ON_DEMAND(BuildOpt), Qv(),
       NOTE("OPT: learned positions (max_position_embeddings + 2 rows), q/k/v/out_proj and fc1/fc2 with bias (enable_bias), "
       "LayerNorms, ReLU, tied embeddings; word_embed_proj_dim other than hidden_size (OPT-350m) refused")},
      {"gptj", "", ON_DEMAND(BuildGptJ), Qv(),
       NOTE("GPT-J: parallel residual behind one ln_1, q/k/v/out_proj without bias, fc_in/fc_out with bias, rotary_dim, "
       "untied lm_head with bias")},
      {"mpt", "", ON_DEMAND(BuildMpt), LoraDefaults{{"Wqkv"}, false},
       NOTE("MPT: ALiBi, fused Wqkv, out_proj, up_proj/down_proj (4 x d_model), no linear biases, LayerNorms without bias; "
       "attn_config nested")},
      // Pure state-space decoders (PEFT lists none: all linears).
      {"mamba", "", ON_DEMAND(BuildMamba), AllLinear(),
       NOTE("Mamba: one RMSNorm and one Mamba-1 mixer per layer (in_proj, conv1d, x_proj, dt_proj, A_log, D, out_proj), "
       "no attention, no MLP; tied embeddings")},
      {"mamba2", "", ON_DEMAND(BuildMamba2), AllLinear(),
       NOTE("Mamba-2: one RMSNorm and one Mamba-2 mixer per layer (in_proj, conv1d, dt_bias, A_log, D, gated norm, out_proj); "
       "untied lm_head by default")},
      {"falcon_mamba", "", ON_DEMAND(BuildFalconMamba), AllLinear(),
       NOTE("FalconMamba: the Mamba layout; the mixer's B / C / dt RMSNorms carry no weight")},
      // Mixture-of-experts decoders with their own layouts (PEFT lists neither: all linears).
      {"phimoe", "", ON_DEMAND(BuildPhimoe), AllLinear(),
       NOTE("Phi-3.5-MoE: q/k/v/o with bias (attention_bias), LayerNorms with bias, router \"gate\" and experts w1/w3/w2 "
       "of intermediate_size, lm_head with bias (lm_head_bias)")},
      {"dbrx", "", ON_DEMAND(BuildDbrx), AllLinear(),
       NOTE("DBRX: fused Wqkv (attn_config.kv_n_heads), out_proj, LayerNorms without bias, router and fused expert tensors "
       "w1/v1/w2 (not nn.Linear) of ffn_config.ffn_hidden_size, ffn_config.moe_num_experts / moe_top_k")},
      // LayerNorm decoders with partial rotary (PEFT: stablelm q_proj / v_proj).
      {"stablelm", "", ON_DEMAND(BuildStableLm), Qv(),
       NOTE("StableLM 3B / 2: q/k/v with bias (use_qkv_bias), o_proj, SwiGLU MLP without bias, LayerNorms with bias, "
       "per-head q/k LayerNorms (qk_layernorm), parallel residual without post_attention_layernorm (use_parallel_residual), "
       "partial_rotary_factor 0.25, untied")},
      {"gpt_neo", "", ON_DEMAND(BuildGptNeo), Qv(),
       NOTE("GPT-Neo: learned positions (max_position_embeddings), q/k/v without bias and out_proj with bias, c_fc / c_proj "
       "GELU MLP (intermediate_size, 4 x hidden when null), LayerNorms, tied embeddings; local layers (attention_types) "
       "mask beyond window_size with the same weights and a full cache")},
      {"codegen", "", ON_DEMAND(BuildCodeGen), LoraDefaults{{"qkv_proj"}, false},
       NOTE("CodeGen: GPT-J's parallel block behind one ln_1 with a fused qkv_proj and out_proj without bias, fc_in / fc_out "
       "with bias (n_inner), rotary_dim, untied lm_head with bias")},
      {"olmo", "", ON_DEMAND(BuildOlmo), AllLinear(),
       NOTE("OLMo 1: the Llama layer (q/k/v/o with attention_bias, SwiGLU MLP) with non-parametric LayerNorms (no weight, "
       "no bias) before attention, MLP and lm_head; clip_qkv adds no weight; PEFT lists none: all linears")},
      {"persimmon", "", ON_DEMAND(BuildPersimmon), AllLinear(),
       NOTE("Persimmon: fused query_key_value and dense with bias, one q / k LayerNorm(head_dim) with bias per layer "
       "(qk_layernorm), dense_h_to_4h / dense_4h_to_h ReLU^2 MLP with bias, LayerNorms with bias, partial_rotary_factor 0.5, "
       "untied lm_head; PEFT lists none: all linears")},
      // Fused-projection remote-code decoders (PEFT lists none: their own fused modules).
      {"internlm2", "", ON_DEMAND(BuildInternLm2), LoraDefaults{{"wqkv", "wo", "w1", "w2", "w3"}, false},
       NOTE("InternLM2 / 2.5 remote code: fused attention.wqkv (q heads of each kv group, then its k and v) and wo with "
       "bias (config.bias, default true), feed_forward.w1 / w3 / w2 SwiGLU without bias, attention_norm / ffn_norm "
       "RMSNorms, tok_embeddings, untied output")},
      // PEFT's current mapping has no baichuan entry; W_pack (q, k and v fused) is the module Baichuan LoRA
      // recipes target, the counterpart of Llama's q_proj / v_proj default.
      {"baichuan", "", ON_DEMAND(BuildBaichuan), LoraDefaults{{"W_pack"}, false},
       NOTE("Baichuan 1 / 2 remote code: fused self_attn.W_pack (h -> 3h, no bias) and o_proj, SwiGLU gate_proj / up_proj / "
       "down_proj, RMSNorms, untied lm_head (Baichuan 2's NormHead: one vocab x hidden weight); RoPE at hidden_size 4096 "
       "(7B), ALiBi otherwise (13B), as vLLM decides")},
      // Llama-derived decoders of transformers whose differences the generic reader misses (PEFT lists none: all linears).
      {"helium", "", ON_DEMAND(BuildHelium), AllLinear(),
       NOTE("Helium (kyutai): the Llama layer with q/k/v bias from attention_bias and o_proj always without, mlp_bias on the "
       "SwiGLU MLP, RMSNorms, untied unless tie_word_embeddings")},
      {"arcee", "", ON_DEMAND(BuildArcee), AllLinear(),
       NOTE("Arcee AFM: Llama attention (attention_bias on q/k/v/o, head_dim) with a non-gated up_proj / down_proj MLP of "
       "hidden_act relu2 (mlp_bias), RMSNorms, untied by default")},
      {"vaultgemma", "", ON_DEMAND(BuildVaultGemma), AllLinear(),
       NOTE("VaultGemma: Gemma 2 attention, tanh-GELU MLP and tied embeddings with only input_layernorm and "
       "pre_feedforward_layernorm per layer (no post-norms); sliding layers from layer_types, else the even layers")},
      {"cwm", "", ON_DEMAND(BuildCwm), AllLinear(),
       NOTE("CWM (Code World Model): the Llama layer without attention bias, mlp_bias on the SwiGLU MLP, untied; sliding layers "
       "from layer_types, else all but every fourth layer slide over sliding_window")},
      // MiniCPM (PEFT lists neither type: all linears).
      {"minicpm", "", ON_DEMAND(BuildMiniCpm), AllLinear(),
       NOTE("MiniCPM 1 / 2 / 4 remote code: the Llama layout (attention_bias on q/k/v/o), tied embeddings by default; "
       "scale_emb / scale_depth / dim_model_base scale activations and add no weight; with num_experts (MiniCPM-MoE) "
       "a router \"gate\" and experts w1 / w3 / w2 of intermediate_size; mixer_types hybrids refused")},
      {"minicpm3", "", ON_DEMAND(BuildMiniCpm3), AllLinear(),
       NOTE("MiniCPM3: DeepSeek-V2's multi-head latent attention (q_a_proj / q_a_layernorm / q_b_proj, kv_a_proj_with_mqa / "
       "kv_a_layernorm / kv_b_proj, o_proj; v_head_dim = hidden / heads unless set) with the Llama SwiGLU MLP and RMSNorms, "
       "tied embeddings by default; the muP scalings add no weight")},
      {"chatglm", "", ON_DEMAND(BuildChatGlm), LoraDefaults{{"query_key_value"}, false},
       NOTE("ChatGLM2 / 3, GLM-4-9B remote code: embedding of padded_vocab_size rows, fused query_key_value (kv_channels, "
       "multi_query_group_num kv heads; bias add_qkv_bias), dense, fused dense_h_to_4h SwiGLU and dense_4h_to_h (bias "
       "add_bias_linear), RMSNorms (rmsnorm) or LayerNorms with bias, final_layernorm (post_layer_norm), untied output_layer")},
      // Mixture-of-experts layouts read from their modeling files (PEFT lists none: all linears).
      {"jetmoe", "", ON_DEMAND(BuildJetMoe), AllLinear(),
       NOTE("JetMoE: mixture of attention heads (per-expert query experts.input_linear and output experts.output_linear, "
       "router, bias; one shared kv_proj, kv_heads x top_k query heads) and a MoE MLP (router, fused gated experts "
       "input_linear / output_linear, bias) in every block; expert tensors are not nn.Linear (no LoRA target), tied embeddings")},
      {"afmoe", "", ON_DEMAND(BuildAfmoe), AllLinear(),
       NOTE("Arcee AFMoE (Trinity): q/k/v/o with q_norm / k_norm per head and a sigmoid output gate gate_proj, four RMSNorms "
       "per layer, num_dense_layers SwiGLU layers, then a sigmoid router \"gate\" with an fp32 expert_bias, experts and "
       "shared_experts of moe_intermediate_size; sliding layers per layer_types / global_attn_every_n_layers, untied")},
      {"longcat_flash", "", ON_DEMAND(BuildLongcatFlash), AllLinear(),  // PEFT lists none: all linears
       NOTE("LongCat-Flash: num_layers layers of two MLA sublayers (self_attn.0 / .1) and two dense SwiGLU mlps.0 / .1 of "
       "ffn_hidden_size, four RMSNorms, and one shortcut MoE: router.classifier over n_routed_experts + zero_expert_num "
       "slots with e_score_correction_bias, n_routed_experts experts of expert_ffn_hidden_size, identity zero experts "
       "without weights, moe_topk slots per token; the MTP layer (own embed_tokens, no head) counts in checkpoint_total")},
      {"mimo_v2_flash", "", ON_DEMAND(BuildMiMoV2Flash), AllLinear(),  // PEFT lists none: all linears
       NOTE("Xiaomi MiMo-V2-Flash: per hybrid_layer_pattern (or layer_types) full-attention layers of num_key_value_heads and "
       "sliding-window layers of swa_num_key_value_heads (native port: twice num_key_value_heads) over sliding_window_size "
       "with an attention_sink_bias per head; q/k of head_dim, v of v_head_dim, o_proj bias-free; a dense SwiGLU MLP or "
       "(moe_layer_freq / mlp_layer_types) a router \"gate\" with e_score_correction_bias and n_routed_experts experts, no "
       "shared expert; untied; the 3 MTP blocks, and with FP8 the block scales (not on o_proj, kept bf16), count in checkpoint_total")},
      // Other spellings of the same layouts.
      {"RefinedWeb", "falcon", BuildFalcon, LoraDefaults{{"query_key_value"}, false}, NOTE("Falcon's remote-code model_type")},
      {"RefinedWebModel", "falcon", BuildFalcon, LoraDefaults{{"query_key_value"}, false}, NOTE("Falcon's remote-code model_type")},
      {"stablelm_epoch", "stablelm", ON_DEMAND(BuildStableLm), Qv(),
       NOTE("StableLM remote code before conversion (StableLMEpochForCausalLM: stablelm-3b-4e1t, stable-code-3b): StableLM's "
       "parameters; rotary fraction rope_pct unless partial_rotary_factor, norm epsilon norm_eps")},
      {"ministral", "mistral", BuildMistral, Qv(),
       NOTE("Ministral-8B-Instruct-2410 as transformers converts it (MinistralForCausalLM, modular_ministral.py): Mistral's "
       "weights (q/k/v/o without bias, SwiGLU, RMSNorm, untied); sliding layers from layer_types, else sliding_window on every layer")},
      {"ministral3", "mistral", BuildMistral, Qv(),
       NOTE("Ministral 3 / Devstral 2 text decoder (text_config of mistral3): transformers builds it from Mistral's attention, "
       "MLP and decoder layer (modular_ministral3.py); llama_4_scaling_beta scales queries and changes no weight")},
      {"kimi_k2", "deepseek_v3", BuildDeepseekV2, AllLinear(),
       NOTE("Kimi K2: the DeepSeek-V3 layout; the router's correction bias follows topk_method (\"noaux_tc\")")},
      // A text_config saved on its own (Gemma4UnifiedForCausalLM, transformers models/gemma4_unified): the
      // Gemma 4 decoder the gemma4_unified wrapper already reads its text_config with.
      {"gemma4_unified_text", "gemma4_text", BuildGemma4Text, AllLinear(),
       NOTE("Gemma 4 12B's text decoder saved on its own: the gemma4_text layout")},
  };
}

}  // namespace

const std::vector<ModelFamily>& ModelFamilies() {
  static const std::vector<ModelFamily> kFamilies = MakeFamilies();
  return kFamilies;
}

TowerCount Gemma3nTowerCount() { return ON_DEMAND(&CountGemma3nTowers); }

const ModelFamily* FindModelFamily(std::string_view model_type) {
  for (const ModelFamily& f : ModelFamilies()) {
    if (f.model_type == model_type) return &f;
  }
  return nullptr;
}

const ModelFamily& GenericFamily() {
  static const ModelFamily kGeneric{"generic", "", BuildLlama, Qv(), "any other model_type: read as Llama (with a warning)"};
  return kGeneric;
}

}  // namespace vramplan::families
