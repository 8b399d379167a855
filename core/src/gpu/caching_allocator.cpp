#include "gpu/caching_allocator.h"
#include "units.h"

#include <algorithm>
#include <cassert>

namespace vramplan {
namespace {

constexpr int64_t kMiB = 1024 * 1024;
constexpr int64_t kMinBlockSize = 512;
constexpr int64_t kSmallSize = kMiB;
constexpr int64_t kSmallBuffer = 2 * kMiB;
constexpr int64_t kLargeBuffer = 20 * kMiB;
constexpr int64_t kMinLargeAlloc = 10 * kMiB;
constexpr int64_t kRoundLarge = 2 * kMiB;

int64_t RoundSize(int64_t bytes) {
  return bytes < kMinBlockSize ? kMinBlockSize : kMinBlockSize * CeilDiv(bytes, kMinBlockSize);
}

int64_t SegmentSize(int64_t size) {
  if (size <= kSmallSize) return kSmallBuffer;
  if (size < kMinLargeAlloc) return kLargeBuffer;
  return kRoundLarge * CeilDiv(size, kRoundLarge);
}

}  // namespace

CachingAllocatorReplay::Handle CachingAllocatorReplay::Malloc(int64_t bytes) {
  const int64_t size = RoundSize(bytes);
  const bool small = size <= kSmallSize;
  std::set<FreeKey>& pool = Pool(small);
  int32_t b = -1;
  auto it = pool.lower_bound({size, -1, -1});
  if (it != pool.end()) {
    b = std::get<2>(*it);
    pool.erase(it);
  } else {
    const int64_t seg = SegmentSize(size);
    blocks_.push_back(Block{seg, next_offset_bytes_, -1, -1, true, small});
    b = static_cast<int32_t>(blocks_.size() - 1);
    next_offset_bytes_ += seg;
    reserved_bytes_ += seg;
    ++segments_;
  }
  const int64_t rest = blocks_[b].bytes - size;
  if (small ? rest >= kMinBlockSize : rest > kSmallSize) {
    Block r{rest, blocks_[b].offset_bytes + size, b, blocks_[b].next, true, small};
    blocks_.push_back(r);
    const int32_t ri = static_cast<int32_t>(blocks_.size() - 1);
    if (blocks_[ri].next >= 0) blocks_[blocks_[ri].next].prev = ri;
    blocks_[b].next = ri;
    blocks_[b].bytes = size;
    Insert(ri);
  }
  blocks_[b].free = false;
  allocated_bytes_ += blocks_[b].bytes;
  peak_allocated_bytes_ = std::max(peak_allocated_bytes_, allocated_bytes_);
  return b;
}

void CachingAllocatorReplay::Absorb(int32_t left, int32_t right) {
  blocks_[left].bytes += blocks_[right].bytes;
  blocks_[left].next = blocks_[right].next;
  if (blocks_[right].next >= 0) blocks_[blocks_[right].next].prev = left;
}

void CachingAllocatorReplay::Free(Handle handle) {
  int32_t b = handle;
  assert(b >= 0 && b < static_cast<int32_t>(blocks_.size()) && !blocks_[b].free);
  blocks_[b].free = true;
  allocated_bytes_ -= blocks_[b].bytes;
  // Merge with a free previous block (it absorbs this one), then with a free next block.
  const int32_t p = blocks_[b].prev;
  if (p >= 0 && blocks_[p].free) {
    Erase(p);
    Absorb(p, b);
    b = p;
  }
  const int32_t n = blocks_[b].next;
  if (n >= 0 && blocks_[n].free) {
    Erase(n);
    Absorb(b, n);
  }
  Insert(b);
}

}  // namespace vramplan
