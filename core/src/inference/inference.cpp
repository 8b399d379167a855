#include "inference/inference.h"

namespace vramplan {

void EstimateInference(const Scenario& scenario, Result* result) {
  (void)scenario;
  result->warnings.push_back(Issue{"not_implemented", "inference", "inference memory physics is not implemented yet"});
}

}  // namespace vramplan
