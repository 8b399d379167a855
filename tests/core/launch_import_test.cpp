// Importing the launch configs people run: configs written after each framework's documented
// examples (sources in each test) give the expected scenario fields and notes; hostile input (deep
// nesting, huge numbers, wrong types, mutated bytes) gives a clear error naming the key, never a
// crash. The format modules (launch/format_*.cpp and their shared readers) are tested here.
#include <random>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "launch/formats.h"
#include "launch/launch_ops.h"
#include "launch/model_match.h"
#include "vramplan/estimate.h"

namespace vramplan::launch {
namespace launch_import_test {

using nlohmann::json;

ImportOutcome Import(const std::string& text, const std::string& format = "auto") {
  ImportOutcome out = ImportLaunchConfig(text, format);
  EXPECT_TRUE(out.errors.empty()) << (out.errors.empty() ? "" : out.errors[0].field_path + ": " + out.errors[0].message);
  return out;
}

const Note* FindNote(const ImportOutcome& out, const std::string& key) {
  for (const Note& n : out.notes) {
    if (n.key == key) return &n;
  }
  return nullptr;
}

// Valid as a scenario (configs that name no model: with one added, as the user would).
void ExpectEstimable(const ImportOutcome& out) {
  json scenario = out.scenario;
  if (!scenario.contains("model")) scenario["model"] = "meta-llama/Llama-3.1-8B";
  auto s = ParseScenario(scenario.dump());
  ASSERT_TRUE(s.ok()) << s.errors()[0].field_path << ": " << s.errors()[0].message << "\n" << out.scenario.dump();
}

// vLLM docs, "OpenAI-Compatible Server" and "Distributed Inference and Serving" (v0.10).
TEST(LaunchImport, VllmServe) {
  const auto out = Import("vllm serve Qwen/Qwen2.5-7B-Instruct \\\n  --max-model-len 8192 --gpu-memory-utilization 0.9 --enforce-eager \\\n"
                          "  --tensor-parallel-size 2 --dtype bfloat16 --api-key token-abc123 --trust-remote-code\n");
  EXPECT_EQ(out.format, "vllm");
  EXPECT_EQ(out.scenario["model"], "Qwen/Qwen2.5-7B-Instruct");  // a preset of its own since 123 presets
  EXPECT_EQ(out.scenario["mode"], "inference");
  EXPECT_EQ(out.scenario["inference"]["engine"], "vllm");
  EXPECT_EQ(out.scenario["inference"]["max_model_len"], 8192);
  EXPECT_EQ(out.scenario["inference"]["cuda_graphs"], false);
  EXPECT_EQ(out.scenario["parallel"]["tp"], 2);
  EXPECT_EQ(out.scenario["parallel"]["gpus"], 2);
  ASSERT_NE(FindNote(out, "--api-key"), nullptr);
  EXPECT_EQ(FindNote(out, "--api-key")->status, "ignored");
  ExpectEstimable(out);
  // python -m form, --model, the model's context length as vLLM's default max_model_len, --flag=value
  const auto m = Import("python -m vllm.entrypoints.openai.api_server --model=meta-llama/Llama-3.1-8B --quantization fp8 --cpu-offload-gb 4");
  EXPECT_EQ(m.scenario["inference"]["max_model_len"], 131072);
  EXPECT_EQ(m.scenario["inference"]["weights"], "fp8");
  ASSERT_NE(FindNote(m, "--cpu-offload-gb"), nullptr);
  EXPECT_EQ(FindNote(m, "--cpu-offload-gb")->status, "unsupported");
  // --dtype auto (the default) leaves the weights to the checkpoint: gpt-oss is served in MXFP4.
  const auto oss = Import("vllm serve openai/gpt-oss-20b");
  EXPECT_FALSE(oss.scenario["inference"].contains("weights"));
  ExpectEstimable(oss);
  auto parsed = ParseScenario(oss.scenario.dump());
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed.value().inference.weights, WeightFormat::kMxfp4);
}

// llama.cpp tools/server/README.md and docs/build.md examples (b6500).
TEST(LaunchImport, LlamaServer) {
  const auto out = Import("./build/bin/llama-server -m models/Qwen3-32B-Q4_K_M.gguf -c 32768 -ngl 99 -fa on -ctk q8_0 -ctv q8_0 --port 8080 -np 2\n");
  EXPECT_EQ(out.format, "llama_cpp");
  EXPECT_EQ(out.scenario["model"], "Qwen/Qwen3-32B");
  EXPECT_EQ(out.scenario["inference"]["weights"], "gguf_q4_k_m");
  EXPECT_EQ(out.scenario["inference"]["n_ctx"], 32768);
  EXPECT_EQ(out.scenario["inference"]["n_gpu_layers"], -1);
  EXPECT_EQ(out.scenario["inference"]["flash_attn"], true);
  EXPECT_EQ(out.scenario["inference"]["kv_cache"], "int8");
  EXPECT_EQ(out.scenario["inference"]["batch_size"], 2);
  ExpectEstimable(out);
  // The older bare -fa flag, -hf with a quantization tag, K and V types that differ.
  const auto old = Import("llama-cli -hf bartowski/Meta-Llama-3.1-8B-Instruct-GGUF:Q8_0 -fa -c 4096 -ctk q4_0 -n 256");
  EXPECT_EQ(old.scenario["inference"]["flash_attn"], true);
  EXPECT_EQ(old.scenario["inference"]["weights"], "gguf_q8_0");
  EXPECT_EQ(old.scenario["inference"]["kv_cache"], "fp16");
  EXPECT_EQ(old.scenario["inference"]["new_tokens"], 256);
  const auto unknown = Import("llama-server -m /models/my-finetune.gguf");
  EXPECT_FALSE(unknown.scenario.contains("model"));
  ASSERT_NE(FindNote(unknown, "-m"), nullptr);
}

// LLaMA-Factory examples/train_lora/llama3_lora_sft.yaml (v0.9.3).
TEST(LaunchImport, LlamaFactoryLora) {
  const auto out = Import(R"(### model
model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct
trust_remote_code: true

### method
stage: sft
do_train: true
finetuning_type: lora
lora_rank: 8
lora_target: all

### dataset
dataset: identity,alpaca_en_demo
template: llama3
cutoff_len: 2048
max_samples: 1000
overwrite_cache: true
preprocessing_num_workers: 16
dataloader_num_workers: 4

### output
output_dir: saves/llama3-8b/lora/sft
logging_steps: 10
save_steps: 500
plot_loss: true
overwrite_output_dir: true
save_only_model: false
report_to: none  # choices: [none, wandb, tensorboard, swanlab, mlflow]

### train
per_device_train_batch_size: 1
gradient_accumulation_steps: 8
learning_rate: 1.0e-4
num_train_epochs: 3.0
lr_scheduler_type: cosine
warmup_ratio: 0.1
bf16: true
ddp_timeout: 180000000
resume_from_checkpoint: null
)");
  EXPECT_EQ(out.format, "llamafactory");
  EXPECT_EQ(out.scenario["model"], "meta-llama/Meta-Llama-3-8B-Instruct");
  EXPECT_EQ(out.scenario["train"]["method"], "lora");
  EXPECT_EQ(out.scenario["train"]["lora"]["rank"], 8);
  EXPECT_EQ(out.scenario["train"]["lora"]["alpha"], 16.0);
  EXPECT_EQ(out.scenario["train"]["lora"]["targets"], "all-linear");
  EXPECT_EQ(out.scenario["train"]["seq_len"], 2048);
  EXPECT_EQ(out.scenario["train"]["micro_batch_size"], 1);
  EXPECT_EQ(out.scenario["train"]["grad_accum_steps"], 8);
  EXPECT_EQ(out.scenario["train"]["precision"], "bf16");
  EXPECT_EQ(out.scenario["train"]["autocast"], true);
  EXPECT_EQ(out.scenario["train"]["gradient_checkpointing"], true);
  EXPECT_EQ(FindNote(out, "dataset")->status, "ignored");
  ExpectEstimable(out);
}

// LLaMA-Factory examples/train_full/llama3_full_sft.yaml naming examples/deepspeed/ds_z3_config.json,
// given as a second document.
TEST(LaunchImport, LlamaFactoryFullWithDeepSpeedDocument) {
  const auto out = Import(R"(model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct
stage: sft
do_train: true
finetuning_type: full
deepspeed: examples/deepspeed/ds_z3_config.json
dataset: identity,alpaca_en_demo
template: llama3
cutoff_len: 2048
per_device_train_batch_size: 1
gradient_accumulation_steps: 2
bf16: true
---
{
  "train_batch_size": "auto",
  "train_micro_batch_size_per_gpu": "auto",
  "gradient_accumulation_steps": "auto",
  "gradient_clipping": "auto",
  "zero_allow_untested_optimizer": true,
  "fp16": {"enabled": "auto", "loss_scale": 0, "loss_scale_window": 1000, "initial_scale_power": 16, "hysteresis": 2, "min_loss_scale": 1},
  "bf16": {"enabled": "auto"},
  "zero_optimization": {"stage": 3, "overlap_comm": false, "contiguous_gradients": true, "sub_group_size": 1e9,
    "reduce_bucket_size": "auto", "stage3_prefetch_bucket_size": "auto", "stage3_param_persistence_threshold": "auto",
    "stage3_max_live_parameters": 1e9, "stage3_max_reuse_distance": 1e9, "stage3_gather_16bit_weights_on_model_save": true}
}
)");
  EXPECT_EQ(out.scenario["train"]["method"], "full");
  EXPECT_EQ(out.scenario["parallel"]["zero"], 3);
  EXPECT_EQ(out.scenario["parallel"]["overlap_comm"], false);
  EXPECT_EQ(out.scenario["train"]["precision"], "mixed_bf16");
  ASSERT_NE(FindNote(out, "parallel.gpus"), nullptr);
  ExpectEstimable(out);
}

// axolotl examples/llama-3/qlora.yml (v0.10).
TEST(LaunchImport, AxolotlQlora) {
  const auto out = Import(R"(base_model: NousResearch/Meta-Llama-3-8B
load_in_8bit: false
load_in_4bit: true
strict: false
datasets:
  - path: aaditya/alpaca_subset_1
    type: alpaca
dataset_prepared_path:
val_set_size: 0
output_dir: ./outputs/qlora-out
adapter: qlora
lora_model_dir:
sequence_len: 4096
sample_packing: true
pad_to_sequence_len: true
lora_r: 32
lora_alpha: 16
lora_dropout: 0.05
lora_target_modules:
lora_target_linear: true
lora_fan_in_fan_out:
gradient_accumulation_steps: 4
micro_batch_size: 2
num_epochs: 4
optimizer: paged_adamw_32bit
lr_scheduler: cosine
learning_rate: 0.0002
train_on_inputs: false
group_by_length: false
bf16: auto
fp16:
tf32: false
gradient_checkpointing: true
logging_steps: 1
xformers_attention:
flash_attention: true
warmup_steps: 10
evals_per_epoch: 4
saves_per_epoch: 1
weight_decay: 0.0
fsdp:
fsdp_config:
special_tokens:
  pad_token: "<|end_of_text|>"
)");
  EXPECT_EQ(out.format, "axolotl");
  EXPECT_EQ(out.scenario["model"], "meta-llama/Meta-Llama-3-8B-Instruct");
  EXPECT_EQ(out.scenario["train"]["method"], "qlora");
  EXPECT_EQ(out.scenario["train"]["qlora_bits"], 4);
  EXPECT_EQ(out.scenario["train"]["lora"]["rank"], 32);
  EXPECT_EQ(out.scenario["train"]["lora"]["targets"], "all-linear");
  EXPECT_EQ(out.scenario["train"]["seq_len"], 4096);
  EXPECT_EQ(out.scenario["train"]["micro_batch_size"], 2);
  EXPECT_EQ(out.scenario["train"]["attention"], "flash");
  EXPECT_EQ(out.scenario["train"]["precision"], "bf16");
  ExpectEstimable(out);
}

// transformers TrainingArguments as JSON and PEFT's adapter_config.json (a LoraConfig), two documents.
TEST(LaunchImport, HfTrainingArgumentsAndLoraConfig) {
  const auto out = Import(R"({"output_dir": "out", "per_device_train_batch_size": 4, "gradient_accumulation_steps": 4,
 "learning_rate": 2e-4, "bf16": true, "gradient_checkpointing": true, "optim": "paged_adamw_8bit", "logging_steps": 10,
 "num_train_epochs": 1, "max_steps": -1, "report_to": "none"}
{"alpha_pattern": {}, "auto_mapping": null, "base_model_name_or_path": "meta-llama/Llama-3.1-8B", "bias": "none",
 "fan_in_fan_out": false, "inference_mode": true, "init_lora_weights": true, "layer_replication": null, "layers_pattern": null,
 "layers_to_transform": null, "loftq_config": {}, "lora_alpha": 16, "lora_dropout": 0.05, "megatron_config": null,
 "megatron_core": "megatron.core", "modules_to_save": null, "peft_type": "LORA", "r": 8, "rank_pattern": {}, "revision": null,
 "target_modules": ["v_proj", "q_proj"], "task_type": "CAUSAL_LM", "use_dora": false, "use_rslora": false})");
  EXPECT_EQ(out.format, "hf");
  EXPECT_EQ(out.scenario["model"], "meta-llama/Llama-3.1-8B");
  EXPECT_EQ(out.scenario["train"]["method"], "lora");
  EXPECT_EQ(out.scenario["train"]["lora"]["rank"], 8);
  EXPECT_EQ(out.scenario["train"]["lora"]["targets"], json::array({"v_proj", "q_proj"}));
  EXPECT_EQ(out.scenario["train"]["micro_batch_size"], 4);
  EXPECT_EQ(out.scenario["train"]["optimizer"], "paged_adamw_8bit");
  EXPECT_EQ(out.scenario["train"]["precision"], "amp_bf16");  // no torch_dtype: from_pretrained loads fp32
  ExpectEstimable(out);
}

// use_reentrant false: transformers' checkpoint makes no detached leaf, so FSDP1's reshard-only hook on
// frozen units keeps nothing (parallel/fsdp_frozen_unit_hooks.h); true or absent keeps the default.
TEST(LaunchImport, UseReentrantFalseTurnsOffFsdpFrozenUnitHooks) {
  const auto off = Import(R"({"model_name_or_path": "meta-llama/Llama-3.1-8B", "use_peft": true, "fsdp": "full_shard",
 "gradient_checkpointing": true, "gradient_checkpointing_kwargs": {"use_reentrant": false}})");
  EXPECT_EQ(off.format, "hf");
  EXPECT_EQ(off.scenario["parallel"]["fsdp_frozen_unit_hooks"], false);
  ExpectEstimable(off);
  const auto trl = Import(R"({"model_name_or_path": "meta-llama/Llama-3.1-8B", "use_peft": true, "fsdp": "full_shard",
 "gradient_checkpointing": true, "gradient_checkpointing_use_reentrant": false})");
  EXPECT_EQ(trl.scenario["parallel"]["fsdp_frozen_unit_hooks"], false);
  const auto on = Import(R"({"model_name_or_path": "meta-llama/Llama-3.1-8B", "use_peft": true, "fsdp": "full_shard",
 "gradient_checkpointing": true, "gradient_checkpointing_kwargs": {"use_reentrant": true}})");
  EXPECT_FALSE(on.scenario["parallel"].contains("fsdp_frozen_unit_hooks"));
  ExpectEstimable(on);
  const auto axolotl = Import(
      "base_model: meta-llama/Llama-3.1-8B\nadapter: lora\ndatasets:\n  - path: a\n    type: alpaca\nfsdp: [full_shard]\n"
      "gradient_checkpointing: true\ngradient_checkpointing_kwargs:\n  use_reentrant: false\n");
  EXPECT_EQ(axolotl.format, "axolotl");
  EXPECT_EQ(axolotl.scenario["parallel"]["fsdp_frozen_unit_hooks"], false);
}

// HF "DeepSpeed integration" docs: a ZeRO-3 config with CPU offload and "auto" values.
TEST(LaunchImport, DeepSpeedAlone) {
  const auto out = Import(R"({
  "fp16": {"enabled": "auto"}, "bf16": {"enabled": "auto"},
  "optimizer": {"type": "AdamW", "params": {"lr": "auto", "betas": "auto", "eps": "auto", "weight_decay": "auto"}},
  "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu", "pin_memory": true},
    "offload_param": {"device": "cpu", "pin_memory": true}, "overlap_comm": true, "contiguous_gradients": true,
    "sub_group_size": 1e9, "reduce_bucket_size": "auto", "stage3_prefetch_bucket_size": "auto",
    "stage3_param_persistence_threshold": "auto", "stage3_max_live_parameters": 1e9, "stage3_max_reuse_distance": 1e9,
    "stage3_gather_16bit_weights_on_model_save": true},
  "gradient_accumulation_steps": "auto", "gradient_clipping": "auto", "steps_per_print": 2000,
  "train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto", "wall_clock_breakdown": false
})");
  EXPECT_EQ(out.format, "deepspeed");
  EXPECT_EQ(out.scenario["parallel"]["zero"], 3);
  EXPECT_EQ(out.scenario["parallel"]["offload_optimizer"], "cpu");
  EXPECT_EQ(out.scenario["parallel"]["offload_params"], "cpu");
  // ZeRO-3's gathering knobs are read; HF's "auto" ones keep DeepSpeed's defaults.
  EXPECT_EQ(out.scenario["parallel"]["stage3_max_live_parameters"], 1000000000);
  EXPECT_EQ(out.scenario["parallel"]["stage3_max_reuse_distance"], 1000000000);
  EXPECT_FALSE(out.scenario["parallel"].contains("stage3_prefetch_bucket_size"));
  EXPECT_EQ(out.scenario["train"]["optimizer_impl"], "fused");
  EXPECT_FALSE(out.scenario.contains("model"));
  ExpectEstimable(out);  // with a stand-in model: the fields themselves are valid
}

// torchtune recipes/configs/llama3_1/8B_lora_single_device.yaml (v0.6), shortened, plus overrides.
TEST(LaunchImport, TorchtuneWithOverrides) {
  const auto out = Import(R"(output_dir: /tmp/torchtune/llama3_1_8B/lora_single_device
model:
  _component_: torchtune.models.llama3_1.lora_llama3_1_8b
  lora_attn_modules: ['q_proj', 'v_proj', 'output_proj']
  apply_lora_to_mlp: True
  apply_lora_to_output: False
  lora_rank: 8
  lora_alpha: 16
  lora_dropout: 0.0
tokenizer:
  _component_: torchtune.models.llama3.llama3_tokenizer
  path: /tmp/Meta-Llama-3.1-8B-Instruct/original/tokenizer.model
  max_seq_len: null
checkpointer:
  _component_: torchtune.training.FullModelHFCheckpointer
  checkpoint_dir: /tmp/Meta-Llama-3.1-8B-Instruct/
  model_type: LLAMA3
resume_from_checkpoint: False
save_adapter_weights_only: False
dataset:
  _component_: torchtune.datasets.alpaca_cleaned_dataset
  packed: False
seed: null
shuffle: True
batch_size: 2
optimizer:
  _component_: torch.optim.AdamW
  fused: True
  weight_decay: 0.01
  lr: 3e-4
lr_scheduler:
  _component_: torchtune.training.lr_schedulers.get_cosine_schedule_with_warmup
  num_warmup_steps: 100
loss:
  _component_: torchtune.modules.loss.CEWithChunkedOutputLoss
epochs: 1
max_steps_per_epoch: null
gradient_accumulation_steps: 8
compile: False
device: cuda
enable_activation_checkpointing: True
enable_activation_offloading: False
dtype: bf16
batch_size=4
tokenizer.max_seq_len=2048
)");
  EXPECT_EQ(out.format, "torchtune");
  EXPECT_EQ(out.scenario["model"], "meta-llama/Llama-3.1-8B");
  EXPECT_EQ(out.scenario["train"]["method"], "lora");
  EXPECT_EQ(out.scenario["train"]["lora"]["targets"], json::array({"q_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}));
  EXPECT_EQ(out.scenario["train"]["micro_batch_size"], 4);
  EXPECT_EQ(out.scenario["train"]["seq_len"], 2048);
  EXPECT_EQ(out.scenario["train"]["loss"], "chunked");
  EXPECT_EQ(out.scenario["train"]["optimizer_impl"], "fused");
  EXPECT_EQ(out.scenario["train"]["precision"], "bf16");
  EXPECT_EQ(out.scenario["train"]["lora"]["adapter_dtype"], "base");
  ExpectEstimable(out);
  // A `tune run` line naming a built-in config: model and method from the config's name.
  const auto run = Import("tune run --nproc_per_node 2 lora_finetune_distributed --config llama3_1/8B_lora batch_size=2 gradient_accumulation_steps=4\n");
  EXPECT_EQ(run.scenario["model"], "meta-llama/Llama-3.1-8B");
  EXPECT_EQ(run.scenario["train"]["method"], "lora");
  EXPECT_EQ(run.scenario["parallel"]["gpus"], 2);
  EXPECT_EQ(run.scenario["train"]["grad_accum_steps"], 4);
}

// accelerate docs, "Fully Sharded Data Parallel": the config `accelerate config` writes.
TEST(LaunchImport, AccelerateFsdp) {
  const auto out = Import(R"(compute_environment: LOCAL_MACHINE
debug: false
distributed_type: FSDP
downcast_bf16: 'no'
fsdp_config:
  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP
  fsdp_backward_prefetch_policy: BACKWARD_PRE
  fsdp_forward_prefetch: false
  fsdp_cpu_ram_efficient_loading: true
  fsdp_offload_params: false
  fsdp_sharding_strategy: FULL_SHARD
  fsdp_state_dict_type: SHARDED_STATE_DICT
  fsdp_sync_module_states: true
  fsdp_transformer_layer_cls_to_wrap: BertLayer
  fsdp_use_orig_params: true
machine_rank: 0
main_training_function: main
mixed_precision: bf16
num_machines: 1
num_processes: 2
rdzv_backend: static
same_network: true
tpu_env: []
tpu_use_cluster: false
tpu_use_sudo: false
use_cpu: false
)");
  EXPECT_EQ(out.format, "accelerate");
  EXPECT_EQ(out.scenario["parallel"]["fsdp"], true);
  EXPECT_EQ(out.scenario["parallel"]["fsdp_sharding"], "full_shard");
  EXPECT_EQ(out.scenario["parallel"]["gpus"], 2);
  EXPECT_EQ(out.scenario["train"]["precision"], "amp_bf16");
  ASSERT_NE(FindNote(out, "fsdp_config.fsdp_backward_prefetch_policy"), nullptr);
  ExpectEstimable(out);
}

TEST(LaunchImport, ModelNamesMatchPresets) {
  EXPECT_EQ(MatchPreset("meta-llama/Llama-3.1-8B"), "meta-llama/Llama-3.1-8B");
  EXPECT_EQ(MatchPreset("META-LLAMA/llama-3.1-8b"), "meta-llama/Llama-3.1-8B");
  EXPECT_EQ(MatchPreset("/data/models/Qwen2.5-7B/"), "Qwen/Qwen2.5-7B");
  EXPECT_EQ(MatchPreset("Qwen3-32B-Q4_K_M.gguf"), "Qwen/Qwen3-32B");
  EXPECT_EQ(MatchPreset("Qwen/Qwen2.5-7B-Instruct"), "Qwen/Qwen2.5-7B-Instruct");  // its own preset
  EXPECT_EQ(MatchPreset("Qwen/Qwen2.5-14B-Instruct"), "Qwen/Qwen2.5-14B");          // no preset: the base
  EXPECT_EQ(MatchPreset("someone/unknown-model"), "");
  EXPECT_EQ(MatchPreset(""), "");
}

TEST(LaunchImport, DetectsEachFormat) {
  EXPECT_EQ(DetectFormat("vllm serve x"), "vllm");
  EXPECT_EQ(DetectFormat("llama-server -m x.gguf"), "llama_cpp");
  EXPECT_EQ(DetectFormat("finetuning_type: lora\n"), "llamafactory");
  EXPECT_EQ(DetectFormat("base_model: x\nadapter: lora\n"), "axolotl");
  EXPECT_EQ(DetectFormat("{\"zero_optimization\": {\"stage\": 2}}"), "deepspeed");
  EXPECT_EQ(DetectFormat("{\"per_device_train_batch_size\": 2}"), "hf");
  EXPECT_EQ(DetectFormat("distributed_type: FSDP\nnum_processes: 8\n"), "accelerate");
  EXPECT_EQ(DetectFormat("model:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\n"), "torchtune");
  EXPECT_EQ(DetectFormat("hello: world\n"), "");
}

// ---- Hostile input: clear errors naming the key, never a crash.

Issue FirstError(const std::string& text, const std::string& format = "auto") {
  const ImportOutcome out = ImportLaunchConfig(text, format);
  EXPECT_FALSE(out.errors.empty()) << text.substr(0, 100);
  return out.errors.empty() ? Issue{} : out.errors[0];
}

TEST(LaunchImport, BadTypesAndHugeNumbersNameTheKey) {
  Issue e = FirstError("finetuning_type: lora\nlora_rank: eight\n");
  EXPECT_EQ(e.field_path, "lora_rank");
  e = FirstError("finetuning_type: lora\nper_device_train_batch_size: 1e30\n");
  EXPECT_EQ(e.field_path, "per_device_train_batch_size");
  EXPECT_EQ(e.code, "out_of_range");
  e = FirstError("finetuning_type: lora\ncutoff_len: [1, 2]\n");
  EXPECT_EQ(e.field_path, "cutoff_len");
  e = FirstError("vllm serve m --tensor-parallel-size abc");
  EXPECT_EQ(e.field_path, "--tensor-parallel-size");
  e = FirstError("vllm serve m --max-model-len 99999999999999999999");
  EXPECT_EQ(e.field_path, "--max-model-len");
  e = FirstError("llama-server -m a.gguf -c -5");
  EXPECT_EQ(e.field_path, "-c");
  e = FirstError(R"({"zero_optimization": {"stage": 7}})");
  EXPECT_EQ(e.field_path, "zero_optimization.stage");
  e = FirstError(R"({"per_device_train_batch_size": 1e400})", "hf");
  EXPECT_EQ(e.code, "out_of_range");
  e = FirstError("model:\n  _component_: torchtune.models.llama3_1.lora_llama3_1_8b\nbatch_size: {a: 1}\n");
  EXPECT_EQ(e.field_path, "batch_size");
  e = FirstError("distributed_type: FSDP\nnum_processes: -1\n");
  EXPECT_EQ(e.field_path, "num_processes");
}

TEST(LaunchImport, DeepNestingAndHugeInputAreRefused) {
  EXPECT_EQ(FirstError("{\"deepspeed\": " + std::string(5000, '[') + std::string(5000, ']') + "}", "hf").code, "too_deep");
  std::string yaml = "finetuning_type: lora\nx:\n";
  for (int i = 1; i < 300; ++i) yaml += std::string(2 * static_cast<size_t>(i), ' ') + "k:\n";
  EXPECT_EQ(FirstError(yaml, "llamafactory").code, "too_deep");
  EXPECT_EQ(FirstError(std::string(5 << 20, ' ')).code, "too_large");
  EXPECT_EQ(FirstError("hello: world\n").code, "unknown_format");
  EXPECT_EQ(FirstError("x", "nope").code, "unknown_format");
  EXPECT_EQ(FirstError("# vramplan: {not json\nfinetuning_type: lora\n").field_path.rfind("vramplan", 0), 0u);
}

// --speculative-config (vllm/config/speculative.py): MTP is read into inference.speculative and
// written back; other methods are noted as unsupported.
TEST(LaunchImport, VllmSpeculativeConfigMtp) {
  const auto out = Import("vllm serve deepseek-ai/DeepSeek-V3 -tp 8 --speculative-config '{\"method\": \"deepseek_mtp\", \"num_speculative_tokens\": 2}'");
  EXPECT_EQ(out.scenario["inference"]["speculative"]["method"], "mtp");
  EXPECT_EQ(out.scenario["inference"]["speculative"]["num_speculative_tokens"], 2);
  ExpectEstimable(out);
  auto s = ParseScenario(out.scenario.dump());
  ASSERT_TRUE(s.ok());
  const std::string text = ExportLaunchConfig(s.value(), "vllm").text;
  EXPECT_NE(text.find("--speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 2}'"), std::string::npos) << text;
  const auto back = Import(text);
  EXPECT_EQ(back.scenario["inference"]["speculative"], out.scenario["inference"]["speculative"]);
  const auto eagle = Import("vllm serve Qwen/Qwen2.5-7B --speculative-config '{\"method\": \"eagle3\", \"model\": \"x\", \"num_speculative_tokens\": 3}'");
  ASSERT_NE(FindNote(eagle, "--speculative-config"), nullptr);
  EXPECT_EQ(FindNote(eagle, "--speculative-config")->status, "unsupported");
  EXPECT_FALSE(eagle.scenario["inference"].contains("speculative"));
}

// Every example above, mutated a few thousand times (bytes replaced, deleted, duplicated, cut),
// imports as a value: a scenario or errors.
TEST(LaunchImport, MutatedConfigsNeverCrash) {
  const std::vector<std::string> seeds = {
      "vllm serve Qwen/Qwen2.5-7B --max-model-len 8k -tp 2 --kv-cache-dtype fp8\n",
      "llama-server -m Qwen3-32B-Q4_K_M.gguf -c 32768 -ngl 99 -fa on -ctk q8_0\n",
      "model_name_or_path: Qwen/Qwen2.5-7B\nfinetuning_type: lora\nlora_target: all\ndeepspeed: {zero_optimization: {stage: 3}}\nbf16: true\n",
      "base_model: x/Llama-3.2-3B\nadapter: qlora\nload_in_4bit: true\ndatasets:\n  - path: a\n    type: alpaca\nfsdp: [full_shard]\n",
      "{\"zero_optimization\": {\"stage\": 3, \"offload_param\": {\"device\": \"cpu\"}}, \"train_batch_size\": 16, \"train_micro_batch_size_per_gpu\": 2}",
      "{\"model_name_or_path\": \"Qwen/Qwen3-8B\", \"use_peft\": true, \"fsdp\": \"full_shard offload\", \"deepspeed\": {\"bf16\": {\"enabled\": true}}}",
      "model:\n  _component_: torchtune.models.qwen2_5.lora_qwen2_5_7b_base\n  lora_attn_modules: [q_proj]\nbatch_size=2\n~dtype=x\n",
      "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\nnum_processes: 8\n# vramplan: {\"gpu\": \"h100-sxm-80gb\"}\n",
  };
  std::mt19937_64 rng(15);
  for (int round = 0; round < 3000; ++round) {
    std::string s = seeds[static_cast<size_t>(round) % seeds.size()];
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !s.empty(); ++e) {
      const size_t at = rng() % s.size();
      switch (rng() % 5) {
        case 0: s[at] = static_cast<char>(rng() % 256); break;
        case 1: s.erase(at, 1 + rng() % 8); break;
        case 2: s.insert(at, s.substr(at, std::min<size_t>(s.size() - at, 1 + rng() % 20))); break;
        case 3: s.resize(at); break;
        default: s.insert(at, std::string(1 + rng() % 3, "[{\"'\\:-\n #="[rng() % 12]));
      }
    }
    const ImportOutcome out = ImportLaunchConfig(s, round % 3 == 0 ? "auto" : Formats()[rng() % Formats().size()].name);
    if (out.errors.empty()) {
      // What imports must also serialize and validate without surprises.
      (void)ParseScenario(out.scenario.dump(-1, ' ', false, json::error_handler_t::replace));
    }
  }
  SUCCEED();
}

}  // namespace
}  // namespace vramplan::launch
