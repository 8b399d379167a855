// The three inference engines and what they share. Each engine is a pure function of the
// scenario that fills the GPU breakdown, the CPU side, the timeline and the capacity fields;
// inverse questions (inverse.cpp) call the same functions with modified scenarios.
#pragma once

#include <cstdint>
#include <string>

#include "diagnostics/warning_codes.h"
#include "parallel/shard.h"
#include "vramplan/result.h"
#include "vramplan/scenario.h"

namespace vramplan {

struct Prepared;

// Each engine fills what one rank of role `rank.role` holds: tensor-parallel splits and the layer
// split go through `rank` (parallel/shard.h). `explain`: build explain strings and warnings (off
// inside the inverse searches, for speed). `prepared` is PrepareModel(s) or a preparation of the
// same model and GPU (planner/prepared.h).
void EstimateTransformersEngine(const Scenario& s, const RankShard& rank, const Prepared& prepared, Result* r, bool explain);
void EstimateVllmEngine(const Scenario& s, const RankShard& rank, const Prepared& prepared, Result* r, bool explain);
void EstimateLlamaCppEngine(const Scenario& s, const RankShard& rank, const Prepared& prepared, Result* r, bool explain);

// Dispatch on s.inference.engine for one rank role (the device overheads come after:
// planner/simulate.h).
void RunInferenceEngine(const Scenario& s, const RankShard& rank, const Prepared& prepared, Result* r, bool explain);

// Whether the scenario works on the chosen GPU: the memory fits and, for vLLM, the engine starts
// (max_model_len fits the KV pool) and the requested batch is served concurrently.
bool InferenceFits(const Scenario& s, const Result& r);

// Fills result->inference.{max_context_fits, max_batch_fits, smallest_format_fits, min_gpus}.
void SolveInverseQuestions(const Scenario& s, const Prepared& prepared, Result* r);

// The smallest tensor-parallel degree (llama.cpp: layer-split GPU count) at which `s` fits; 0 if
// none up to 64 (the inverse answer `inference.min_gpus`, also the planner's fewest GPUs).
int64_t InferenceMinGpus(const Scenario& s, const Prepared& prepared);

namespace engine_util {

void SetTerm(Result* r, const std::string& key, int64_t bytes, std::string explain);
int64_t PromptPlusNew(const Scenario& s);
void Warn(Result* r, bool explain, WarningCode code, const std::string& field, const std::string& message);

}  // namespace engine_util

}  // namespace vramplan
