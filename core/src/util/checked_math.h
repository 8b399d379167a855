// Checked int64 arithmetic for byte counts: the backstop behind the pre-flight size check
// (util/size_limits.h). Every estimate's byte counts are exact int64 integers; the pre-flight
// refuses scenarios whose dominant products could leave int64, and the products of user-sized
// fields in the engines (attention scores, logits, KV cache, compute buffers, parameter counts,
// the device totals) go through Mul/Add below so that a shape the pre-flight missed is detected
// instead of wrapping (signed overflow is undefined behaviour; in practice it wraps, which once
// turned an exabyte of attention scores into "fits, 0.5 GiB").
//
// An overflow sets a sticky flag, in the manner of the floating-point exception flags of <cfenv>:
// the caller that owns an OverflowScope reads it once the computation is done and refuses the
// result (Estimate: code "too_large"; an inverse-search probe: "does not fit"). The value returned
// on overflow is kOverflowBytes, which is itself refused by the limit, so that later plain sums of
// a few such values stay far from int64's end.
#pragma once

#include <cstdint>
#include <limits>

namespace vramplan::checked {

// The largest byte count one device's estimate may hold: 2^62 B = 4 EiB. int64 ends at 2^63 - 1;
// the remaining factor of two is the headroom for the sums built from in-range terms (peak =
// sum of the breakdown, reserved = peak + allocator reserve, device total = reserved + context,
// headroom = capacity - device total), so none of them can overflow either.
inline constexpr int64_t kMaxDeviceBytes = int64_t{1} << 62;
inline constexpr int64_t kOverflowBytes = kMaxDeviceBytes;

namespace detail {
inline bool& OverflowFlag() {
  static thread_local bool flag = false;
  return flag;
}
inline int64_t Overflowed() {
  OverflowFlag() = true;
  return kOverflowBytes;
}
}  // namespace detail

// Records an overflow found by a range check rather than by an operation (a total above the limit).
inline void ReportOverflow() { detail::Overflowed(); }

inline int64_t Mul(int64_t a, int64_t b) {
  int64_t r = 0;
#if defined(__GNUC__) || defined(__clang__)
  if (__builtin_mul_overflow(a, b, &r)) return detail::Overflowed();
#else
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
  if (a != 0 && b != 0) {
    const bool overflow = a > 0 ? (b > 0 ? a > kMax / b : b < kMin / a) : (b > 0 ? a < kMin / b : a < kMax / b);
    if (overflow) return detail::Overflowed();
  }
  r = a * b;
#endif
  return r;
}

inline int64_t Add(int64_t a, int64_t b) {
  int64_t r = 0;
#if defined(__GNUC__) || defined(__clang__)
  if (__builtin_add_overflow(a, b, &r)) return detail::Overflowed();
#else
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
  if ((b > 0 && a > kMax - b) || (b < 0 && a < kMin - b)) return detail::Overflowed();
  r = a + b;
#endif
  return r;
}

// Products and sums of several terms, left to right.
template <typename... Rest>
int64_t Mul(int64_t a, int64_t b, int64_t c, Rest... rest) {
  return Mul(Mul(a, b), c, rest...);
}
template <typename... Rest>
int64_t Add(int64_t a, int64_t b, int64_t c, Rest... rest) {
  return Add(Add(a, b), c, rest...);
}

// Collects the overflows of one computation. Scopes nest: an inner scope (an inverse-search probe
// inside an estimate) starts clear and, when it ends, restores the outer scope's state, so a probe
// that overflowed (and so "does not fit") does not refuse the estimate around it.
class OverflowScope {
 public:
  OverflowScope() : outer_(detail::OverflowFlag()) { detail::OverflowFlag() = false; }
  ~OverflowScope() { detail::OverflowFlag() = outer_; }
  OverflowScope(const OverflowScope&) = delete;
  OverflowScope& operator=(const OverflowScope&) = delete;
  bool overflowed() const { return detail::OverflowFlag(); }

 private:
  bool outer_;
};

}  // namespace vramplan::checked
