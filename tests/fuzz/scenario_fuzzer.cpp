// libFuzzer target for the scenario API (build and run: scripts/fuzz; docs/testing.md). Each input
// is a scenario text; it must get the JSON API's contract (tests/core/support/api_contract.h),
// else the target aborts with the broken check. Mutations are structure-aware: inputs that parse
// as JSON objects are mutated by the same StructuredMutator as the GoogleTest loop
// (tests/core/fuzz_structured_test.cpp); others, and one in five, by libFuzzer's byte mutations
// with the dictionary of the schema's keys and enum values (-dict, written by vramplan_fuzz_setup).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "support/api_contract.h"
#include "support/structured_mutator.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

using vramplan::fuzzing::json;

// Deepest bracket nesting of a text (strings skipped), to keep the harness's own recursive JSON
// copies and dumps away from inputs nested deeper than a tree should be; the API still gets them.
size_t NestingDepth(const std::string& text) {
  size_t depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

constexpr size_t kHarnessMaxDepth = 256;

// VRAMPLAN_FUZZ_IGNORE: comma-separated check names (or prefixes, e.g. "estimate_envelope:") not
// to abort on, to keep fuzzing past a known open problem for the memory and UB findings behind it.
bool Ignored(const std::string& check) {
  static const std::string list = [] {
    const char* v = std::getenv("VRAMPLAN_FUZZ_IGNORE");
    return v == nullptr ? std::string() : std::string(v);
  }();
  size_t start = 0;
  while (start < list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    const std::string item = list.substr(start, end - start);
    if (!item.empty() && check.compare(0, item.size(), item) == 0) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string config_text;
  const std::string* config = nullptr;
  if (NestingDepth(text) <= kHarnessMaxDepth) {
    json doc = vramplan::fuzzing::ParseOrDiscard(text);
    if (const json* model = vramplan::fuzzing::Member(doc, "model"); model != nullptr && model->is_object()) {
      config_text = vramplan::fuzzing::DumpCompact(*model);
      config = &config_text;
    }
  }
  for (const auto& f : vramplan::fuzzing::CheckApiContract(text, config)) {
    if (Ignored(f.check)) continue;
    std::fprintf(stderr, "contract broken: %s: %s\n", f.check.c_str(), f.detail.substr(0, 2000).c_str());
    std::abort();
  }
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  static const vramplan::fuzzing::StructuredMutator mutator;
  vramplan::fuzzing::Rng rng(seed);
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (rng.Chance(0.2) || NestingDepth(text) > kHarnessMaxDepth) return LLVMFuzzerMutate(data, size, max_size);
  json doc = vramplan::fuzzing::ParseOrDiscard(text);
  if (!doc.is_object()) return LLVMFuzzerMutate(data, size, max_size);
  for (uint64_t i = 0, n = 1 + rng.Below(3); i < n; ++i) mutator.Mutate(doc, rng);
  const std::string out = vramplan::fuzzing::Render(doc);
  if (out.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}
