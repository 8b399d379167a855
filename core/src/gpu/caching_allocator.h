// A replay of PyTorch's CUDA caching allocator on a sequence of malloc/free events: how many bytes
// it reserves from CUDA (segments) for a given allocation order, which is what
// torch.cuda.max_memory_reserved() reports. Used where the order is known and matters, e.g. a
// model load whose large transients leave cached segments that later, smaller tensors only
// partly reuse (train/load_phase.h).
//
// Rules, default configuration (c10/cuda/CUDACachingAllocator.cpp: round_size, get_pool,
// get_allocation_size, get_free_block, should_split, free_block/try_merge_blocks; no
// max_split_size, no expandable segments, no roundup divisions, one stream):
//   * a request is rounded up to a multiple of 512 B (kMinBlockSize);
//   * requests <= 1 MiB (kSmallSize) come from the small pool, whose segments are 2 MiB
//     (kSmallBuffer); larger ones from the large pool, with 20 MiB segments (kLargeBuffer) below
//     10 MiB (kMinLargeAlloc) and otherwise the size rounded up to 2 MiB (kRoundLarge);
//   * a request takes the smallest cached free block of its pool that is large enough (ties: the
//     lowest address), else a new segment;
//   * the block is split when the rest is >= 512 B (small pool) or > 1 MiB (large pool);
//   * a freed block merges with free neighbours of the same segment; segments are never returned
//     to CUDA (no empty_cache, no out-of-memory retry).
#pragma once

#include <cstdint>
#include <set>
#include <tuple>
#include <vector>

namespace vramplan {

class CachingAllocatorReplay {
 public:
  using Handle = int32_t;

  Handle Malloc(int64_t bytes);
  void Free(Handle handle);

  int64_t allocated_bytes() const { return allocated_bytes_; }        // rounded block sizes in use
  int64_t peak_allocated_bytes() const { return peak_allocated_bytes_; }
  int64_t reserved_bytes() const { return reserved_bytes_; }          // sum of segment sizes
  int64_t segments() const { return segments_; }

 private:
  struct Block {
    int64_t bytes = 0;
    int64_t offset_bytes = 0;  // address: offset from the first segment's start
    int32_t prev = -1;  // neighbours in the same segment
    int32_t next = -1;
    bool free = true;
    bool small = false;
  };
  using FreeKey = std::tuple<int64_t, int64_t, int32_t>;  // (bytes, offset_bytes, block index)

  std::set<FreeKey>& Pool(bool small) { return small ? free_small_ : free_large_; }
  void Insert(int32_t b) { Pool(blocks_[b].small).insert({blocks_[b].bytes, blocks_[b].offset_bytes, b}); }
  void Erase(int32_t b) { Pool(blocks_[b].small).erase({blocks_[b].bytes, blocks_[b].offset_bytes, b}); }
  // `left` takes over its adjacent neighbour `right` of the same segment (try_merge_blocks).
  void Absorb(int32_t left, int32_t right);

  std::vector<Block> blocks_;
  std::set<FreeKey> free_small_, free_large_;
  int64_t next_offset_bytes_ = 0;
  int64_t allocated_bytes_ = 0, peak_allocated_bytes_ = 0, reserved_bytes_ = 0, segments_ = 0;
};

}  // namespace vramplan
