// libFuzzer target for the launch-config import (scripts/fuzz-launch builds it in build-san, seeds
// it with the configs of tests/core/launch_import_test.cpp and runs it; CI runs it for 20 s).
// Each input is a config text, imported under every format and under "auto"; the import must come
// back as a value (a scenario or errors), and a scenario it returns must serialize, export again
// (when the scenario validates) and import again without aborting.
#include <cstddef>
#include <cstdint>
#include <string>

#include "launch/formats.h"
#include "launch/launch_ops.h"
#include "vramplan/estimate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  using vramplan::launch::Formats;
  for (size_t i = 0; i <= Formats().size(); ++i) {
    const char* format = i == Formats().size() ? "auto" : Formats()[i].name;
    const vramplan::launch::ImportOutcome out = vramplan::launch::ImportLaunchConfig(text, format);
    if (!out.errors.empty()) continue;
    const std::string dumped = out.scenario.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    auto parsed = vramplan::ParseScenario(dumped);
    if (!parsed.ok()) continue;
    const auto exported = vramplan::launch::ExportLaunchConfig(parsed.value(), Formats()[i % Formats().size()].name);
    if (exported.errors.empty()) (void)vramplan::launch::ImportLaunchConfig(exported.text, "auto");
  }
  return 0;
}
