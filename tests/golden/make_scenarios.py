#!/usr/bin/env python3
"""Writes the golden scenarios (tests/golden/scenarios/<group>.jsonl) from the grid below.

Python 3 standard library only; deterministic (same bytes on every run). Each output line is
    {"name": "<group>_<case>", "expect": "ok" | "warning" | "error", "scenario": {...}}
or, for documents that are not a JSON object (the invalid-JSON error cases),
    {"name": ..., "expect": "error", "text": "<the raw scenario text>"}.

The scenario is the last key of its line, and the tests pass its text exactly as written (so an
inline config's 1.0 stays 1.0 in the echoed config). `expect` is the grid's intent, checked by tests/core/golden_test.cpp independently of the
expected bytes: "error" must be refused (ok false), "ok" and "warning" must be estimated (ok true),
and "warning" must carry at least one warning.

    python3 tests/golden/make_scenarios.py          # rewrite the scenario files
    python3 tests/golden/make_scenarios.py --check  # exit 1 if the checked-in files differ
    python3 tests/golden/make_scenarios.py --stats  # counts by group, mode, method, engine

After changing the grid, run scripts/rebaseline-golden to write the expected outputs.
"""

import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "scenarios")
NAME_RE = re.compile(r"^[a-z0-9_]+$")

GROUPS = []  # (group, [(name, expect, scenario_or_text)]) in file order


def group(name):
    cases = []
    GROUPS.append((name, cases))

    def add(case, scenario, expect="ok"):
        cases.append((name + "_" + case, expect, scenario))

    return add


def train(model, gpu=None, parallel=None, framework=None, **train_fields):
    s = {"model": model, "mode": "train", "train": dict(train_fields)}
    if parallel is not None:
        s["parallel"] = parallel
    if gpu is not None:
        s["gpu"] = gpu
    if framework is not None:
        s["framework"] = framework
    return s


def infer(model, gpu=None, parallel=None, **inference_fields):
    s = {"model": model, "mode": "inference", "inference": dict(inference_fields)}
    if parallel is not None:
        s["parallel"] = parallel
    if gpu is not None:
        s["gpu"] = gpu
    return s


# Short names for presets, used in scenario names.
LLAMA32_1B = "meta-llama/Llama-3.2-1B-Instruct"
LLAMA31_8B = "meta-llama/Llama-3.1-8B"
LLAMA31_70B = "meta-llama/Llama-3.1-70B-Instruct"
LLAMA31_405B = "meta-llama/Llama-3.1-405B"
MISTRAL_7B = "mistralai/Mistral-7B-v0.3"
MIXTRAL_8X7B = "mistralai/Mixtral-8x7B-v0.1"
QWEN25_05B = "Qwen/Qwen2.5-0.5B"
QWEN25_15B = "Qwen/Qwen2.5-1.5B"
QWEN25_7B = "Qwen/Qwen2.5-7B"
QWEN3_30B_A3B = "Qwen/Qwen3-30B-A3B"
GPT2 = "openai-community/gpt2"
DEEPSEEK_V3 = "deepseek-ai/DeepSeek-V3"
GPT_OSS_20B = "openai/gpt-oss-20b"
GPT_OSS_120B = "openai/gpt-oss-120b"

# Inline config.json objects (model: {...}).
QWEN1_7B_CONFIG = {  # Qwen/Qwen-7B (remote code, model_type "qwen"), as in tests/fixtures/param_counts.json
    "architectures": ["QWenLMHeadModel"], "bf16": False, "emb_dropout_prob": 0.0, "fp16": False, "fp32": False,
    "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 22016, "kv_channels": 128,
    "layer_norm_epsilon": 1e-06, "max_position_embeddings": 32768, "model_type": "qwen", "no_bias": True,
    "num_attention_heads": 32, "num_hidden_layers": 32, "onnx_safe": None, "rotary_emb_base": 10000,
    "rotary_pct": 1.0, "scale_attn_weights": True, "seq_length": 8192, "tie_word_embeddings": False,
    "tokenizer_class": "QWenTokenizer", "use_cache": True, "use_dynamic_ntk": True, "use_flash_attn": "auto",
    "use_logn_attn": True, "vocab_size": 151936,
}
DEEPSEEK_V2_SMALL_CONFIG = {  # a DeepSeek-V2-Lite-shaped config: MLA without q_lora, 64 routed + 2 shared experts
    "_name_or_path": "golden/deepseek-v2-lite-shaped", "architectures": ["DeepseekV2ForCausalLM"],
    "first_k_dense_replace": 1, "hidden_act": "silu", "hidden_size": 2048, "intermediate_size": 10944,
    "kv_lora_rank": 512, "max_position_embeddings": 163840, "model_type": "deepseek_v2",
    "moe_intermediate_size": 1408, "moe_layer_freq": 1, "n_group": 1, "n_routed_experts": 64,
    "n_shared_experts": 2, "norm_topk_prob": False, "num_attention_heads": 16, "num_experts_per_tok": 6,
    "num_hidden_layers": 27, "num_key_value_heads": 16, "q_lora_rank": None, "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64, "rms_norm_eps": 1e-06, "routed_scaling_factor": 1.0, "tie_word_embeddings": False,
    "topk_group": 1, "topk_method": "greedy", "v_head_dim": 128, "vocab_size": 102400,
}
TINY_LLAMA_CONFIG = {
    "model_type": "llama", "hidden_size": 512, "intermediate_size": 1376, "num_attention_heads": 8,
    "num_key_value_heads": 2, "num_hidden_layers": 6, "vocab_size": 32000, "max_position_embeddings": 4096,
    "tie_word_embeddings": True,
}
GPT2_CUSTOM_CONFIG = {"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257, "n_positions": 1024}
NEOX_CUSTOM_CONFIG = {
    "_name_or_path": "golden/neox-small", "model_type": "gpt_neox", "hidden_size": 1024, "intermediate_size": 4096,
    "num_attention_heads": 16, "num_hidden_layers": 12, "vocab_size": 50304, "rotary_pct": 0.25,
    "max_position_embeddings": 2048, "use_parallel_residual": True, "tie_word_embeddings": False,
}
FALCON_CUSTOM_CONFIG = {
    "model_type": "falcon", "hidden_size": 1024, "num_attention_heads": 16, "num_hidden_layers": 8,
    "vocab_size": 65024, "new_decoder_architecture": False, "multi_query": True, "parallel_attn": True, "bias": False,
}
MIXTRAL_TINY_CONFIG = {
    "model_type": "mixtral", "hidden_size": 1024, "intermediate_size": 2816, "num_attention_heads": 16,
    "num_key_value_heads": 4, "num_hidden_layers": 4, "num_local_experts": 8, "num_experts_per_tok": 2,
    "vocab_size": 32000, "sliding_window": None,
}
GEMMA3_MULTIMODAL_CONFIG = {
    "model_type": "gemma3", "architectures": ["Gemma3ForConditionalGeneration"],
    "text_config": {"model_type": "gemma3_text", "hidden_size": 2560, "intermediate_size": 10240,
                    "num_hidden_layers": 34, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
                    "vocab_size": 262208, "sliding_window": 1024, "sliding_window_pattern": 6},
    # google/gemma-3-4b-it's vision_config: the SigLIP tower and projector count in checkpoint_total.
    "vision_config": {"hidden_size": 1152, "image_size": 896, "intermediate_size": 4304,
                      "model_type": "siglip_vision_model", "num_attention_heads": 16, "num_hidden_layers": 27,
                      "patch_size": 14, "vision_use_head": False},
}
# A wrapper whose vision tower is not counted (a LLaVA with a SigLIP tower; CLIP towers are counted):
# text decoder only, with the text_model_only warning.
# A wrapper whose tower is not counted: LLaVA-NeXT with a SigLIP tower (LLaVA with one is counted).
LLAVA_MULTIMODAL_CONFIG = {
    "model_type": "llava_next", "architectures": ["LlavaNextForConditionalGeneration"],
    "text_config": {"model_type": "llama", "hidden_size": 1024, "intermediate_size": 2816, "num_hidden_layers": 8,
                    "num_attention_heads": 16, "num_key_value_heads": 4, "vocab_size": 32064},
    "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 1024, "image_size": 336, "patch_size": 14},
}
UNKNOWN_TYPE_CONFIG = {
    "model_type": "brand_new", "hidden_size": 1024, "num_hidden_layers": 8, "num_attention_heads": 16,
    "vocab_size": 32000, "intermediate_size": 2816,
}

# UNKNOWN_TYPE_CONFIG plus Qwen3-Next's linear-attention and standard MoE keys.
UNKNOWN_HYBRID_CONFIG = dict(UNKNOWN_TYPE_CONFIG, linear_num_key_heads=16, linear_num_value_heads=32, linear_key_head_dim=128,
                             linear_value_head_dim=128, linear_conv_kernel_dim=4, full_attention_interval=4,
                             num_experts=64, num_experts_per_tok=8, moe_intermediate_size=512,
                             shared_expert_intermediate_size=512)

GIB = 1 << 30


# ---------------------------------------------------------------------------------------------
# Training: method x model x precision
add = group("train_methods")
for tag, model in [("llama32_1b", LLAMA32_1B), ("qwen25_7b", QWEN25_7B), ("gpt2", GPT2), ("mistral_7b", MISTRAL_7B)]:
    for method, precisions in [("full", ["bf16", "amp_bf16"]), ("freeze", ["bf16", "fp32"]),
                               ("lora", ["bf16", "amp_bf16"]), ("qlora", ["bf16", "fp16"])]:
        for precision in precisions:
            add(f"{method}_{tag}_{precision}", train(model, method=method, precision=precision, micro_batch_size=2, seq_len=1024))
for precision in ["fp32", "fp16", "bf16", "amp_fp16", "amp_bf16", "mixed_fp16", "mixed_bf16"]:
    add(f"full_llama31_8b_{precision}", train(LLAMA31_8B, method="full", precision=precision))
for precision in ["bf16", "fp16", "mixed_bf16"]:
    add(f"lora_llama31_8b_{precision}_autocast", train(LLAMA31_8B, method="lora", precision=precision, autocast=True))
add("defaults_llama31_8b", {"model": LLAMA31_8B})
add("defaults_train_mode_omitted_qwen25_05b", {"model": QWEN25_05B, "train": {"method": "full"}})
add("full_llama31_8b_grad_accum_8", train(LLAMA31_8B, method="full", grad_accum_steps=8, micro_batch_size=4))
add("full_qwen25_05b_pretrain_seq_4096", train(QWEN25_05B, method="full", precision="amp_bf16", micro_batch_size=8, seq_len=4096,
                                              gradient_checkpointing=False, optimizer="adamw", optimizer_impl="fused"))

# Training: optimizers and their implementations
add = group("train_optimizers")
for optimizer in ["adamw", "adamw_8bit", "paged_adamw_8bit", "adafactor", "sgd", "sgd_momentum", "lion"]:
    for impl in ["foreach", "fused", "for_loop"]:
        add(f"full_qwen25_15b_{optimizer}_{impl}", train(QWEN25_15B, method="full", optimizer=optimizer, optimizer_impl=impl))
for optimizer in ["adamw", "adamw_8bit", "paged_adamw_8bit", "adafactor", "sgd", "sgd_momentum", "lion"]:
    add(f"lora_llama31_8b_{optimizer}", train(LLAMA31_8B, method="lora", optimizer=optimizer))
for impl in ["foreach", "fused", "for_loop"]:
    add(f"full_llama32_1b_amp_bf16_adamw_{impl}", train(LLAMA32_1B, method="full", precision="amp_bf16", optimizer_impl=impl))
    add(f"full_llama32_1b_mixed_bf16_adamw_{impl}", train(LLAMA32_1B, method="full", precision="mixed_bf16", optimizer_impl=impl))

# Training: attention kernel x loss kernel x checkpointing
add = group("train_kernels")
for attention in ["eager", "sdpa", "flash"]:
    for loss in ["standard", "chunked", "fused_linear"]:
        for ckpt_tag, ckpt in [("nockpt", False), ("ckpt", True), ("selective", "selective")]:
            add(f"full_llama32_1b_{attention}_{loss}_{ckpt_tag}",
                train(LLAMA32_1B, method="full", micro_batch_size=2, seq_len=2048, attention=attention, loss=loss,
                      gradient_checkpointing=ckpt))
for loss in ["standard", "chunked", "fused_linear"]:
    add(f"lora_gemma2_2b_eager_{loss}", train("google/gemma-2-2b-it", method="lora", attention="eager", loss=loss, seq_len=4096))
add("lora_llama31_8b_seq_32768_flash", train(LLAMA31_8B, method="lora", attention="flash", seq_len=32768))
add("lora_llama31_8b_seq_131072_flash_selective", train(LLAMA31_8B, method="lora", attention="flash", seq_len=131072,
                                                         gradient_checkpointing="selective", loss="chunked"))

# Training: LoRA, DoRA and freeze variants
add = group("train_adapters")
for rank in [8, 64, 256]:
    add(f"lora_llama31_8b_rank_{rank}", train(LLAMA31_8B, method="lora", lora={"rank": rank}))
add("lora_llama31_8b_all_linear", train(LLAMA31_8B, method="lora", lora={"targets": "all-linear"}))
add("lora_llama31_8b_attention_targets", train(LLAMA31_8B, method="lora", lora={"targets": ["q_proj", "k_proj", "v_proj", "o_proj"]}))
add("lora_llama31_8b_mlp_targets", train(LLAMA31_8B, method="lora", lora={"targets": ["gate_proj", "up_proj", "down_proj"]}))
add("lora_llama31_8b_dropout", train(LLAMA31_8B, method="lora", lora={"dropout": 0.1, "targets": "all-linear"}))
add("lora_llama31_8b_adapter_dtype_base", train(LLAMA31_8B, method="lora", lora={"adapter_dtype": "base"}))
add("lora_llama31_8b_alpha_16", train(LLAMA31_8B, method="lora", lora={"alpha": 16, "rank": 8}))
add("dora_llama31_8b", train(LLAMA31_8B, method="lora", lora={"use_dora": True}))
add("dora_llama31_8b_all_linear_amp", train(LLAMA31_8B, method="lora", precision="amp_bf16", lora={"use_dora": True, "targets": "all-linear"}))
add("dora_qlora_llama31_8b", train(LLAMA31_8B, method="qlora", lora={"use_dora": True, "targets": "all-linear"}))
add("lora_llama31_8b_save_embed_tokens", train(LLAMA31_8B, method="lora", lora={"modules_to_save": ["embed_tokens"]}))
add("lora_llama31_8b_save_lm_head", train(LLAMA31_8B, method="lora", lora={"modules_to_save": ["lm_head"]}))
add("lora_llama31_8b_save_both", train(LLAMA31_8B, method="lora", lora={"modules_to_save": ["embed_tokens", "lm_head"]}))
add("lora_gpt2_save_wte", train(GPT2, method="lora", precision="fp32", lora={"modules_to_save": ["wte"]}))
add("qlora_qwen25_7b_save_lm_head", train(QWEN25_7B, method="qlora", lora={"modules_to_save": ["lm_head"], "targets": "all-linear"}))
add("lora_phi3_mini_default_targets", train("microsoft/Phi-3-mini-4k-instruct", method="lora"))
add("lora_falcon_7b_default_targets", train("tiiuae/falcon-7b", method="lora"), "warning")
add("lora_pythia_1b_default_targets", train("EleutherAI/pythia-1b", method="lora"), "warning")
add("lora_mixtral_all_linear", train(MIXTRAL_8X7B, method="lora", lora={"targets": "all-linear", "rank": 8}, gpu="h200-sxm-141gb"), "warning")
add("lora_grad_accum_4_llama31_8b", train(LLAMA31_8B, method="lora", grad_accum_steps=4, micro_batch_size=4))
for layers in [0, 4, 32]:
    add(f"freeze_llama31_8b_last_{layers}", train(LLAMA31_8B, method="freeze", freeze={"trainable_layers": layers}))
add("freeze_llama31_8b_embeddings", train(LLAMA31_8B, method="freeze", freeze={"trainable_layers": 2, "train_embeddings": True}))
add("freeze_llama31_8b_lm_head", train(LLAMA31_8B, method="freeze", freeze={"trainable_layers": 2, "train_lm_head": True}))
add("freeze_gemma_2b_embeddings_and_head", train("google/gemma-2b", method="freeze",
                                                 freeze={"trainable_layers": 1, "train_embeddings": True, "train_lm_head": True}))

# Training: QLoRA backends, bits, group sizes
add = group("train_qlora")
for bits in [4, 8, 2]:
    for dq in [True, False]:
        add(f"bnb_{bits}bit_dq_{str(dq).lower()}_llama31_8b",
            train(LLAMA31_8B, method="qlora", qlora_backend="bitsandbytes", qlora_bits=bits, qlora_double_quant=dq))
for bits in [2, 4, 8]:
    for gs in [32, 128, -1]:
        add(f"gptq_{bits}bit_group_{'channel' if gs == -1 else gs}_llama31_8b",
            train(LLAMA31_8B, method="qlora", qlora_backend="gptq", qlora_bits=bits, qlora_group_size=gs))
add("torchao_4bit_llama31_8b", train(LLAMA31_8B, method="qlora", qlora_backend="torchao", qlora_bits=4))
add("torchao_4bit_llama31_8b_torchtune_load", train(LLAMA31_8B, method="qlora", qlora_backend="torchao", lora={"targets": "all-linear"},
                                                     framework={"model_load": "torchtune_0_1"}))
add("bnb_mixtral_8x7b_all_linear", train(MIXTRAL_8X7B, method="qlora", lora={"targets": "all-linear", "rank": 64}), "warning")
add("bnb_qwen3_30b_a3b", train(QWEN3_30B_A3B, method="qlora", lora={"targets": "all-linear"}), "warning")
add("gptq_llama31_70b_rtx_4090", train(LLAMA31_70B, method="qlora", qlora_backend="gptq", gpu="rtx-4090-24gb"))
add("bnb_llama31_70b_a100_80gb_amp", train(LLAMA31_70B, method="qlora", precision="bf16", autocast=True, micro_batch_size=4,
                                           lora={"targets": "all-linear", "rank": 64}, gpu="a100-sxm-80gb"))
add("bnb_gemma3_27b_dora", train("google/gemma-3-27b-it", method="qlora", lora={"use_dora": True}, gpu="l40s-48gb"))

# Training: data parallelism (ZeRO, FSDP, offload), GPU counts, DeepSpeed knobs
add = group("train_parallel")
for gpus in [2, 8]:
    for zero in [0, 1, 2, 3]:
        add(f"full_llama31_8b_{gpus}gpu_zero{zero}", train(LLAMA31_8B, method="full", precision="mixed_bf16", parallel={"gpus": gpus, "zero": zero}))
    add(f"full_llama31_8b_{gpus}gpu_fsdp", train(LLAMA31_8B, method="full", precision="mixed_bf16", parallel={"gpus": gpus, "fsdp": True}))
for zero in [1, 2, 3]:
    add(f"full_llama31_70b_8gpu_zero{zero}", train(LLAMA31_70B, method="full", parallel={"gpus": 8, "zero": zero}))
add("full_llama31_70b_8gpu_fsdp", train(LLAMA31_70B, method="full", parallel={"gpus": 8, "fsdp": True}))
add("full_llama31_70b_8gpu_zero3_offload_optimizer", train(LLAMA31_70B, method="full", parallel={"gpus": 8, "zero": 3, "offload_optimizer": "cpu"}))
add("full_llama31_70b_8gpu_zero3_offload_both", train(LLAMA31_70B, method="full",
                                                      parallel={"gpus": 8, "zero": 3, "offload_optimizer": "cpu", "offload_params": "cpu"}))
add("full_llama31_70b_8gpu_zero3_nvme", train(LLAMA31_70B, method="full",
                                              parallel={"gpus": 8, "zero": 3, "offload_optimizer": "nvme", "offload_params": "nvme"}))
add("full_llama31_70b_8gpu_fsdp_offload_params", train(LLAMA31_70B, method="full", parallel={"gpus": 8, "fsdp": True, "offload_params": "cpu"}))
add("full_llama31_8b_1gpu_zero2_offload_optimizer", train(LLAMA31_8B, method="full", parallel={"gpus": 1, "zero": 2, "offload_optimizer": "cpu"}))
add("full_llama31_8b_4gpu_zero2_offload_optimizer", train(LLAMA31_8B, method="full", precision="mixed_bf16",
                                                          parallel={"gpus": 4, "zero": 2, "offload_optimizer": "cpu"}))
add("full_llama31_405b_64gpu_zero3", train(LLAMA31_405B, method="full", parallel={"gpus": 64, "zero": 3}))
add("full_llama31_70b_16gpu_4_per_node_zero3_offload_optimizer", train(LLAMA31_70B, method="full",
                                                                     parallel={"gpus": 16, "gpus_per_node": 4, "zero": 3, "offload_optimizer": "cpu"}))
add("full_llama31_405b_512gpu_fsdp", train(LLAMA31_405B, method="full", parallel={"gpus": 512, "fsdp": True}, gpu="h200-sxm-141gb"))
add("lora_llama31_70b_4gpu_zero3", train(LLAMA31_70B, method="lora", parallel={"gpus": 4, "zero": 3}))
add("lora_llama31_8b_2gpu_zero2", train(LLAMA31_8B, method="lora", parallel={"gpus": 2, "zero": 2}))
add("qlora_llama31_8b_2gpu_ddp", train(LLAMA31_8B, method="qlora", parallel={"gpus": 2}))
add("full_qwen25_7b_4gpu_zero2_bucket_small", train(QWEN25_7B, method="full", precision="mixed_bf16",
                                                    parallel={"gpus": 4, "zero": 2, "reduce_bucket_size": 50000000}))
add("full_qwen25_7b_4gpu_zero2_no_overlap", train(QWEN25_7B, method="full", precision="mixed_bf16",
                                                  parallel={"gpus": 4, "zero": 2, "overlap_comm": False, "contiguous_gradients": False}))
add("full_qwen25_7b_4gpu_zero3_overlap", train(QWEN25_7B, method="full", precision="mixed_bf16",
                                               parallel={"gpus": 4, "zero": 3, "overlap_comm": True, "reduce_bucket_size": 12845056}))
add("full_qwen25_7b_4gpu_zero1_contiguous", train(QWEN25_7B, method="full", precision="mixed_bf16",
                                                  parallel={"gpus": 4, "zero": 1, "contiguous_gradients": True}))
add("full_mixtral_8x7b_16gpu_zero3", train(MIXTRAL_8X7B, method="full", parallel={"gpus": 16, "zero": 3}), "warning")
add("full_gpt2_4gpu_fsdp_fp32", train(GPT2, method="full", precision="fp32", parallel={"gpus": 4, "fsdp": True}))
add("full_llama31_8b_8gpu_zero3_amp", train(LLAMA31_8B, method="full", precision="amp_bf16", parallel={"gpus": 8, "zero": 3}))
add("full_llama31_8b_8gpu_fsdp_8bit_adam", train(LLAMA31_8B, method="full", optimizer="adamw_8bit", parallel={"gpus": 8, "fsdp": True}))
# Model parallelism (train/parallel_step.h): tensor, pipeline, expert and context parallel ranks.
add("full_llama31_8b_8gpu_tp2", train(LLAMA31_8B, method="full", parallel={"gpus": 8, "tp": 2, "zero": 1}))
add("full_llama31_70b_16gpu_pp4_megatron", train(LLAMA31_70B, method="full", precision="mixed_bf16", attention="flash",
                                                 gradient_checkpointing=False, grad_accum_steps=8,
                                                 parallel={"gpus": 16, "pp": 4, "zero": 1}, framework={"trainer": "megatron"}))
add("full_llama31_70b_64gpu_tp4_sp_pp4_vpp2_megatron", train(LLAMA31_70B, method="full", precision="mixed_bf16", attention="flash",
                                                            gradient_checkpointing="selective", grad_accum_steps=16, seq_len=4096,
                                                            parallel={"gpus": 64, "tp": 4, "pp": 4, "vpp": 2, "sequence_parallel": True, "zero": 1},
                                                            framework={"trainer": "megatron"}))
add("full_mixtral_8gpu_ep8", train(MIXTRAL_8X7B, method="full", parallel={"gpus": 8, "ep": 8, "zero": 3}))
add("full_mixtral_64gpu_tp2_sp_ep8_megatron", train(MIXTRAL_8X7B, method="full", precision="mixed_bf16", attention="flash",
                                                    gradient_checkpointing="selective", grad_accum_steps=8, seq_len=4096,
                                                    parallel={"gpus": 64, "tp": 2, "ep": 8, "etp": 1, "sequence_parallel": True, "zero": 1},
                                                    framework={"trainer": "megatron"}))
add("full_llama31_8b_4gpu_cp2_ring", train(LLAMA31_8B, method="full", seq_len=16384, parallel={"gpus": 4, "cp": 2}))
add("full_llama31_8b_4gpu_cp2_sequence_parallel_warned", train(LLAMA31_8B, method="full", seq_len=16384,
                                                               parallel={"gpus": 4, "cp": 2, "sequence_parallel": True}), "warning")

# Training: framework presets and version switches
add = group("train_framework")
add("preset_torch113_gpt2_fp32", train(GPT2, method="full", precision="fp32", micro_batch_size=4, seq_len=512,
                                       framework={"preset": "torch_1_13_hf_4_44"}))
add("preset_torch113_llama32_1b_lora", train(LLAMA32_1B, method="lora", precision="fp32", seq_len=512,
                                             framework={"preset": "torch_1_13_hf_4_44"}))
add("preset_torch113_on_cuda", train(LLAMA32_1B, method="full", framework={"preset": "torch_1_13_hf_4_44", "device": "cuda"}))
add("preset_current_explicit", train(LLAMA32_1B, method="full", framework={"preset": "current"}))
for switch, value in [("rmsnorm_saves_squared_input", True), ("loss_shift_logits_copy", True), ("adamw_foreach_denom_copy", True),
                      ("loss_upcast_logits", False), ("keep_outputs", True), ("use_cache", True), ("attention_mask", False),
                      ("batch_on_device", False), ("cuda_lazy_loading", False), ("variable_shapes", True),
                      ("expandable_segments", True)]:
    add(f"{switch}_{str(value).lower()}_llama32_1b", train(LLAMA32_1B, method="full", framework={switch: value}))
add("use_cache_true_no_checkpointing_llama32_1b", train(LLAMA32_1B, method="full", gradient_checkpointing=False, framework={"use_cache": True}))
add("attention_mask_eager_llama32_1b", train(LLAMA32_1B, method="full", attention="eager", framework={"attention_mask": True}))
add("use_cache_keep_outputs_lora_llama31_8b", train(LLAMA31_8B, method="lora", framework={"use_cache": True, "keep_outputs": True}))
add("device_cpu_llama32_1b", train(LLAMA32_1B, method="full", precision="fp32", framework={"device": "cpu"}))
add("cpu_onednn_bf16_buffers", train(LLAMA32_1B, method="full", precision="bf16", seq_len=256,
                                     framework={"preset": "torch_1_13_hf_4_44", "cpu_onednn_bf16_buffers": True}))
add("cpu_kv_alive_at_scores", train(LLAMA32_1B, method="lora", precision="fp32", seq_len=256, attention="eager",
                                    framework={"preset": "torch_1_13_hf_4_44", "cpu_kv_alive_at_scores": True}))
add("torchtune_load_full_llama31_8b", train(LLAMA31_8B, method="full", framework={"model_load": "torchtune_0_1"}))
add("torchtune_load_lora_llama31_8b", train(LLAMA31_8B, method="lora", framework={"model_load": "torchtune_0_1"}))
add("torchtune_load_lora_qwen25_05b_fp32", train(QWEN25_05B, method="lora", precision="fp32", framework={"model_load": "torchtune_0_1"}))
# transformers <= 4.41 Mistral / Mixtral: a cos/sin cache of max_position_embeddings rows per attention layer
# (fms-acceleration's A100 rows, docs/accuracy.md section 2c).
add("rope_cache_per_layer_true_mistral_7b_qlora", train(MISTRAL_7B, method="qlora", precision="amp_fp16",
                                                        framework={"rope_cache_per_layer": True}))

# ---------------------------------------------------------------------------------------------
# Online RL (docs/post_training.md): GRPO with a colocated vLLM at each sleep level, in server mode
# and with generate(); PPO with its critic and reward model.
add = group("train_online_rl")
GRPO_ROLLOUT = {"num_generations": 8, "max_completion_length": 1024, "use_vllm": True}
add("grpo_lora_qwen25_7b_colocate", train(QWEN25_7B, method="lora", objective="grpo", micro_batch_size=8, seq_len=1536,
                                          rollout=dict(GRPO_ROLLOUT, vllm_gpu_memory_utilization=0.3)))
add("grpo_lora_qwen25_7b_colocate_sleep_1", train(QWEN25_7B, method="lora", objective="grpo", micro_batch_size=8, seq_len=1536,
                                                  rollout=dict(GRPO_ROLLOUT, vllm_sleep_level=1)))
add("grpo_full_qwen25_15b_colocate_sleep_2_beta", train(QWEN25_15B, method="full", objective="grpo", micro_batch_size=4, seq_len=1536,
                                                        rollout=dict(GRPO_ROLLOUT, vllm_sleep_level=2, beta=0.04)))
add("grpo_full_qwen25_7b_server_zero3", train(QWEN25_7B, method="full", objective="grpo", micro_batch_size=4, seq_len=1536,
                                              parallel={"gpus": 8, "zero": 3},
                                              rollout=dict(GRPO_ROLLOUT, vllm_mode="server", vllm_gpu_memory_utilization=0.9)))
add("grpo_lora_qwen25_05b_generate", train(QWEN25_05B, method="lora", objective="grpo", micro_batch_size=8, seq_len=768,
                                           rollout={"max_completion_length": 256}))
add("ppo_full_qwen25_05b", train(QWEN25_05B, method="full", objective="ppo", micro_batch_size=16, seq_len=512,
                                 rollout={"max_completion_length": 53}))
add("ppo_lora_qwen25_15b", train(QWEN25_15B, method="lora", objective="ppo", micro_batch_size=8, seq_len=1024,
                                 rollout={"max_completion_length": 256}))

# ---------------------------------------------------------------------------------------------
# Inference: transformers
add = group("infer_transformers")
for weights in ["fp32", "fp16", "bf16", "fp8", "int8", "nf4", "gptq_4bit", "awq_4bit"]:
    add(f"llama31_8b_{weights}", infer(LLAMA31_8B, weights=weights))
for kv in ["auto", "fp32", "fp16", "bf16", "int8", "int4"]:
    add(f"llama31_8b_kv_{kv}", infer(LLAMA31_8B, kv_cache=kv, batch_size=8, prompt_len=8192))
for attention in ["eager", "sdpa", "flash"]:
    add(f"llama31_8b_{attention}_prompt_16384", infer(LLAMA31_8B, attention=attention, prompt_len=16384))
add("llama31_8b_logits_all", infer(LLAMA31_8B, logits="all", prompt_len=4096))
add("llama31_8b_batch_64", infer(LLAMA31_8B, batch_size=64, prompt_len=2048, new_tokens=512))
add("llama31_8b_no_new_tokens", infer(LLAMA31_8B, new_tokens=0, prompt_len=4096))
add("llama31_70b_tp4", infer(LLAMA31_70B, parallel={"gpus": 4, "tp": 4}))
add("llama31_70b_nf4_rtx_4090", infer(LLAMA31_70B, weights="nf4", gpu="rtx-4090-24gb"))
add("qwen25_05b_t4_fp16", infer(QWEN25_05B, weights="fp16", gpu="t4-16gb", batch_size=16))
add("mixtral_8x7b_bf16", infer(MIXTRAL_8X7B, gpu="h200-sxm-141gb"))
add("deepseek_v3_8xh200_tp8", infer(DEEPSEEK_V3, batch_size=4, prompt_len=8192, new_tokens=1024, gpu="h200-sxm-141gb",
                                    parallel={"gpus": 8, "tp": 8}))
add("gemma2_9b_sliding_window_long", infer("google/gemma-2-9b-it", prompt_len=8000, batch_size=4))
add("gpt_oss_20b_default", infer(GPT_OSS_20B))

# Inference: vLLM
add = group("infer_vllm")
add("llama31_8b_default", infer(LLAMA31_8B, engine="vllm"))
for util in [0.5, 0.95]:
    add(f"llama31_8b_util_{str(util).replace('.', '')}", infer(LLAMA31_8B, engine="vllm", gpu_memory_utilization=util))
for mml in [32768, 131072]:
    add(f"llama31_8b_max_model_len_{mml}", infer(LLAMA31_8B, engine="vllm", max_model_len=mml, gpu="l40s-48gb"))
add("llama31_8b_max_num_batched_tokens_16384", infer(LLAMA31_8B, engine="vllm", max_num_batched_tokens=16384))
add("llama31_8b_max_num_seqs_512_batch_512_queued", infer(LLAMA31_8B, engine="vllm", max_num_seqs=512, batch_size=512), "warning")
add("llama31_8b_block_size_32", infer(LLAMA31_8B, engine="vllm", block_size=32))
add("llama31_8b_no_cuda_graphs", infer(LLAMA31_8B, engine="vllm", cuda_graphs=False))
add("llama31_8b_kv_fp8", infer(LLAMA31_8B, engine="vllm", kv_cache="fp8", prompt_len=32768))
for weights in ["fp8", "awq_4bit", "gptq_4bit", "fp16"]:
    add(f"llama31_8b_{weights}", infer(LLAMA31_8B, engine="vllm", weights=weights, gpu="rtx-4090-24gb"))
for tp in [2, 4, 8]:
    add(f"llama31_70b_tp{tp}", infer(LLAMA31_70B, engine="vllm", parallel={"gpus": tp, "tp": tp}))
add("llama31_405b_fp8_tp8", infer(LLAMA31_405B, engine="vllm", weights="fp8", parallel={"gpus": 8, "tp": 8}))
add("deepseek_v3_tp8_h200", infer(DEEPSEEK_V3, engine="vllm", weights="fp8", gpu="h200-sxm-141gb", parallel={"gpus": 8, "tp": 8}))
# gpt-oss is served in its checkpoint's MXFP4 (quantization_config): 20b fits a 24 GB card; the
# same model asked for in bf16 does not start (and says that the checkpoint is MXFP4).
add("gpt_oss_20b_rtx_4090", infer(GPT_OSS_20B, engine="vllm", prompt_len=4096, gpu="rtx-4090-24gb"))
add("gpt_oss_20b_bf16_rtx_4090_would_not_start", infer(GPT_OSS_20B, engine="vllm", weights="bf16", prompt_len=4096, gpu="rtx-4090-24gb"), "warning")
add("gpt_oss_20b_h100", infer(GPT_OSS_20B, engine="vllm", prompt_len=4096))
add("gpt_oss_120b_h100_would_queue", infer(GPT_OSS_120B, engine="vllm", prompt_len=8192, batch_size=16), "warning")
add("gpt_oss_120b_fp8_h200_tp2", infer(GPT_OSS_120B, engine="vllm", weights="fp8", prompt_len=8192, batch_size=16, gpu="h200-sxm-141gb",
                                       parallel={"gpus": 2, "tp": 2}))
add("qwen3_30b_a3b_tp2", infer(QWEN3_30B_A3B, engine="vllm", parallel={"gpus": 2, "tp": 2}, batch_size=32))
add("mistral_7b_a10g_batch_32_queued", infer(MISTRAL_7B, engine="vllm", gpu="a10g-24gb", batch_size=32, prompt_len=2048), "warning")
add("gemma3_27b_l40s_would_not_start", infer("google/gemma-3-27b-it", engine="vllm", gpu="l40s-48gb", prompt_len=16384), "warning")
add("gemma3_27b_fp8_l40s", infer("google/gemma-3-27b-it", engine="vllm", weights="fp8", gpu="l40s-48gb", prompt_len=16384))
add("qwen25_05b_t4_fp16", infer(QWEN25_05B, engine="vllm", weights="fp16", gpu="t4-16gb", batch_size=256))

# Inference: llama.cpp
add = group("infer_llama_cpp")
for weights in ["gguf_q8_0", "gguf_q6_k", "gguf_q5_k_m", "gguf_q5_k_s", "gguf_q4_k_m", "gguf_q4_k_s", "gguf_q4_0",
                "gguf_q3_k_m", "gguf_q2_k", "gguf_iq4_xs", "gguf_iq3_xxs", "gguf_iq2_xxs"]:
    add(f"llama31_8b_{weights}", infer(LLAMA31_8B, engine="llama_cpp", weights=weights, gpu="rtx-4090-24gb"))
for ngl in [-1, 0, 16]:
    add(f"llama31_70b_q4_k_m_ngl_{'all' if ngl == -1 else ngl}",
        infer(LLAMA31_70B, engine="llama_cpp", weights="gguf_q4_k_m", n_gpu_layers=ngl, gpu="rtx-3090-24gb"))
for n_ctx in [8192, 32768]:
    add(f"llama31_8b_n_ctx_{n_ctx}", infer(LLAMA31_8B, engine="llama_cpp", weights="gguf_q4_k_m", n_ctx=n_ctx, gpu="rtx-4060-ti-16gb"))
add("llama31_8b_n_batch_4096_n_ubatch_1024", infer(LLAMA31_8B, engine="llama_cpp", weights="gguf_q4_k_m", n_batch=4096, n_ubatch=1024))
add("llama31_8b_flash_attn", infer(LLAMA31_8B, engine="llama_cpp", weights="gguf_q4_k_m", flash_attn=True, prompt_len=16384))
add("llama31_8b_kv_q8_flash", infer(LLAMA31_8B, engine="llama_cpp", weights="gguf_q4_k_m", kv_cache="int8", flash_attn=True))
add("llama31_8b_kv_q4_flash", infer(LLAMA31_8B, engine="llama_cpp", weights="gguf_q4_k_m", kv_cache="int4", flash_attn=True))
add("llama31_8b_kv_f16", infer(LLAMA31_8B, engine="llama_cpp", weights="gguf_q4_k_m", kv_cache="fp16"))
add("llama31_8b_batch_4", infer(LLAMA31_8B, engine="llama_cpp", weights="gguf_q4_k_m", batch_size=4))
add("llama31_70b_q4_k_m_2gpu", infer(LLAMA31_70B, engine="llama_cpp", weights="gguf_q4_k_m", parallel={"gpus": 2}, gpu="rtx-3090-24gb"))
add("qwen25_7b_q4_k_m_apple_m3_max", infer(QWEN25_7B, engine="llama_cpp", weights="gguf_q4_k_m", gpu="apple-m3-max-128gb"))
add("gemma2_9b_q5_k_m", infer("google/gemma-2-9b-it", engine="llama_cpp", weights="gguf_q5_k_m", gpu="rtx-3080-10gb"))
add("mixtral_8x7b_q3_k_m", infer(MIXTRAL_8X7B, engine="llama_cpp", weights="gguf_q3_k_m", n_gpu_layers=20, gpu="rtx-4090-24gb"))
add("llama31_8b_bf16_gguf", infer(LLAMA31_8B, engine="llama_cpp", weights="bf16", gpu="rtx-5090-32gb"))
add("phi3_mini_q4_0", infer("microsoft/Phi-3-mini-4k-instruct", engine="llama_cpp", weights="gguf_q4_0", gpu="rtx-3060-12gb"))

# ---------------------------------------------------------------------------------------------
# Every model family by preset: one training (LoRA defaults) and one inference scenario each.
add = group("models")
FAMILY_PRESETS = [
    ("llama2_7b", "meta-llama/Llama-2-7b-hf"), ("llama3_8b_instruct", "meta-llama/Meta-Llama-3-8B-Instruct"),
    ("llama33_70b", "meta-llama/Llama-3.3-70B-Instruct"), ("mistral_7b_v01", "mistralai/Mistral-7B-v0.1"),
    ("mistral_nemo", "mistralai/Mistral-Nemo-Base-2407"), ("mistral_small_24b", "mistralai/Mistral-Small-24B-Base-2501"),
    ("mixtral_8x22b", "mistralai/Mixtral-8x22B-v0.1"), ("qwen25_72b", "Qwen/Qwen2.5-72B"),
    ("qwen15_moe_a27b", "Qwen/Qwen1.5-MoE-A2.7B"), ("qwen3_06b", "Qwen/Qwen3-0.6B"), ("qwen3_8b", "Qwen/Qwen3-8B"),
    ("qwen3_235b_a22b", "Qwen/Qwen3-235B-A22B"), ("gemma_2b", "google/gemma-2b"), ("gemma_7b", "google/gemma-7b"),
    ("gemma2_27b", "google/gemma-2-27b"), ("gemma3_1b", "google/gemma-3-1b-it"), ("gemma3_4b", "google/gemma-3-4b-it"),
    ("phi2", "microsoft/phi-2"), ("phi3_medium", "microsoft/Phi-3-medium-4k-instruct"), ("phi35_mini", "microsoft/Phi-3.5-mini-instruct"),
    ("phi4", "microsoft/phi-4"), ("gpt2_xl", "openai-community/gpt2-xl"), ("pythia_70m", "EleutherAI/pythia-70m"),
    ("pythia_12b", "EleutherAI/pythia-12b"), ("falcon_40b", "tiiuae/falcon-40b"), ("deepseek_r1", "deepseek-ai/DeepSeek-R1"),
    ("r1_distill_qwen_15b", "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B"), ("gpt_oss_120b", GPT_OSS_120B),
    ("olmo2_7b", "allenai/OLMo-2-1124-7B"), ("olmo2_13b", "allenai/OLMo-2-1124-13B"), ("smollm2_135m", "HuggingFaceTB/SmolLM2-135M"),
]
MOE_OR_MLA = {"mixtral_8x22b", "qwen15_moe_a27b", "qwen3_235b_a22b", "deepseek_r1", "gpt_oss_120b", "falcon_40b", "pythia_70m",
              "pythia_12b", "phi2"}
for tag, preset in FAMILY_PRESETS:
    add(f"{tag}_train_lora", train(preset, method="lora"), "warning" if tag in MOE_OR_MLA else "ok")
    add(f"{tag}_inference", infer(preset))
for tag, preset in [("smollm2_135m", "HuggingFaceTB/SmolLM2-135M"), ("qwen3_06b", "Qwen/Qwen3-0.6B"), ("gemma3_1b", "google/gemma-3-1b-it"),
                    ("pythia_70m", "EleutherAI/pythia-70m"), ("gpt2", GPT2)]:
    add(f"{tag}_train_full_fp32", train(preset, method="full", precision="fp32", micro_batch_size=8, seq_len=1024),
        "warning" if tag == "pythia_70m" else "ok")

# Inline config.json objects
add = group("inline_configs")
add("qwen1_7b_train_lora", train(QWEN1_7B_CONFIG, method="lora"))
add("qwen1_7b_inference", infer(QWEN1_7B_CONFIG))
add("deepseek_v2_lite_shaped_train_lora", train(DEEPSEEK_V2_SMALL_CONFIG, method="lora"), "warning")
add("deepseek_v2_lite_shaped_inference_vllm", infer(DEEPSEEK_V2_SMALL_CONFIG, engine="vllm"))
add("tiny_llama_train_full", train(TINY_LLAMA_CONFIG, method="full", precision="fp32", micro_batch_size=16, seq_len=512))
add("tiny_llama_inference", infer(TINY_LLAMA_CONFIG, batch_size=32))
add("gpt2_custom_train_sgd_momentum", train(GPT2_CUSTOM_CONFIG, method="full", precision="fp32", optimizer="sgd_momentum",
                                            gpu={"name": "my card", "memory_bytes": 8 * GIB}))
add("neox_small_train_lora", train(NEOX_CUSTOM_CONFIG, method="lora"), "warning")
add("falcon_small_train_full", train(FALCON_CUSTOM_CONFIG, method="full"), "warning")
add("mixtral_tiny_train_full", train(MIXTRAL_TINY_CONFIG, method="full"), "warning")
add("gemma3_multimodal", train(GEMMA3_MULTIMODAL_CONFIG, method="lora"), "ok")
add("llava_multimodal_text_only", train(LLAVA_MULTIMODAL_CONFIG, method="lora"), "warning")
add("unknown_model_type_generic", infer(UNKNOWN_TYPE_CONFIG), "warning")
# An unknown type with linear-attention keys (Qwen3-Next's): refused, or read approximately on request.
add("unknown_model_type_hybrid_refused", infer(UNKNOWN_HYBRID_CONFIG), "error")
add("unknown_model_type_hybrid_approximate", dict(infer(UNKNOWN_HYBRID_CONFIG), model_reading="approximate"), "warning")

# GPUs: catalogue variety, custom devices, scenarios that do not fit
add = group("gpus")
for gpu in ["p100-pcie-16gb", "t4-16gb", "a100-sxm-40gb", "rtx-3060-12gb", "rtx-5090-32gb", "mi300x-192gb", "gaudi3-128gb",
            "apple-m3-ultra-512gb", "b200-180gb"]:
    add(f"lora_llama31_8b_{gpu.replace('-', '_')}", train(LLAMA31_8B, method="lora", gpu=gpu))
add("custom_8gib_qlora", train(LLAMA31_8B, method="qlora", gpu={"name": "laptop 8 GiB", "memory_bytes": 8 * GIB}))
add("custom_unnamed_24gib_inference", infer(LLAMA31_8B, gpu={"memory_bytes": 24 * GIB}))
add("custom_1tib_full_405b", train(LLAMA31_405B, method="full", gpu={"name": "imaginary 1 TiB", "memory_bytes": 1024 * GIB}))
add("custom_odd_bytes_vllm_would_not_start", infer(QWEN25_7B, engine="vllm", gpu={"name": "odd", "memory_bytes": 17179869183}), "warning")
add("no_fit_full_llama31_70b_h100", train(LLAMA31_70B, method="full"))
add("no_fit_inference_llama31_405b_h100", infer(LLAMA31_405B))
add("no_fit_vllm_llama31_70b_rtx_4090", infer(LLAMA31_70B, engine="vllm", gpu="rtx-4090-24gb"), "warning")
add("no_fit_lora_llama31_8b_seq_65536_eager", train(LLAMA31_8B, method="lora", attention="eager", seq_len=65536))
add("no_fit_full_qwen25_7b_rtx_3080", train(QWEN25_7B, method="full", gpu="rtx-3080-10gb"))
add("no_fit_llama_cpp_llama31_405b_q2_k", infer(LLAMA31_405B, engine="llama_cpp", weights="gguf_q2_k", gpu="rtx-4090-24gb"))

# ---------------------------------------------------------------------------------------------
# Scenarios that produce warnings (one per warning path)
add = group("warnings")
add("train_zero_knobs_without_zero", train(LLAMA31_8B, method="full", parallel={"gpus": 2, "reduce_bucket_size": 1000000}), "warning")
add("train_torchtune_load_with_zero", train(LLAMA31_8B, method="full", parallel={"gpus": 2, "zero": 2},
                                             framework={"model_load": "torchtune_0_1"}), "warning")
add("train_offload_params_without_zero3", train(LLAMA31_8B, method="full", parallel={"gpus": 2, "zero": 2, "offload_params": "cpu"}), "warning")
add("train_flash_with_fp32", train(LLAMA32_1B, method="full", precision="fp32", attention="flash"), "warning")
add("train_moe_approximate", train(QWEN3_30B_A3B, method="lora", gpu="h200-sxm-141gb"), "warning")
add("infer_pp_not_modelled", infer(LLAMA31_70B, parallel={"gpus": 4, "pp": 4}), "warning")
add("infer_transformers_gguf_weights", infer(LLAMA31_8B, weights="gguf_q4_k_m"), "warning")
add("infer_transformers_kv_fp8", infer(LLAMA31_8B, kv_cache="fp8"), "warning")
add("infer_transformers_device_map_split", infer(LLAMA31_70B, parallel={"gpus": 2}), "warning")
add("infer_transformers_ignores_vllm_settings", infer(LLAMA31_8B, max_model_len=8192, n_ctx=4096), "warning")
add("infer_vllm_gguf_weights", infer(LLAMA31_8B, engine="vllm", weights="gguf_q4_k_m"), "warning")
add("infer_vllm_bnb_nf4", infer(LLAMA31_8B, engine="vllm", weights="nf4"), "warning")
add("infer_vllm_kv_int8", infer(LLAMA31_8B, engine="vllm", kv_cache="int8"), "warning")
add("infer_vllm_max_model_len_too_long", infer(LLAMA31_70B, engine="vllm", max_model_len=131072, parallel={"gpus": 2, "tp": 2}), "warning")
add("infer_vllm_batch_queued", infer(LLAMA31_8B, engine="vllm", batch_size=4096, prompt_len=8192, gpu="l4-24gb"), "warning")
add("infer_vllm_ignores_attention_and_n_ctx", infer(LLAMA31_8B, engine="vllm", attention="eager", logits="all", n_ctx=2048), "warning")
add("infer_llama_cpp_non_gguf_weights", infer(LLAMA31_8B, engine="llama_cpp", weights="awq_4bit"), "warning")
add("infer_llama_cpp_kv_fp8", infer(LLAMA31_8B, engine="llama_cpp", weights="gguf_q4_k_m", kv_cache="fp8"), "warning")
add("infer_llama_cpp_quantized_v_without_flash", infer(LLAMA31_8B, engine="llama_cpp", weights="gguf_q4_k_m", kv_cache="int8"), "warning")
add("infer_llama_cpp_ignores_tp_and_vllm", infer(LLAMA31_8B, engine="llama_cpp", weights="gguf_q4_k_m", attention="eager",
                                                 max_model_len=4096, parallel={"gpus": 2, "tp": 2}), "warning")

# ---------------------------------------------------------------------------------------------
# Refused scenarios: the error JSON is golden too.
add = group("errors")
add("invalid_json", "{\"model\": ", "error")
add("not_an_object", "[1, 2, 3]", "error")
add("missing_model", {"mode": "train"}, "error")
add("unknown_preset_with_hint", {"model": "meta-llama/Llama-3.1-8b"}, "error")
add("unknown_preset_without_org", {"model": "Llama-3.1-8B"}, "error")
add("model_wrong_type", {"model": 42}, "error")
add("unknown_top_level_key", {"model": LLAMA31_8B, "trian": {}}, "error")
add("schema_2", {"model": LLAMA31_8B, "schema": 2}, "error")
add("unknown_mode", {"model": LLAMA31_8B, "mode": "serve"}, "error")
add("micro_batch_zero", train(LLAMA31_8B, micro_batch_size=0), "error")
add("precision_bf8", train(LLAMA31_8B, precision="bf8"), "error")
add("checkpointing_string", train(LLAMA31_8B, gradient_checkpointing="yes"), "error")
add("qlora_bits_3", train(LLAMA31_8B, method="qlora", qlora_bits=3), "error")
add("torchao_8bit", train(LLAMA31_8B, method="qlora", qlora_backend="torchao", qlora_bits=8), "error")
add("autocast_with_fp32", train(LLAMA31_8B, precision="fp32", autocast=True), "error")
add("gptq_group_size_8", train(LLAMA31_8B, method="qlora", qlora_backend="gptq", qlora_group_size=8), "error")
add("lora_targets_empty", train(LLAMA31_8B, lora={"targets": []}), "error")
add("lora_target_unknown_module", train(LLAMA31_8B, lora={"targets": ["q_proj", "qkv_proj"]}), "error")
add("modules_to_save_unknown", train(LLAMA31_8B, lora={"modules_to_save": ["norm"]}), "error")
add("freeze_more_layers_than_model", train(LLAMA31_8B, method="freeze", freeze={"trainable_layers": 33}), "error")
add("tokens_over_2_pow_31", train(LLAMA31_8B, micro_batch_size=65536, seq_len=65536), "error")
add("eager_scores_too_large", train(LLAMA31_405B, attention="eager", micro_batch_size=2048, seq_len=1048576), "error")
add("gpus_not_multiple_of_tp", train(LLAMA31_8B, parallel={"gpus": 6, "tp": 4}), "error")
add("fsdp_and_zero", train(LLAMA31_8B, parallel={"gpus": 2, "zero": 2, "fsdp": True}), "error")
add("tp_not_dividing_heads", infer(LLAMA31_8B, parallel={"gpus": 3, "tp": 3}), "error")
add("ep_not_dividing_experts", train(MIXTRAL_8X7B, parallel={"gpus": 3, "ep": 3}), "error")
add("pp_over_layers", train(GPT2, parallel={"gpus": 16, "pp": 16}), "error")
add("gpus_per_node_zero", train(LLAMA31_8B, parallel={"gpus": 8, "gpus_per_node": 0}), "error")
add("unknown_gpu_with_hint", {"model": LLAMA31_8B, "gpu": "h100"}, "error")
add("custom_gpu_without_memory", {"model": LLAMA31_8B, "gpu": {"name": "mystery"}}, "error")
add("gpu_memory_utilization_2", infer(LLAMA31_8B, engine="vllm", gpu_memory_utilization=2), "error")
add("kv_cache_q4", infer(LLAMA31_8B, kv_cache="q4"), "error")
add("engine_tgi", infer(LLAMA31_8B, engine="tgi"), "error")
add("config_missing_heads", {"model": {"model_type": "mistral", "hidden_size": 64, "num_hidden_layers": 2, "vocab_size": 100,
                                       "intermediate_size": 128}}, "error")
add("framework_unknown_preset", train(LLAMA31_8B, framework={"preset": "torch_2_0"}), "error")
add("several_errors_at_once", {"model": LLAMA31_8B, "train": {"micro_batch_size": -1, "seq_len": "long", "optimizer": "adam"},
                               "parallel": {"zero": 4}}, "error")


def render():
    seen = set()
    files = {}
    for name, cases in GROUPS:
        lines = []
        for case, expect, scenario in cases:
            assert NAME_RE.match(case), case
            assert case not in seen, "duplicate scenario name " + case
            assert expect in ("ok", "warning", "error"), case
            seen.add(case)
            entry = {"name": case, "expect": expect}
            # Written last: the tests pass the scenario's bytes exactly as they stand in the line.
            entry["text" if isinstance(scenario, str) else "scenario"] = scenario
            lines.append(json.dumps(entry, ensure_ascii=True))
        files[name + ".jsonl"] = "".join(line + "\n" for line in lines)
    return files


def stats():
    """Counts by group, expectation, mode, training method and inference engine (for the README)."""
    counts = {}

    def bump(key):
        counts[key] = counts.get(key, 0) + 1

    for name, cases in GROUPS:
        for _, expect, scenario in cases:
            bump(("group", name))
            bump(("expect", expect))
            if expect == "error" or isinstance(scenario, str):
                continue
            mode = scenario.get("mode", "train")
            bump(("mode", mode))
            if mode == "train":
                bump(("method", scenario.get("train", {}).get("method", "lora")))
            else:
                bump(("engine", scenario.get("inference", {}).get("engine", "transformers")))
            bump(("model", "inline config.json" if isinstance(scenario["model"], dict) else "preset"))
            gpu = scenario.get("gpu", "h100-sxm-80gb")
            bump(("gpu", "custom" if isinstance(gpu, dict) else "catalogue"))
            gpus = scenario.get("parallel", {}).get("gpus", 1)
            bump(("gpus", "1" if gpus == 1 else "2-8" if gpus <= 8 else ">8"))
    for kind in ["group", "expect", "mode", "method", "engine", "model", "gpu", "gpus"]:
        keys = [k for k in counts if k[0] == kind]
        print(kind + ": " + ", ".join(f"{k[1]} {counts[k]}" for k in keys))


def main(argv):
    if "--stats" in argv[1:]:
        stats()
        return 0
    check = "--check" in argv[1:]
    files = render()
    existing = sorted(f for f in os.listdir(OUT_DIR) if f.endswith(".jsonl")) if os.path.isdir(OUT_DIR) else []
    stale = [f for f in existing if f not in files]
    if check:
        bad = stale[:]
        for fname, text in files.items():
            path = os.path.join(OUT_DIR, fname)
            if not os.path.exists(path) or open(path, encoding="utf-8", newline="").read() != text:
                bad.append(fname)
        if bad:
            print("tests/golden/scenarios differ from make_scenarios.py: " + ", ".join(sorted(bad)) +
                  "\nrun: python3 tests/golden/make_scenarios.py && scripts/rebaseline-golden", file=sys.stderr)
            return 1
        return 0
    os.makedirs(OUT_DIR, exist_ok=True)
    for f in stale:
        os.remove(os.path.join(OUT_DIR, f))
    for fname, text in files.items():
        with open(os.path.join(OUT_DIR, fname), "w", encoding="utf-8", newline="") as out:
            out.write(text)
    total = sum(len(c) for _, c in GROUPS)
    print(f"{total} scenarios in {len(files)} groups written to tests/golden/scenarios/")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
