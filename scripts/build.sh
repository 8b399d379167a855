#!/usr/bin/env bash
# Builds the native core, CLI and tests (build/) and the WASM module + static site (build-wasm/site/).
# Usage: scripts/build.sh [native] [wasm]   (both by default)
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=/usr/share/nodejs  # Debian's emcc loads acorn from there
parts=("$@"); [ "${#parts[@]}" -gt 0 ] || parts=(native wasm)
for part in "${parts[@]}"; do
  case "$part" in
    native)
      # clang, the compiler the test command's sanitizer tree uses, so CI compiles what this builds;
      # a tree configured earlier keeps its compiler.
      compiler=()
      [ -f build/CMakeCache.txt ] || ! command -v clang++ >/dev/null 2>&1 || compiler=(-DCMAKE_CXX_COMPILER=clang++)
      cmake -S . -B build "${compiler[@]}" >/dev/null
      cmake --build build -j"$(nproc)" ;;
    wasm)
      [ -f build-wasm/CMakeCache.txt ] || emcmake cmake -S . -B build-wasm >/dev/null
      cmake --build build-wasm -j"$(nproc)" ;;
    *) echo "build.sh: unknown part '$part' (native, wasm)" >&2; exit 2 ;;
  esac
done
echo "build: ${parts[*]} (native in build/bin, site in build-wasm/site)"
