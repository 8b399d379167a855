// Integer rounding shared by the whole core, defined once.
#pragma once

#include <cstdint>

namespace vramplan {

// ceil(a / b) for a >= 0, b >= 1: a share of `a` split over `b` parts, rounded up (the largest
// part). Every per-rank share and every block count goes through it.
constexpr int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace vramplan
