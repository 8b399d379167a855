// How far published processes spread around the two GPU-only terms the estimate calibrates (the
// caching allocator's reserve and the CUDA context), from tests/fixtures/gpu/allocator_triples.json
// ("summary"; written by make_allocator_triples.py, which lists every reading with its URL and
// quote). planner/peak_band.cpp turns them into the band's low and high ends; docs/training.md
// section 7 reports them per group. allocator_spread_test.cpp checks these numbers against the
// fixture's summary.
#pragma once

#include <cstdint>

namespace vramplan {

// reserved / allocated - 1. Lowest: a process whose blocks were all allocated once and kept (the
// weights after loading; torchtune's tutorial: 13.96 GB allocated, 13.98 GB reserved), so the reserve
// is only the 2 MiB rounding of each block. Highest: what a published training run needed. The peak
// pairs (torchtune PR #527, pytorch#40989, WeatherGenerator PR #2628) give 11.2% to 14.9% of the peak
// allocated; fms-acceleration's A100 suite (HF Trainer + PEFT, 16 single-GPU runs below capacity)
// publishes nvidia-smi and the peak allocated, whose gap less the highest A100 training context
// (1,407 MiB) is 6.0% to 28.7% of the peak allocated (GPTQ and fused-QLoRA runs at batch 8 highest).
inline constexpr double kReserveRatioLow = 0.0014;
inline constexpr double kReserveRatioHigh = 0.2867;

// The CUDA context and the kernel modules it has loaded (device used - reserved). With lazy module
// loading (CUDA >= 11.7): 377 MiB in a training process on a T4 (TRL's GRPO notebook) to 1,407 MiB
// on an A100 running bitsandbytes LLM.int8 (axolotl#814); right after the first CUDA call 254-567 MiB
// (5 readings). Eager loading: 616 MiB (pytorch#86509, CUDA 11.7) to 1,341 MiB (HF docs, V100).
inline constexpr int64_t kContextLazyLowMiB = 377;
inline constexpr int64_t kContextLazyHighMiB = 1407;
inline constexpr int64_t kContextEagerLowMiB = 616;
inline constexpr int64_t kContextEagerHighMiB = 1341;

}  // namespace vramplan
