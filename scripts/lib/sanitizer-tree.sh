# Sourced by scripts/test, scripts/test-sanitizers and scripts/fuzz: one clang tree (build-san) in
# which the core and the CLI carry ASan + UBSan and libFuzzer's coverage hooks
# (-DVRAMPLAN_SANITIZE=ON, cmake/Sanitizers.cmake), so the core is compiled once for the test suite,
# the CLI the browser tests call, and the fuzzer. The test files are compiled uninstrumented at -O0.
# -O1 with line tables for the core: ASan's recommended level, readable stack traces. Debug keeps
# assertions on.
configure_sanitizer_tree() {
  VRAMPLAN_EXTRA_PACKAGES="clang ${VRAMPLAN_EXTRA_PACKAGES:-}" scripts/setup.sh
  # libFuzzer's runtime ships in libclang-rt-<major>-dev (recommended, not required, by clang).
  local major
  major="$(clang++ -dumpversion | cut -d. -f1)"
  VRAMPLAN_EXTRA_PACKAGES="libclang-rt-${major}-dev" scripts/setup.sh
  local launcher=()
  command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # CMAKE_CXX_FLAGS is reset: trees configured before cmake/Sanitizers.cmake carried the flags there.
  cmake -S . -B build-san -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ "${launcher[@]}" \
    -DCMAKE_CXX_FLAGS="" -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" -DVRAMPLAN_SANITIZE=ON \
    -DVRAMPLAN_BUILD_TESTS=ON -DVRAMPLAN_BUILD_BENCHMARKS=OFF -DVRAMPLAN_BUILD_FUZZER=ON >/dev/null
}

# What a sanitizer report does to the process: fail it, with a stack trace.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
