# VRAMPLAN_SANITIZE: the tree the test command and the fuzzer build (scripts/lib/sanitizer-tree.sh).
# What is instrumented is where the bugs we hunt live: the core (every byte of hostile input goes
# through it) and the CLI get AddressSanitizer + UndefinedBehaviorSanitizer, with libFuzzer's
# coverage hooks under clang so scripts/fuzz links its fuzzers against the same objects. The test
# files only drive the core: they are compiled uninstrumented at -O0, which makes them 3-4x cheaper
# to compile than instrumented -O1 (tests/core/overflow_test.cpp: 49 s -> 11 s; docs/testing.md,
# "CI time"); every executable links the sanitizer runtimes.
if(NOT VRAMPLAN_SANITIZE)
  return()
endif()
if(EMSCRIPTEN)
  message(FATAL_ERROR "VRAMPLAN_SANITIZE is for native builds")
endif()
set(VRAMPLAN_SANITIZER_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  list(APPEND VRAMPLAN_SANITIZER_FLAGS -fsanitize=fuzzer-no-link)
endif()
add_link_options(-fsanitize=address,undefined)

# Instruments one target's own sources (the core, the CLI, the fuzzers).
function(vramplan_instrument target)
  target_compile_options(${target} PRIVATE ${VRAMPLAN_SANITIZER_FLAGS})
endfunction()
