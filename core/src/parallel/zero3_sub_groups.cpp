#include "parallel/zero3_sub_groups.h"

#include <algorithm>

namespace vramplan {

int64_t Zero3LargestSubGroupElements(const std::vector<TensorShape>& trainable, int64_t dp, int64_t sub_group_size) {
  dp = std::max<int64_t>(1, dp);
  int64_t largest = 0, current = 0;
  auto add = [&](int64_t elements) {
    current += (elements + dp - 1) / dp;  // the rank's partition of one parameter (padded up)
    if (current >= sub_group_size) {
      largest = std::max(largest, current);
      current = 0;
    }
  };
  // A run's second copy is the tensors [begin, end) sharing one repeat > 1: walk them layer by layer.
  for (size_t i = 0; i < trainable.size();) {
    size_t end = i + 1;
    if (trainable[i].repeat > 1) {
      while (end < trainable.size() && trainable[end].repeat == trainable[i].repeat) ++end;
    }
    for (int64_t r = 0; r < trainable[i].repeat; ++r) {
      for (size_t t = i; t < end; ++t) {
        for (int64_t c = 0; c < trainable[t].count; ++c) add(trainable[t].Elements());
      }
    }
    i = end;
  }
  return std::max(largest, current);  // the last sub-group closes at the last parameter
}

}  // namespace vramplan
