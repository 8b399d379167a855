#!/usr/bin/env python3
"""Runs a vramplan CLI over the vLLM start-up-log fixture and prints, per row and component, what
the log printed, what the estimate says and the error (docs/accuracy_inference.md, "vLLM start-up
logs"). Use it to compare two builds:

  python3 scripts/compare_vllm_startup_logs.py build/bin/vramplan
  python3 scripts/compare_vllm_startup_logs.py old/build/bin/vramplan --without-version   # a build without inference.vllm_version
  ... --include-outliers   # also count the components a row flags as outliers in the summary

Non-torch memory and CUDA graphs are not separate terms of the result (both are in `temporary`);
the C++ test (tests/core/vllm_overheads_test.cpp) compares them. Here: weights, the activation peak
(activations + logits_and_loss), the KV cache (GiB) and the KV token capacity.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

GIB = 2**30
FIXTURE = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "inference", "vllm_startup_logs.json")


def scenario(row, with_version):
    inf = {"engine": "vllm", "weights": row.get("weights", "bf16"),
           "gpu_memory_utilization": row.get("gpu_memory_utilization", 0.9),
           "max_model_len": row.get("max_model_len", 0), "max_num_seqs": row.get("max_num_seqs", 256),
           "max_num_batched_tokens": row.get("max_num_batched_tokens", 0)}
    if with_version:
        inf["vllm_version"] = row["vllm_version"]
    gpu = row.get("gpu") or {"name": row["id"], "memory_bytes": int(row["gpu_total_gib"] * GIB)}
    return {"model": row["model"], "mode": "inference", "gpu": gpu, "inference": inf,
            "parallel": {"tp": row["tp"], "gpus": row["tp"]}}


def estimate(cli, s):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(s, f)
    try:
        out = subprocess.run([cli, "estimate", f.name], capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(f.name)
    return json.loads(out)


def main():
    cli = sys.argv[1]
    with_version = "--without-version" not in sys.argv
    include_outliers = "--include-outliers" in sys.argv
    rows = json.load(open(FIXTURE))["rows"]
    errors = {}
    kv_by_row = {}  # one KV figure per row: the token capacity where printed, else the GiB left for the cache
    for row in rows:
        if row.get("non_torch_only"):
            continue
        r = estimate(cli, scenario(row, with_version))
        b = r["gpu"]["breakdown"]
        ours = {"weights_gib": b["weights"] / GIB, "activation_gib": (b["activations"] + b["logits_and_loss"]) / GIB,
                "kv_gib": b["kv_cache"] / GIB, "kv_tokens": r["inference"]["kv_token_capacity"]}
        for key, printed in row["printed"].items():
            if key not in ours or (key == "kv_gib" and printed <= 0):
                continue
            err = (ours[key] - printed) / abs(printed)
            outlier = key in row.get("outliers", {})
            print(f"{row['id']:34s} {key:15s} printed {printed:12.2f} ours {ours[key]:12.2f} {100 * err:+7.1f}%"
                  + (" (outlier)" if outlier else ""))
            if outlier and not include_outliers:
                continue
            if key in ("kv_gib", "kv_tokens"):
                if key == "kv_tokens" or row["id"] not in kv_by_row:
                    kv_by_row[row["id"]] = abs(err)
            else:
                errors.setdefault(key, []).append(abs(err))
    errors["kv capacity"] = list(kv_by_row.values())
    for key, e in sorted(errors.items()):
        print(f"{key}: {len(e)} rows, median |error| {100 * statistics.median(e):.1f}%, worst {100 * max(e):.1f}%")


if __name__ == "__main__":
    main()
