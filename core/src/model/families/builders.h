// One builder per model_type: config.json (already typed-read through ConfigReader) -> ModelSpec.
// `spec` arrives with model_type, architecture and max_position_embeddings set. Each builder reads
// the real key names of its family, with transformers' configuration_*.py defaults where a key is
// absent, and sets every linear's and norm's slot. The registry (registry.h) maps model_type to
// these; the files are grouped by family: llama_like.cpp, gemma.cpp, olmo.cpp, moe.cpp,
// deepseek.cpp, gpt_oss.cpp, phi.cpp, qwen1.cpp, gpt2_neox_falcon.cpp, bigcode.cpp, cohere.cpp,
// granite.cpp.
#pragma once

#include "model/families/config_reader.h"
#include "vramplan/error.h"
#include "vramplan/model_spec.h"

namespace vramplan::families {

using Builder = Expected<ModelSpec> (*)(ConfigReader& config, ModelSpec spec);

// llama_like.cpp
Expected<ModelSpec> BuildLlama(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildMistral(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildQwen2(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildQwen3(ConfigReader& c, ModelSpec spec);
// gemma.cpp
Expected<ModelSpec> BuildGemma(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildGemma2(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildGemma3Text(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildVaultGemma(ConfigReader& c, ModelSpec spec);
// olmo.cpp
Expected<ModelSpec> BuildOlmo(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildOlmo2(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildOlmo3(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildExaone4(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildGlm(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildGlm4(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildGlm4MoeLite(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildSeedOss(ConfigReader& c, ModelSpec spec);
// moe.cpp
Expected<ModelSpec> BuildMixtral(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildQwen2Moe(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildQwen3Moe(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildOlmoe(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildFlexOlmo(ConfigReader& c, ModelSpec spec);
// deepseek.cpp
Expected<ModelSpec> BuildDeepseekV2(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildDeepseekV3(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildDeepseekV32(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildDeepseekV4(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildGlmMoeDsa(ConfigReader& c, ModelSpec spec);
// gpt_oss.cpp
Expected<ModelSpec> BuildGptOss(ConfigReader& c, ModelSpec spec);
// phi.cpp
Expected<ModelSpec> BuildPhi(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildPhi3(ConfigReader& c, ModelSpec spec);
// qwen1.cpp
Expected<ModelSpec> BuildQwen1(ConfigReader& c, ModelSpec spec);
// smollm3.cpp
Expected<ModelSpec> BuildSmolLm3(ConfigReader& c, ModelSpec spec);
// gqa_moe.cpp
Expected<ModelSpec> BuildGlm4Moe(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildMiniMaxM2(ConfigReader& c, ModelSpec spec);
// minimax_text01.cpp (Lightning attention hybrids: MiniMax-Text-01, MiniMax-M1)
Expected<ModelSpec> BuildMiniMaxText01(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildDots1(ConfigReader& c, ModelSpec spec);
// gqa_moe.cpp: an unknown model_type whose config names routed experts with the standard keys.
Expected<ModelSpec> BuildGenericMoe(ConfigReader& c, ModelSpec spec);
// gpt2_neox_falcon.cpp
Expected<ModelSpec> BuildGpt2(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildGptNeox(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildFalcon(ConfigReader& c, ModelSpec spec);
// kimi_linear.cpp (Kimi Delta Attention and MLA hybrids)
Expected<ModelSpec> BuildKimiLinear(ConfigReader& c, ModelSpec spec);
// qwen3_next.cpp (Gated DeltaNet hybrids)
Expected<ModelSpec> BuildQwen3Next(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildQwen35Text(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildQwen35MoeText(ConfigReader& c, ModelSpec spec);
// ernie.cpp
Expected<ModelSpec> BuildErnie45(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildErnie45Moe(ConfigReader& c, ModelSpec spec);
// llama4.cpp (the text_config of llama4)
Expected<ModelSpec> BuildLlama4Text(ConfigReader& c, ModelSpec spec);
// mimo.cpp (Xiaomi MiMo-V2-Flash: hybrid sliding / full attention, sinks, DeepSeek-style MoE)
Expected<ModelSpec> BuildMiMoV2Flash(ConfigReader& c, ModelSpec spec);
// gemma4.cpp (the text_config of gemma4)
Expected<ModelSpec> BuildGemma4Text(ConfigReader& c, ModelSpec spec);
// gemma3n.cpp (the text_config of gemma3n)
Expected<ModelSpec> BuildGemma3nText(ConfigReader& c, ModelSpec spec);
// mllama.cpp (the text_config of mllama)
Expected<ModelSpec> BuildMllamaText(ConfigReader& c, ModelSpec spec);
// mamba_hybrids.cpp (Mamba-1 / Mamba-2 hybrids)
Expected<ModelSpec> BuildNemotronH(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildGraniteMoeHybrid(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildFalconH1(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildJamba(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildBamba(ConfigReader& c, ModelSpec spec);
// bigcode.cpp (StarCoder2, StarCoder 1 / SantaCoder)
Expected<ModelSpec> BuildStarcoder2(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildGptBigCode(ConfigReader& c, ModelSpec spec);
// cohere.cpp (Command-R, Command R7B / A)
Expected<ModelSpec> BuildCohere(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildCohere2(ConfigReader& c, ModelSpec spec);
// granite.cpp (Granite 3.x dense and MoE)
Expected<ModelSpec> BuildGranite(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildGraniteMoe(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildGraniteMoeShared(ConfigReader& c, ModelSpec spec);
// apertus.cpp
Expected<ModelSpec> BuildApertus(ConfigReader& c, ModelSpec spec);
// nemotron.cpp
Expected<ModelSpec> BuildNemotron(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildArcee(ConfigReader& c, ModelSpec spec);
// bitnet.cpp
Expected<ModelSpec> BuildBitNet(ConfigReader& c, ModelSpec spec);
// bailing.cpp
Expected<ModelSpec> BuildBailingMoe(ConfigReader& c, ModelSpec spec);
// exaone.cpp
Expected<ModelSpec> BuildExaone(ConfigReader& c, ModelSpec spec);
// hunyuan.cpp
Expected<ModelSpec> BuildHunyuanV1Dense(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildHunyuanV1Moe(ConfigReader& c, ModelSpec spec);
// bloom_mpt.cpp (ALiBi decoders)
Expected<ModelSpec> BuildBloom(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildMpt(ConfigReader& c, ModelSpec spec);
// opt_gptj.cpp
Expected<ModelSpec> BuildOpt(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildGptJ(ConfigReader& c, ModelSpec spec);
// GPT-J's model with its attention projections separate (GPT-J) or fused into qkv_proj (CodeGen).
enum class GptJAttention { kSeparateQkv, kFusedQkv };
Expected<ModelSpec> BuildGptJStyle(ConfigReader& c, ModelSpec spec, GptJAttention attention);
// mamba.cpp (pure state-space decoders)
Expected<ModelSpec> BuildMamba(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildMamba2(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildFalconMamba(ConfigReader& c, ModelSpec spec);
// phimoe_dbrx.cpp
Expected<ModelSpec> BuildPhimoe(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildDbrx(ConfigReader& c, ModelSpec spec);
// lfm2.cpp (gated short-convolution hybrids)
Expected<ModelSpec> BuildLfm2(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildLfm2Moe(ConfigReader& c, ModelSpec spec);
// stablelm_persimmon.cpp (LayerNorm decoders with partial rotary and q / k norms)
Expected<ModelSpec> BuildStableLm(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildPersimmon(ConfigReader& c, ModelSpec spec);
// gpt_neo_codegen.cpp
Expected<ModelSpec> BuildGptNeo(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildCodeGen(ConfigReader& c, ModelSpec spec);

// minicpm.cpp (MiniCPM 1 / 2 / 4 dense and MiniCPM-MoE; MiniCPM3's MLA)
Expected<ModelSpec> BuildMiniCpm(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildMiniCpm3(ConfigReader& c, ModelSpec spec);

// internlm2_baichuan.cpp (fused-projection remote-code decoders)
Expected<ModelSpec> BuildInternLm2(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildBaichuan(ConfigReader& c, ModelSpec spec);
// llama_derived.cpp (Llama's modules with a changed bias or layer rule)
Expected<ModelSpec> BuildHelium(ConfigReader& c, ModelSpec spec);
Expected<ModelSpec> BuildCwm(ConfigReader& c, ModelSpec spec);
// chatglm.cpp (ChatGLM2 / 3, GLM-4-9B remote code)
Expected<ModelSpec> BuildChatGlm(ConfigReader& c, ModelSpec spec);
// jetmoe.cpp (mixture of attention heads and MoE MLP)
Expected<ModelSpec> BuildJetMoe(ConfigReader& c, ModelSpec spec);
// afmoe.cpp (Arcee Trinity)
Expected<ModelSpec> BuildAfmoe(ConfigReader& c, ModelSpec spec);
// longcat.cpp (LongCat-Flash: two MLA sublayers per layer and a shortcut MoE with zero experts)
Expected<ModelSpec> BuildLongcatFlash(ConfigReader& c, ModelSpec spec);

}  // namespace vramplan::families
