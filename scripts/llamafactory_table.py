#!/usr/bin/env python3
"""Recomputes LLaMA-Factory's "Hardware Requirement" table (README, "* estimated") with vramplan at
stated settings and prints both side by side (docs/llamafactory.md).
Usage: scripts/llamafactory_table.py [path/to/vramplan] [--seq 1024] [--batch 1]"""
import argparse, json, subprocess

# LLaMA-Factory README (hiyouga/LLaMA-Factory, 2024-2025), in GB as printed.
LF = {
    "Full (AMP)":   [120, 240, 600, 1200, 2000, 900, 2400],
    "Full (16)":    [60, 120, 300, 600, 900, 400, 1200],
    "Freeze (16)":  [20, 40, 80, 200, 360, 160, 400],
    "LoRA (16)":    [16, 32, 64, 160, 240, 120, 320],
    "QLoRA (8)":    [10, 20, 40, 80, 140, 60, 160],
    "QLoRA (4)":    [6, 12, 24, 48, 72, 30, 96],
    "QLoRA (2)":    [4, 8, 16, 24, 48, 18, 48],
}
SIZES = ["7B", "13B", "30B", "70B", "110B", "8x7B", "8x22B"]
# The model behind each column: presets, or the real config of LLaMA-30B (huggyllama/llama-30b)
# and Qwen1.5-110B (Qwen/Qwen1.5-110B config.json).
MODELS = [
    "meta-llama/Llama-2-7b-hf",
    "meta-llama/Llama-2-13b-hf",
    {"model_type": "llama", "hidden_size": 6656, "intermediate_size": 17920, "num_attention_heads": 52,
     "num_hidden_layers": 60, "vocab_size": 32000, "tie_word_embeddings": False, "_name_or_path": "huggyllama/llama-30b"},
    "meta-llama/Llama-2-70b-hf",
    {"model_type": "qwen2", "hidden_size": 8192, "intermediate_size": 49152, "num_attention_heads": 64,
     "num_key_value_heads": 8, "num_hidden_layers": 80, "vocab_size": 152064, "tie_word_embeddings": False,
     "_name_or_path": "Qwen/Qwen1.5-110B"},
    "mistralai/Mixtral-8x7B-v0.1",
    "mistralai/Mixtral-8x22B-v0.1",
]

def train_for(row, seq, batch, impl):
    base = {"micro_batch_size": batch, "seq_len": seq, "gradient_checkpointing": True, "attention": "sdpa",
            "optimizer": "adamw", "optimizer_impl": impl, "lora": {"rank": 8, "alpha": 16, "targets": "all-linear"}}
    m = {"Full (AMP)": ("full", "amp_bf16", None), "Full (16)": ("full", "bf16", None),
         "Freeze (16)": ("freeze", "bf16", None), "LoRA (16)": ("lora", "bf16", None),
         "QLoRA (8)": ("qlora", "bf16", 8), "QLoRA (4)": ("qlora", "bf16", 4), "QLoRA (2)": ("qlora", "bf16", 2)}[row]
    base["method"], base["precision"] = m[0], m[1]
    if m[2]:
        base["qlora_bits"] = m[2]
    if m[0] == "freeze":
        base["freeze"] = {"trainable_layers": 2}
    return base

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cli", nargs="?", default="build/bin/vramplan")
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--impl", default="foreach", help="AdamW implementation: foreach (PyTorch's CUDA default), fused, for_loop")
    a = ap.parse_args()
    print(f"| method | " + " | ".join(SIZES) + " |")
    print("|---|" + "---|" * len(SIZES))
    for row, lf in LF.items():
        cells = []
        for model, ref in zip(MODELS, lf):
            sc = {"model": model, "mode": "train", "train": train_for(row, a.seq, a.batch, a.impl), "gpu": {"name": "any", "memory_bytes": 1 << 50}}
            out = subprocess.run([a.cli, "estimate", "-"], input=json.dumps(sc), capture_output=True, text=True)
            r = json.loads(out.stdout)
            gb = r["gpu"]["device_total_bytes"] / 1e9
            cells.append(f"{ref} / **{gb:.0f}** ({gb / ref:.2f}x)")
        print(f"| {row} | " + " | ".join(cells) + " |")

main()
