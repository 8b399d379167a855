// Parameter counts of vision and audio towers, computed from a pasted config's shapes. Every
// width and depth the config reader accepts is below 2^24, but a tower multiplies up to four of
// them (a merger Linear(h m^2, h m^2)), so plain int64 products of hostile values could overflow
// (undefined behaviour). Count does int64 arithmetic through util/checked_math.h: a result past
// int64 saturates at checked::kOverflowBytes (2^62) and stays at or above it through later sums,
// so TowerParamsOrError turns it into an error naming the tower's config instead of a wrapped count.
#pragma once

#include <cstdint>
#include <string>

#include "io/json_reader.h"
#include "util/checked_math.h"
#include "vramplan/error.h"

namespace vramplan {

class Count {
 public:
  Count(int64_t v = 0) : v_(v) {}  // NOLINT(google-explicit-constructor): literals and reader values mix in
  int64_t get() const { return v_; }
  friend Count operator+(Count a, Count b) { return Count(checked::Add(a.v_, b.v_)); }
  friend Count operator*(Count a, Count b) { return Count(checked::Mul(a.v_, b.v_)); }
  friend Count operator/(Count a, Count b) { return Count(b.v_ > 0 ? a.v_ / b.v_ : 0); }  // config divisors are >= 1
  Count& operator+=(Count b) { return *this = *this + b; }

 private:
  int64_t v_;
};

// `c` as an int64 count, or 0 with an error at `path` when the shapes overflowed.
inline int64_t TowerParamsOrError(Count c, const std::string& path, Issues* errors) {
  if (c.get() >= 0 && c.get() < checked::kOverflowBytes) return c.get();
  io::AddError(errors, "too_large", path, path + ": the tower's shapes give more than 2^62 parameters");
  return 0;
}

}  // namespace vramplan
