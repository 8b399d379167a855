// THE scenario field table (see fields.h). One row per field; the reader, the normalized echo, the
// JSON Schema and docs/schema.md's field reference are generated from these rows.
#include "scenario/fields.h"

#include <unordered_map>

#include "io/enum_names.h"
#include "parallel/topology.h"

namespace vramplan::fields {
namespace {

// A field's one-line doc. The page's module is built with VRAMPLAN_FIELD_DOCS=0 (wasm/CMakeLists.txt):
// its form carries its own help for every field it shows (web/fields.js), so the 150-odd docs
// (about 7 KB gzipped) would only be download weight there; its schema then has no "description".
// Every other build (CLI, tests, the on-demand vramplan-full module, docs/scenario.schema.json) keeps them.
#ifndef VRAMPLAN_FIELD_DOCS
#define VRAMPLAN_FIELD_DOCS 1
#endif
#if VRAMPLAN_FIELD_DOCS
#define DOC(text) text
#else
#define DOC(text) ""
#endif

// The struct member behind a field: AT(train.lora.rank) -> a function returning a Slot for it.
#define AT(member) [](Scenario& s) { return Slot(s.member); }

using SlotFn = Slot (*)(Scenario&);
using Table = std::vector<Field>;

// The row builders append to the table and return the new row for any further settings (valid
// until the next row is added).
Field& Add(Table* t, std::string_view path, Type type, SlotFn slot, std::string_view def, std::string_view doc) {
  Field& f = t->emplace_back();
  f.path = path;
  f.type = type;
  f.slot = slot;
  f.default_json = def;
  f.doc = doc;
  return f;
}

Field& Object(Table* t, std::string_view path, std::string_view doc) { return Add(t, path, Type::kObject, nullptr, "", doc); }

Field& Int(Table* t, std::string_view path, SlotFn slot, int64_t min, int64_t max, std::string_view def, std::string_view doc) {
  Field& f = Add(t, path, Type::kInt, slot, def, doc);
  f.min = min;
  f.max = max;
  return f;
}

Field& Number(Table* t, std::string_view path, SlotFn slot, double min, double max, std::string_view def, std::string_view doc) {
  Field& f = Add(t, path, Type::kNumber, slot, def, doc);
  f.min_number = min;
  f.max_number = max;
  return f;
}

Field& Bool(Table* t, std::string_view path, SlotFn slot, std::string_view def, std::string_view doc) {
  return Add(t, path, Type::kBool, slot, def, doc);
}

// The names and C++ values of an enum (io/enum_names.h).
template <typename E, size_t N>
void SetEnum(Field* f, const io::EnumName<E> (&names)[N]) {
  for (const auto& n : names) {
    f->values.emplace_back(n.name);
    f->enum_codes.push_back(static_cast<int>(n.value));
  }
}

template <typename E, size_t N>
Field& Enum(Table* t, std::string_view path, SlotFn slot, const io::EnumName<E> (&names)[N], std::string_view def, std::string_view doc) {
  Field& f = Add(t, path, Type::kEnum, slot, def, doc);
  SetEnum(&f, names);
  return f;
}

Field& StringList(Table* t, std::string_view path, SlotFn slot, int64_t max_items, std::vector<std::string_view> items,
                  std::string_view def, std::string_view doc) {
  Field& f = Add(t, path, Type::kStringList, slot, def, doc);
  f.max = max_items;
  f.item_values = std::move(items);
  return f;
}

std::vector<Field> BuildTable() {
  Table t;
  t.reserve(128);
  // ------------------------------------------------------------------ the document
  Int(&t, "schema", AT(schema), 1, kSchemaVersion, "1", DOC("schema version (only 1)"));
  Object(&t, "framework",
         DOC("version-dependent framework behaviour: `preset` sets the fields below, explicit fields override it")).echo_last = true;
  // Before "model": the reader reads the rows in this order, and the model's reading needs it.
  Enum(&t, "model_reading", AT(model_reading), io::kModelReadingNames, "\"exact\"",
       DOC("how a `config.json` whose `model_type` has no dedicated reader is read: `exact` refuses one with keys the "
       "generic readers do not understand (linear-attention, state-space, vision, MTP, indexer, latent-attention keys), "
       "`approximate` reads it as a Llama-style or standard-MoE decoder and lists every ignored key in an "
       "`approximate` warning"));
  {
    Field& f = Add(&t, "model", Type::kModel, nullptr, "",
                   DOC("a preset id (`vramplan models`, e.g. `\"meta-llama/Llama-3.1-8B\"`) or a Hugging Face `config.json` object "
                   "exactly as on the Hub (extra keys ignored; multimodal configs use their `text_config`)"));
    f.required = true;
    f.message = "the scenario needs a model: a preset id such as \"meta-llama/Llama-3.1-8B\" or a config.json object";
  }
  Enum(&t, "mode", AT(mode), io::kModeNames, "\"train\"", DOC("which engine runs: training / fine-tuning or inference / serving"));
  Object(&t, "train", DOC("the training job (used when `mode` is `train`)"));
  Object(&t, "inference", DOC("the inference job (used when `mode` is `inference`)"));
  Object(&t, "parallel", DOC("parallelism and offload; the default is a single GPU"));
  Add(&t, "gpu", Type::kGpu, nullptr, "\"h100-sxm-80gb\"",
      DOC("a catalogue id (`vramplan gpus`) or a custom GPU `{\"name\", \"memory_bytes\"}`"));

  // ------------------------------------------------------------------ framework
  Enum(&t, "framework.preset", AT(framework.preset), io::kFrameworkPresetNames, "\"current\"",
       DOC("sets the fields below (explicit ones override it): `current` = PyTorch >= 2.2 on CUDA, transformers >= 4.49; "
       "`torch_2_hf_4_46` = the same with transformers 4.46-4.48 (`loss_function_shift_copy` `true`); "
       "`torch_1_13_hf_4_44` = the measured fixtures' PyTorch 1.13 on CPU, transformers 4.44 (`device` `cpu`, "
       "`rmsnorm_saves_squared_input`, `loss_shift_logits_copy` and `adamw_foreach_denom_copy` `true`)"));
  Enum(&t, "framework.trainer", AT(framework.trainer), io::kTrainerNames, "\"hf\"",
       DOC("the training code: `hf` (transformers models under HF Trainer / accelerate / TRL, DeepSpeed or FSDP), "
       "`megatron` (Megatron-LM / Megatron-core / NeMo with TransformerEngine), `torchtitan`"));
  Bool(&t, "framework.grad_reduce_in_fp32", AT(framework.grad_reduce_in_fp32), "",
       DOC("megatron: gradients accumulate in an fp32 main_grad buffer; default true with bf16 (Megatron forces it), false otherwise"));
  Enum(&t, "framework.device", AT(framework.device), io::kDeviceNames, "\"cuda\"",
       DOC("`cpu` drops the CUDA context, cuBLAS workspace and allocator reserve (the measured fixtures)"));
  Bool(&t, "framework.rmsnorm_saves_squared_input", AT(framework.rmsnorm_saves_squared_input), "false",
       DOC("PyTorch <= 2.1 `mean.dim` saves its input: +4·T·h B per RMSNorm (pytorch#109876)"));
  Bool(&t, "framework.loss_shift_logits_copy", AT(framework.loss_shift_logits_copy), "false",
       DOC("transformers <= 4.45 copies `shift_logits`: +4·b·(s-1)·V B"));
  Bool(&t, "framework.loss_function_shift_copy", AT(framework.loss_function_shift_copy), "false",
       DOC("transformers 4.46-4.48: ForCausalLMLoss upcasts the returned 16-bit logits and copies the shifted fp32 logits "
       "(`logits[..., :-1, :].contiguous()`, a copy when b > 1): +4·b·(s-1)·V B at the loss; excludes `loss_shift_logits_copy`"));
  Bool(&t, "framework.adamw_foreach_denom_copy", AT(framework.adamw_foreach_denom_copy), "false",
       DOC("PyTorch <= 2.0 foreach AdamW keeps `exp_avg_sq_sqrt` and a separate `denom` list: two whole-group "
       "intermediates instead of one (pytorch#97712, fixed by #104898 in 2.1)"));
  Bool(&t, "framework.loss_upcast_logits", AT(framework.loss_upcast_logits), "true",
       DOC("the loss upcasts logits to fp32 (HF); false for losses computed in the logits dtype (GPT-2 <= 4.45 "
       "always, remote-code models such as Qwen1)"));
  Bool(&t, "framework.keep_outputs", AT(framework.keep_outputs), "false",
       DOC("the caller keeps the model output (fp32 logits) through backward"));
  Bool(&t, "framework.torch_compile", AT(framework.torch_compile), "false",
       DOC("torch.compile (inductor): what it saves is not modeled yet; the result is the eager step's, with a not_modeled warning"));
  Bool(&t, "framework.use_cache", AT(framework.use_cache), "false", DOC("the model returns a KV cache during training"));
  Bool(&t, "framework.attention_mask", AT(framework.attention_mask), "true",
       DOC("a 2-D attention mask is passed (eager attention expands it to b·s·s)"));
  Bool(&t, "framework.batch_on_device", AT(framework.batch_on_device), "true",
       DOC("input_ids, labels and attention_mask (int64) live on the GPU"));
  Bool(&t, "framework.cuda_lazy_loading", AT(framework.cuda_lazy_loading), "true",
       DOC("CUDA >= 11.7 lazy module loading (context ~0.5 GiB; ~1.3 GiB without)"));
  Bool(&t, "framework.variable_shapes", AT(framework.variable_shapes), "false",
       DOC("batches of varying length (dynamic padding): the allocator reserves more (25% instead of 10% of per-step tensors)"));
  Bool(&t, "framework.expandable_segments", AT(framework.expandable_segments), "false",
       DOC("`PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`: 2% reserve on per-step tensors"));
  Enum(&t, "framework.model_load", AT(framework.model_load), io::kModelLoadNames, "\"direct\"",
       DOC("how the weights reach the GPU: `direct` (every weight materialized once: `from_pretrained`, "
       "meta-device init + load) or `torchtune_0_1` (torchtune 0.1.x recipes: one decoder layer built on "
       "the GPU, deep-copied per layer, then `load_state_dict`; QLoRA quantizes whole tensors with torchao "
       "0.1), replayed through the caching allocator (docs/training.md, \"Model load\")")).echo_last = true;
  Bool(&t, "framework.cpu_onednn_bf16_buffers", AT(framework.cpu_onednn_bf16_buffers), "false",
       DOC("fixture replay only: on CPU a bf16 matmul allocates an fp32 buffer of its output size (+128 B); never "
       "part of a GPU estimate"));
  Bool(&t, "framework.cpu_kv_alive_at_scores", AT(framework.cpu_kv_alive_at_scores), "false",
       DOC("fixture replay only: k after RoPE and the v projection are still alive at the attention scores on the "
       "fixture host; never part of a GPU estimate"));
  Bool(&t, "framework.rope_cache_per_layer", AT(framework.rope_cache_per_layer), "false",
       DOC("transformers <= 4.41 Mistral / Mixtral (before transformers#30642): every attention layer keeps a RoPE cos/sin "
       "cache of `max_position_embeddings` rows in the load dtype (2·L·P·rotary_dim·2 B for a 16-bit load: 0.5 GiB "
       "for Mistral-7B's 32,768 positions); later versions compute cos/sin per step"));
  Bool(&t, "framework.amp_outputs_fp32", AT(framework.amp_outputs_fp32), "true",
       DOC("under autocast, the model's outputs reach the loss as fp32 copies (accelerate Accelerator.prepare_model with "
       "native AMP: HF Trainer / TRL fp16 or bf16 without DeepSpeed or Megatron wraps forward in autocast and "
       "convert_outputs_to_fp32). The preference and RL heads (DPO, IPO, ORPO, SimPO, KTO, GRPO, PPO) compute on the "
       "fp32 copy (log-prob head, reference pass and NLL terms, the 16-bit and fp32 logits together at the copy); "
       "an SFT model that returns 16-bit logits (unsloth's loss, ForCausalLMLoss) gets the copy after its loss, "
       "beside what the loss saved; false when a script calls the model directly"));

  Bool(&t, "framework.unsloth_lora_out_of_place", AT(framework.unsloth_lora_out_of_place), "false",
       DOC("`train.kernels` `unsloth` as released up to 2025.2 (unslothai/unsloth c3d6def to 6485cbb): "
       "`matmul_lora` adds the LoRA term out of place (`out += (X @ A) @ (s * B)`) and the LoRA Functions' backward "
       "adds each input-gradient term out of place: one more output-shaped tensor at each projection, T·I B at "
       "LoRA_MLP's backward (`DW = matmul_lora(dY, downW.t(), ...)`); 2025.3 on adds in place (`addmm_`)"));

  // ------------------------------------------------------------------ train
  Enum(&t, "train.method", AT(train.method), io::kMethodNames, "\"lora\"",
       DOC("`full`, `freeze` (the last N layers train), `lora`, `qlora`"));
  Enum(&t, "train.precision", AT(train.precision), io::kPrecisionNames, "\"bf16\"",
       DOC("`fp16`/`bf16` = pure 16-bit weights, grads and optimizer states; `amp_fp16`/`amp_bf16` = fp32 weights + "
       "`torch.autocast` (HF Trainer `bf16=True` on an fp32 model); `mixed_fp16`/`mixed_bf16` = DeepSpeed/Megatron: "
       "16-bit weights and grads, fp32 master weights and states"));
  Bool(&t, "train.autocast", AT(train.autocast), "false",
       DOC("16-bit weights (bf16, fp16, mixed_*) *and* `torch.autocast` (HF Trainer `bf16=True` on a bf16 model, "
       "LLaMA-Factory): fp32 adapters compute in 16-bit, `cross_entropy` runs in fp32"));
  Bool(&t, "train.activation_offload", AT(train.activation_offload), "false",
       DOC("saved activations go to host RAM in the forward and come back for the backward (torchtune OffloadActivations, "
       "Megatron fine-grained offloading, DeepSpeed cpu_checkpointing); with `gradient_checkpointing` true the checkpointed "
       "layer inputs (unsloth's `use_gradient_checkpointing=\"unsloth\"`); the host RAM is reported"));
  Bool(&t, "train.float8", AT(train.float8), "false",
       DOC("float8 linears (torchao Float8Linear, TransformerEngine fp8 recipes): not modeled yet; estimated as 16-bit with a not_modeled warning"));
  Enum(&t, "train.optimizer", AT(train.optimizer), io::kOptimizerNames, "\"adamw\"",
       DOC("`adamw_8bit` and `paged_adamw_8bit` are bitsandbytes', `adafactor` is transformers'"));
  Enum(&t, "train.optimizer_impl", AT(train.optimizer_impl), io::kOptimizerImplNames, "",
       DOC("the optimizer-step kernels (they change the step's temporaries); default: what PyTorch picks, "
       "`foreach` on CUDA, `for_loop` on CPU"));
  Int(&t, "train.micro_batch_size", AT(train.micro_batch_size), 1, kMaxBatch, "1", DOC("sequences per GPU per step"));
  Int(&t, "train.seq_len", AT(train.seq_len), 1, kMaxTokens, "2048",
      DOC("tokens per sequence (padded or packed length); `micro_batch_size` x `seq_len` <= 2^31"));
  Int(&t, "train.grad_accum_steps", AT(train.grad_accum_steps), 1, 1 << 20, "1",
      DOC("micro-batches per optimizer step; > 1 keeps gradients alive through the next forward"));
  {
    Field& f = Add(&t, "train.gradient_checkpointing", Type::kBoolOrEnum, AT(train.gradient_checkpointing), "true",
                   DOC("`true` = every decoder layer (HF); `\"selective\"` = the attention core only (Megatron/torchtitan)"));
    SetEnum(&f, io::kCheckpointingNames);
    f.message = "must be false, true (every decoder layer) or \"selective\" (attention core only)";
  }
  Enum(&t, "train.recompute_method", AT(train.recompute_method), io::kRecomputeMethodNames, "\"uniform\"",
       DOC("Megatron / torchtitan full recomputation (`gradient_checkpointing` true): `uniform` checkpoints chunks of "
       "`recompute_num_layers` layers, `block` only the first `recompute_num_layers` layers of each pipeline stage"));
  Int(&t, "train.recompute_num_layers", AT(train.recompute_num_layers), 0, 65536, "0",
      DOC("layers per recomputed chunk (`uniform`) or recomputed layers per stage (`block`); 0 = 1 (`uniform`) or all (`block`)"));
  Enum(&t, "train.attention", AT(train.attention), io::kAttentionNames, "\"sdpa\"",
       DOC("`eager` materializes b·a·s² scores; `sdpa` and `flash` do not"));
  Enum(&t, "train.loss", AT(train.loss), io::kLossNames, "\"standard\"",
       DOC("`standard` (HF), `chunked` (torchtune chunked cross-entropy, compiled), `fused_linear` (Liger), `unsloth` "
       "(unsloth's fast_cross_entropy_loss: 16-bit logits, no fp32 copy, gradient written in place), `cce` (Apple's Cut "
       "Cross Entropy: unsloth >= 2024.12, axolotl `cut_cross_entropy`; logsumexp in the forward, logits recomputed in backward)"));
  Bool(&t, "train.optimizer_in_backward", AT(train.optimizer_in_backward), "false",
       DOC("torchtune `optimizer_in_bwd`: each parameter's optimizer step runs in its post-accumulate-grad hook and the "
       "gradient is freed at once (gradients are never all alive; optimizer states are)"));
  Bool(&t, "train.packing", AT(train.packing), "true",
       DOC("`true`: every micro-batch is packed to `seq_len` tokens; `false`: padded per batch (dynamic padding), "
       "`seq_len` is the longest batch and `typical_seq_len` the usual one (more allocator churn)"));
  Int(&t, "train.typical_seq_len", AT(train.typical_seq_len), 0, kMaxTokens, "0",
      DOC("unpacked data: the usual batch's padded length (0 = `seq_len`); the result adds the typical step "
      "(`training.typical_*`) and the band's low end"));
  Enum(&t, "train.kernels", AT(train.kernels), io::kLayerKernelsNames, "\"pytorch\"",
       DOC("the decoder layer's kernels, which decide what it saves: `pytorch` (transformers modules, PEFT LoRA), "
       "`unsloth` (its fast RMSNorm and RoPE and, for LoRA on every q/k/v/o/gate/up/down without dropout, its "
       "LoRA_QKV / LoRA_W / LoRA_MLP Functions: the MLP keeps its input and the gate and up outputs), `liger` "
       "(Liger's RMSNorm, SwiGLU and RoPE, `apply_liger_kernel_to_*` defaults); docs/frameworks.md"));
  Object(&t, "train.lora", DOC("LoRA / QLoRA adapters (PEFT)"));
  Int(&t, "train.lora.rank", AT(train.lora.rank), 1, 65536, "16", DOC("adapter rank r"));
  Number(&t, "train.lora.alpha", AT(train.lora.alpha), 0, 1e6, "32", DOC("scaling only: no memory effect"));
  {
    Field& f = Add(&t, "train.lora.targets", Type::kListOrConst, nullptr, "",
                   DOC("module names of the model (errors list the valid ones) or `\"all-linear\"` (every `nn.Linear` except the "
                   "output layer); default: PEFT's for the model type, e.g. `[\"q_proj\", \"v_proj\"]` (Llama-like), "
                   "`[\"c_attn\"]` (GPT-2), `[\"query_key_value\"]` (GPT-NeoX, Falcon), `[\"qkv_proj\"]` (Phi-3), "
                   "`[\"c_attn\", \"c_proj\", \"w1\", \"w2\"]` (Qwen1, from Qwen's finetune.py), `\"all-linear\"` (DeepSeek, gpt-oss)"));
    f.values = {"all-linear"};
    f.max = 64;
    f.message = "must be a list of module names (e.g. [\"q_proj\", \"v_proj\"]) or \"all-linear\"";
  }
  StringList(&t, "train.lora.modules_to_save", AT(train.lora.modules_to_save), 64, {"embed_tokens", "wte", "lm_head"}, "[]",
             DOC("full trainable copies: `embed_tokens` (`wte` in GPT-2 and Qwen1), `lm_head`"));
  Bool(&t, "train.lora.use_dora", AT(train.lora.use_dora), "false",
       DOC("PEFT DoRA: + one magnitude per adapted output feature; keeps each adapted linear's base and "
       "LoRA outputs saved")).echo_last = true;
  Number(&t, "train.lora.dropout", AT(train.lora.dropout), 0, 0.99, "0",
         DOC("LoRA dropout probability; > 0 saves a mask and a dropped copy of each adapter input"));
  Enum(&t, "train.lora.adapter_dtype", AT(train.lora.adapter_dtype), io::kAdapterDtypeNames, "\"fp32\"",
       DOC("`fp32` (PEFT >= 0.12 `autocast_adapter_dtype=True`: 4 B per adapter parameter) or `base` (the base weights' dtype)"));
  {
    Field& f = Add(&t, "train.qlora_bits", Type::kIntChoice, AT(train.qlora_bits), "4",
                   DOC("bits per frozen base weight: 4 (NF4), 8 (LLM.int8), 2 (2-bit, group 64)"));
    f.int_values = {2, 4, 8};
    f.message = "must be 4 (NF4), 8 (LLM.int8) or 2";
  }
  Bool(&t, "train.qlora_double_quant", AT(train.qlora_double_quant), "true", DOC("NF4 double quantization of the absmax"));
  Enum(&t, "train.qlora_backend", AT(train.qlora_backend), io::kQloraBackendNames, "\"bitsandbytes\"",
       DOC("`bitsandbytes` (NF4 / LLM.int8), `gptq` (a GPTQ checkpoint under auto-gptq / optimum; 2/4/8 bits) or "
       "`torchao` (torchao `NF4Tensor`, torchtune's QLoRA; 4-bit only)"));
  {
    Field& f = Int(&t, "train.qlora_group_size", AT(train.qlora_group_size), -1, 4096, "128",
                   DOC("GPTQ group size in input features (usually 32, 64 or 128); -1 = one group per input column set (per channel)"));
    f.gap_min = 0;
    f.gap_max = 15;
    f.message = "must be -1 (per channel) or an integer from 16 to 4096 (GPTQ: usually 32, 64 or 128)";
  }
  Object(&t, "train.freeze", DOC("`method` `freeze`: which parts train"));
  Int(&t, "train.freeze.trainable_layers", AT(train.freeze.trainable_layers), 0, 4096, "2",
      DOC("the last N decoder layers train (at most the model's layers; LLaMA-Factory's default 2)"));
  Bool(&t, "train.freeze.train_embeddings", AT(train.freeze.train_embeddings), "false", DOC("also train the embedding matrix"));
  Bool(&t, "train.freeze.train_lm_head", AT(train.freeze.train_lm_head), "false", DOC("also train the output projection"));
  Enum(&t, "train.objective", AT(train.objective), io::kObjectiveNames, "\"sft\"",
       DOC("`sft` (supervised), or TRL's preference objectives: `dpo`, `ipo` (DPOTrainer: chosen + rejected rows in one "
       "forward, a reference model), `orpo`, `simpo` (no reference), `kto` (unpaired rows, a reference); or online RL: "
       "`grpo` (GRPOTrainer), `ppo` (PPOTrainer: + critic and reward model), with `train.rollout`; docs/post_training.md"));
  Bool(&t, "train.precompute_ref_log_probs", AT(train.precompute_ref_log_probs), "false",
       DOC("TRL `precompute_ref_log_probs`: reference log-probs computed before training, no reference model in the step"));
  Number(&t, "train.rpo_alpha", AT(train.rpo_alpha), 0, 1e6, "0",
         DOC("`dpo` / `ipo`: the weight of TRL's `sft` loss term (RPO; `loss_type` [\"sigmoid\", \"sft\"] with `loss_weights` "
         "[1, alpha], older TRL and ms-swift `rpo_alpha`): the chosen completions' cross-entropy on the policy's logits "
         "(0 = off; any other weight adds the same memory; ignored by other objectives)"));
  Int(&t, "train.images_per_sample", AT(train.images_per_sample), 0, 4096, "0",
      DOC("vision-language models: images per sample; their tokens come on top of `seq_len` (text tokens) and the "
      "result's `vision.llm_tokens` is the total (docs/models.md \"Image inputs\")"));
  Int(&t, "train.image_height", AT(train.image_height), 1, 65536, "1024",
      DOC("image height in pixels before the processor resizes it"));
  Int(&t, "train.image_width", AT(train.image_width), 1, 65536, "1024",
      DOC("image width in pixels before the processor resizes it"));
  Int(&t, "train.image_max_pixels", AT(train.image_max_pixels), 0, int64_t{1} << 32, "0",
      DOC("pre-resize cap on height x width (LLaMA-Factory `image_max_pixels`, its default 589824 = 768 x 768); 0 = none "
      "(transformers / TRL: the processor's own limits)"));
  Bool(&t, "train.freeze_vision_tower", AT(train.freeze_vision_tower), "true",
       DOC("the vision tower stays frozen (LLaMA-Factory `freeze_vision_tower`, default true); false: it trains (full "
       "and freeze methods; LoRA leaves it frozen)"));
  Bool(&t, "train.freeze_multi_modal_projector", AT(train.freeze_multi_modal_projector), "true",
       DOC("the projector stays frozen (LLaMA-Factory `freeze_multi_modal_projector`, default true)"));
  Int(&t, "train.videos_per_sample", AT(train.videos_per_sample), 0, 4096, "0",
      DOC("vision-language models that take video (Qwen2.5-VL, Qwen3-VL): videos per sample; their tokens come on top of "
      "`seq_len` (docs/models.md \"Video inputs\")"));
  Int(&t, "train.video_frames", AT(train.video_frames), 1, 65536, "16",
      DOC("frames per video after the loader's sampling (qwen_vl_utils: seconds x fps, 2 fps by default, 4 to 768 frames)"));
  Int(&t, "train.video_height", AT(train.video_height), 1, 65536, "720", DOC("video frame height in pixels before resizing"));
  Int(&t, "train.video_width", AT(train.video_width), 1, 65536, "1280", DOC("video frame width in pixels before resizing"));
  Int(&t, "train.video_max_pixels", AT(train.video_max_pixels), 0, int64_t{1} << 32, "0",
      DOC("cap on one frame's pixels (qwen_vl_utils `max_pixels`); 0 = qwen_vl_utils' per-frame budget (768 merged "
      "tokens, less for long videos)"));
  Object(&t, "train.rollout",
         DOC("GRPO / PPO generation and log-prob passes (TRL GRPOConfig / PPOConfig names); the sequences are `seq_len` "
         "tokens (prompt + completion), `micro_batch_size` counts completions"));
  Int(&t, "train.rollout.num_generations", AT(train.rollout.num_generations), 1, 65536, "8",
      DOC("GRPO: completions per prompt (TRL `num_generations`; verl `rollout.n`, OpenRLHF `n_samples_per_prompt`)"));
  Int(&t, "train.rollout.max_completion_length", AT(train.rollout.max_completion_length), 1, kMaxTokens, "512",
      DOC("generated tokens per completion (TRL `max_completion_length`, PPO `response_length`); at most `seq_len` - 1"));
  Bool(&t, "train.rollout.use_vllm", AT(train.rollout.use_vllm), "false",
       DOC("generate with vLLM (TRL `use_vllm`); false: transformers `generate()` on the policy"));
  Enum(&t, "train.rollout.vllm_mode", AT(train.rollout.vllm_mode), io::kVllmModeNames, "\"colocate\"",
       DOC("`colocate` (vLLM on the training GPUs) or `server` (`trl vllm-serve` on GPUs of its own, reported in `rollout`)"));
  Number(&t, "train.rollout.vllm_gpu_memory_utilization", AT(train.rollout.vllm_gpu_memory_utilization), 0.01, 1.0, "0.3",
         DOC("the share of a GPU's memory vLLM claims (TRL colocate default 0.3; server mode: the server's own, e.g. 0.9)"));
  Int(&t, "train.rollout.vllm_tensor_parallel_size", AT(train.rollout.vllm_tensor_parallel_size), 1, 1024, "1",
      DOC("vLLM tensor parallel size (server mode: the server's GPUs)"));
  Int(&t, "train.rollout.vllm_sleep_level", AT(train.rollout.vllm_sleep_level), 0, 2, "0",
      DOC("colocated vLLM between generations: 0 awake, 1 weights to host RAM + KV freed, 2 both freed (TRL "
      "`vllm_enable_sleep_mode` sleeps at level 2; verl `free_cache_engine`)"));
  Number(&t, "train.rollout.beta", AT(train.rollout.beta), 0, 1e6, "0",
         DOC("KL coefficient (TRL `beta`); GRPO with 0 loads no reference model"));
  Int(&t, "train.rollout.steps_per_generation", AT(train.rollout.steps_per_generation), 0, 65536, "0",
      DOC("micro-batches generated at once (TRL `steps_per_generation`); 0 = `grad_accum_steps`"));
  Int(&t, "train.rollout.logprob_batch_size", AT(train.rollout.logprob_batch_size), 0, kMaxBatch, "0",
      DOC("rows per no-grad log-prob chunk; 0 = `micro_batch_size` (GRPO: TRL's batch_size) or 64 (PPO "
      "`local_rollout_forward_batch_size`)"));

  // ------------------------------------------------------------------ inference
  Int(&t, "inference.batch_size", AT(inference.batch_size), 1, kMaxBatch, "1",
      DOC("concurrent sequences (beams count as batch)"));
  Int(&t, "inference.prompt_len", AT(inference.prompt_len), 1, kMaxTokens, "1024", DOC("prompt tokens per sequence"));
  Int(&t, "inference.new_tokens", AT(inference.new_tokens), 0, kMaxTokens, "256", DOC("generated tokens per sequence"));
  Enum(&t, "inference.weights", AT(inference.weights), io::kWeightFormatNames, "\"bf16\"",
       DOC("weight format: bytes per weight and the scales of quantized formats (docs/inference.md); absent, a "
           "quantized checkpoint's own format from its quantization_config (vLLM, transformers)"));
  Enum(&t, "inference.kv_cache", AT(inference.kv_cache), io::kKvDtypeNames, "\"auto\"",
       DOC("KV cache dtype; `auto` = the weights' compute dtype"));
  Enum(&t, "inference.attention", AT(inference.attention), io::kAttentionNames, "\"sdpa\"",
       DOC("`eager` materializes prompt x prompt scores during prefill"));
  Enum(&t, "inference.engine", AT(inference.engine), io::kEngineNames, "\"transformers\"",
       DOC("the serving engine (docs/inference.md)"));
  Enum(&t, "inference.logits", AT(inference.logits), io::kLogitsNames, "\"last\"",
       DOC("transformers: logits for the `last` position only or `all` prompt positions"));
  Number(&t, "inference.gpu_memory_utilization", AT(inference.gpu_memory_utilization), 0.05, 1.0, "0.9",
         DOC("vLLM: the fraction of the GPU's memory it claims"));
  Int(&t, "inference.max_model_len", AT(inference.max_model_len), 0, kMaxTokens, "0",
      DOC("vLLM: tokens per sequence; 0 = prompt + new tokens"));
  Int(&t, "inference.max_num_batched_tokens", AT(inference.max_num_batched_tokens), 0, kMaxTokens, "0",
      DOC("vLLM: tokens per scheduler step (prefill chunk); 0 = vLLM's default for the mode"));
  Int(&t, "inference.max_num_seqs", AT(inference.max_num_seqs), 1, kMaxBatch, "256", DOC("vLLM: sequences per step"));
  Int(&t, "inference.block_size", AT(inference.block_size), 1, 1024, "16", DOC("vLLM: tokens per paged-KV block"));
  Bool(&t, "inference.cuda_graphs", AT(inference.cuda_graphs), "true", DOC("vLLM: capture CUDA graphs (reserves extra memory)"));
  Enum(&t, "inference.vllm_version", AT(inference.vllm_version), io::kVllmVersionNames, "\"0.21+\"",
       DOC("vLLM release range: `0.21+` counts CUDA graphs inside gpu_memory_utilization, `0.8-0.20` on top of it, `0.6-0.10_v0` is the V0 engine (docs/inference.md)"));
  Int(&t, "inference.n_ctx", AT(inference.n_ctx), 0, kMaxTokens, "0",
      DOC("llama.cpp: context tokens allocated up front; 0 = prompt + new tokens"));
  Int(&t, "inference.n_batch", AT(inference.n_batch), 1, kMaxTokens, "2048", DOC("llama.cpp: logical batch (tokens)"));
  Int(&t, "inference.n_ubatch", AT(inference.n_ubatch), 1, kMaxTokens, "512",
      DOC("llama.cpp: physical batch (tokens); sizes the compute buffer"));
  Int(&t, "inference.n_gpu_layers", AT(inference.n_gpu_layers), -1, 4096, "-1",
      DOC("llama.cpp: layers on the GPU; -1 = all"));
  Bool(&t, "inference.flash_attn", AT(inference.flash_attn), "false", DOC("llama.cpp: flash attention (smaller compute buffer)"));
  Int(&t, "inference.images_per_request", AT(inference.images_per_request), 0, 4096, "0",
      DOC("vision-language models: images per request; their tokens come on top of `prompt_len` (docs/models.md \"Image inputs\")"));
  Int(&t, "inference.image_height", AT(inference.image_height), 1, 65536, "1024",
      DOC("image height in pixels before the processor resizes it"));
  Int(&t, "inference.image_width", AT(inference.image_width), 1, 65536, "1024",
      DOC("image width in pixels before the processor resizes it"));
  Int(&t, "inference.limit_mm_per_prompt", AT(inference.limit_mm_per_prompt), -1, 65536, "-1",
      DOC("vLLM `--limit-mm-per-prompt` images: -1 = vLLM's default (999), 0 = none; with no video either "
      "(`limit_mm_video_per_prompt` 0, or a tower that takes none) text only: no tower, no multimodal profile run"));
  Int(&t, "inference.mm_max_pixels", AT(inference.mm_max_pixels), 0, int64_t{1} << 32, "0",
      DOC("vLLM: the processor's `max_pixels` (`--mm-processor-kwargs`, Qwen-VL); 0 = the checkpoint's preprocessor "
      "default; sizes the largest image of the start-up profile run"));
  Int(&t, "inference.videos_per_request", AT(inference.videos_per_request), 0, 4096, "0",
      DOC("vision-language models that take video (Qwen2.5-VL, Qwen3-VL): videos per request; their tokens come on top "
      "of `prompt_len` (docs/models.md \"Video inputs\")"));
  Int(&t, "inference.video_frames", AT(inference.video_frames), 1, 65536, "16", DOC("frames per video after sampling"));
  Int(&t, "inference.video_height", AT(inference.video_height), 1, 65536, "720", DOC("video frame height in pixels before resizing"));
  Int(&t, "inference.video_width", AT(inference.video_width), 1, 65536, "1280", DOC("video frame width in pixels before resizing"));
  Int(&t, "inference.video_max_pixels", AT(inference.video_max_pixels), 0, int64_t{1} << 32, "0",
      DOC("cap on one frame's pixels (qwen_vl_utils `max_pixels`); 0 = qwen_vl_utils' per-frame budget"));
  Int(&t, "inference.limit_mm_video_per_prompt", AT(inference.limit_mm_video_per_prompt), -1, 65536, "-1",
      DOC("vLLM `--limit-mm-per-prompt` videos: -1 = vLLM's default (999), 0 = no video; sizes the profile run's dummy "
      "video (docs/inference.md \"vLLM: multimodal models\")"));
  Object(&t, "inference.speculative",
         DOC("vLLM speculative decoding (`--speculative-config`, docs/inference.md \"vLLM: MTP speculative decoding\")"));
  Enum(&t, "inference.speculative.method", AT(inference.speculative.method), io::kSpeculativeMethodNames, "\"none\"",
       DOC("`mtp`: the checkpoint's multi-token-prediction layers draft tokens (vLLM only, models with "
       "`num_nextn_predict_layers` / `mtp_num_hidden_layers`); the older per-model names mean the same"));
  Int(&t, "inference.speculative.num_speculative_tokens", AT(inference.speculative.num_speculative_tokens), 1, 64, "1",
      DOC("draft tokens per step (vLLM `num_speculative_tokens`): above the MTP layer count it must be a multiple of it"));
  Enum(&t, "inference.mmproj", AT(inference.mmproj), io::kMmprojNames, "\"none\"",
       DOC("llama.cpp `--mmproj`: the multimodal projector GGUF's file type (`f16` usually); its weights and compute "
       "buffer go on the GPU beside the model (docs/inference.md \"llama.cpp: --mmproj\")"));

  // ------------------------------------------------------------------ parallel
  Int(&t, "parallel.gpus", AT(parallel.gpus), 1, int64_t{1} << 20, "1",
      DOC("GPUs the job occupies, one rank each: gpus = dp x tp x pp x cp; results are per GPU"));
  Int(&t, "parallel.gpus_per_node", AT(parallel.gpus_per_node), 1, int64_t{1} << 20, "",
      DOC("GPUs sharing one host, for host RAM per node (cpu.node_bytes); default min(gpus, 8)"))
      .resolved = [](const Scenario& s) { return GpusPerNode(s.parallel); };
  Int(&t, "parallel.tp", AT(parallel.tp), 1, 65536, "1", DOC("tensor-parallel degree; divides the attention heads"));
  Int(&t, "parallel.pp", AT(parallel.pp), 1, 65536, "1",
      DOC("pipeline-parallel degree (stages); divides the layers unless `pp_layers` gives the split"));
  Int(&t, "parallel.vpp", AT(parallel.vpp), 1, 4096, "1",
      DOC("virtual pipeline stages (model chunks) per pipeline rank: interleaved 1F1B; divides each stage's layers unless `pp_layers` lists the virtual stages"));
  Enum(&t, "parallel.pp_schedule", AT(parallel.pp_schedule), io::kPipelineScheduleNames, "",
       DOC("pipeline schedule; default `1f1b`, `interleaved_1f1b` when `vpp` > 1 (sets the micro-batches each stage holds)"));
  {
    Field& f = Add(&t, "parallel.pp_layers", Type::kIntList, AT(parallel.pp_layers), "",
                   DOC("layers of each pipeline stage, first to last (uneven splits); with `vpp` > 1 of each of the pp x vpp virtual stages in "
                   "Megatron's order (virtual stage v x pp + r = chunk v of rank r); default an even split"));
    f.min = 0;
    f.max = 65536;
    f.max_item = 65536;
  }
  Int(&t, "parallel.cp", AT(parallel.cp), 1, 65536, "1", DOC("context-parallel degree: the sequence is split cp ways"));
  Enum(&t, "parallel.cp_kind", AT(parallel.cp_kind), io::kContextParallelKindNames, "\"ring\"",
       DOC("context parallelism: `ring` attention (K/V passed around the ring) or `ulysses` (all-to-all over the heads)"));
  Int(&t, "parallel.ep", AT(parallel.ep), 1, 65536, "1", DOC("expert-parallel degree; divides the experts"));
  Int(&t, "parallel.etp", AT(parallel.etp), 1, 65536, "",
      DOC("expert tensor-parallel degree (each expert's width split etp ways); default `tp`"))
      .resolved = [](const Scenario& s) { return s.parallel.etp > 0 ? s.parallel.etp : s.parallel.tp; };
  Int(&t, "parallel.zero", AT(parallel.zero), 0, 3, "0",
      DOC("DeepSpeed ZeRO stage: 1 shards optimizer states, 2 also gradients, 3 also parameters"));
  Bool(&t, "parallel.fsdp", AT(parallel.fsdp), "false",
       DOC("FSDP FULL_SHARD (like ZeRO-3 for memory); not together with `zero`"));
  Enum(&t, "parallel.offload_optimizer", AT(parallel.offload_optimizer), io::kOffloadNames, "\"none\"",
       DOC("optimizer states to host RAM (`cpu`) or `nvme`"));
  Enum(&t, "parallel.offload_params", AT(parallel.offload_params), io::kOffloadNames, "\"none\"",
       DOC("parameters to host RAM (`cpu`) or `nvme` (ZeRO-3 / FSDP)"));
  Bool(&t, "parallel.sequence_parallel", AT(parallel.sequence_parallel), "false",
       DOC("with tensor parallelism: shard the norm and dropout activations along the sequence"));
  Enum(&t, "parallel.fsdp_sharding", AT(parallel.fsdp_sharding), io::kFsdpShardingNames, "\"full_shard\"",
       DOC("FSDP sharding strategy: `full_shard`, `shard_grad_op` (parameters stay gathered from forward to backward), "
       "`no_shard` (DDP-like), `hybrid_shard` (full_shard inside a node of `gpus_per_node`, replicated across nodes)"));
  Bool(&t, "parallel.ddp_bucket_view", AT(parallel.ddp_bucket_view), "false",
       DOC("PyTorch DDP `gradient_as_bucket_view`: false (the default) keeps a second, flat copy of the gradients in the all-reduce buckets"));
  Bool(&t, "parallel.fsdp_no_sync", AT(parallel.fsdp_no_sync), "",
       DOC("FSDP with `grad_accum_steps` > 1: gradients stay unsharded (full size) on every rank until the last micro-batch "
       "(`no_sync()`); default true with trainer `hf` (accelerate), false with `torchtitan`; `false` = accelerate's `sync_each_batch`"));
  Int(&t, "parallel.reduce_bucket_size", AT(parallel.reduce_bucket_size), 0, int64_t{1} << 40, "",
      DOC("DeepSpeed `zero_optimization.reduce_bucket_size` (elements); default 500000000 (HF's `\"auto\"` is hidden_size²)"));
  Bool(&t, "parallel.overlap_comm", AT(parallel.overlap_comm), "",
       DOC("DeepSpeed `zero_optimization.overlap_comm`; default true for ZeRO-3, false for ZeRO-1/2"));
  Bool(&t, "parallel.contiguous_gradients", AT(parallel.contiguous_gradients), "",
       DOC("DeepSpeed `zero_optimization.contiguous_gradients`; default true"));
  Number(&t, "parallel.moe_capacity_factor", AT(parallel.moe_capacity_factor), 0, 1e6, "0",
         DOC("Megatron MoE `--moe-expert-capacity-factor`: each expert takes at most ceil(factor x tokens x top_k / experts) of a "
         "rank's tokens (the rest are dropped); 0 = dropless (Megatron's default)"));
  Bool(&t, "parallel.moe_pad_expert_input_to_capacity", AT(parallel.moe_pad_expert_input_to_capacity), "false",
       DOC("Megatron `--moe-pad-expert-input-to-capacity`: every expert computes exactly its capacity (needs `moe_capacity_factor`)"));
  Int(&t, "parallel.stage3_prefetch_bucket_size", AT(parallel.stage3_prefetch_bucket_size), 0, int64_t{1} << 40, "",
      DOC("DeepSpeed ZeRO-3 `zero_optimization.stage3_prefetch_bucket_size` (elements gathered ahead of use); default 50000000"));
  Int(&t, "parallel.stage3_param_persistence_threshold", AT(parallel.stage3_param_persistence_threshold), 0, int64_t{1} << 40, "",
      DOC("DeepSpeed ZeRO-3 `zero_optimization.stage3_param_persistence_threshold`: parameters of at most this many elements "
      "(norms, biases) stay gathered on every rank; default 100000"));
  Int(&t, "parallel.stage3_max_live_parameters", AT(parallel.stage3_max_live_parameters), 0, int64_t{1} << 40, "",
      DOC("DeepSpeed ZeRO-3 `zero_optimization.stage3_max_live_parameters`: no prefetch beyond this many gathered elements; default 1000000000"));
  Int(&t, "parallel.stage3_max_reuse_distance", AT(parallel.stage3_max_reuse_distance), 0, int64_t{1} << 40, "",
      DOC("DeepSpeed ZeRO-3 `zero_optimization.stage3_max_reuse_distance`: a parameter used again within this many elements "
      "of other parameters is not released; default 1000000000"));
  Bool(&t, "parallel.fsdp_embedding_units", AT(parallel.fsdp_embedding_units), "false",
       DOC("FSDP: the token embedding and the output layer are units of their own (torchtune `custom_sharded_layers: "
       "['tok_embeddings', 'output']`), resharded after use; false: they stay gathered in the root unit from forward to backward"));
  Bool(&t, "parallel.fsdp_frozen_unit_hooks", AT(parallel.fsdp_frozen_unit_hooks), "",
       DOC("FSDP1 with PEFT's frozen decoder-layer units (LoRA / QLoRA, fsdp_auto_wrap_policy) and HF's reentrant full "
       "checkpointing: the reshard-only multi-grad hook (torch/distributed/fsdp/_runtime_utils.py "
       "_register_post_backward_reshard_only_hook, torch/autograd/graph.py register_multi_grad_hook) keeps each layer's "
       "recomputed input and its gradient until the end of the backward (_finalize_params); default true with trainer `hf`, "
       "`fsdp`, LoRA / QLoRA and full checkpointing; false: FSDP2, non-reentrant checkpointing or adapters inside the layer units"));

  // ------------------------------------------------------------------ gpu (the object form)
  Add(&t, "gpu.name", Type::kString, AT(gpu.name), "\"custom GPU\"", DOC("a custom GPU's name")).max = 80;
  {
    // At most 1 PiB per device: beyond any real GPU.
    Field& f = Int(&t, "gpu.memory_bytes", AT(gpu.memory_bytes), 1, int64_t{1} << 50, "",
                   DOC("a custom GPU's usable memory in bytes (e.g. 25769803776 for 24 GiB)"));
    f.required = true;
    f.message = "a custom gpu needs memory_bytes (integer bytes, e.g. 25769803776 for 24 GiB)";
  }
  return t;
}

#undef AT
#undef DOC

struct Index {
  std::vector<Field> fields = BuildTable();
  std::unordered_map<std::string_view, const Field*> by_path;
  // By position in `fields`; the last entry is the document's.
  std::vector<std::vector<const Field*>> children, echo_children;

  size_t Position(const Field* object) const { return object == nullptr ? fields.size() : static_cast<size_t>(object - fields.data()); }

  Index() : children(fields.size() + 1), echo_children(fields.size() + 1) {
    for (Field& f : fields) {
      const size_t dot = f.path.rfind('.');
      f.key_ = dot == std::string_view::npos ? f.path : f.path.substr(dot + 1);
      f.parent_ = dot == std::string_view::npos ? std::string_view() : f.path.substr(0, dot);
      by_path.emplace(f.path, &f);
    }
    for (const Field& f : fields) {
      auto parent = by_path.find(f.parent_);
      children[f.parent_.empty() || parent == by_path.end() ? fields.size() : Position(parent->second)].push_back(&f);
    }
    for (size_t i = 0; i < children.size(); ++i) {
      for (const Field* f : children[i]) {
        if (!f->echo_last) echo_children[i].push_back(f);
      }
      for (const Field* f : children[i]) {
        if (f->echo_last) echo_children[i].push_back(f);
      }
    }
  }
};

const Index& TheIndex() {
  static const Index index;
  return index;
}

}  // namespace

const char* Field::NameOf(int code) const {
  for (size_t i = 0; i < enum_codes.size(); ++i) {
    if (enum_codes[i] == code) return values[i].data();  // the names are string literals
  }
  return nullptr;
}

const std::vector<Field>& Fields() { return TheIndex().fields; }

const Field* Find(std::string_view path) {
  const auto& m = TheIndex().by_path;
  auto it = m.find(path);
  return it == m.end() ? nullptr : it->second;
}

const std::vector<const Field*>& Children(const Field* object) {
  const Index& index = TheIndex();
  return index.children[index.Position(object)];
}

const std::vector<const Field*>& EchoChildren(const Field* object) {
  const Index& index = TheIndex();
  return index.echo_children[index.Position(object)];
}

const std::vector<const Field*>& Children(std::string_view parent) {
  static const std::vector<const Field*> kNone;
  const Field* object = parent.empty() ? nullptr : Find(parent);
  return parent.empty() || object != nullptr ? Children(object) : kNone;
}

const std::vector<const Field*>& EchoChildren(std::string_view parent) {
  static const std::vector<const Field*> kNone;
  const Field* object = parent.empty() ? nullptr : Find(parent);
  return parent.empty() || object != nullptr ? EchoChildren(object) : kNone;
}

}  // namespace vramplan::fields
