// The import and export ops (vramplan/api.h): a launch config in, a scenario and notes out; a
// scenario in, a launch config out. What a format cannot express travels in the exported text
// itself (a "# vramplan: {...}" comment line, or a "vramplan" member of a JSON config), found by
// reading the export back: the fields whose values did not survive are exactly what it carries,
// and each is listed in the export's notes as "not_expressed". So import(export(s)) is s.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "launch/import_context.h"
#include "vramplan/scenario.h"

namespace vramplan::launch {

struct ImportOutcome {
  io::Json scenario;  // without "model" when the config names none the presets know
  std::string format;
  std::vector<Note> notes;
  Issues errors;  // empty when it worked
};

// `format`: a format name or "auto" (detected from the content).
ImportOutcome ImportLaunchConfig(std::string_view text, std::string_view format);

struct ExportOutcome {
  std::string text;
  std::vector<Note> notes;
  Issues errors;
};

ExportOutcome ExportLaunchConfig(const Scenario& s, std::string_view format);

// The ops: {"format": "auto"|name, "text": "..."} -> {"ok", "scenario", "format", "notes"};
// {"to": name, "scenario": {...}} -> {"ok", "format", "text", "notes"}; errors as values.
std::string ImportJson(std::string_view request);
std::string ExportJson(std::string_view request);

// The format names, for messages and the CLI.
std::string FormatNames();

}  // namespace vramplan::launch
