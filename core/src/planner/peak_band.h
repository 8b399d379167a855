// The honest range of an estimate (Result::gpu.band) and the typical step of unpacked data
// (Result::training.typical_*). docs/frameworks.md, "The band".
#pragma once

#include "planner/prepared.h"
#include "vramplan/result.h"
#include "vramplan/scenario.h"

namespace vramplan {

// Inference estimates: the modeled reserve (reserved - allocated) is a calibrated fraction or the
// engine's own pool; the band allows half of it either way. Training estimates use the published
// spread of the reserve and the CUDA context instead (gpu/allocator_spread.h).
inline constexpr double kAllocatorSpread = 0.5;

// Fills r->gpu.band and, for training, r->training.batches / typical_*. Runs one more probe (the
// typical batch) when train.packing is false and typical_seq_len < seq_len.
void AddPeakBand(const Scenario& s, const Prepared& prepared, Result* r);

}  // namespace vramplan
