#include "format.h"

#include <cstdio>

namespace vramplan {

std::string WithCommas(int64_t n) {
  bool negative = n < 0;
  uint64_t u = negative ? 0 - static_cast<uint64_t>(n) : static_cast<uint64_t>(n);
  const std::string digits = std::to_string(u);
  std::string out;
  out.reserve(digits.size() + digits.size() / 3 + 1);
  if (negative) out += '-';
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string Hundredths(uint64_t hundredths) {
  std::string out = std::to_string(hundredths / 100);
  out += '.';
  out += static_cast<char>('0' + (hundredths / 10) % 10);
  out += static_cast<char>('0' + hundredths % 10);
  return out;
}

std::string Gib(int64_t bytes) {
  // Integer formatting (snprintf("%.2f") dominated the estimate's cost): hundredths of a GiB, rounded.
  const bool negative = bytes < 0;
  const uint64_t mag = negative ? 0 - static_cast<uint64_t>(bytes) : static_cast<uint64_t>(bytes);
  const uint64_t hundredths = (mag / 1024 * 100 + 512 * 1024 * 1024 / 1024) / (1024 * 1024);
  return (negative ? "-" : "") + Hundredths(hundredths) + " GiB";
}

std::string BytesExplained(int64_t bytes) { return WithCommas(bytes) + " B (" + Gib(bytes) + ")"; }

}  // namespace vramplan
