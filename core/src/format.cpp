#include "format.h"

#include <cstdio>

namespace vramplan {

std::string WithCommas(int64_t n) {
  bool negative = n < 0;
  uint64_t u = negative ? 0 - static_cast<uint64_t>(n) : static_cast<uint64_t>(n);
  std::string digits = std::to_string(u);
  std::string out;
  int count = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    if (count > 0 && count % 3 == 0) out.insert(out.begin(), ',');
    out.insert(out.begin(), *it);
    ++count;
  }
  return negative ? "-" + out : out;
}

std::string Gib(int64_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

std::string BytesExplained(int64_t bytes) { return WithCommas(bytes) + " B (" + Gib(bytes) + ")"; }

}  // namespace vramplan
