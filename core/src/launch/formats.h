// The launch-config formats: each one reads its config into a scenario (with notes) and writes a
// scenario as its config. One file per format (launch/format_*.cpp); the table below names them,
// and DetectFormat picks one from a text's content. docs/planner.md, "Formats and their keys",
// lists the keys of each and their sources.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "launch/import_context.h"
#include "vramplan/scenario.h"

namespace vramplan::launch {

struct ExportText {
  std::string text;
  std::vector<Note> notes;  // what the format could not express and other caveats
};

enum class Carrier { kComment, kJsonMember };  // where the export keeps what the format cannot express

struct Format {
  const char* name;
  void (*read)(std::string_view text, ImportContext* ctx);
  ExportText (*write)(const Scenario& s);
  Carrier carrier;
};

void ImportVllm(std::string_view text, ImportContext* ctx);
ExportText ExportVllm(const Scenario& s);
void ImportLlamaCpp(std::string_view text, ImportContext* ctx);
ExportText ExportLlamaCpp(const Scenario& s);
void ImportLlamaFactory(std::string_view text, ImportContext* ctx);
ExportText ExportLlamaFactory(const Scenario& s);
void ImportAxolotl(std::string_view text, ImportContext* ctx);
ExportText ExportAxolotl(const Scenario& s);
void ImportDeepSpeed(std::string_view text, ImportContext* ctx);
ExportText ExportDeepSpeed(const Scenario& s);
void ImportHfTraining(std::string_view text, ImportContext* ctx);
ExportText ExportHfTraining(const Scenario& s);
void ImportTorchtune(std::string_view text, ImportContext* ctx);
ExportText ExportTorchtune(const Scenario& s);
void ImportAccelerate(std::string_view text, ImportContext* ctx);
ExportText ExportAccelerate(const Scenario& s);

// The table, in the order docs/planner.md lists them.
const std::vector<Format>& Formats();
const Format* FindFormat(std::string_view name);
// The format `text` is written in, from its content ("" when none matches).
std::string DetectFormat(std::string_view text);

}  // namespace vramplan::launch
