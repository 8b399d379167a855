// The JSON spelling of every scenario enum, in one place (parsing and serializing share it).
#pragma once

#include "io/json_reader.h"
#include "vramplan/scenario.h"

namespace vramplan::io {

inline constexpr EnumName<Mode> kModeNames[] = {{"train", Mode::kTrain}, {"inference", Mode::kInference}};
inline constexpr EnumName<ModelReading> kModelReadingNames[] = {{"exact", ModelReading::kExact},
                                                                {"approximate", ModelReading::kApproximate}};
inline constexpr EnumName<TrainMethod> kMethodNames[] = {
    {"full", TrainMethod::kFull}, {"freeze", TrainMethod::kFreeze}, {"lora", TrainMethod::kLora}, {"qlora", TrainMethod::kQlora}};
inline constexpr EnumName<Precision> kPrecisionNames[] = {
    {"fp32", Precision::kFp32},         {"fp16", Precision::kFp16},           {"bf16", Precision::kBf16},
    {"amp_fp16", Precision::kAmpFp16},  {"amp_bf16", Precision::kAmpBf16},    {"mixed_fp16", Precision::kMixedFp16},
    {"mixed_bf16", Precision::kMixedBf16}};
inline constexpr EnumName<Optimizer> kOptimizerNames[] = {
    {"adamw", Optimizer::kAdamW},   {"adamw_8bit", Optimizer::kAdamW8bit}, {"paged_adamw_8bit", Optimizer::kPagedAdamW8bit},
    {"adafactor", Optimizer::kAdafactor}, {"sgd", Optimizer::kSgd},      {"sgd_momentum", Optimizer::kSgdMomentum},
    {"lion", Optimizer::kLion}};
inline constexpr EnumName<OptimizerImpl> kOptimizerImplNames[] = {
    {"foreach", OptimizerImpl::kForeach}, {"fused", OptimizerImpl::kFused}, {"for_loop", OptimizerImpl::kForLoop}};
inline constexpr EnumName<Checkpointing> kCheckpointingNames[] = {
    {"false", Checkpointing::kNone}, {"true", Checkpointing::kFull}, {"selective", Checkpointing::kSelective}};
inline constexpr EnumName<AttentionImpl> kAttentionNames[] = {
    {"eager", AttentionImpl::kEager}, {"sdpa", AttentionImpl::kSdpa}, {"flash", AttentionImpl::kFlash}};
inline constexpr EnumName<LossImpl> kLossNames[] = {
    {"standard", LossImpl::kStandard}, {"chunked", LossImpl::kChunked}, {"fused_linear", LossImpl::kFusedLinear}, {"unsloth", LossImpl::kUnsloth}, {"cce", LossImpl::kCce}};
inline constexpr EnumName<LayerKernels> kLayerKernelsNames[] = {
    {"pytorch", LayerKernels::kPytorch}, {"unsloth", LayerKernels::kUnsloth}, {"liger", LayerKernels::kLiger}};
inline constexpr EnumName<AdapterDtype> kAdapterDtypeNames[] = {{"fp32", AdapterDtype::kFp32}, {"base", AdapterDtype::kBase}};
inline constexpr EnumName<QloraBackend> kQloraBackendNames[] = {
    {"bitsandbytes", QloraBackend::kBitsandbytes}, {"gptq", QloraBackend::kGptq}, {"torchao", QloraBackend::kTorchao}};
inline constexpr EnumName<Objective> kObjectiveNames[] = {
    {"sft", Objective::kSft}, {"dpo", Objective::kDpo}, {"ipo", Objective::kIpo},
    {"orpo", Objective::kOrpo}, {"simpo", Objective::kSimpo}, {"kto", Objective::kKto},
    {"grpo", Objective::kGrpo}, {"ppo", Objective::kPpo}};
inline constexpr EnumName<VllmMode> kVllmModeNames[] = {{"colocate", VllmMode::kColocate}, {"server", VllmMode::kServer}};
inline constexpr EnumName<ModelLoad> kModelLoadNames[] = {{"direct", ModelLoad::kDirect}, {"torchtune_0_1", ModelLoad::kTorchtune01}};
inline constexpr EnumName<WeightFormat> kWeightFormatNames[] = {
    {"fp32", WeightFormat::kFp32},           {"fp16", WeightFormat::kFp16},           {"bf16", WeightFormat::kBf16},
    {"fp8", WeightFormat::kFp8},             {"int8", WeightFormat::kInt8},           {"nf4", WeightFormat::kNf4},
    {"gptq_4bit", WeightFormat::kGptq4},     {"awq_4bit", WeightFormat::kAwq4},
    {"gptq_8bit", WeightFormat::kGptq8},     {"mxfp4", WeightFormat::kMxfp4},         {"gguf_q8_0", WeightFormat::kGgufQ8_0},
    {"gguf_q6_k", WeightFormat::kGgufQ6_K},  {"gguf_q5_k_m", WeightFormat::kGgufQ5_K_M}, {"gguf_q5_k_s", WeightFormat::kGgufQ5_K_S},
    {"gguf_q4_k_m", WeightFormat::kGgufQ4_K_M}, {"gguf_q4_k_s", WeightFormat::kGgufQ4_K_S}, {"gguf_q4_0", WeightFormat::kGgufQ4_0},
    {"gguf_q3_k_m", WeightFormat::kGgufQ3_K_M}, {"gguf_q2_k", WeightFormat::kGgufQ2_K},   {"gguf_iq4_xs", WeightFormat::kGgufIq4_Xs},
    {"gguf_iq3_xxs", WeightFormat::kGgufIq3_Xxs}, {"gguf_iq2_xxs", WeightFormat::kGgufIq2_Xxs}};
inline constexpr EnumName<KvDtype> kKvDtypeNames[] = {
    {"auto", KvDtype::kAuto}, {"fp32", KvDtype::kFp32}, {"fp16", KvDtype::kFp16}, {"bf16", KvDtype::kBf16},
    {"fp8", KvDtype::kFp8},   {"int8", KvDtype::kInt8}, {"int4", KvDtype::kInt4}};
inline constexpr EnumName<Engine> kEngineNames[] = {
    {"transformers", Engine::kTransformers}, {"vllm", Engine::kVllm}, {"llama_cpp", Engine::kLlamaCpp}};
inline constexpr EnumName<VllmVersion> kVllmVersionNames[] = {
    {"0.21+", VllmVersion::kV0_21Plus}, {"0.8-0.20", VllmVersion::kV1_0_8To0_20}, {"0.6-0.10_v0", VllmVersion::kV0Engine}};
// "mtp" and the per-model names vLLM still accepts and maps to it (speculative.py __post_init__:
// "method `...` is deprecated and replaced with mtp"); the echo writes "mtp".
inline constexpr EnumName<SpeculativeMethod> kSpeculativeMethodNames[] = {
    {"none", SpeculativeMethod::kNone},          {"mtp", SpeculativeMethod::kMtp},
    {"deepseek_mtp", SpeculativeMethod::kMtp},   {"glm4_moe_mtp", SpeculativeMethod::kMtp},
    {"qwen3_next_mtp", SpeculativeMethod::kMtp}, {"qwen3_5_mtp", SpeculativeMethod::kMtp}};
inline constexpr EnumName<MmprojType> kMmprojNames[] = {
    {"none", MmprojType::kNone}, {"f16", MmprojType::kF16}, {"bf16", MmprojType::kBf16}, {"f32", MmprojType::kF32}, {"q8_0", MmprojType::kQ8_0}};
inline constexpr EnumName<LogitsKept> kLogitsNames[] = {{"last", LogitsKept::kLast}, {"all", LogitsKept::kAll}};
inline constexpr EnumName<Offload> kOffloadNames[] = {{"none", Offload::kNone}, {"cpu", Offload::kCpu}, {"nvme", Offload::kNvme}};
inline constexpr EnumName<FrameworkPreset> kFrameworkPresetNames[] = {
    {"current", FrameworkPreset::kCurrent}, {"torch_1_13_hf_4_44", FrameworkPreset::kTorch113Hf444},
    {"torch_2_hf_4_46", FrameworkPreset::kTorch2Hf446}};
inline constexpr EnumName<PipelineSchedule> kPipelineScheduleNames[] = {
    {"1f1b", PipelineSchedule::k1F1B}, {"interleaved_1f1b", PipelineSchedule::kInterleaved1F1B}, {"gpipe", PipelineSchedule::kGpipe}};
inline constexpr EnumName<ContextParallelKind> kContextParallelKindNames[] = {
    {"ring", ContextParallelKind::kRing}, {"ulysses", ContextParallelKind::kUlysses}};
inline constexpr EnumName<Trainer> kTrainerNames[] = {{"hf", Trainer::kHf}, {"megatron", Trainer::kMegatron}, {"torchtitan", Trainer::kTorchtitan}};
inline constexpr EnumName<RecomputeMethod> kRecomputeMethodNames[] = {{"uniform", RecomputeMethod::kUniform}, {"block", RecomputeMethod::kBlock}};
inline constexpr EnumName<FsdpSharding> kFsdpShardingNames[] = {
    {"full_shard", FsdpSharding::kFullShard}, {"shard_grad_op", FsdpSharding::kShardGradOp},
    {"no_shard", FsdpSharding::kNoShard}, {"hybrid_shard", FsdpSharding::kHybridShard}};
inline constexpr EnumName<Device> kDeviceNames[] = {{"cuda", Device::kCuda}, {"cpu", Device::kCpu}};

}  // namespace vramplan::io
