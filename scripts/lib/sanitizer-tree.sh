# Sourced by scripts/test-sanitizers and scripts/fuzz: both use one clang tree (build-san) with
# ASan + UBSan and libFuzzer's coverage hooks (-fsanitize=fuzzer-no-link) on every object, so the
# core is compiled once for the sanitizer suite and the fuzzer (a clean CI compiled it twice).
# -O1 with line tables: ASan's recommended level, readable stack traces, and ~30% less compile
# time than -O2 -g. Debug keeps assertions on.
configure_sanitizer_tree() {
  VRAMPLAN_EXTRA_PACKAGES="clang ${VRAMPLAN_EXTRA_PACKAGES:-}" scripts/setup.sh
  # libFuzzer's runtime ships in libclang-rt-<major>-dev (recommended, not required, by clang).
  local major
  major="$(clang++ -dumpversion | cut -d. -f1)"
  VRAMPLAN_EXTRA_PACKAGES="libclang-rt-${major}-dev" scripts/setup.sh
  local launcher=()
  command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S . -B build-san -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ "${launcher[@]}" \
    -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" \
    -DVRAMPLAN_BUILD_TESTS=ON -DVRAMPLAN_BUILD_BENCHMARKS=OFF -DVRAMPLAN_BUILD_FUZZER=ON \
    -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=undefined -fno-omit-frame-pointer" >/dev/null
}
