#include "planner/verdict.h"

#include "inference/engines.h"
#include "planner/context_limit_check.h"

namespace vramplan {

std::string VerdictOf(const Scenario& s, const Result& r) {
  const bool inference = s.mode == Mode::kInference && r.inference.present;
  if (!r.gpu.fits || (inference && !InferenceFits(s, r))) return "does_not_fit";
  if (ExceedsModelContext(s)) return "exceeds_model_context";
  if (inference && r.inference.concurrent_sequences < s.inference.batch_size) return "fits_queued";
  return "fits";
}

}  // namespace vramplan
