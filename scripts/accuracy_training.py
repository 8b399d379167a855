#!/usr/bin/env python3
"""Scores vramplan's training estimates against published GPU measurements.

Reads tests/fixtures/gpu/training_rows.json, runs `vramplan estimate -` on every representable row,
compares the predicted figure that matches the row's metric with the measured bytes, and prints a
markdown table plus median / worst absolute error, overall and per source_group.

  metric allocated / active -> gpu.peak_allocated_bytes
  metric reserved / unknown -> gpu.reserved_bytes
  metric device_total       -> gpu.device_total_bytes (nvidia-smi)
  rows with "score_phase": "load" (model-init figures) -> gpu.load_reserved_bytes / phase_peaks.load

Usage: accuracy_training.py [VRAMPLAN] [--rows FILE]... [--out FILE] [--json FILE|-] [--all] [--group-by KEYS]
  VRAMPLAN   path to the CLI (default build/bin/vramplan, relative to the repository root)
  --rows     a rows file; repeat it to score several together (e.g. training_rows.json and framework_rows.json)
  --all      also run rows marked representable=false (listed separately, not in the statistics)
  --json     per-row numbers for regression tests ('-' = stdout instead of the markdown)
  --group-by comma-separated row keys (e.g. framework,dimensions): adds one error-summary table per key;
             a list-valued key (dimensions) counts a row once under each of its values
Rows with "list": "underspecified" (tests/fixtures/gpu/multi_gpu_runs.json) are never run: their
configuration is incomplete, they are kept for context only.
Python 3 standard library only.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GIB = 2 ** 30
PREDICTED_FIELD = {
    "allocated": "peak_allocated_bytes",
    "active": "peak_allocated_bytes",
    "reserved": "reserved_bytes",
    "unknown": "reserved_bytes",
    "device_total": "device_total_bytes",
}


def model_label(row):
    m = row["scenario"]["model"]
    if isinstance(m, str):
        return m.split("/")[-1]
    return row.get("model_name", "inline").split(" ")[0].split("/")[-1] + "*"  # * = inline approximation


def method_label(row):
    sc = row["scenario"]
    if sc.get("mode") == "inference":
        return "load-only"
    t = sc.get("train", {})
    s = t.get("method", "lora")
    if s in ("lora", "qlora") and "lora" in t:
        s += " r%s" % t["lora"].get("rank", 16)
    return s


def run_cli(cli, scenario):
    p = subprocess.run([cli, "estimate", "-"], input=json.dumps(scenario), capture_output=True, text=True, timeout=120)
    try:
        out = json.loads(p.stdout)
    except ValueError:
        raise RuntimeError("vramplan failed (exit %d): %s %s" % (p.returncode, p.stdout[:300], p.stderr[:300]))
    if not out.get("ok", False):
        raise RuntimeError("vramplan error: %s" % json.dumps(out.get("errors", out))[:500])
    return out


def score(cli, rows, group_keys=()):
    results = []
    for row in rows:
        rec = {"id": row["id"], "source_group": row.get("source_group", ""), "model": model_label(row),
               "method": method_label(row), "gpu": row["scenario"].get("gpu") if isinstance(row["scenario"].get("gpu"), str)
               else row["scenario"].get("gpu", {}).get("name", ""), "metric": row["metric"],
               "reliability": row.get("reliability", ""), "representable": row.get("representable", True),
               "multi_gpu": row.get("multi_gpu", False)}
        rec.update({k: row.get(k, "") for k in group_keys})  # only with --group-by: the default records stay as they were
        measured = row.get("measured_bytes_per_gpu", row["measured_bytes"])
        rec["measured_bytes"] = measured
        try:
            out = run_cli(cli, row["scenario"])
        except Exception as e:  # keep going: one bad row must not hide the others
            rec["error"] = str(e)
            results.append(rec)
            continue
        g = out["gpu"]
        field = PREDICTED_FIELD[row["metric"]]
        pred = g[field]
        # A figure logged by one rank (Megatron's functional tests log the last pipeline stage):
        # compare that rank's estimate (ranks[] is in pipeline order), not the worst rank's.
        if row.get("measured_rank") == "last" and out.get("ranks"):
            pred = out["ranks"][-1][field]
            field = "ranks[-1]." + field
        if row.get("score_phase") == "load":  # "model init" figures: the load phase of the training run
            field = "load_reserved_bytes" if field != "peak_allocated_bytes" else "phase_peaks.load"
            pred = g["load_reserved_bytes"] if field == "load_reserved_bytes" else g["phase_peaks"]["load"]
        rec.update({
            "predicted_field": field, "predicted_bytes": pred,
            "error_pct": 100.0 * (pred - measured) / measured,
            "peak_phase": "load" if row.get("score_phase") == "load" else out.get("peak_phase", ""), "peak_at": out.get("peak_at", ""),
            "peak_allocated_bytes": g["peak_allocated_bytes"], "reserved_bytes": g["reserved_bytes"],
            "device_total_bytes": g["device_total_bytes"],
            "band": g.get("band", {}),
            "breakdown": dict(g["breakdown"]) if isinstance(g["breakdown"], dict) else {t["key"]: t["bytes"] for t in g["breakdown"]},
        })
        results.append(rec)
    return results


def stats(recs):
    errs = [abs(r["error_pct"]) for r in recs if "error_pct" in r]
    if not errs:
        return None
    signed = [r["error_pct"] for r in recs if "error_pct" in r]
    worst = max((r for r in recs if "error_pct" in r), key=lambda r: abs(r["error_pct"]))
    return {"n": len(errs), "median_abs_pct": statistics.median(errs), "mean_abs_pct": statistics.mean(errs),
            "median_signed_pct": statistics.median(signed), "worst_abs_pct": abs(worst["error_pct"]), "worst_id": worst["id"],
            "within_10pct": sum(e <= 10 for e in errs), "within_20pct": sum(e <= 20 for e in errs)}


def fmt_table(recs):
    lines = ["| id | model | method | GPU | metric | rel. | measured GiB | predicted GiB | error % | peak phase |",
             "|---|---|---|---|---|---|---:|---:|---:|---|"]
    for r in recs:
        if "error" in r:
            lines.append("| %s | %s | %s | %s | %s | %s | %.2f | ERROR | | %s |" % (
                r["id"], r["model"], r["method"], r["gpu"], r["metric"], r["reliability"], r["measured_bytes"] / GIB, r["error"][:80].replace("|", "/")))
            continue
        lines.append("| %s | %s | %s | %s | %s | %s | %.2f | %.2f | %+.1f | %s |" % (
            r["id"], r["model"], r["method"], r["gpu"], r["metric"], r["reliability"], r["measured_bytes"] / GIB,
            r["predicted_bytes"] / GIB, r["error_pct"], r["peak_phase"]))
    return lines


def fmt_stats(title, s):
    if s is None:
        return "| %s | 0 | | | | | |" % title
    return "| %s | %d | %.1f | %+.1f | %.1f (%s) | %d | %d |" % (
        title, s["n"], s["median_abs_pct"], s["median_signed_pct"], s["worst_abs_pct"], s["worst_id"], s["within_10pct"], s["within_20pct"])


def group_values(rec, key):
    """The group(s) a scored row falls in: one per element for a list-valued key (a TP+PP row is in both)."""
    v = rec.get(key, "")
    if isinstance(v, list):
        return v if v else ["(none)"]
    return [v if v != "" else "(none)"]


def grouped_stats(recs, keys):
    """{key: {value: stats}} over the rows that ran; keys as given to --group-by."""
    out = {}
    for key in keys:
        values = sorted({g for r in recs for g in group_values(r, key)})
        out[key] = {g: stats([r for r in recs if g in group_values(r, key)]) for g in values}
    return out


def fmt_grouped(title, grouped):
    lines = []
    for key, per_value in grouped.items():
        lines += ["", "### %s by %s" % (title, key), "",
                  "| %s | n | median | median signed | worst (id) | <=10%% | <=20%% |" % key, "|---|---:|---:|---:|---|---:|---:|"]
        lines += [fmt_stats(value, s) for value, s in per_value.items()]
    return lines


def band_coverage(recs):
    """nvidia-smi rows (metric device_total) whose published figure lies inside gpu.band [low, high]."""
    rows = [r for r in recs if r.get("metric") == "device_total" and r.get("band") and "error" not in r]
    if not rows:
        return []
    inside = [r for r in rows if r["band"]["low_bytes"] <= r["measured_bytes"] <= r["band"]["high_bytes"]]
    above = [r for r in rows if r["measured_bytes"] > r["band"]["high_bytes"]]
    return ["", "Band (gpu.band) coverage of the device_total rows: %d of %d inside [low, high], %d above the high end, %d below the low end."
            % (len(inside), len(rows), len(above), len(rows) - len(inside) - len(above))]


def report(all_scored, extra, group_keys=None, skipped=0):
    scored = [r for r in all_scored if not r.get("multi_gpu")]
    multi = [r for r in all_scored if r.get("multi_gpu")]
    out = ["# vramplan training estimates vs published GPU measurements", "",
           "Predicted figure per metric: allocated/active -> peak allocated, reserved/unknown -> reserved, device_total -> nvidia-smi total. "
           "error % = (predicted - measured) / measured. `*` after a model = inline approximation of an unsupported architecture.", "",
           "## Representable rows (%d)" % len(scored), ""]
    out += fmt_table(scored)
    out += ["", "## Error summary (absolute %)", "",
            "| subset | n | median | median signed | worst (id) | <=10% | <=20% |", "|---|---:|---:|---:|---|---:|---:|"]
    out.append(fmt_stats("all", stats(scored)))
    for rel in ("high", "medium", "low"):
        sub = [r for r in scored if r["reliability"] == rel]
        if sub:
            out.append(fmt_stats("reliability " + rel, stats(sub)))
    for grp in sorted({r["source_group"] for r in scored}):
        out.append(fmt_stats(grp, stats([r for r in scored if r["source_group"] == grp])))
    for m in sorted({r["metric"] for r in scored}):
        out.append(fmt_stats("metric " + m, stats([r for r in scored if r["metric"] == m])))
    out += band_coverage(scored)
    errors = [r for r in scored if "error" in r]
    if errors:
        out += ["", "%d row(s) failed to run: %s" % (len(errors), ", ".join(r["id"] for r in errors))]
    if multi:
        out += ["", "## Multi-GPU rows: data-parallel sharding, first version (%d; not in the statistics above)" % len(multi), "",
                "Per-GPU measurements of ZeRO / FSDP / offload runs; the per-GPU figure of rows published as sums is the sum / GPUs.", ""]
        out += fmt_table(multi)
        out += ["", "| subset | n | median | median signed | worst (id) | <=10% | <=20% |", "|---|---:|---:|---:|---|---:|---:|"]
        out.append(fmt_stats("multi-GPU", stats(multi)))
    if extra:
        out += ["", "## Not representable (information only, not in the statistics) (%d)" % len(extra), ""]
        out += fmt_table(extra)
    if group_keys:
        out += ["", "## Error summary by group (absolute %)"]
        out += fmt_grouped("Representable rows", grouped_stats(scored, group_keys))
        if multi:
            out += fmt_grouped("Multi-GPU rows", grouped_stats(multi, group_keys))
        if extra:
            out += fmt_grouped("Not representable rows (--all)", grouped_stats(extra, group_keys))
    if skipped:
        out += ["", "%d underspecified row(s) not run (configuration incomplete, kept for context)." % skipped]
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cli", nargs="?", default=os.path.join(ROOT, "build", "bin", "vramplan"))
    ap.add_argument("--rows", action="append", help="a rows file (repeatable: the files' rows are scored together); "
                    "default tests/fixtures/gpu/training_rows.json")
    ap.add_argument("--out", help="also write the markdown report to FILE")
    ap.add_argument("--json", help="write per-row numbers as JSON to FILE ('-' = stdout)")
    ap.add_argument("--all", action="store_true", help="also run representable=false rows (reported separately)")
    ap.add_argument("--only", help="comma-separated ids or source_group names to run")
    ap.add_argument("--group-by", help="comma-separated row keys for per-group error summaries, e.g. framework,dimensions")
    a = ap.parse_args()
    group_keys = [k for k in a.group_by.split(",") if k] if a.group_by else []
    a.rows = a.rows or [os.path.join(ROOT, "tests", "fixtures", "gpu", "training_rows.json")]
    rows = [r for path in a.rows for r in json.load(open(path))["rows"]]
    skipped = sum(1 for r in rows if r.get("list") == "underspecified")
    rows = [r for r in rows if r.get("list") != "underspecified"]
    if a.only:
        keep = set(a.only.split(","))
        rows = [r for r in rows if r["id"] in keep or r.get("source_group") in keep]
    rep = [r for r in rows if r.get("representable", True)]
    non = [r for r in rows if not r.get("representable", True)]
    scored = score(a.cli, rep, group_keys)
    extra = score(a.cli, non, group_keys) if a.all else []
    md = report(scored, extra, group_keys, skipped)
    payload = {"cli": a.cli, "rows_file": a.rows[0] if len(a.rows) == 1 else a.rows, "summary": stats(scored),
               "per_source_group": {g: stats([r for r in scored if r["source_group"] == g]) for g in sorted({r["source_group"] for r in scored})},
               "rows": scored, "not_representable": extra}
    if group_keys:
        payload["per_group"] = grouped_stats(scored, group_keys)
    if a.json == "-":
        json.dump(payload, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(md)
        if a.json:
            with open(a.json, "w") as f:
                json.dump(payload, f, indent=1)
    if a.out:
        with open(a.out, "w") as f:
            f.write(md)
    return 1 if any("error" in r for r in scored) else 0


if __name__ == "__main__":
    sys.exit(main())
