// vramplan CLI: the same op table (vramplan/api.h) the page and tests call, plus a table view.
//   vramplan estimate FILE|- [--table]   vramplan models   vramplan gpus   vramplan schema
//   vramplan call OP [FILE|-]            any op of the table, its JSON envelope printed as is
//   vramplan plan FILE|-                 the plans that make the job fit (docs/planner.md)
//   vramplan check FILE|-                the pre-launch guard: exit 0 fits, 1 does not (best plans printed)
//   vramplan import FILE [--format F]    vramplan export --to FORMAT FILE   (launch_commands.h)
// Exit codes: 0 ok, 2 bad input (one line per problem: "error: <path>: <message>"), 1 usage/IO
// (check: 1 = does not fit).
#include <cstdio>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "launch_commands.h"
#include "terminal.h"
#include "vramplan/api.h"
#include "vramplan/plan.h"
#include "vramplan/result.h"

namespace {

using nlohmann::json;
using vramplan::cli::OneLine;
using vramplan::cli::ReadInput;
using vramplan::cli::ReportErrors;
using vramplan::cli::Str;

std::string OpList() {
  std::string s;
  for (const std::string& op : vramplan::OpNames()) s += (s.empty() ? "" : ", ") + op;
  return s;
}

int Usage() {
  std::fprintf(stderr,
               "usage: vramplan estimate FILE|- [--table]   estimate a scenario (JSON, schema v1)\n"
               "       vramplan models                       list model presets\n"
               "       vramplan gpus                         list the GPU catalogue\n"
               "       vramplan schema                       print the scenario JSON Schema\n"
               "       vramplan config FILE|-                parse a Hugging Face config.json\n"
               "       vramplan plan FILE|-                  plans that make the job fit, ranked (JSON)\n"
               "       vramplan check FILE|-                 exit 0 when the job fits, 1 when not (best plans), 2 bad input\n"
               "       vramplan call OP [FILE|-]             run one op of the table (%s)\n"
               "       vramplan import FILE|- [--format F]   read a launch config (vLLM, llama.cpp, LLaMA-Factory, ...)\n"
               "       vramplan export --to FORMAT FILE|-    write a scenario as a launch config\n",
               OpList().c_str());
  return 1;
}

std::string Gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

double Num(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

std::string Commas(double v) {
  std::string digits = std::to_string(static_cast<long long>(v)), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0 && digits[i - 1] != '-') out += ',';
    out += digits[i];
  }
  return out;
}

// The verdict line (Result::verdict, planner/verdict.h), in the words the page's badge uses.
std::string VerdictText(const json& r) {
  const std::string v = Str(r, "verdict");
  if (v == "fits_queued") {
    const json& inf = r["inference"];
    return "fits, " + Commas(Num(inf, "concurrent_sequences")) + " of " + Commas(Num(r["scenario"]["inference"], "batch_size")) +
           " requests at once; the rest queue";
  }
  if (v == "exceeds_model_context") return "fits in memory, but longer than the model's context limit (" + Commas(Num(r["model"], "context_limit")) + " tokens)";
  if (v == "does_not_fit") return "does not fit";
  return v.empty() ? "" : "fits";
}

// What ended a "longest that fits" search (planner/context_limit_check.h).
std::string BoundText(const std::string& bound) {
  if (bound == "model_context") return "  (the model's context limit)";
  if (bound == "input_limit") return "  (the input's token range)";
  return bound == "memory" ? "  (memory)" : "";
}

// The inverse answers, when the estimate carries them.
void PrintWhatFits(const json& r) {
  auto tokens = [](double n) { return n > 0 ? Commas(n) + " tokens" : std::string("none fits"); };
  if (r.contains("training") && r["training"].is_object()) {
    const json& t = r["training"];
    std::printf("%-28s %s%s\n", "longest sequence that fits", tokens(Num(t, "max_seq_len_fits")).c_str(), BoundText(Str(t, "max_seq_len_bound")).c_str());
  }
  if (r.contains("inference") && r["inference"].is_object()) {
    const json& i = r["inference"];
    std::printf("%-28s %s%s\n", "longest context that fits", tokens(Num(i, "max_context_fits")).c_str(), BoundText(Str(i, "max_context_bound")).c_str());
    const std::string format = Str(i, "highest_precision_format_fits");
    std::printf("%-28s %s\n", "highest-precision weights", (format.empty() ? std::string("none fits") : format + " (the least quantized format that fits)").c_str());
  }
}

void PrintTable(const json& r) {
  const json& gpu = r["gpu"];
  const json& model = r["model"];
  std::printf("%s  (%s, %s params, %s trainable)\n", Str(model, "name").c_str(), Str(model, "model_type").c_str(),
              std::to_string(static_cast<long long>(Num(r["params"], "total"))).c_str(),
              std::to_string(static_cast<long long>(Num(r["params"], "trainable"))).c_str());
  std::printf("GPU: %s, capacity %s\n\n", Str(gpu, "name").c_str(), Gib(Num(gpu, "capacity_bytes")).c_str());
  std::printf("%-20s %14s  %s\n", "term", "per GPU", "formula");
  const json& breakdown = gpu["breakdown"];
  const json& explain = r["explain"];
  for (const std::string& key : vramplan::BreakdownKeys()) {
    if (!breakdown.contains(key)) continue;
    std::string formula = explain.contains(key) && explain[key].is_string() ? OneLine(explain[key].get<std::string>()) : "";
    std::printf("%-20s %14s  %s\n", key.c_str(), Gib(breakdown[key].get<double>()).c_str(), formula.c_str());
  }
  std::printf("\n%-20s %14s\n", "peak allocated", Gib(Num(gpu, "peak_allocated_bytes")).c_str());
  std::printf("%-20s %14s\n", "reserved", Gib(Num(gpu, "reserved_bytes")).c_str());
  std::printf("%-20s %14s  (nvidia-smi)\n", "device total", Gib(Num(gpu, "device_total_bytes")).c_str());
  // The honest range (planner/peak_band.h): low - high around the device total, and its verdict.
  if (gpu.contains("band") && gpu["band"].is_object()) {
    const json& band = gpu["band"];
    std::printf("%-20s %14s  %s - %s (%s; %s)\n", "range", "", Gib(Num(band, "low_bytes")).c_str(), Gib(Num(band, "high_bytes")).c_str(),
                Str(band, "verdict").c_str(), Str(band, "basis").c_str());
  }
  if (r.contains("training") && Num(r["training"], "typical_seq_len") > 0) {
    std::printf("%-20s %14s  at the typical batch (%.0f tokens); the figures above are the longest batch's\n", "typical step",
                Gib(Num(r["training"], "typical_device_total_bytes")).c_str(), Num(r["training"], "typical_seq_len"));
  }
  std::printf("%-20s %14s  peak in %s%s%s\n", gpu["fits"].get<bool>() ? "FITS, headroom" : "DOES NOT FIT, short",
              Gib(std::abs(Num(gpu, "headroom_bytes"))).c_str(), Str(r, "peak_phase").c_str(),
              Str(r, "peak_at").empty() ? "" : " at ", Str(r, "peak_at").c_str());
  // Preference objectives: the phases' peaks and the peak split by model (policy / reference).
  const auto models = gpu.find("models");
  if (models != gpu.end() && models->is_object() && Num(*models, "reference") > 0 && !r.contains("rollout")) {
    const json& phases = gpu["phase_peaks"];
    std::printf("%-20s %14s  forward %s, reference %s, backward %s, optimizer_step %s\n", "phase peaks", "",
                Gib(Num(phases, "forward")).c_str(), Gib(Num(phases, "reference")).c_str(), Gib(Num(phases, "backward")).c_str(),
                Gib(Num(phases, "optimizer_step")).c_str());
    std::printf("%-20s %14s  policy %s, reference %s; the %s model's pass runs at the peak\n", "peak by model", "",
                Gib(Num(*models, "policy")).c_str(), Gib(Num(*models, "reference")).c_str(), Str(r, "peak_model").c_str());
  }
  // GRPO / PPO: every phase's peak, the peak split over every resident model, and the rollout engine.
  if (r.contains("rollout") && r["rollout"].is_object()) {
    const json& phases = gpu["phase_peaks"];
    const json& o = r["rollout"];
    std::printf("%-20s %14s  rollout %s, logprob %s, forward %s, backward %s, optimizer_step %s\n", "phase peaks", "",
                Gib(Num(phases, "rollout")).c_str(), Gib(Num(phases, "logprob")).c_str(), Gib(Num(phases, "forward")).c_str(),
                Gib(Num(phases, "backward")).c_str(), Gib(Num(phases, "optimizer_step")).c_str());
    if (models != gpu.end() && models->is_object()) {
      std::printf("%-20s %14s  policy %s, reference %s, rollout %s, reward %s, critic %s; %s runs at the peak\n", "peak by model", "",
                  Gib(Num(*models, "policy")).c_str(), Gib(Num(*models, "reference")).c_str(), Gib(Num(*models, "rollout")).c_str(),
                  Gib(Num(*models, "reward")).c_str(), Gib(Num(*models, "critic")).c_str(), Str(r, "peak_model").c_str());
    }
    if (Str(o, "mode") == "server") {
      std::printf("%-20s %14s  vLLM server on %.0f GPU(s) of its own (not in parallel.gpus), %.0f rollouts\n", "rollout engine",
                  Gib(Num(o, "engine_bytes")).c_str(), Num(o, "server_gpus"), Num(o, "rollout_sequences"));
    } else {
      std::printf("%-20s %14s  %s awake, %s while training; %.0f rollouts, %.0f at once\n", "rollout engine", Gib(Num(o, "engine_bytes")).c_str(),
                  Str(o, "engine").c_str(), Gib(Num(o, "asleep_bytes")).c_str(), Num(o, "rollout_sequences"), Num(o, "concurrent_sequences"));
    }
  }
  // Several rank roles (pipeline stages): one line each; the figures above are the worst one's.
  const auto ranks = r.find("ranks");
  if (ranks != r.end() && ranks->is_array() && ranks->size() > 1) {
    std::printf("\n%-20s %6s %14s %14s\n", "rank role", "GPUs", "device total", "headroom");
    const double capacity = Num(gpu, "capacity_bytes"), worst = Num(gpu, "device_total_bytes");
    for (const auto& k : *ranks) {
      const double total = Num(k, "device_total_bytes");
      std::printf("%-20s %6.0f %14s %14s%s\n", Str(k, "role").c_str(), Num(k, "count"), Gib(total).c_str(),
                  (capacity - total < 0 ? "-" + Gib(total - capacity) : Gib(capacity - total)).c_str(), total == worst ? "  <- worst" : "");
    }
  }
  if (Num(r["cpu"], "bytes") > 0) {
    const double processes = Num(r["cpu"], "node_processes");
    std::printf("%-20s %14s%s\n", "host RAM", Gib(Num(r["cpu"], "bytes")).c_str(), processes > 1 ? "  per GPU (each GPU's process)" : "");
    if (processes > 1) std::printf("%-20s %14s  (%.0f processes on the node)\n", "host RAM per node", Gib(Num(r["cpu"], "node_bytes")).c_str(), processes);
  }
  std::printf("\nverdict: %s\n", VerdictText(r).c_str());
  PrintWhatFits(r);
  for (const auto& w : r["warnings"]) std::printf("warning: %s\n", Str(w, "message").c_str());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Usage();
  std::string cmd = argv[1];
  if (const int rc = vramplan::cli::RunLaunchCommand(argc, argv); rc >= 0) return rc;
  if (cmd == "models") {
    std::cout << json::parse(vramplan::CallOp("presets", ""), nullptr, false)["presets"].dump(2) << "\n";
    return 0;
  }
  if (cmd == "gpus") {
    std::cout << json::parse(vramplan::CallOp("gpus", ""), nullptr, false)["gpus"].dump(2) << "\n";
    return 0;
  }
  if (cmd == "version" || cmd == "--version") {
    std::cout << vramplan::CallOpPayload("version", "") << "\n";
    return 0;
  }
  if (cmd == "schema") {
    std::cout << vramplan::CallOpPayload("schema", "");  // the document byte for byte
    return 0;
  }
  if (cmd == "call" && (argc == 3 || argc == 4)) {
    std::string input;
    if (argc == 4 && !ReadInput(argv[3], &input)) {
      std::fprintf(stderr, "error: cannot read %s\n", OneLine(argv[3]).c_str());
      return 1;
    }
    const std::string out = vramplan::CallOp(argv[2], input);
    json r = json::parse(out, nullptr, false);
    std::cout << out << "\n";
    return r.value("ok", false) ? 0 : 2;
  }
  if ((cmd == "plan" || cmd == "check") && argc == 3) {
    std::string input;
    if (!ReadInput(argv[2], &input)) {
      std::fprintf(stderr, "error: cannot read %s\n", OneLine(argv[2]).c_str());
      return cmd == "check" ? 2 : 1;
    }
    // A launch config (YAML, a command line, a DeepSpeed JSON...) is read through the import op.
    json doc = json::parse(input, nullptr, false);
    if (doc.is_discarded() || !doc.is_object() || !(doc.contains("model") || doc.contains("scenario"))) {
      json request = {{"format", "auto"}, {"text", input}};
      json imported = json::parse(vramplan::CallOp("import", request.dump()), nullptr, false);
      if (!imported.value("ok", false) || !imported.contains("scenario")) return ReportErrors(imported);
      input = imported["scenario"].dump();
    }
    if (cmd == "check") {
      const vramplan::CheckOutcome c = vramplan::CheckScenario(input);
      std::fputs(c.report.c_str(), c.exit_code == 2 ? stderr : stdout);
      return c.exit_code;
    }
    std::string out = vramplan::CallOp("plan", input);
    json r = json::parse(out, nullptr, false);
    if (!r.value("ok", false)) return ReportErrors(r);
    std::cout << r.dump(2) << "\n";
    return 0;
  }
  if ((cmd == "estimate" || cmd == "config") && argc >= 3) {
    bool table = false;
    std::string path;
    for (int i = 2; i < argc; ++i) {
      std::string arg = argv[i];
      if (arg == "--table") table = true;
      else if (path.empty()) path = arg;
      else return Usage();
    }
    std::string input;
    if (path.empty() || !ReadInput(path, &input)) {
      std::fprintf(stderr, "error: cannot read %s\n", OneLine(path).c_str());
      return 1;
    }
    std::string out = vramplan::CallOp(cmd == "estimate" ? "estimate" : "parse_config", input);
    json r = json::parse(out, nullptr, false);
    if (!r.value("ok", false)) return ReportErrors(r);
    if (table && cmd == "estimate") PrintTable(r);
    else std::cout << r.dump(2) << "\n";
    return 0;
  }
  return Usage();
}
