// Number formatting for explain strings: "16,060,522,496" and "14.96 GiB".
#pragma once

#include <cstdint>
#include <string>

namespace vramplan {

std::string WithCommas(int64_t n);
std::string Hundredths(uint64_t hundredths);  // 1496 -> "14.96"
std::string Gib(int64_t bytes);  // "14.96 GiB"
std::string BytesExplained(int64_t bytes);  // "16,060,522,496 B (14.96 GiB)"

}  // namespace vramplan
