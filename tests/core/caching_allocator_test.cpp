// The caching-allocator replay against PyTorch's rules (c10/cuda/CUDACachingAllocator.cpp,
// default configuration). Every expected figure is worked out by hand from those rules in the
// comment next to it.
#include "gpu/caching_allocator.h"

#include <gtest/gtest.h>

namespace vramplan {
namespace caching_allocator_test {

constexpr int64_t kMiB = 1024 * 1024;

TEST(CachingAllocator, SmallRequestsRoundTo512AndShareTwoMiBSegments) {
  CachingAllocatorReplay a;
  a.Malloc(1);  // round_size: 512 B; small pool -> a 2 MiB segment, split (rest >= 512 B)
  EXPECT_EQ(a.allocated_bytes(), 512);
  EXPECT_EQ(a.reserved_bytes(), 2 * kMiB);
  for (int i = 0; i < 3; ++i) a.Malloc(512 * 1024);  // 3 x 512 KiB fit in the 2 MiB - 512 B left
  EXPECT_EQ(a.segments(), 1);
  a.Malloc(512 * 1024);  // only 512 KiB - 512 B left: a second small segment
  EXPECT_EQ(a.reserved_bytes(), 4 * kMiB);
  EXPECT_EQ(a.allocated_bytes(), 512 + 4 * 512 * 1024);
}

TEST(CachingAllocator, LargeRequestsBelowTenMiBShareTwentyMiBSegments) {
  CachingAllocatorReplay a;
  a.Malloc(8 * kMiB);  // > 1 MiB, < 10 MiB: a 20 MiB segment; the 12 MiB rest (> 1 MiB) is split off
  a.Malloc(8 * kMiB);  // fits in the 12 MiB rest; 4 MiB remain
  EXPECT_EQ(a.reserved_bytes(), 20 * kMiB);
  a.Malloc(8 * kMiB);  // 4 MiB is too small: a new 20 MiB segment
  EXPECT_EQ(a.reserved_bytes(), 40 * kMiB);
}

TEST(CachingAllocator, LargeRequestsRoundToTwoMiBAndSmallRestsAreNotSplit) {
  CachingAllocatorReplay a;
  // 11 MiB + 1 B: >= 10 MiB, so the segment is the size rounded up to 2 MiB = 12 MiB. The rest
  // (1 MiB - 512 B) is not > 1 MiB, so the block is not split and all 12 MiB count as allocated.
  a.Malloc(11 * kMiB + 1);
  EXPECT_EQ(a.reserved_bytes(), 12 * kMiB);
  EXPECT_EQ(a.allocated_bytes(), 12 * kMiB);
}

TEST(CachingAllocator, BestFitTakesTheSmallestLargeEnoughBlock) {
  CachingAllocatorReplay a;
  auto big = a.Malloc(30 * kMiB);
  auto mid = a.Malloc(20 * kMiB);
  a.Free(big);
  a.Free(mid);
  a.Malloc(15 * kMiB);  // the 20 MiB block is the smallest that fits; no new segment
  a.Malloc(25 * kMiB);  // the 30 MiB block still fits it
  EXPECT_EQ(a.reserved_bytes(), 50 * kMiB);
  EXPECT_EQ(a.segments(), 2);
}

TEST(CachingAllocator, FreedNeighboursMergeBackIntoOneBlock) {
  CachingAllocatorReplay a;
  auto whole = a.Malloc(40 * kMiB);
  a.Free(whole);
  auto x = a.Malloc(10 * kMiB);  // split from the 40 MiB block: 30 MiB left
  auto y = a.Malloc(10 * kMiB);  // from the 30: 20 MiB left
  a.Free(x);
  a.Free(y);  // x, y and the 20 MiB rest merge into 40 MiB again
  a.Malloc(40 * kMiB);
  EXPECT_EQ(a.reserved_bytes(), 40 * kMiB);
  EXPECT_EQ(a.allocated_bytes(), 40 * kMiB);
}

TEST(CachingAllocator, ASmallTensorCarvedFromACachedTransientForcesANewSegment) {
  // The mechanism behind a model load's reserve: a 100 MiB transient is freed (cached), a 2 MiB
  // persistent tensor is carved from it (best fit: the only large block), and the next 100 MiB
  // transient no longer fits the 98 MiB left: a second segment.
  CachingAllocatorReplay a;
  a.Free(a.Malloc(100 * kMiB));
  a.Malloc(2 * kMiB);
  a.Malloc(100 * kMiB);
  EXPECT_EQ(a.reserved_bytes(), 200 * kMiB);
  EXPECT_EQ(a.peak_allocated_bytes(), 102 * kMiB);
}

}  // namespace
}  // namespace vramplan
