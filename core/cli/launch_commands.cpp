// import: the scenario goes to stdout (ready for `vramplan estimate`), one "note: ..." line per key
// to stderr; export: the config text to stdout, its notes to stderr. --json prints the op's whole
// reply instead.
#include "launch_commands.h"
#include "terminal.h"

#include <cstdio>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "vramplan/api.h"

namespace vramplan::cli {
namespace {

using nlohmann::json;

int Report(const json& r) { return r.value("ok", false) ? 0 : ReportErrors(r); }

void PrintNotes(const json& r) {
  for (const auto& n : r["notes"]) {
    const std::string key = Str(n, "key");
    std::fprintf(stderr, "note: [%s] %s%s%s\n", Str(n, "status").c_str(), key.c_str(), key.empty() ? "" : ": ", Str(n, "message").c_str());
  }
}

int Usage() {
  std::fprintf(stderr,
               "usage: vramplan import FILE|- [--format auto|FORMAT] [--json]\n"
               "       vramplan export --to FORMAT FILE|- [--json]\n"
               "FORMAT: vllm, llama_cpp, llamafactory, axolotl, deepspeed, hf, accelerate, torchtune\n");
  return 1;
}

}  // namespace

int RunLaunchCommand(int argc, char** argv) {
  const std::string cmd = argv[1];
  if (cmd != "import" && cmd != "export") return -1;
  std::string path, format = cmd == "import" ? "auto" : "";
  bool as_json = false;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--format" && cmd == "import") || (arg == "--to" && cmd == "export")) {
      if (i + 1 >= argc) return Usage();
      format = argv[++i];
    } else if (arg == "--json") {
      as_json = true;
    } else if (path.empty()) {
      path = arg;
    } else {
      return Usage();
    }
  }
  if (path.empty() || format.empty()) return Usage();
  std::string text;
  if (!ReadInput(path, &text)) {
    std::fprintf(stderr, "error: cannot read %s\n", OneLine(path).c_str());
    return 1;
  }
  json request;
  if (cmd == "import") {
    request = {{"format", format}, {"text", text}};
  } else {
    json scenario = json::parse(text, nullptr, false);
    if (scenario.is_discarded()) {
      // Not JSON: the op reports it with the position.
      const std::string out = CallOp("estimate", text);
      return Report(json::parse(out, nullptr, false));
    }
    request = {{"to", format}, {"scenario", scenario}};
  }
  const std::string out = CallOp(cmd, request.dump(-1, ' ', false, json::error_handler_t::replace));
  const json r = json::parse(out, nullptr, false);
  if (as_json) {
    std::cout << out << "\n";
    return r.value("ok", false) ? 0 : 2;
  }
  if (const int rc = Report(r); rc != 0) return rc;
  PrintNotes(r);
  if (cmd == "import") {
    std::cout << r["scenario"].dump(2) << "\n";
    if (!r.value("complete", false)) std::fprintf(stderr, "note: the config names no model the presets know: add \"model\" before estimating\n");
  } else {
    std::cout << r.value("text", "");
  }
  return 0;
}

}  // namespace vramplan::cli
