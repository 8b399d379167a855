#include "inference/vllm_kv_groups.h"

#include <algorithm>

#include "format.h"
#include "units.h"
#include "util/checked_math.h"

namespace vramplan {

using checked::Add;
using checked::Mul;

namespace {

bool SameType(const VllmKvSpec& a, const VllmKvSpec& b) { return a.kind == b.kind && a.window == b.window; }

// KVCacheSpec.max_memory_usage_bytes of one layer (kv_cache_interface.py).
int64_t SpecBytes(const VllmKvSpec& s, int64_t len, int64_t batched) {
  switch (s.kind) {
    case VllmSpecKind::kSlidingWindow: return Mul(CeilDiv(std::min(s.window - 1 + batched, len), s.block) + 1, s.page);
    case VllmSpecKind::kChunkedLocal: return Mul(CeilDiv(std::min(s.window + batched, len), s.block), s.page);
    case VllmSpecKind::kFull: break;
  }
  return Mul(CeilDiv(len, s.block), s.page);
}

}  // namespace

bool VllmHybridAllocatorForChunked(VllmVersion v) { return v == VllmVersion::kV0_21Plus; }

int64_t VllmHybridGroupSize(int64_t fewest_layers, int64_t most_layers) {
  return std::max<int64_t>(1, 4 * most_layers < 5 * fewest_layers ? most_layers : fewest_layers);
}

VllmKvPaging PageVllmAttention(const std::vector<KvGroup>& groups, const KvElementSize& e, int64_t block_size, int64_t max_num_batched_tokens,
                               int64_t available, bool hybrid_allocator) {
  VllmKvPaging p;
  p.batched_tokens = max_num_batched_tokens;
  bool has_full = false;
  for (const auto& g : groups) has_full = has_full || g.window_tokens == 0;
  // One spec per distinct (kind, window, page), as get_kv_cache_groups buckets layers by spec.
  for (const auto& g : groups) {
    VllmKvSpec s;
    s.kind = g.window_tokens == 0 ? VllmSpecKind::kFull : g.chunked ? VllmSpecKind::kChunkedLocal : VllmSpecKind::kSlidingWindow;
    s.window = g.window_tokens;
    // unify_hybrid_kv_cache_specs (hybrid manager disabled): sliding / chunked -> FullAttentionSpec.
    if (!hybrid_allocator && has_full) s = VllmKvSpec{};
    s.block = block_size;
    s.page = KvLayerBytes(g, e, block_size);
    s.layers = g.layers;
    bool merged = false;
    for (auto& o : p.specs) {
      if (SameType(o, s) && o.page == s.page) {
        o.layers += s.layers;
        merged = true;
        break;
      }
    }
    if (!merged) p.specs.push_back(s);
  }
  if (p.specs.empty()) return p;
  int64_t layers = 0, max_page = 0, page_sum = 0;
  bool one_type = true;
  for (const auto& s : p.specs) {
    layers += s.layers;
    max_page = std::max(max_page, s.page);
    page_sum = Add(page_sum, Mul(s.layers, s.page));
    one_type = one_type && SameType(s, p.specs.front());
  }
  p.min_block = block_size;
  if (p.specs.size() == 1) {
    p.layout = VllmKvPaging::Layout::kUniformSpec;
    p.group_size = layers;
    p.page = max_page;
    p.num_blocks = available > 0 ? available / max_page / layers : 0;
    p.pool_bytes = Mul(p.num_blocks, max_page, layers);
    p.token_capacity = Mul(p.num_blocks, block_size);
    p.specs.front().groups = 1;
    return p;
  }
  if (one_type) {
    p.layout = VllmKvPaging::Layout::kUniformType;
    p.group_size = layers;
    p.page = page_sum;
    p.num_blocks = available > 0 ? available / page_sum : 0;
    p.pool_bytes = Mul(p.num_blocks, page_sum);
    p.token_capacity = Mul(p.num_blocks, block_size);
    for (auto& s : p.specs) s.groups = 1;
    return p;
  }
  p.layout = VllmKvPaging::Layout::kHybrid;
  int64_t lo = layers, hi = 0;
  for (auto& s : p.specs) {
    if (max_page % s.page != 0) p.page_mismatch = true;
    s.block = Mul(s.block, max_page / s.page);
    s.page = max_page;
    lo = std::min(lo, s.layers);
    hi = std::max(hi, s.layers);
  }
  // The largest page keeps block_size, so the smallest block size is block_size.
  p.group_size = VllmHybridGroupSize(lo, hi);
  p.groups = 0;
  for (auto& s : p.specs) {
    s.groups = CeilDiv(s.layers, p.group_size);
    p.groups += s.groups;
  }
  p.page = max_page;
  p.num_blocks = available > 0 && !p.page_mismatch ? available / max_page / p.group_size : 0;
  p.pool_bytes = Mul(p.num_blocks, max_page, p.group_size);
  p.token_capacity = Mul(p.num_blocks / p.groups, p.min_block);
  return p;
}

int64_t VllmKvPaging::RequestBytes(int64_t len) const {
  int64_t total = 0;
  for (const auto& s : specs) {
    const int64_t one = SpecBytes(s, len, batched_tokens);
    switch (layout) {
      case Layout::kUniformSpec:
      case Layout::kUniformType: total = Add(total, Mul(s.layers, one)); break;
      case Layout::kHybrid: total = Add(total, Mul(group_size, page, s.groups, CeilDiv(one, page))); break;
    }
  }
  return total;
}

int64_t VllmKvPaging::RequestBlocks(int64_t len) const {
  const int64_t per_block = layout == Layout::kUniformType ? page : Mul(page, group_size);
  return per_block > 0 ? CeilDiv(RequestBytes(len), per_block) : 0;
}

std::string VllmKvPaging::Explain() const {
  auto name = [](const VllmKvSpec& s) {
    switch (s.kind) {
      case VllmSpecKind::kSlidingWindow: return "sliding window " + WithCommas(s.window);
      case VllmSpecKind::kChunkedLocal: return "chunked local " + WithCommas(s.window);
      case VllmSpecKind::kFull: break;
    }
    return std::string("full attention");
  };
  std::string out;
  for (const auto& s : specs) {
    if (!out.empty()) out += ", ";
    out += WithCommas(s.layers) + " " + name(s) + " layers";
    if (layout == Layout::kHybrid) out += " (" + WithCommas(s.groups) + (s.groups == 1 ? " group" : " groups") + ", blocks of " + WithCommas(s.block) + " tokens)";
  }
  if (layout == Layout::kHybrid) out += "; " + WithCommas(group_size) + " layers per group, " + WithCommas(groups) + " block tables per request";
  return out;
}

}  // namespace vramplan
