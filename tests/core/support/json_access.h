// Exception-free reading of nlohmann::json for the fuzz and property suites. The core (and so
// every test linked with it) is built with JSON_NOEXCEPTION, where a wrong accessor aborts: these
// helpers check the type before every read. Also a small seeded random source shared by the
// mutator and the scenario generator.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace vramplan::fuzzing {

using nlohmann::json;

// The member `key` of an object, or nullptr (not an object, or no such key).
inline const json* Member(const json& j, const std::string& key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

inline json* Member(json& j, const std::string& key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

// Follows a path of object keys ({"gpu", "breakdown", "weights"}); nullptr when any step is missing.
inline const json* At(const json& j, std::initializer_list<const char*> path) {
  const json* cur = &j;
  for (const char* key : path) {
    cur = Member(*cur, key);
    if (cur == nullptr) return nullptr;
  }
  return cur;
}

// An integer value (signed or unsigned JSON integer that fits int64), else nullopt.
inline std::optional<int64_t> AsInt(const json* j) {
  if (j == nullptr) return std::nullopt;
  if (j->is_number_integer() && !j->is_number_unsigned()) return j->get<int64_t>();
  if (j->is_number_unsigned()) {
    const uint64_t u = j->get<uint64_t>();
    if (u <= static_cast<uint64_t>(INT64_MAX)) return static_cast<int64_t>(u);
  }
  return std::nullopt;
}

inline std::optional<bool> AsBool(const json* j) {
  if (j == nullptr || !j->is_boolean()) return std::nullopt;
  return j->get<bool>();
}

inline std::optional<std::string> AsString(const json* j) {
  if (j == nullptr || !j->is_string()) return std::nullopt;
  return j->get<std::string>();
}

// Compact text that never aborts on invalid UTF-8 inside strings.
inline std::string DumpCompact(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// Parses without exceptions (a discarded value on error).
inline json ParseOrDiscard(const std::string& text) { return json::parse(text, nullptr, false); }

// Deterministic pseudo-random source. Each fuzz iteration and each generated scenario gets its
// own generator derived from (run seed, index), so one case can be regenerated alone.
class Rng {
 public:
  explicit Rng(uint64_t seed) : gen_(seed) {}
  static Rng For(uint64_t run_seed, uint64_t index) { return Rng(SplitMix(run_seed ^ SplitMix(index + 0x9E3779B97F4A7C15ULL))); }

  uint64_t Next() { return gen_(); }
  // Uniform in [0, n) (0 when n == 0).
  uint64_t Below(uint64_t n) { return n == 0 ? 0 : gen_() % n; }
  // Uniform in [lo, hi].
  int64_t Range(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(Below(static_cast<uint64_t>(hi - lo) + 1)); }
  // Log-uniform-ish integer in [lo, hi] (small values as likely as large ones), lo >= 1.
  int64_t LogRange(int64_t lo, int64_t hi) {
    std::uniform_real_distribution<double> d(std::log(static_cast<double>(lo)), std::log(static_cast<double>(hi) + 1));
    int64_t v = static_cast<int64_t>(std::exp(d(gen_)));
    return v < lo ? lo : (v > hi ? hi : v);
  }
  bool Chance(double p) { return std::uniform_real_distribution<double>(0, 1)(gen_) < p; }
  template <typename T>
  const T& Pick(const std::vector<T>& items) { return items[Below(items.size())]; }
  template <typename T>
  T Pick(std::initializer_list<T> items) { return *(items.begin() + Below(items.size())); }

  static uint64_t SplitMix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
  }

 private:
  std::mt19937_64 gen_;
};

// Reads an unsigned integer from the environment (decimal), or `fallback` when unset or invalid.
inline uint64_t EnvOr(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  unsigned long long parsed = std::strtoull(v, &end, 10);
  return end != nullptr && *end == '\0' ? static_cast<uint64_t>(parsed) : fallback;
}

inline bool EnvSet(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0';
}

// True in a build with AddressSanitizer or UndefinedBehaviorSanitizer: the sanitizer tree defines
// VRAMPLAN_SANITIZER_BUILD for the (uninstrumented) test files; an instrumented file knows by
// itself (GCC defines __SANITIZE_ADDRESS__; Clang answers __has_feature). The suites scale their default sizes down
// there (about 10-30x slower), and say so in their output.
#if defined(VRAMPLAN_SANITIZER_BUILD) || defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitizerBuild = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
inline constexpr bool kSanitizerBuild = true;
#else
inline constexpr bool kSanitizerBuild = false;
#endif
#else
inline constexpr bool kSanitizerBuild = false;
#endif

}  // namespace vramplan::fuzzing
