#include "train/train_step.h"

namespace vramplan {

void EstimateTraining(const Scenario& scenario, Result* result) {
  (void)scenario;
  result->warnings.push_back(Issue{"not_implemented", "train", "training memory physics is not implemented yet"});
}

}  // namespace vramplan
