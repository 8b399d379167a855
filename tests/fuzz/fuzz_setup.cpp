// Writes what a libFuzzer run of vramplan_scenario_fuzzer starts from (scripts/fuzz):
//   vramplan_fuzz_setup DICT_FILE CORPUS_DIR
// DICT_FILE: a libFuzzer -dict of every key of the scenario schema and of config.json, every
// enum value (support/schema_dictionary.h, read from the embedded schema and presets), and
// boundary numbers; CORPUS_DIR: one file per seed scenario (fixtures + tests/golden).
#include <cstdio>
#include <fstream>
#include <string>

#include "support/schema_dictionary.h"
#include "support/seed_corpus.h"

namespace {

// libFuzzer dictionary value syntax: "..." with \\, \" and \xAB escapes.
std::string DictEntry(const std::string& bytes) {
  static const char* hex = "0123456789ABCDEF";
  std::string out = "\"";
  for (unsigned char c : bytes) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s DICT_FILE CORPUS_DIR\n", argv[0]);
    return 2;
  }
  using vramplan::fuzzing::SchemaDictionary;
  const SchemaDictionary& d = SchemaDictionary::Get();
  std::ofstream dict(argv[1]);
  size_t n = 0;
  auto put = [&](const std::string& v) { dict << "v" << n++ << "=" << DictEntry(v) << "\n"; };
  for (const auto& k : d.scenario_keys()) put("\"" + k + "\":");
  for (const auto& k : d.config_keys()) put("\"" + k + "\":");
  for (const auto& e : d.enum_strings()) put("\"" + e + "\"");
  for (const char* t : {"1e400", "-1e400", "1e-400", "18446744073709551616", "9223372036854775807", "-9223372036854775808", "4294967296",
                        "2147483648", "16777216", "16777217", "65536", "65537", "1e308", "-1", "0", "0.5", "null", "true", "false", "[[[[",
                        "{\"a\":{\"a\":", "\\u0000", "\\n", "\\u001b[", "\\ud800", "\xff", "\"all-linear\"", "\"selective\""}) {
    put(t);
  }
  size_t golden = 0;
  const auto seeds = vramplan::fuzzing::LoadSeedScenarios(VRAMPLAN_FIXTURES_DIR, &golden);
  for (size_t i = 0; i < seeds.size(); ++i) {
    std::ofstream(std::string(argv[2]) + "/seed-" + std::to_string(i) + ".json") << vramplan::fuzzing::DumpCompact(seeds[i]);
  }
  std::printf("vramplan_fuzz_setup: %zu dictionary entries in %s; %zu seed scenarios (%zu from tests/golden) in %s\n", n, argv[1],
              seeds.size(), golden, argv[2]);
  return dict && !seeds.empty() ? 0 : 1;
}
