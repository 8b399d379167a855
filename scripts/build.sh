#!/usr/bin/env bash
# Builds the native core, CLI and tests (build/) and the WASM module + static site (build-wasm/site/).
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=/usr/share/nodejs  # Debian's emcc loads acorn from there
cmake -S . -B build >/dev/null
cmake --build build -j"$(nproc)"
[ -f build-wasm/CMakeCache.txt ] || emcmake cmake -S . -B build-wasm >/dev/null
cmake --build build-wasm -j"$(nproc)"
echo "build: native in build/bin, site in build-wasm/site"
