#!/usr/bin/env python3
"""Writes the `plan` reply of every planner fixture row and of the benchmark requests to DIR, one
JSON file per request, so that two builds' replies can be compared byte for byte:

    python3 bench/plan_replies.py build/bin/vramplan /tmp/before
    ... change the planner, rebuild ...
    python3 bench/plan_replies.py build/bin/vramplan /tmp/after && diff -r /tmp/before /tmp/after

A speed change to the search must leave every reply byte-identical (the `search` block's
`estimates` may only fall when fewer estimates are run; --no-search drops that block)."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def requests():
    rows = json.load(open(os.path.join(ROOT, "tests/fixtures/planner/non_fitting.json")))["rows"]
    for row in rows:
        req = {"scenario": row["scenario"]}
        for key in ("budget", "levers"):
            if key in row:
                req[key] = row[key]
        yield row["id"], req
        # The same with the optional levers on (a larger space) and a short reply.
        wide = json.loads(json.dumps(req))
        wide.setdefault("levers", {}).update({"activation_offload": True, "lora_rank": True, "seq_len": True, "context": True})
        wide["max_plans"] = 8
        yield row["id"] + "__wide", wide
    # bench/estimate_bench.cpp kPlans and bench/plan_wasm_timing.mjs
    bench70 = {"scenario": {"model": "meta-llama/Meta-Llama-3-70B", "mode": "train", "train": {"method": "full", "precision": "bf16"}, "parallel": {"gpus": 8, "zero": 3}, "gpu": "h100-sxm-80gb"}, "max_plans": 8}
    yield "bench_70b_zero3_8xh100", bench70
    bench8 = {"scenario": {"model": "meta-llama/Llama-3.1-8B", "mode": "train", "train": {"method": "lora", "precision": "bf16", "micro_batch_size": 4, "seq_len": 4096}, "gpu": "rtx-4090-24gb"}, "max_plans": 8}
    yield "bench_8b_lora_4090", bench8
    yield "bench_8b_lora_4090_offload", dict(bench8, levers={"activation_offload": True})
    yield "bench_8b_lora_4090_by_fidelity", dict(bench8, rank_by="fidelity")
    # Another GPU, host RAM budgeted (ranks[] and the node's host bytes), a job that fits as is.
    yield "bench_8b_lora_budget_a100_host", dict(bench8, budget={"gpu": "a100-sxm-40gb", "host_ram_bytes_per_node": 64 << 30, "max_gpus": 4})
    yield "bench_70b_host_nvme", {"scenario": bench70["scenario"], "budget": {"host_ram_bytes_per_node": 512 << 30, "nvme": True}}
    yield "fits_8b_lora_h100", {"scenario": dict(bench8["scenario"], gpu="h100-sxm-80gb")}


def main():
    cli, out = sys.argv[1], sys.argv[2]
    drop_search = "--no-search" in sys.argv
    os.makedirs(out, exist_ok=True)
    for name, req in requests():
        p = subprocess.run([cli, "plan", "-"], input=json.dumps(req).encode(), capture_output=True)
        text = p.stdout.decode()
        if drop_search:
            try:
                reply = json.loads(text)
                reply.pop("search", None)
                text = json.dumps(reply, indent=1, sort_keys=True)
            except ValueError:
                pass
        with open(os.path.join(out, name + ".json"), "w") as f:
            f.write(text)
            f.write("\n# exit %d\n%s" % (p.returncode, p.stderr.decode()))


if __name__ == "__main__":
    main()
