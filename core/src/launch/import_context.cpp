#include "launch/import_context.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <utility>

#include "io/message_text.h"

namespace vramplan::launch {
namespace {

std::vector<std::string> SplitPath(std::string_view path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t dot = path.find('.', start);
    if (dot == std::string_view::npos) dot = path.size();
    parts.emplace_back(path.substr(start, dot - start));
    start = dot + 1;
  }
  return parts;
}

std::string Shown(const io::Json& v) { return io::Preview(v); }

}  // namespace

bool IsAuto(const io::Json& v) { return v.is_null() || (v.is_string() && v.get_ref<const std::string&>() == "auto"); }

void ImportContext::Set(std::string_view path, io::Json value) {
  io::Json* node = &scenario;
  for (const std::string& part : SplitPath(path)) {
    if (!node->is_object()) *node = io::Json::object();
    node = &(*node)[part];
  }
  *node = std::move(value);
}

const io::Json* ImportContext::Get(std::string_view path) const {
  const io::Json* node = &scenario;
  for (const std::string& part : SplitPath(path)) {
    if (!node->is_object()) return nullptr;
    auto it = node->find(part);
    if (it == node->end()) return nullptr;
    node = &*it;
  }
  return node;
}

bool ImportContext::IsSet(std::string_view path) const { return Get(path) != nullptr; }

void ImportContext::AddNote(std::string status, std::string key, std::string message) {
  if (notes.size() == kMaxNotes) {
    notes.push_back(launch::Note{"ignored", "", "more keys than " + std::to_string(kMaxNotes) + ": the rest are not listed"});
  }
  if (notes.size() > kMaxNotes) return;
  notes.push_back(launch::Note{std::move(status), io::Printable(key, 80), std::move(message)});
}

void ImportContext::Read(std::string_view key, std::string_view path, io::Json value) {
  AddNote("read", std::string(key), "-> " + std::string(path) + " = " + Shown(value));
  Set(path, std::move(value));
}

void ImportContext::Default(std::string_view path, io::Json value, std::string_view why) {
  if (IsSet(path)) return;
  AddNote("default", std::string(path), Shown(value) + ": " + std::string(why));
  Set(path, std::move(value));
}

void ImportContext::Ignored(std::string_view key, std::string_view why) { AddNote("ignored", std::string(key), std::string(why)); }

void ImportContext::Unsupported(std::string_view key, std::string_view why) { AddNote("unsupported", std::string(key), std::string(why)); }

void ImportContext::Error(std::string_view key, std::string message, const char* code) {
  if (errors.size() >= 20) return;
  errors.push_back(Issue{code, io::Printable(key, 80), std::move(message)});
}

std::optional<int64_t> ImportContext::Int(const io::Json& v, std::string_view key, int64_t min, int64_t max) {
  std::optional<double> d;
  if (v.is_number_integer()) {
    const int64_t i = v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : v.get<int64_t>();
    if (i >= min && i <= max) return i;
    Error(key, "expected an integer from " + std::to_string(min) + " to " + std::to_string(max) + ", got " + Shown(v), "out_of_range");
    return std::nullopt;
  }
  if (v.is_number_float()) d = v.get<double>();
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    errno = 0;
    char* end = nullptr;
    const double parsed = std::strtod(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size() && errno == 0) d = parsed;
  }
  if (d && std::isfinite(*d) && std::floor(*d) == *d) {
    if (*d >= static_cast<double>(min) && *d <= static_cast<double>(max)) return static_cast<int64_t>(*d);
    Error(key, "expected an integer from " + std::to_string(min) + " to " + std::to_string(max) + ", got " + Shown(v), "out_of_range");
    return std::nullopt;
  }
  Error(key, "expected an integer, got " + io::Describe(v) + " " + Shown(v));
  return std::nullopt;
}

std::optional<double> ImportContext::Number(const io::Json& v, std::string_view key, double min, double max) {
  std::optional<double> d;
  if (v.is_number()) d = v.get<double>();
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    char* end = nullptr;
    errno = 0;
    const double parsed = std::strtod(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size() && errno == 0) d = parsed;
  }
  if (!d) {
    Error(key, "expected a number, got " + io::Describe(v) + " " + Shown(v));
    return std::nullopt;
  }
  if (!(std::isfinite(*d) && *d >= min && *d <= max)) {
    Error(key, "expected a number from " + io::Printable(std::to_string(min)) + " to " + io::Printable(std::to_string(max)) + ", got " + Shown(v), "out_of_range");
    return std::nullopt;
  }
  return d;
}

std::optional<bool> ImportContext::Bool(const io::Json& v, std::string_view key) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (s == "true" || s == "True" || s == "1" || s == "yes") return true;
    if (s == "false" || s == "False" || s == "0" || s == "no") return false;
  }
  if (v.is_number_integer() && (v.get<int64_t>() == 0 || v.get<int64_t>() == 1)) return v.get<int64_t>() == 1;
  Error(key, "expected true or false, got " + io::Describe(v) + " " + Shown(v));
  return std::nullopt;
}

std::optional<std::string> ImportContext::String(const io::Json& v, std::string_view key) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  Error(key, "expected a string, got " + io::Describe(v) + " " + Shown(v));
  return std::nullopt;
}

std::optional<std::vector<std::string>> ImportContext::StringList(const io::Json& v, std::string_view key) {
  std::vector<std::string> out;
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    size_t start = 0;
    while (start <= s.size()) {
      size_t comma = s.find(',', start);
      if (comma == std::string::npos) comma = s.size();
      std::string item = s.substr(start, comma - start);
      while (!item.empty() && item.front() == ' ') item.erase(0, 1);
      while (!item.empty() && item.back() == ' ') item.pop_back();
      if (!item.empty()) out.push_back(item);
      start = comma + 1;
    }
    return out;
  }
  if (v.is_array()) {
    for (const auto& item : v) {
      if (!item.is_string()) {
        Error(key, "expected a list of strings; one item is " + io::Describe(item));
        return std::nullopt;
      }
      out.push_back(item.get<std::string>());
    }
    return out;
  }
  Error(key, "expected a list of strings, got " + io::Describe(v));
  return std::nullopt;
}

void ImportContext::TakeExtras(io::Json* document) {
  if (!document->is_object()) return;
  auto it = document->find("vramplan");
  if (it == document->end()) return;
  extras = std::move(*it);
  document->erase(it);
}

namespace {

void MergeInto(io::Json* target, const io::Json& extras, const std::string& path, ImportContext* ctx) {
  for (auto it = extras.begin(); it != extras.end(); ++it) {
    const std::string key_path = io::JoinPath(path, it.key());
    io::Json& slot = (*target)[it.key()];
    if (it.value().is_object() && key_path != "model" && (slot.is_object() || slot.is_null())) {
      if (slot.is_null()) slot = io::Json::object();
      MergeInto(&slot, it.value(), key_path, ctx);
    } else {
      slot = it.value();
      ctx->AddNote("extra", key_path, "read from the vramplan comment (the format has no key for it)");
    }
  }
}

}  // namespace

void ImportContext::ApplyExtras(const io::Json& carried) {
  if (!carried.is_object()) {
    Error("vramplan", "the vramplan comment must hold a JSON object of scenario fields");
    return;
  }
  MergeInto(&scenario, carried, "", this);
}

}  // namespace vramplan::launch
