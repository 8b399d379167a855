#include "io/input_limits.h"

#include <string>
#include <utility>
#include <vector>

#include "io/message_text.h"
#include "io/python_json_literals.h"

namespace vramplan::io {
namespace {

// Longest field path a message shows; deeper paths keep their start and end.
constexpr size_t kMaxPathChars = 120;
// Characters of one user key shown inside a path.
constexpr size_t kPathKeyChars = 40;

// nlohmann's SAX interface (json_sax in nlohmann/detail/input/json_sax.hpp): builds the same tree
// as Json::parse, but checks every limit before the tree grows, and remembers where it is (the key
// path) so that a refusal, a number overflow or a syntax error names the field. The parser itself
// is iterative (an explicit stack), so nothing here recurses.
class LimitedTreeBuilder {
 public:
  LimitedTreeBuilder(Json* root, std::string_view root_path, std::string_view what, Issues* errors)
      : root_(root), root_path_(root_path), what_(what), errors_(errors) {}

  bool null() { return Value(Json(nullptr)); }
  bool boolean(bool b) { return Value(Json(b)); }
  bool number_integer(Json::number_integer_t v) { return Value(Json(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return Value(Json(v)); }
  bool number_float(Json::number_float_t v, const Json::string_t& /*text*/) { return Value(Json(v)); }
  bool binary(Json::binary_t& b) { return Value(Json::binary(std::move(b))); }  // not produced by JSON text
  bool string(Json::string_t& s) {
    if (!BeginValue()) return false;
    if (s.size() > kMaxStringBytes) {
      return Fail("too_long", Here(), Subject(Here()) + " is a string of " + std::to_string(s.size()) + " bytes; strings are limited to " +
                                  std::to_string(kMaxStringBytes) + " bytes");
    }
    Insert(Json(std::move(s)));
    return true;
  }

  bool start_object(std::size_t /*size*/) { return Open(Json::object()); }
  bool key(Json::string_t& k) {
    Frame& f = frames_.back();
    if (k.size() > kMaxKeyBytes) {
      const std::string object = Path(frames_.size() - 1, false);
      return Fail("too_long", object, "a key of " + std::to_string(k.size()) + " bytes (" + Quote(k, 20) + ") in " + Subject(object) +
                                  " is longer than the " + std::to_string(kMaxKeyBytes) + " bytes allowed for a key");
    }
    if (f.items == kMaxObjectMembers) {
      const std::string object = Path(frames_.size() - 1, false);
      return Fail("too_many", object, Subject(object) + " has more than " + std::to_string(kMaxObjectMembers) + " keys");
    }
    ++f.items;
    f.key = std::move(k);
    return true;
  }
  bool end_object() { return Close(); }

  bool start_array(std::size_t /*size*/) { return Open(Json::array()); }
  bool end_array() { return Close(); }

  bool parse_error(std::size_t position, const std::string& token, const nlohmann::detail::exception& ex) {
    // The failing value has not started yet: in an array it is the next item.
    const std::string path = Path(frames_.size(), true);  // in field_path: the message says only where
    if (ex.id == 406) {  // parser.hpp: "number overflow parsing" (strtod gave inf)
      return Fail("out_of_range", path, Subject(path) + " is a number beyond the range of a double (magnitude above 1.8e308), got " +
                                      Printable(token, 24));
    }
    // ex.what(): "[json.exception.parse_error.101] parse error at line L, column C: <reason>".
    std::string what = ex.what();
    std::string where, reason = what;
    const size_t at = what.find(" at line ");
    const size_t colon = at == std::string::npos ? std::string::npos : what.find(": ", at);
    if (colon != std::string::npos) {
      where = " (" + what.substr(at + 4, colon - at - 4) + ")";
      reason = what.substr(colon + 2);
    }
    return Fail("invalid_json", path, "the " + std::string(what_) + " is not valid JSON at byte " + std::to_string(position) + where + ": " +
                                    Printable(reason, 160));
  }

 private:
  struct Frame {
    Json* container;  // the array or object being filled (stable: its parent is not touched until it closes)
    bool is_array;
    size_t items = 0;  // items (array) or keys (object) started so far
    std::string key;   // the current key (object)
  };

  bool Value(Json v) {
    if (!BeginValue()) return false;
    Insert(std::move(v));
    return true;
  }

  bool Open(Json container) {
    if (!BeginValue()) return false;
    if (frames_.size() == kMaxNestingDepth) {
      return Fail("too_deep", Here(), Subject(Here()) + " nests arrays and objects more than " + std::to_string(kMaxNestingDepth) +
                                  " levels deep (a scenario needs 3, a config.json about 5)");
    }
    const bool is_array = container.is_array();
    Json* slot = Insert(std::move(container));
    frames_.push_back(Frame{slot, is_array, 0, {}});
    return true;
  }

  bool Close() {
    frames_.pop_back();
    return true;
  }

  // Counts the value that starts now against the document and array limits.
  bool BeginValue() {
    if (!frames_.empty() && frames_.back().is_array) {
      Frame& f = frames_.back();
      if (f.items == kMaxArrayItems) {
        const std::string array = Path(frames_.size() - 1, false);
        return Fail("too_many", array, Subject(array) + " has more than " + std::to_string(kMaxArrayItems) + " items");
      }
      ++f.items;
    }
    if (++values_ > kMaxValues) {
      return Fail("too_many", Here(), "the " + std::string(what_) + " has more than " + std::to_string(kMaxValues) + " values");
    }
    return true;
  }

  Json* Insert(Json v) {
    if (frames_.empty()) {
      *root_ = std::move(v);
      return root_;
    }
    Frame& f = frames_.back();
    if (f.is_array) {
      Json::array_t& items = *f.container->get_ptr<Json::array_t*>();
      items.push_back(std::move(v));
      return &items.back();
    }
    Json& slot = (*f.container->get_ptr<Json::object_t*>())[f.key];
    slot = std::move(v);
    return &slot;
  }

  // The field path of the value being read ("train.lora.targets[3]"), through the outer `levels`
  // open containers. With `pending`, the innermost array's next item (a value not started yet).
  // A long path keeps its first and last segments around "...".
  std::string Path(size_t levels, bool pending) const {
    std::vector<std::string> segments;
    for (size_t i = 0; i < levels; ++i) {
      const Frame& f = frames_[i];
      if (f.is_array) {
        const size_t index = (pending && i + 1 == levels) || f.items == 0 ? f.items : f.items - 1;
        segments.push_back("[" + std::to_string(index) + "]");
      } else {
        if (f.items == 0) break;  // no key read yet: the object itself
        segments.push_back("." + Printable(f.key, kPathKeyChars));
      }
    }
    size_t total = root_path_.size();
    for (const auto& s : segments) total += s.size();
    std::string out(root_path_);
    size_t head = 0, tail = segments.size();
    if (total > kMaxPathChars) {
      size_t head_chars = root_path_.size(), tail_chars = 0;
      while (head < tail && head_chars + segments[head].size() <= kMaxPathChars / 2) head_chars += segments[head++].size();
      while (tail > head && tail_chars + segments[tail - 1].size() <= kMaxPathChars / 2) tail_chars += segments[--tail].size();
    }
    for (size_t i = 0; i < segments.size(); ++i) {
      if (i == head && head < tail && total > kMaxPathChars) {
        out += "...";
        i = tail - 1;
        continue;
      }
      out += segments[i];
    }
    if (!out.empty() && out[0] == '.') out.erase(0, 1);
    return out;
  }

  // The path of the value that has just started.
  std::string Here() const { return Path(frames_.size(), false); }

  // A path as the start of a message: the path, or "the scenario" at the top.
  std::string Subject(const std::string& path) const {
    return path.empty() || path == root_path_ ? "the " + std::string(what_) : path;
  }

  bool Fail(const char* code, std::string path, std::string message) {
    errors_->push_back(Issue{code, std::move(path), std::move(message)});
    return false;
  }

  Json* root_;
  std::string_view root_path_;
  std::string_view what_;
  Issues* errors_;
  std::vector<Frame> frames_;
  size_t values_ = 0;
};

}  // namespace

bool ParseUserJson(std::string_view text, std::string_view root_path, std::string_view what, Json* out, Issues* errors) {
  if (text.size() > kMaxDocumentBytes) {
    errors->push_back(Issue{"too_large", std::string(root_path),
                            "the " + std::string(what) + " is " + std::to_string(text.size()) + " bytes; at most " +
                                std::to_string(kMaxDocumentBytes) + " bytes (4 MiB) are accepted"});
    return false;
  }
  // Python's Infinity / NaN tokens (transformers' saved configs) are read as strings.
  const std::optional<std::string> pythonic = PythonJsonLiteralsAsStrings(text);
  if (pythonic) text = *pythonic;
  Json tree;
  const size_t before = errors->size();
  LimitedTreeBuilder builder(&tree, root_path, what, errors);
  const bool ok = Json::sax_parse(text.begin(), text.end(), &builder);
  if (!ok) {
    if (errors->size() == before) {
      errors->push_back(Issue{"invalid_json", std::string(root_path), "the " + std::string(what) + " is not valid JSON"});
    }
    return false;
  }
  *out = std::move(tree);
  return true;
}

void CapIssues(Issues* issues) {
  if (issues->size() <= kMaxReportedErrors) return;
  const size_t more = issues->size() - (kMaxReportedErrors - 1);
  issues->resize(kMaxReportedErrors - 1);
  issues->push_back(Issue{"too_many_errors", "", std::to_string(more) + " more problems not shown; fix the ones above first"});
}

}  // namespace vramplan::io
