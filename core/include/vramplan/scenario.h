// Scenario v1: everything the user chooses (model, task, setup, hardware). Plain structs with
// defaults matching common practice; units are in the field names or comments. The JSON form
// (docs/schema.md) maps 1:1 onto these structs and is shared by the CLI, the WASM API, the page's
// URL state and the test fixtures.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vramplan/model_spec.h"

namespace vramplan {

inline constexpr int kSchemaVersion = 1;

// The validator's ranges for token counts (seq_len, prompt_len, new_tokens, max_model_len, n_ctx)
// and batch sizes (micro_batch_size, batch_size, max_num_seqs). The inverse searches answer within
// them, so every answer is itself a scenario the validator accepts.
inline constexpr int64_t kMaxTokens = int64_t{1} << 24;  // 16M tokens
inline constexpr int64_t kMaxBatch = int64_t{1} << 16;
// The validator's largest parallel.gpus (training.min_gpus searches up to it).
inline constexpr int64_t kMaxGpus = int64_t{1} << 20;

enum class Mode { kTrain, kInference };
enum class TrainMethod { kFull, kFreeze, kLora, kQlora };
enum class Precision { kFp32, kFp16, kBf16, kAmpFp16, kAmpBf16, kMixedFp16, kMixedBf16 };
enum class Optimizer { kAdamW, kAdamW8bit, kPagedAdamW8bit, kAdafactor, kSgd, kSgdMomentum, kLion };
enum class OptimizerImpl { kForeach, kFused, kForLoop };
enum class Checkpointing { kNone, kFull, kSelective };
enum class AttentionImpl { kEager, kSdpa, kFlash };
// kCce: Apple's Cut Cross Entropy (apple/ml-cross-entropy), unsloth's loss since 2024.12 and axolotl's
// `cut_cross_entropy` plugin (train/logits_loss.cpp).
enum class LossImpl { kStandard, kChunked, kFusedLinear, kUnsloth, kCce };
// The decoder layer's kernels (docs/frameworks.md "Layer kernels"): PyTorch modules (HF + PEFT), unsloth's
// autograd Functions (fast RMSNorm, RoPE, LoRA MLP / QKV / O) or Liger's (RMSNorm, SwiGLU, RoPE).
enum class LayerKernels { kPytorch, kUnsloth, kLiger };
enum class AdapterDtype { kFp32, kBase };
enum class QloraBackend { kBitsandbytes, kGptq, kTorchao };
// The training objective (TRL's trainers; docs/post_training.md): supervised fine-tuning, or a
// preference objective whose step forwards chosen and rejected completions (DPO, IPO: with a
// reference model; ORPO, SimPO: without one) or unpaired completions with a reference (KTO); or
// online RL whose step generates completions first (GRPO, PPO: train.rollout).
enum class Objective { kSft, kDpo, kIpo, kOrpo, kSimpo, kKto, kGrpo, kPpo };
// TRL GRPOConfig vllm_mode: vLLM in the trainer's process on the training GPUs, or a separate server.
enum class VllmMode { kColocate, kServer };
enum class WeightFormat {
  kFp32, kFp16, kBf16, kFp8, kInt8, kNf4, kGptq4, kAwq4, kGptq8, kMxfp4,
  kGgufQ8_0, kGgufQ6_K, kGgufQ5_K_M, kGgufQ5_K_S, kGgufQ4_K_M, kGgufQ4_K_S, kGgufQ4_0,
  kGgufQ3_K_M, kGgufQ2_K, kGgufIq4_Xs, kGgufIq3_Xxs, kGgufIq2_Xxs
};
enum class KvDtype { kAuto, kFp32, kFp16, kBf16, kFp8, kInt8, kInt4 };
enum class Engine { kTransformers, kVllm, kLlamaCpp };
// vLLM releases whose start-up memory accounting differs (docs/inference.md, "vLLM versions"):
// 0.21+ subtracts its CUDA-graph estimate from the KV budget; 0.8-0.20 (V1 engine) captures the
// graphs after the KV pool, on top of gpu_memory_utilization; the V0 engine (0.6.4-0.10 with
// VLLM_USE_V1=0) also defaults max_num_batched_tokens to max_model_len.
enum class VllmVersion { kV0_21Plus, kV1_0_8To0_20, kV0Engine };
enum class LogitsKept { kLast, kAll };
// vLLM speculative decoding (`--speculative-config`): none, or the checkpoint's own
// multi-token-prediction layers as the draft (method "mtp"; vllm/config/speculative.py).
enum class SpeculativeMethod { kNone, kMtp };
// llama.cpp `--mmproj`: the projector GGUF's file type (none: no projector loaded).
enum class MmprojType { kNone, kF16, kBf16, kF32, kQ8_0 };
enum class Offload { kNone, kCpu, kNvme };
enum class FrameworkPreset { kCurrent, kTorch113Hf444, kTorch2Hf446 };
enum class Device { kCuda, kCpu };
// How the model reaches the GPU (train/load_phase.h): "direct" materializes every weight once
// (from_pretrained, meta-device init + load); torchtune 0.1.x recipes build one decoder layer on
// the GPU, deepcopy it per layer, then load_state_dict (with torchao 0.1 NF4 for QLoRA).
enum class ModelLoad { kDirect, kTorchtune01 };
// Pipeline schedules (Megatron-LM megatron/core/pipeline_parallel/schedules.py; torchtitan's
// pipeline_parallel_schedule): how many micro-batches a stage holds in flight (parallel/pipeline.h).
enum class PipelineSchedule { k1F1B, kInterleaved1F1B, kGpipe };
// Context parallelism: ring attention (K/V blocks passed around the ring: Megatron/TransformerEngine
// cp_comm_type "p2p", torchtitan) or DeepSpeed-Ulysses (all-to-all over the heads: "a2a").
enum class ContextParallelKind { kRing, kUlysses };
// The code that runs the model, which decides what each layer saves and how model states are kept:
// transformers models (HF Trainer / accelerate / TRL, with DeepSpeed or FSDP), Megatron-LM /
// Megatron-core (NeMo) with TransformerEngine, torchtitan (FSDP2 / DTensor).
enum class Trainer { kHf, kMegatron, kTorchtitan };
// Megatron's --recompute-method with full recomputation (megatron/core/transformer/
// transformer_block.py _checkpointed_forward): `uniform` checkpoints chunks of recompute_num_layers
// layers (each keeps its chunk's input), `block` checkpoints the first recompute_num_layers layers of
// each pipeline stage and keeps everything of the rest.
enum class RecomputeMethod { kUniform, kBlock };
// FSDP's ShardingStrategy (torch/distributed/fsdp/api.py): FULL_SHARD (parameters, gradients and
// optimizer states sharded, units resharded after their forward), SHARD_GRAD_OP (parameters stay
// unsharded from forward to backward), NO_SHARD (DDP-like), HYBRID_SHARD (FULL_SHARD inside a node,
// replicated across nodes).
enum class FsdpSharding { kFullShard, kShardGradOp, kNoShard, kHybridShard };

struct LoraConfig {
  int64_t rank = 16;
  double alpha = 32;
  bool all_linear = false;                  // targets: "all-linear"
  // Empty when not given: resolved per model type to PEFT's default (q_proj/v_proj for Llama-like
  // models, c_attn for GPT-2, query_key_value for GPT-NeoX/Falcon, qkv_proj for Phi-3).
  std::vector<std::string> targets;
  std::vector<std::string> modules_to_save;  // e.g. {"embed_tokens", "lm_head"}: full trainable copies
  double dropout = 0.0;
  AdapterDtype adapter_dtype = AdapterDtype::kFp32;  // PEFT >= 0.12 autocast_adapter_dtype=True
  bool use_dora = false;  // PEFT DoRA: a magnitude vector per adapted output, weight-norm rescaling
};

struct FreezeConfig {
  int64_t trainable_layers = 2;  // the last N decoder layers train (LLaMA-Factory default 2)
  bool train_embeddings = false;
  bool train_lm_head = false;
};

// The rollout of GRPO / PPO, named as TRL's GRPOConfig / PPOConfig spell it (docs/post_training.md
// lists verl's and OpenRLHF's names). The step's sequences are train.seq_len tokens: the prompt and
// max_completion_length generated tokens; train.micro_batch_size counts completions (TRL
// per_device_train_batch_size).
struct RolloutConfig {
  int64_t num_generations = 8;           // completions per prompt (GRPO)
  int64_t max_completion_length = 512;   // generated tokens per completion (PPO: response_length)
  bool use_vllm = false;                 // false: transformers generate() on the policy
  VllmMode vllm_mode = VllmMode::kColocate;
  double vllm_gpu_memory_utilization = 0.3;  // colocate: TRL's default; server: the server's own setting
  int64_t vllm_tensor_parallel_size = 1;     // GPUs of one vLLM engine (server mode: the server's GPUs)
  // vLLM sleep between generations: 0 none, 1 weights offloaded to host RAM + KV discarded, 2 both
  // discarded (TRL vllm_enable_sleep_mode sleeps at level 2; verl free_cache_engine).
  int64_t vllm_sleep_level = 0;
  double beta = 0.0;                     // KL coefficient; 0 loads no reference model (GRPO)
  int64_t steps_per_generation = 0;      // 0: grad_accum_steps (TRL)
  int64_t logprob_batch_size = 0;        // rows per no-grad log-prob chunk; 0: micro_batch_size (GRPO), 64 (PPO)
};

struct TrainConfig {
  TrainMethod method = TrainMethod::kLora;
  Precision precision = Precision::kBf16;  // bf16 weights, as most fine-tunes load them
  // 16-bit weights *and* torch.autocast (HF Trainer bf16=True on a bf16 model, LLaMA-Factory):
  // fp32 adapters and losses the model does not upcast itself run through autocast's casts.
  bool autocast = false;
  bool float8 = false;
  bool activation_offload = false;  // saved activations to host RAM (model-parallel step; warned elsewhere)  // float8 linears (torchao Float8Linear, TransformerEngine fp8): not modeled, warned
  Optimizer optimizer = Optimizer::kAdamW;
  std::optional<OptimizerImpl> optimizer_impl;  // default: what PyTorch picks on the device
  int64_t micro_batch_size = 1;
  int64_t seq_len = 2048;  // tokens per sample (padded/packed length)
  int64_t grad_accum_steps = 1;
  Checkpointing gradient_checkpointing = Checkpointing::kFull;  // LLaMA-Factory/torchtune/Unsloth default
  AttentionImpl attention = AttentionImpl::kSdpa;
  RecomputeMethod recompute_method = RecomputeMethod::kUniform;
  int64_t recompute_num_layers = 0;  // 0: uniform = 1 layer per chunk, block = every layer of the stage
  LossImpl loss = LossImpl::kStandard;
  LayerKernels kernels = LayerKernels::kPytorch;
  // torchtune optimizer_in_bwd (training/memory.py register_optim_in_bwd_hooks): each parameter's
  // optimizer steps in its post-accumulate-grad hook and its gradient is set to None at once.
  bool optimizer_in_backward = false;
  // Batches as they are: packed (every micro-batch is seq_len tokens) or padded per batch (dynamic
  // padding: seq_len is the longest batch, typical_seq_len the usual one; 0 = seq_len).
  bool packing = true;
  int64_t typical_seq_len = 0;
  LoraConfig lora;
  int qlora_bits = 4;  // 4 (NF4 + double quant), 8 (LLM.int8), 2 (HQQ/AQLM-style 2-bit)
  bool qlora_double_quant = true;
  // Which library holds the frozen quantized base: bitsandbytes (Linear4bit / Linear8bitLt), a
  // GPTQ checkpoint run by auto-gptq / optimum QuantLinear (group-wise, packed int32), or torchao's
  // NF4Tensor (torchtune's QLoRA: 4-bit only).
  QloraBackend qlora_backend = QloraBackend::kBitsandbytes;
  int qlora_group_size = 128;  // GPTQ group size; -1 = one group per input column set (per channel)
  FreezeConfig freeze;
  Objective objective = Objective::kSft;
  // TRL DPOConfig/KTOConfig precompute_ref_log_probs: the reference log-probs are computed once
  // before training, so no reference model is resident and no reference forward runs in the step.
  bool precompute_ref_log_probs = false;
  // DPO / IPO: the weight of TRL's "sft" loss term (RPO: DPOConfig loss_type ["sigmoid", "sft"] with
  // loss_weights [1, alpha] in TRL v1.9, `rpo_alpha` in older TRL and ms-swift): the chosen
  // completions' cross-entropy on the policy's logits. 0 = off; any other value adds the same memory.
  double rpo_alpha = 0.0;
  // GRPO / PPO: the rollout (generation) and the log-prob passes (docs/post_training.md).
  RolloutConfig rollout;
  // Vision-language models (docs/models.md "Image inputs"): images per sample, each image_height x
  // image_width pixels before the processor resizes it; image_max_pixels: a pre-resize cap
  // (LLaMA-Factory image_max_pixels, its default 768 x 768; 0: none). seq_len counts the text
  // tokens, the image tokens come on top. The tower and projector train only when unfrozen
  // (LLaMA-Factory freeze_vision_tower / freeze_multi_modal_projector, both true by default).
  int64_t images_per_sample = 0;
  int64_t image_height = 1024;
  int64_t image_width = 1024;
  int64_t image_max_pixels = 0;
  bool freeze_vision_tower = true;
  bool freeze_multi_modal_projector = true;
  // Video inputs (docs/models.md "Video inputs"; the Qwen-VL families): videos per sample, each
  // video_frames frames (after the loader's sampling) of video_height x video_width pixels;
  // video_max_pixels caps one frame's pixels (qwen_vl_utils `max_pixels`; 0: its per-frame budget).
  int64_t videos_per_sample = 0;
  int64_t video_frames = 16;
  int64_t video_height = 720;
  int64_t video_width = 1280;
  int64_t video_max_pixels = 0;
};

struct InferenceConfig {
  int64_t batch_size = 1;  // concurrent sequences (beams count as batch)
  int64_t prompt_len = 1024;
  int64_t new_tokens = 256;
  WeightFormat weights = WeightFormat::kBf16;
  KvDtype kv_cache = KvDtype::kAuto;  // auto = the weights' compute dtype
  AttentionImpl attention = AttentionImpl::kSdpa;
  Engine engine = Engine::kTransformers;
  LogitsKept logits = LogitsKept::kLast;
  // vLLM
  double gpu_memory_utilization = 0.9;
  int64_t max_model_len = 0;            // 0 = prompt_len + new_tokens
  int64_t max_num_batched_tokens = 0;   // 0 = vLLM's default for the mode
  int64_t max_num_seqs = 256;
  int64_t block_size = 16;
  bool cuda_graphs = true;
  VllmVersion vllm_version = VllmVersion::kV0_21Plus;
  // vLLM speculative decoding (`--speculative-config '{"method": "mtp", "num_speculative_tokens":
  // N}'`, docs/inference.md "vLLM: MTP speculative decoding"): the drafter's layers, their KV cache
  // and N lookahead slots per request.
  struct Speculative {
    SpeculativeMethod method = SpeculativeMethod::kNone;
    int64_t num_speculative_tokens = 1;
  } speculative;
  // llama.cpp
  int64_t n_ctx = 0;       // 0 = prompt_len + new_tokens
  int64_t n_batch = 2048;
  int64_t n_ubatch = 512;
  int64_t n_gpu_layers = -1;  // -1 = all layers on GPU
  bool flash_attn = false;
  // Vision-language models: images per request (their tokens come on top of prompt_len), each
  // image_height x image_width before the processor. vLLM: limit_mm_per_prompt images (-1: its
  // default, 0: text only, the tower is not loaded and no multimodal profile runs) and the
  // processor's max_pixels (--mm-processor-kwargs; 0: the checkpoint's preprocessor default),
  // which sizes the largest image its start-up profile run encodes.
  int64_t images_per_request = 0;
  int64_t image_height = 1024;
  int64_t image_width = 1024;
  int64_t limit_mm_per_prompt = -1;
  int64_t mm_max_pixels = 0;
  // Video inputs (as train's); vLLM: limit_mm_video_per_prompt videos (-1: its default, 0: none).
  int64_t videos_per_request = 0;
  int64_t video_frames = 16;
  int64_t video_height = 720;
  int64_t video_width = 1280;
  int64_t video_max_pixels = 0;
  int64_t limit_mm_video_per_prompt = -1;
  // llama.cpp: the multimodal projector file (`--mmproj`) loaded beside the model, by file type.
  MmprojType mmproj = MmprojType::kNone;
};

struct ParallelConfig {
  // The GPUs the job occupies, one rank each: gpus = dp x tp x pp x cp (parallel/topology.h). Every
  // result figure under gpu/ranks is for one GPU.
  int64_t gpus = 1;
  int64_t gpus_per_node = 0;  // GPUs sharing one host (host RAM per node); 0: min(gpus, 8)
  int64_t tp = 1;
  int64_t pp = 1;
  int64_t cp = 1;
  int64_t ep = 1;
  int zero = 0;       // DeepSpeed ZeRO stage 0-3
  bool fsdp = false;  // FSDP FULL_SHARD (equivalent to ZeRO-3 for memory)
  Offload offload_optimizer = Offload::kNone;
  Offload offload_params = Offload::kNone;
  bool sequence_parallel = false;
  int64_t etp = 0;  // expert tensor-parallel degree; 0: as tp (Megatron expert_tensor_parallel_size)
  int64_t vpp = 1;  // virtual pipeline stages (model chunks) per pipeline rank
  std::optional<PipelineSchedule> pp_schedule;  // default 1F1B, interleaved 1F1B when vpp > 1
  std::vector<int64_t> pp_layers;               // layers per pipeline stage (uneven splits); empty: even
  ContextParallelKind cp_kind = ContextParallelKind::kRing;
  // FSDP under gradient accumulation: no_sync() keeps each rank's gradients unsharded (full size)
  // until the last micro-batch; default: on for the HF trainer (accelerate's accumulate() calls
  // model.no_sync() unless GradientAccumulationPlugin(sync_each_batch=True)), off for torchtitan.
  std::optional<bool> fsdp_no_sync;
  FsdpSharding fsdp_sharding = FsdpSharding::kFullShard;
  // PyTorch DDP (data parallel without ZeRO or FSDP): gradient_as_bucket_view=False (the default in
  // torch and accelerate) keeps a flat copy of every gradient in the all-reduce buckets.
  bool ddp_bucket_view = false;
  // DeepSpeed ZeRO gradient buckets (ds_config zero_optimization keys; defaults from
  // deepspeed/runtime/zero/config.py): reduce_bucket_size elements per bucket, overlap_comm
  // (default: true for stage 3, false for 1-2), contiguous_gradients.
  std::optional<int64_t> reduce_bucket_size;  // default 500'000'000
  std::optional<bool> overlap_comm;
  std::optional<bool> contiguous_gradients;   // default true
  // Megatron-LM MoE token dropping (--moe-expert-capacity-factor, --moe-pad-expert-input-to-capacity):
  // each expert takes at most ceil(capacity_factor x tokens x top_k / experts) of a rank's tokens
  // (megatron/core/transformer/moe/moe_utils.py get_capacity); 0 = dropless (Megatron's None).
  // Padding fills every expert to its capacity.
  double moe_capacity_factor = 0;
  bool moe_pad_expert_input_to_capacity = false;
  // DeepSpeed ZeRO-3 parameter gathering (ds_config zero_optimization keys, elements; defaults from
  // deepspeed/runtime/zero/config.py DeepSpeedZeroConfig): what stays gathered per rank
  // (parallel/zero3_gather.h).
  std::optional<int64_t> stage3_prefetch_bucket_size;         // default 50'000'000
  std::optional<int64_t> stage3_param_persistence_threshold;  // default 100'000
  std::optional<int64_t> stage3_max_live_parameters;          // default 1'000'000'000
  std::optional<int64_t> stage3_max_reuse_distance;           // default 1'000'000'000
  // FSDP: the token embedding and the output layer are units of their own (torchtune
  // `custom_sharded_layers: ['tok_embeddings', 'output']`: torchtune/training/_distributed.py
  // get_shard_conditions + shard_model), so they are resharded after use instead of staying gathered
  // in the root unit from forward to backward (FSDP2 does not reshard the root after forward).
  bool fsdp_embedding_units = false;
  // FSDP1 (the HF stack) with PEFT's frozen decoder-layer units and reentrant checkpointing: the
  // reshard-only multi-grad hook keeps each layer's recomputed input and its gradient until the end
  // of the backward (parallel/fsdp_frozen_unit_hooks.h). Default: on where it applies.
  std::optional<bool> fsdp_frozen_unit_hooks;
};

struct GpuChoice {
  std::string id = "h100-sxm-80gb";  // catalogue id, or "custom"
  std::string name;                  // filled from the catalogue, or the user's name for a custom GPU
  int64_t memory_bytes = 0;          // capacity used for the fit (usable memory where known)
};

// Version-dependent framework behaviour (measure/analysis.md section 7), as named switches.
struct FrameworkConfig {
  FrameworkPreset preset = FrameworkPreset::kCurrent;
  Trainer trainer = Trainer::kHf;
  // Megatron: gradients accumulate and all-reduce in an fp32 main_grad buffer (default: on for bf16,
  // megatron/training/arguments.py forces accumulate_allreduce_grads_in_fp32 with --bf16).
  std::optional<bool> grad_reduce_in_fp32;
  Device device = Device::kCuda;
  bool rmsnorm_saves_squared_input = false;  // PyTorch <= 2.1 mean.dim saves its input (pytorch#109876)
  bool loss_shift_logits_copy = false;       // transformers <= 4.45 copies shift_logits (.contiguous())
  bool loss_function_shift_copy = false;     // transformers 4.46-4.48 ForCausalLMLoss: .float() then shift_logits .contiguous()
  bool adamw_foreach_denom_copy = false;     // PyTorch <= 2.0 foreach AdamW: a second group-wide list (pytorch#104898)
  bool loss_upcast_logits = true;            // the loss upcasts logits to fp32 (HF; not GPT-2 <= 4.45 or remote-code models like Qwen1)
  bool keep_outputs = false;                 // caller keeps the model output (fp32 logits) through backward
  bool use_cache = false;                    // model returns a KV cache during training
  bool torch_compile = false;                // torch.compile / inductor (its saved-tensor decisions are not modeled: warned)
  bool attention_mask = true;                // a 2-D attention mask is passed (HF expands it to b*1*s*s)
  bool batch_on_device = true;               // input_ids/labels/attention_mask (int64) live on the GPU
  bool cuda_lazy_loading = true;             // CUDA >= 11.7 lazy module loading (PyTorch >= 1.13 default)
  bool variable_shapes = false;              // batches of varying length (dynamic padding): more allocator churn
  bool expandable_segments = false;          // PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
  ModelLoad model_load = ModelLoad::kDirect; // load-phase allocation order (replayed through the caching allocator)
  // CPU-only allocations seen on one fixture host (docs/derivations_extended.md section 0), to replay
  // those measurements exactly; never part of a GPU estimate.
  bool cpu_onednn_bf16_buffers = false;      // a bf16 mm allocates an fp32 buffer of its output size (+128 B)
  bool cpu_kv_alive_at_scores = false;       // k after RoPE and the v projection are still alive at the scores
  // transformers <= 4.41 Mistral / Mixtral: every attention layer's rotary module holds a cos/sin cache of
  // max_position_embeddings rows in the load dtype (train/rope_cache.h).
  bool rope_cache_per_layer = false;
  // accelerate Accelerator.prepare_model (native_amp: HF Trainer / TRL fp16=True or bf16=True without
  // DeepSpeed or Megatron) wraps model.forward in autocast AND convert_outputs_to_fp32: the logits a
  // preference / RL head receives are fp32 copies of the lm_head's 16-bit ones (train/preference.h).
  // Applies only under autocast; false when the loss calls the model directly (no accelerate).
  bool amp_outputs_fp32 = true;
  // unsloth <= 2025.2 (c3d6def 2023-11-30 .. 6485cbb 2025-03-01): matmul_lora adds the LoRA term out of
  // place (`out += (X @ A) @ (s * B)`), and LoRA_MLP / LoRA_QKV / LoRA_W.backward add their input-gradient
  // terms out of place (`dX += de @ gateW.t()`): one output-shaped temporary per term (train.kernels "unsloth").
  bool unsloth_lora_out_of_place = false;
};

struct Scenario {
  int schema = kSchemaVersion;
  std::string model_id;            // preset id, or "" for an inline config
  std::string inline_config_json;  // the inline config.json as given (echoed back), "" for presets
  ModelSpec model;                 // resolved architecture
  ModelReading model_reading = ModelReading::kExact;  // how an unknown model_type's config is read
  Mode mode = Mode::kTrain;
  TrainConfig train;
  InferenceConfig inference;
  ParallelConfig parallel;
  GpuChoice gpu;
  FrameworkConfig framework;
};

}  // namespace vramplan
