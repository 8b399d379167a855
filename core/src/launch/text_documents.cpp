#include "launch/text_documents.h"

#include <cctype>

#include "io/input_limits.h"

namespace vramplan::launch {

bool ParseJsonDocuments(std::string_view text, std::vector<io::Json>* documents, Issues* errors) {
  documents->clear();
  if (text.size() > io::kMaxDocumentBytes) {
    errors->push_back(Issue{"too_large", "", "the document is " + std::to_string(text.size()) + " bytes; at most " + std::to_string(io::kMaxDocumentBytes) + " are read"});
    return false;
  }
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i >= text.size()) break;
    // The end of this value: brackets balanced outside strings (the parser checks the rest).
    size_t j = i;
    long depth = 0;
    bool in_string = false;
    for (; j < text.size(); ++j) {
      const char c = text[j];
      if (in_string) {
        if (c == '\\') ++j;
        else if (c == '"') in_string = false;
      } else if (c == '"') {
        in_string = true;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (--depth == 0) {
          ++j;
          break;
        }
      } else if (depth == 0 && std::isspace(static_cast<unsigned char>(c))) {
        break;
      }
    }
    if (documents->size() >= 16) {
      errors->push_back(Issue{"too_many", "", "more than 16 JSON documents"});
      return false;
    }
    io::Json doc;
    if (!io::ParseUserJson(text.substr(i, j - i), "", "config", &doc, errors)) return false;
    documents->push_back(std::move(doc));
    i = j;
  }
  return true;
}

namespace {

bool NeedsQuotes(const std::string& s) {
  if (s.empty()) return true;
  static const char* const kWords[] = {"true", "false", "yes", "no", "on", "off", "null", "~", "y", "n"};
  std::string lower;
  for (char c : s) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* w : kWords) {
    if (lower == w) return true;
  }
  if (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-' || s[0] == '+' || s[0] == '.') return true;
  if (std::string_view("[]{},&*!|>'\"%@`#?:").find(s[0]) != std::string_view::npos) return true;
  if (s.back() == ' ' || s.front() == ' ') return true;
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7F) return true;
    if (s[i] == ':' || s[i] == '#' || s[i] == ',' || s[i] == '[' || s[i] == ']' || s[i] == '{' || s[i] == '}') return true;
  }
  return false;
}

std::string Scalar(const OrderedJson& v) {
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    return NeedsQuotes(s) ? OrderedJson(s).dump(-1, ' ', false, OrderedJson::error_handler_t::replace) : s;
  }
  if (v.is_null()) return "null";
  return v.dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
}

void WriteMap(const OrderedJson& doc, size_t indent, std::string* out) {
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    out->append(indent, ' ');
    *out += Scalar(OrderedJson(it.key()));
    const OrderedJson& v = it.value();
    if (v.is_object() && !v.empty()) {
      *out += ":\n";
      WriteMap(v, indent + 2, out);
    } else if (v.is_array()) {
      *out += ": [";
      bool first = true;
      for (const auto& item : v) {
        *out += first ? "" : ", ";
        *out += item.is_structured() ? item.dump() : Scalar(item);
        first = false;
      }
      *out += "]\n";
    } else if (v.is_object()) {
      *out += ": {}\n";
    } else {
      *out += ": " + Scalar(v) + "\n";
    }
  }
}

}  // namespace

std::string ToYaml(const OrderedJson& doc) {
  std::string out;
  WriteMap(doc, 0, &out);
  return out;
}

std::string ExtrasComment(const io::Json& extras) { return std::string(kExtrasPrefix) + io::Dump(extras) + "\n"; }

io::Json FindExtrasComment(std::string_view text, Issues* errors) {
  size_t start = 0, line = 1;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view l = text.substr(start, end - start);
    while (!l.empty() && (l.front() == ' ' || l.front() == '\t')) l.remove_prefix(1);
    if (l.substr(0, kExtrasPrefix.size()) == kExtrasPrefix) {
      io::Json extras;
      Issues parse_errors;
      if (!io::ParseUserJson(l.substr(kExtrasPrefix.size()), "vramplan", "vramplan comment", &extras, &parse_errors)) {
        for (auto& e : parse_errors) {
          e.message = "line " + std::to_string(line) + ": " + e.message;
          errors->push_back(std::move(e));
        }
        return nullptr;
      }
      return extras;
    }
    start = end + 1;
    ++line;
  }
  return nullptr;
}

}  // namespace vramplan::launch
