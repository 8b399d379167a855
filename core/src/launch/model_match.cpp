#include "launch/model_match.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "io/message_text.h"
#include "model/catalog.h"

namespace vramplan::launch {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string LastComponent(std::string_view s) {
  while (!s.empty() && s.back() == '/') s.remove_suffix(1);
  const size_t slash = s.find_last_of('/');
  return std::string(slash == std::string_view::npos ? s : s.substr(slash + 1));
}

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// "qwen3-32b-q4_k_m.gguf" -> "qwen3-32b"; "llama-3.1-8b.q8_0.gguf" -> "llama-3.1-8b"; "-00001-of-00002" dropped.
std::string WithoutGguf(std::string s) {
  if (!EndsWith(s, ".gguf")) return s;
  s.resize(s.size() - 5);
  const size_t of = s.find("-of-");
  if (of != std::string::npos && of >= 6) s.resize(of - 6);
  static const char* const kTags[] = {"q8_0", "q6_k", "q5_k_m", "q5_k_s", "q4_k_m", "q4_k_s", "q4_0", "q4_1", "q3_k_m", "q3_k_s", "q3_k_l",
                                      "q2_k", "iq4_xs", "iq4_nl", "iq3_xxs", "iq3_m", "iq2_xxs", "iq2_xs", "f16", "bf16", "f32"};
  for (const char* tag : kTags) {
    for (const char* sep : {"-", ".", "_"}) {
      const std::string suffix = std::string(sep) + tag;
      if (EndsWith(s, suffix)) return s.substr(0, s.size() - suffix.size());
    }
  }
  return s;
}

std::string WithoutChatSuffix(const std::string& s) {
  for (const char* suffix : {"-instruct", "-chat", "-it", "-hf", "-base"}) {
    if (EndsWith(s, suffix)) return s.substr(0, s.size() - std::string_view(suffix).size());
  }
  return s;
}

}  // namespace

std::string MatchPreset(std::string_view name) {
  if (name.empty() || name.size() > 1000) return "";
  const std::string wanted = Lower(name);
  const std::string last = WithoutGguf(Lower(LastComponent(name)));
  for (const auto& p : Presets()) {
    if (Lower(p.id) == wanted) return p.id;
  }
  for (const auto& p : Presets()) {
    if (Lower(LastComponent(p.id)) == last) return p.id;
  }
  const std::string base = WithoutChatSuffix(last);
  for (const auto& p : Presets()) {
    if (WithoutChatSuffix(Lower(LastComponent(p.id))) == base) return p.id;
  }
  return "";
}

void ReadModel(ImportContext* ctx, std::string_view key, const std::string& name) {
  const std::string preset = MatchPreset(name);
  if (!preset.empty()) {
    ctx->Read(key, "model", preset);
    if (Lower(preset) != Lower(name)) ctx->AddNote("model", std::string(key), io::Quote(name, 80) + " read as the preset " + io::Quote(preset, 80) + " (same architecture)");
    return;
  }
  ctx->AddNote("model", std::string(key), io::Quote(name, 80) + " is not a preset: choose the model (vramplan models) or paste its config.json as \"model\"");
}

void NoModel(ImportContext* ctx, std::string_view format) {
  if (ctx->IsSet("model")) return;
  ctx->AddNote("model", "", std::string(format) + " names no model: choose one (vramplan models) or paste its config.json as \"model\"");
}

}  // namespace vramplan::launch
