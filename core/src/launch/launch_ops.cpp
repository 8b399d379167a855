#include "launch/launch_ops.h"

#include <utility>

#include "io/input_limits.h"
#include "io/json_writer.h"
#include "io/message_text.h"
#include "io/result_json.h"
#include "launch/formats.h"
#include "launch/text_documents.h"
#include "vramplan/estimate.h"

namespace vramplan::launch {
namespace {

// A stand-in model to check the fields of a scenario whose model the config does not name; the
// checks that depend on the model itself (LoRA targets, divisibility by heads or layers) are skipped.
constexpr const char* kStandInModel = "meta-llama/Llama-3.1-8B";

bool DependsOnModel(const std::string& path) {
  for (const char* prefix : {"train.lora.targets", "train.lora.modules_to_save", "train.freeze", "parallel.tp", "parallel.pp", "parallel.ep",
                             "parallel.cp", "parallel.etp", "parallel.vpp", "inference.n_gpu_layers", "model"}) {
    if (path.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

bool IsServingFormat(std::string_view name) { return name == "vllm" || name == "llama_cpp"; }

void Validate(ImportOutcome* out) {
  io::Json probe = out->scenario;
  const bool has_model = probe.contains("model");
  if (!has_model) probe["model"] = kStandInModel;
  auto parsed = ParseScenario(io::Dump(probe));
  if (parsed.ok()) return;
  for (const Issue& e : parsed.errors()) {
    if (!has_model && DependsOnModel(e.field_path)) continue;
    out->errors.push_back(Issue{e.code, e.field_path, "the imported scenario: " + e.message});
  }
}

// Fields with no effect on `s`'s estimate, which a format need not carry: the other mode's block,
// the LoRA/QLoRA/freeze settings of the methods that do not use them, and the GPUs-per-node default.
bool Irrelevant(const std::string& path, const Scenario& s) {
  auto under = [&](const char* prefix) { return path == prefix || path.rfind(std::string(prefix) + ".", 0) == 0; };
  if (s.mode == Mode::kInference) return under("train");
  if (under("inference")) return true;
  const bool lora = s.train.method == TrainMethod::kLora || s.train.method == TrainMethod::kQlora;
  if (!lora && under("train.lora")) return true;
  if (s.train.method != TrainMethod::kQlora && path.rfind("train.qlora_", 0) == 0) return true;
  if (s.train.method != TrainMethod::kFreeze && under("train.freeze")) return true;
  if (s.parallel.gpus_per_node == 0 && path == "parallel.gpus_per_node") return true;
  return false;
}

// Leaves of `want` that `got` does not have with the same value, copied into `*extras`.
void Diff(const io::Json& want, const io::Json& got, const std::string& path, const Scenario& s, io::Json* extras, std::vector<std::string>* paths) {
  if (Irrelevant(path, s)) return;
  if (want.is_object() && got.is_object() && path != "model") {
    for (auto it = want.begin(); it != want.end(); ++it) {
      const auto other = got.find(it.key());
      const std::string key_path = io::JoinPath(path, it.key());
      if (Irrelevant(key_path, s)) continue;
      if (other == got.end()) {
        (*extras)[it.key()] = it.value();
        paths->push_back(key_path);
        continue;
      }
      io::Json sub = io::Json::object();
      Diff(it.value(), *other, key_path, s, &sub, paths);
      if (!sub.empty()) (*extras)[it.key()] = std::move(sub);
    }
    return;
  }
  if (want != got) {
    *extras = want;
    paths->push_back(path);
  }
}

std::string WithExtras(const std::string& text, const io::Json& extras, Carrier carrier) {
  if (carrier == Carrier::kComment) return ExtrasComment(extras) + text;
  // A JSON export starts with "{\n": the member goes first in the first document.
  if (text.rfind("{\n", 0) != 0) return text;
  return "{\n  \"vramplan\": " + io::Dump(extras) + (text.size() > 3 && text[2] != '}' ? ",\n" : "\n") + text.substr(2);
}

void WriteNotes(io::JsonWriter& w, const std::vector<Note>& notes) {
  w.Key("notes").BeginArray();
  for (const Note& n : notes) w.BeginObject().Field("status", n.status).Field("key", n.key).Field("message", n.message).EndObject();
  w.EndArray();
}

std::string Errors(Issues errors) {
  io::CapIssues(&errors);
  return ErrorsToJson(errors);
}

ImportOutcome Import(std::string_view text, std::string_view format, bool read_extras) {
  ImportOutcome out;
  if (text.size() > io::kMaxDocumentBytes) {
    out.errors.push_back(Issue{"too_large", "text", "the config is " + std::to_string(text.size()) + " bytes; at most " + std::to_string(io::kMaxDocumentBytes) + " are read"});
    return out;
  }
  std::string name(format);
  if (name == "auto") {
    name = DetectFormat(text);
    if (name.empty()) {
      out.errors.push_back(Issue{"unknown_format", "text", "could not tell the format from the content; give \"format\": one of " + FormatNames()});
      return out;
    }
  }
  const Format* f = FindFormat(name);
  if (f == nullptr) {
    out.errors.push_back(Issue{"unknown_format", "format", "unknown format " + io::Quote(name, 40) + "; the formats are: auto, " + FormatNames()});
    return out;
  }
  out.format = name;
  ImportContext ctx;
  io::Json comment_extras;
  if (read_extras && f->carrier == Carrier::kComment) {
    comment_extras = FindExtrasComment(text, &ctx.errors);
  }
  if (ctx.errors.empty()) f->read(text, &ctx);
  if (!ctx.errors.empty()) {
    out.errors = std::move(ctx.errors);
    return out;
  }
  const io::Json& extras = f->carrier == Carrier::kComment ? comment_extras : ctx.extras;
  if (read_extras && !extras.is_null()) ctx.ApplyExtras(extras);
  if (!ctx.errors.empty()) {
    out.errors = std::move(ctx.errors);
    return out;
  }
  if (!read_extras) ctx.extras = nullptr;
  out.scenario = std::move(ctx.scenario);
  out.notes = std::move(ctx.notes);
  if (out.scenario.contains("model")) {
    std::vector<Note> kept;
    for (Note& n : out.notes) {
      if (n.status != "model" || n.message.find("not a preset") == std::string::npos) kept.push_back(std::move(n));
    }
    out.notes = std::move(kept);
  }
  Validate(&out);
  return out;
}

}  // namespace

std::string FormatNames() {
  std::string names;
  for (const Format& f : Formats()) names += std::string(names.empty() ? "" : ", ") + f.name;
  return names;
}

ImportOutcome ImportLaunchConfig(std::string_view text, std::string_view format) { return Import(text, format, true); }

ExportOutcome ExportLaunchConfig(const Scenario& s, std::string_view format) {
  ExportOutcome out;
  const Format* f = FindFormat(format);
  if (f == nullptr) {
    out.errors.push_back(Issue{"unknown_format", "to", "unknown format " + io::Quote(format, 40) + "; the formats are: " + FormatNames()});
    return out;
  }
  const bool serving = IsServingFormat(format);
  if (serving != (s.mode == Mode::kInference)) {
    out.errors.push_back(Issue{"wrong_mode", "scenario.mode", std::string(f->name) + (serving ? " serves a model: the scenario must have mode \"inference\"" : " trains a model: the scenario must have mode \"train\"")});
    return out;
  }
  ExportText written = f->write(s);
  out.notes = std::move(written.notes);
  // Read the export back (without extras): what differs is what the format could not say.
  const io::Json want = io::Json::parse(ScenarioToJson(s), nullptr, false);
  ImportOutcome back = Import(written.text, format, false);
  io::Json extras = io::Json::object();
  std::vector<std::string> paths;
  io::Json got = back.scenario;
  if (!got.is_object()) got = io::Json::object();
  if (!got.contains("model") && want.contains("model")) {
    extras["model"] = want["model"];
    paths.push_back("model");
    got["model"] = want["model"];
  }
  auto reparsed = back.errors.empty() ? ParseScenario(io::Dump(got)) : Expected<Scenario>(back.errors);
  if (reparsed.ok()) {
    const io::Json normalized = io::Json::parse(ScenarioToJson(reparsed.value()), nullptr, false);
    Diff(want, normalized, "", s, &extras, &paths);
  } else {
    extras = want;  // the export does not read back: everything travels in the extras
    out.notes.push_back(Note{"unsupported", "", "the export does not read back as a scenario (" + reparsed.errors()[0].message + "); the whole scenario is in the vramplan comment"});
  }
  for (const std::string& p : paths) {
    out.notes.push_back(Note{"not_expressed", p, std::string(f->name) + " has no key for this; kept in the vramplan " + (f->carrier == Carrier::kComment ? "comment" : "member")});
  }
  out.text = extras.empty() ? std::move(written.text) : WithExtras(written.text, extras, f->carrier);
  return out;
}

std::string ImportJson(std::string_view request) {
  io::Json req;
  Issues errors;
  if (!io::ParseUserJson(request, "", "request", &req, &errors)) return Errors(errors);
  io::ObjectReader r(req, "", &errors);
  std::string format = "auto", text;
  r.String("format", &format, 40);
  const io::Json* t = r.Raw("text");
  r.RejectUnknownKeys();
  if (t == nullptr) errors.push_back(Issue{"missing", "text", "the config to import is required as \"text\" (a string)"});
  else if (!t->is_string()) errors.push_back(Issue{"wrong_type", "text", "expected a string (the config's text), got " + io::Describe(*t)});
  if (!errors.empty()) return Errors(errors);
  ImportOutcome out = ImportLaunchConfig(t->get_ref<const std::string&>(), format);
  if (!out.errors.empty()) return Errors(out.errors);
  io::JsonWriter w;
  w.BeginObject().Field("ok", true).Field("format", out.format).Key("scenario").Raw(io::Dump(out.scenario)).Field("complete", out.scenario.contains("model"));
  WriteNotes(w, out.notes);
  w.EndObject();
  return w.Take();
}

std::string ExportJson(std::string_view request) {
  io::Json req;
  Issues errors;
  if (!io::ParseUserJson(request, "", "request", &req, &errors)) return Errors(errors);
  io::ObjectReader r(req, "", &errors);
  std::string to;
  r.String("to", &to, 40);
  const io::Json* scenario = r.Raw("scenario");
  r.RejectUnknownKeys();
  if (to.empty() && errors.empty()) errors.push_back(Issue{"missing", "to", "the format to write is required as \"to\": one of " + FormatNames()});
  if (scenario == nullptr) errors.push_back(Issue{"missing", "scenario", "the scenario to export is required as \"scenario\" (an object)"});
  if (!errors.empty()) return Errors(errors);
  auto parsed = ParseScenario(io::Dump(*scenario));
  if (!parsed.ok()) {
    for (const Issue& e : parsed.errors()) errors.push_back(Issue{e.code, io::JoinPath("scenario", e.field_path), e.message});
    return Errors(errors);
  }
  ExportOutcome out = ExportLaunchConfig(parsed.value(), to);
  if (!out.errors.empty()) return Errors(out.errors);
  io::JsonWriter w;
  w.BeginObject().Field("ok", true).Field("format", to).Field("text", out.text);
  WriteNotes(w, out.notes);
  w.EndObject();
  return w.Take();
}

}  // namespace vramplan::launch
