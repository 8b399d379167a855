#include "launch/yaml_subset.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>

#include "io/input_limits.h"
#include "io/message_text.h"

namespace vramplan::launch {
namespace {

using io::Json;

// One line of the document: its indentation, its text without the comment, and the raw text (for
// block scalars, whose lines keep their '#').
struct Line {
  size_t number = 0;  // 1-based
  size_t indent = 0;
  std::string text;
  std::string raw;
};

class Parser {
 public:
  Parser(std::vector<Line> lines, Issues* errors) : lines_(std::move(lines)), errors_(errors) {}

  bool Document(Json* out) {
    if (lines_.empty()) {
      *out = nullptr;
      return true;
    }
    size_t i = 0;
    if (!Node(&i, lines_[0].indent, 1, "", out)) return false;
    if (i < lines_.size()) return Fail(lines_[i].number, "", "unexpected text at indentation " + std::to_string(lines_[i].indent) + ": " + io::Quote(lines_[i].text, 40));
    return true;
  }

 private:
  bool Fail(size_t line, const std::string& path, const std::string& message, const char* code = "invalid_yaml") {
    errors_->push_back(Issue{code, path, "line " + std::to_string(line) + ": " + message});
    return false;
  }

  bool Count(size_t line, const std::string& path) {
    if (++values_ > io::kMaxValues) return Fail(line, path, "more than " + std::to_string(io::kMaxValues) + " values in the document", "too_many");
    return true;
  }

  static bool IsSequenceItem(const std::string& t) { return t == "-" || (t.size() >= 2 && t[0] == '-' && t[1] == ' '); }

  // The position of the ':' that ends a block-map key ("key: value" or "key:"), or npos.
  static size_t KeyColon(const std::string& t) {
    size_t i = 0;
    if (!t.empty() && (t[0] == '"' || t[0] == '\'')) {
      const char q = t[0];
      for (i = 1; i < t.size(); ++i) {
        if (t[i] == '\\' && q == '"') ++i;
        else if (t[i] == q) {
          if (q == '\'' && i + 1 < t.size() && t[i + 1] == '\'') ++i;
          else break;
        }
      }
      ++i;
    }
    if (!t.empty() && (t[0] == '[' || t[0] == '{')) return std::string::npos;
    for (; i < t.size(); ++i) {
      if (t[i] == ':' && (i + 1 == t.size() || t[i + 1] == ' ')) return i;
    }
    return std::string::npos;
  }

  bool Node(size_t* i, size_t indent, size_t depth, const std::string& path, Json* out) {
    if (depth > io::kMaxNestingDepth) return Fail(lines_[*i].number, path, "nested deeper than " + std::to_string(io::kMaxNestingDepth) + " levels", "too_deep");
    const Line& l = lines_[*i];
    if (IsSequenceItem(l.text)) return Sequence(i, indent, depth, path, out);
    if (KeyColon(l.text) != std::string::npos) return Mapping(i, indent, depth, path, out);
    // A scalar or flow collection on its own line(s).
    std::string text = l.text;
    const size_t number = l.number;
    ++*i;
    if (!JoinFlow(i, indent, &text)) return Fail(number, path, "unclosed [ or {");
    return Value(text, number, depth, path, out);
  }

  // A flow collection may continue on the following, more indented lines until its brackets close.
  bool JoinFlow(size_t* i, size_t indent, std::string* text) {
    if (text->empty() || ((*text)[0] != '[' && (*text)[0] != '{')) return true;
    while (!Balanced(*text)) {
      if (*i >= lines_.size() || lines_[*i].indent < indent) return false;  // inside brackets the column is free
      if (text->size() + lines_[*i].text.size() > io::kMaxStringBytes) return false;
      *text += ' ';
      *text += lines_[*i].text;
      ++*i;
    }
    return true;
  }

  static bool Balanced(const std::string& t) {
    long depth = 0;
    char quote = 0;
    for (size_t k = 0; k < t.size(); ++k) {
      const char c = t[k];
      if (quote) {
        if (c == '\\' && quote == '"') ++k;
        else if (c == quote) quote = 0;
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == '[' || c == '{') {
        ++depth;
      } else if (c == ']' || c == '}') {
        --depth;
      }
    }
    return depth <= 0 && quote == 0;
  }

  bool Sequence(size_t* i, size_t indent, size_t depth, const std::string& path, Json* out) {
    *out = Json::array();
    while (*i < lines_.size() && lines_[*i].indent == indent && IsSequenceItem(lines_[*i].text)) {
      const std::string item_path = path + "[" + std::to_string(out->size()) + "]";
      if (out->size() >= io::kMaxArrayItems) return Fail(lines_[*i].number, path, "a list of more than " + std::to_string(io::kMaxArrayItems) + " items", "too_many");
      if (!Count(lines_[*i].number, item_path)) return false;
      Line& l = lines_[*i];
      Json item;
      if (l.text == "-") {
        ++*i;
        if (*i < lines_.size() && lines_[*i].indent > indent) {
          if (!Node(i, lines_[*i].indent, depth + 1, item_path, &item)) return false;
        } else {
          item = nullptr;
        }
      } else {
        // "- content": the content is a node indented to its own column ("- key: v" starts a map).
        size_t offset = 2;
        while (offset < l.text.size() && l.text[offset] == ' ') ++offset;
        l.indent += offset;
        l.text.erase(0, offset);
        if (!Node(i, l.indent, depth + 1, item_path, &item)) return false;
      }
      out->push_back(std::move(item));
    }
    if (*i < lines_.size() && lines_[*i].indent > indent) return Fail(lines_[*i].number, path, "unexpected indentation");
    return true;
  }

  bool Mapping(size_t* i, size_t indent, size_t depth, const std::string& path, Json* out) {
    *out = Json::object();
    while (*i < lines_.size() && lines_[*i].indent == indent && !IsSequenceItem(lines_[*i].text)) {
      const Line& l = lines_[*i];
      const size_t number = l.number;
      const size_t colon = KeyColon(l.text);
      if (colon == std::string::npos) return Fail(number, path, "expected \"key: value\", found " + io::Quote(l.text, 40));
      std::string key;
      if (!Key(l.text.substr(0, colon), number, path, &key)) return false;
      const std::string key_path = io::JoinPath(path, key);
      if (out->contains(key)) return Fail(number, key_path, "the key " + io::Quote(key, 40) + " appears twice");
      if (out->size() >= io::kMaxObjectMembers) return Fail(number, path, "a map of more than " + std::to_string(io::kMaxObjectMembers) + " keys", "too_many");
      if (!Count(number, key_path)) return false;
      std::string rest = colon + 1 < l.text.size() ? l.text.substr(colon + 1) : "";
      Trim(&rest);
      ++*i;
      Json value;
      if (rest.empty()) {
        if (*i < lines_.size() && lines_[*i].indent > indent) {
          if (!Node(i, lines_[*i].indent, depth + 1, key_path, &value)) return false;
        } else if (*i < lines_.size() && lines_[*i].indent == indent && IsSequenceItem(lines_[*i].text)) {
          if (!Sequence(i, indent, depth + 1, key_path, &value)) return false;  // a list at the key's column
        } else {
          value = nullptr;
        }
      } else if (rest[0] == '|' || rest[0] == '>') {
        if (!BlockScalar(i, indent, rest, number, key_path, &value)) return false;
      } else {
        if (!JoinFlow(i, indent, &rest)) return Fail(number, key_path, "unclosed [ or {");
        if (!Value(rest, number, depth + 1, key_path, &value)) return false;
      }
      (*out)[key] = std::move(value);
    }
    if (*i < lines_.size() && lines_[*i].indent > indent) return Fail(lines_[*i].number, path, "unexpected indentation");
    return true;
  }

  bool Key(std::string text, size_t number, const std::string& path, std::string* key) {
    Trim(&text);
    if (text.empty()) return Fail(number, path, "an empty key");
    if (text[0] == '?' || text[0] == '&' || text[0] == '*' || text[0] == '!' || text.rfind("<<", 0) == 0) {
      return Fail(number, path, "complex keys, anchors, aliases, tags and merge keys are not supported");
    }
    if (text[0] == '"' || text[0] == '\'') {
      size_t pos = 0;
      if (!Quoted(text, &pos, number, path, key)) return false;
      if (pos != text.size()) return Fail(number, path, "text after a quoted key");
    } else {
      *key = text;
    }
    if (key->size() > io::kMaxKeyBytes) return Fail(number, path, "a key longer than " + std::to_string(io::kMaxKeyBytes) + " bytes", "too_long");
    return true;
  }

  // "|" keeps the newlines, ">" folds them into spaces; "-" strips the final newline.
  bool BlockScalar(size_t* i, size_t indent, const std::string& header, size_t number, const std::string& path, Json* out) {
    const bool literal = header[0] == '|';
    const bool strip = header.find('-') != std::string::npos;
    std::string s;
    while (*i < lines_.size() && lines_[*i].indent > indent) {
      const Line& l = lines_[*i];
      if (!s.empty()) s += literal ? '\n' : ' ';
      s += l.raw.substr(std::min(l.raw.size(), l.indent));
      if (s.size() > io::kMaxStringBytes) return Fail(number, path, "a string longer than " + std::to_string(io::kMaxStringBytes) + " bytes", "too_long");
      ++*i;
    }
    if (!strip && !s.empty()) s += '\n';
    *out = std::move(s);
    return true;
  }

  // One value on one logical line: a flow collection or a scalar.
  bool Value(const std::string& text, size_t number, size_t depth, const std::string& path, Json* out) {
    size_t pos = 0;
    if (!FlowNode(text, &pos, number, depth, path, out, false)) return false;
    SkipSpaces(text, &pos);
    if (pos != text.size()) return Fail(number, path, "unexpected text after the value: " + io::Quote(text.substr(pos), 40));
    return true;
  }

  bool FlowNode(const std::string& t, size_t* pos, size_t number, size_t depth, const std::string& path, Json* out, bool in_flow) {
    if (depth > io::kMaxNestingDepth) return Fail(number, path, "nested deeper than " + std::to_string(io::kMaxNestingDepth) + " levels", "too_deep");
    SkipSpaces(t, pos);
    if (*pos >= t.size()) {
      *out = nullptr;
      return true;
    }
    const char c = t[*pos];
    if (c == '&' || c == '*' || c == '!') return Fail(number, path, "anchors, aliases and tags are not supported");
    if (c == '[') {
      ++*pos;
      *out = Json::array();
      SkipSpaces(t, pos);
      if (*pos < t.size() && t[*pos] == ']') {
        ++*pos;
        return true;
      }
      while (true) {
        if (out->size() >= io::kMaxArrayItems) return Fail(number, path, "a list of more than " + std::to_string(io::kMaxArrayItems) + " items", "too_many");
        const std::string item_path = path + "[" + std::to_string(out->size()) + "]";
        if (!Count(number, item_path)) return false;
        Json item;
        if (!FlowNode(t, pos, number, depth + 1, item_path, &item, true)) return false;
        out->push_back(std::move(item));
        SkipSpaces(t, pos);
        if (*pos < t.size() && t[*pos] == ',') {
          ++*pos;
          SkipSpaces(t, pos);
          if (*pos < t.size() && t[*pos] == ']') {
            ++*pos;
            return true;
          }
          continue;
        }
        if (*pos < t.size() && t[*pos] == ']') {
          ++*pos;
          return true;
        }
        return Fail(number, path, "expected ',' or ']' in a flow list");
      }
    }
    if (c == '{') {
      ++*pos;
      *out = Json::object();
      SkipSpaces(t, pos);
      if (*pos < t.size() && t[*pos] == '}') {
        ++*pos;
        return true;
      }
      while (true) {
        SkipSpaces(t, pos);
        std::string key;
        if (*pos < t.size() && (t[*pos] == '"' || t[*pos] == '\'')) {
          if (!Quoted(t, pos, number, path, &key)) return false;
        } else {
          const size_t start = *pos;
          while (*pos < t.size() && t[*pos] != ':' && t[*pos] != ',' && t[*pos] != '}') ++*pos;
          key = t.substr(start, *pos - start);
          Trim(&key);
        }
        SkipSpaces(t, pos);
        if (*pos >= t.size() || t[*pos] != ':') return Fail(number, path, "expected ':' after a key in a flow map");
        ++*pos;
        const std::string key_path = io::JoinPath(path, key);
        if (key.size() > io::kMaxKeyBytes) return Fail(number, path, "a key longer than " + std::to_string(io::kMaxKeyBytes) + " bytes", "too_long");
        if (out->contains(key)) return Fail(number, key_path, "the key " + io::Quote(key, 40) + " appears twice");
        if (out->size() >= io::kMaxObjectMembers) return Fail(number, path, "a map of more than " + std::to_string(io::kMaxObjectMembers) + " keys", "too_many");
        if (!Count(number, key_path)) return false;
        Json value;
        if (!FlowNode(t, pos, number, depth + 1, key_path, &value, true)) return false;
        (*out)[key] = std::move(value);
        SkipSpaces(t, pos);
        if (*pos < t.size() && t[*pos] == ',') {
          ++*pos;
          continue;
        }
        if (*pos < t.size() && t[*pos] == '}') {
          ++*pos;
          return true;
        }
        return Fail(number, path, "expected ',' or '}' in a flow map");
      }
    }
    if (c == '"' || c == '\'') {
      std::string s;
      if (!Quoted(t, pos, number, path, &s)) return false;
      *out = std::move(s);
      return true;
    }
    const size_t start = *pos;
    if (in_flow) {
      while (*pos < t.size() && t[*pos] != ',' && t[*pos] != ']' && t[*pos] != '}') ++*pos;
    } else {
      *pos = t.size();
    }
    std::string plain = t.substr(start, *pos - start);
    Trim(&plain);
    return Resolve(plain, number, path, out);
  }

  bool Quoted(const std::string& t, size_t* pos, size_t number, const std::string& path, std::string* out) {
    const char q = t[*pos];
    ++*pos;
    out->clear();
    while (*pos < t.size()) {
      const char c = t[*pos];
      if (out->size() > io::kMaxStringBytes) return Fail(number, path, "a string longer than " + std::to_string(io::kMaxStringBytes) + " bytes", "too_long");
      if (c == q) {
        if (q == '\'' && *pos + 1 < t.size() && t[*pos + 1] == '\'') {
          *out += '\'';
          *pos += 2;
          continue;
        }
        ++*pos;
        return true;
      }
      if (c == '\\' && q == '"' && *pos + 1 < t.size()) {
        const char e = t[*pos + 1];
        *pos += 2;
        switch (e) {
          case 'n': *out += '\n'; break;
          case 't': *out += '\t'; break;
          case 'r': *out += '\r'; break;
          case '0': *out += '\0'; break;
          case 'u': {
            if (*pos + 4 > t.size()) return Fail(number, path, "a short \\u escape");
            const std::string hex = t.substr(*pos, 4);
            char* end = nullptr;
            const unsigned long cp = std::strtoul(hex.c_str(), &end, 16);
            if (end != hex.c_str() + 4) return Fail(number, path, "a bad \\u escape");
            *pos += 4;
            AppendUtf8(static_cast<unsigned>(cp), out);
            break;
          }
          default: *out += e;
        }
        continue;
      }
      *out += c;
      ++*pos;
    }
    return Fail(number, path, "an unclosed quote");
  }

  static void AppendUtf8(unsigned cp, std::string* out) {
    if (cp < 0x80) {
      *out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      *out += static_cast<char>(0xC0 | (cp >> 6));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      *out += static_cast<char>(0xE0 | (cp >> 12));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  // PyYAML's safe_load resolution (YAML 1.1): null, booleans, integers, floats, else a string.
  bool Resolve(const std::string& s, size_t number, const std::string& path, Json* out) {
    if (s.size() > io::kMaxStringBytes) return Fail(number, path, "a string longer than " + std::to_string(io::kMaxStringBytes) + " bytes", "too_long");
    if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") {
      *out = nullptr;
      return true;
    }
    static const char* const kTrue[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"};
    static const char* const kFalse[] = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"};
    for (const char* t : kTrue) {
      if (s == t) {
        *out = true;
        return true;
      }
    }
    for (const char* f : kFalse) {
      if (s == f) {
        *out = false;
        return true;
      }
    }
    if (LooksNumeric(s)) {
      const std::string digits = Underscoreless(s);
      const bool integer = digits.find_first_of(".eE") == std::string::npos;
      errno = 0;
      if (integer) {
        char* end = nullptr;
        const long long v = std::strtoll(digits.c_str(), &end, 10);
        if (errno == 0 && end == digits.c_str() + digits.size()) {
          *out = static_cast<int64_t>(v);
          return true;
        }
      }
      errno = 0;
      char* end = nullptr;
      const double d = std::strtod(digits.c_str(), &end);
      if (end == digits.c_str() + digits.size()) {
        if (!std::isfinite(d) || errno == ERANGE) {
          if (std::isfinite(d)) {  // an underflow: a tiny number, read as 0
            *out = 0.0;
            return true;
          }
          return Fail(number, path, "the number " + io::Quote(s, 40) + " is beyond the range of a double", "out_of_range");
        }
        *out = d;
        return true;
      }
    }
    *out = s;
    return true;
  }

  static std::string Underscoreless(const std::string& s) {
    std::string out;
    for (char c : s) {
      if (c != '_') out += c;
    }
    return out;
  }

  // [-+]? digits (with '_'), an optional fraction, an optional exponent; or .5.
  static bool LooksNumeric(const std::string& s) {
    size_t i = 0;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    bool digits = false;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || (digits && s[i] == '_'))) {
      digits = true;
      ++i;
    }
    if (i < s.size() && s[i] == '.') {
      ++i;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
        digits = true;
        ++i;
      }
    }
    if (!digits) return false;
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
      ++i;
      if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
      bool exp = false;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
        exp = true;
        ++i;
      }
      if (!exp) return false;
    }
    return i == s.size();
  }

  static void SkipSpaces(const std::string& t, size_t* pos) {
    while (*pos < t.size() && (t[*pos] == ' ' || t[*pos] == '\t')) ++*pos;
  }

 public:
  static void Trim(std::string* s) {
    size_t b = 0, e = s->size();
    while (b < e && ((*s)[b] == ' ' || (*s)[b] == '\t' || (*s)[b] == '\r')) ++b;
    while (e > b && ((*s)[e - 1] == ' ' || (*s)[e - 1] == '\t' || (*s)[e - 1] == '\r')) --e;
    *s = s->substr(b, e - b);
  }

 private:
  std::vector<Line> lines_;
  Issues* errors_;
  size_t values_ = 0;
};

// The text of a line without its comment: '#' at the start or after a space, outside quotes.
std::string StripComment(const std::string& s) {
  char quote = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (quote) {
      if (c == '\\' && quote == '"') ++i;
      else if (c == quote) quote = 0;
    } else if ((c == '"' || c == '\'') && (i == 0 || s[i - 1] == ' ' || s[i - 1] == '[' || s[i - 1] == '{' || s[i - 1] == ',' || s[i - 1] == ':' || s[i - 1] == '-')) {
      quote = c;
    } else if (c == '#' && (i == 0 || s[i - 1] == ' ' || s[i - 1] == '\t')) {
      return s.substr(0, i);
    }
  }
  return s;
}

}  // namespace

bool ParseYamlDocuments(std::string_view text, std::vector<io::Json>* documents, Issues* errors) {
  documents->clear();
  if (text.size() > io::kMaxDocumentBytes) {
    errors->push_back(Issue{"too_large", "", "the document is " + std::to_string(text.size()) + " bytes; at most " + std::to_string(io::kMaxDocumentBytes) + " are read"});
    return false;
  }
  std::vector<Line> lines;
  size_t number = 0, start = 0;
  bool has_content = false;
  auto finish = [&]() -> bool {
    if (!has_content && lines.empty()) return true;
    if (documents->size() >= 16) {
      errors->push_back(Issue{"too_many", "", "more than 16 YAML documents"});
      return false;
    }
    io::Json doc;
    Parser p(std::move(lines), errors);
    if (!p.Document(&doc)) return false;
    documents->push_back(std::move(doc));
    lines.clear();
    has_content = false;
    return true;
  };
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string raw(text.substr(start, end - start));
    start = end + 1;
    ++number;
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    if (raw.rfind("---", 0) == 0 && (raw.size() == 3 || raw[3] == ' ')) {
      if (!finish()) return false;
      has_content = true;
      std::string rest = StripComment(raw.substr(3));
      Parser::Trim(&rest);
      if (!rest.empty()) lines.push_back(Line{number, 0, rest, raw.substr(4)});
      continue;
    }
    if (raw == "...") {
      if (!finish()) return false;
      continue;
    }
    if (raw.rfind("%", 0) == 0) continue;  // a directive (%YAML 1.2)
    size_t indent = 0;
    while (indent < raw.size() && raw[indent] == ' ') ++indent;
    std::string body = StripComment(raw.substr(indent));
    Parser::Trim(&body);
    if (body.empty()) continue;
    if (body[0] == '\t' || (indent < raw.size() && raw[indent] == '\t')) {
      errors->push_back(Issue{"invalid_yaml", "", "line " + std::to_string(number) + ": a tab in the indentation (YAML indents with spaces)"});
      return false;
    }
    lines.push_back(Line{number, indent, std::move(body), std::move(raw)});
    if (end == text.size()) break;
  }
  return finish();
}

}  // namespace vramplan::launch
