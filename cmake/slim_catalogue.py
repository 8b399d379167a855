#!/usr/bin/env python3
"""Writes a data catalogue (core/data/presets.json or gpus.json) for the WASM module: the same
entries and values without their documentation (where each number was read: the `source`,
`*_source`, `*_note(s)`, `*_observations` and `about` strings, about half of the GPU catalogue's
bytes), minified. The page downloads the module, and neither the core nor the page reads these
strings; the native build (CLI, tests) embeds the full files, and core/data/ keeps every source.
Entries' `config` objects (Hugging Face config.json contents) are kept whole.

Usage: slim_catalogue.py INPUT OUTPUT
"""
import json
import re
import sys

DOC_KEY = re.compile(r"^(about|source|sources|notes?)$|_(source|sources|notes?|observations)$")


def slim(entry):
    return {k: v for k, v in entry.items() if not DOC_KEY.search(k)}


def main(src, dst):
    with open(src, encoding="utf-8") as f:
        doc = json.load(f)
    out = slim(doc)
    for key in ("models", "gpus"):
        if isinstance(out.get(key), list):
            out[key] = [slim(e) if isinstance(e, dict) else e for e in out[key]]
    text = json.dumps(out, ensure_ascii=False, separators=(",", ":"))
    with open(dst, "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
