#include "io/json_reader.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "io/message_text.h"

namespace vramplan::io {

std::string Dump(const Json& j, int indent) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

std::string JoinPath(std::string_view parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  std::string out(parent);
  out += '.';
  out += key;
  return out;
}

namespace {

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) out += ", ";
    out += names[i];
  }
  return out;
}

}  // namespace

std::string Preview(const Json& v) {
  if (v.is_string()) return Quote(v.get_ref<const std::string&>(), 38);
  // A container is dumped whole before it is cut: the input limits bound its size and depth.
  std::string s = Dump(v);
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return Printable(s, 40);
}

namespace {

}  // namespace

std::string Suggest(std::string_view key, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = std::numeric_limits<size_t>::max();
  const size_t limit = std::max<size_t>(2, key.size() / 3);
  for (const auto& c : candidates) {
    // The edit distance is at least the difference in length: a candidate whose length alone puts
    // it beyond the limit, or no closer than the best so far, can neither be returned nor displace
    // one that would be. Skipping it gives the same answer without the O(|key| x |c|) table, which
    // for a 10 MB key took seconds per candidate.
    const size_t length_gap = key.size() > c.size() ? key.size() - c.size() : c.size() - key.size();
    if (length_gap > limit || length_gap >= best_d) continue;
    size_t d = EditDistance(key, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best_d <= limit ? best : std::string();
}

std::string Describe(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return "a boolean";
    case Json::value_t::string: return "a string";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "an integer";
    case Json::value_t::number_float: return "a number";
    case Json::value_t::object: return "an object";
    case Json::value_t::array: return "an array";
    default: return "an invalid value";
  }
}

void AddError(Issues* errors, std::string code, std::string path, std::string message) {
  errors->push_back(Issue{std::move(code), std::move(path), std::move(message)});
}

ObjectReader::ObjectReader(const Json& obj, std::string path, Issues* errors)
    : path_(std::move(path)), errors_(errors) {
  if (obj.is_object()) {
    obj_ = &obj;
  } else {
    AddError(errors_, "wrong_type", path_.empty() ? "" : path_,
             (path_.empty() ? std::string("the document") : path_) + " must be an object, got " + Describe(obj));
  }
}

bool ObjectReader::Has(std::string_view key) const {
  return obj_ != nullptr && obj_->find(key) != obj_->end();
}

const Json* ObjectReader::Raw(std::string_view key) {
  if (std::find(asked_.begin(), asked_.end(), key) == asked_.end()) asked_.emplace_back(key);
  if (obj_ == nullptr) return nullptr;
  auto it = obj_->find(key);
  if (it == obj_->end()) return nullptr;
  return &*it;
}

void ObjectReader::Int(std::string_view key, int64_t* out, int64_t min, int64_t max) {
  const Json* v = Raw(key);
  if (v == nullptr) return;
  std::string path = JoinPath(path_, key);
  auto range_msg = [&] {
    return path + " must be an integer from " + std::to_string(min) + " to " + std::to_string(max);
  };
  if (v->is_number_unsigned()) {
    uint64_t u = v->get<uint64_t>();
    if (u > static_cast<uint64_t>(max) || (min > 0 && u < static_cast<uint64_t>(min))) {
      AddError(errors_, "out_of_range", path, range_msg() + ", got " + Preview(*v));
      return;
    }
    *out = static_cast<int64_t>(u);
  } else if (v->is_number_integer()) {
    int64_t i = v->get<int64_t>();
    if (i < min || i > max) {
      AddError(errors_, "out_of_range", path, range_msg() + ", got " + Preview(*v));
      return;
    }
    *out = i;
  } else {
    AddError(errors_, "wrong_type", path, range_msg() + ", got " + Describe(*v) + " " + Preview(*v));
    return;
  }
}

void ObjectReader::Int(std::string_view key, int* out, int min, int max) {
  int64_t wide = *out;
  size_t before = errors_->size();
  Int(key, &wide, min, max);
  if (errors_->size() == before) *out = static_cast<int>(wide);
}

void ObjectReader::Int(std::string_view key, std::optional<int64_t>* out, int64_t min, int64_t max) {
  if (!Has(key)) {
    Raw(key);  // still an allowed key
    return;
  }
  int64_t value = 0;
  size_t before = errors_->size();
  Int(key, &value, min, max);
  if (errors_->size() == before) *out = value;
}

void ObjectReader::Bool(std::string_view key, std::optional<bool>* out) {
  if (!Has(key)) {
    Raw(key);
    return;
  }
  bool value = false;
  size_t before = errors_->size();
  Bool(key, &value);
  if (errors_->size() == before) *out = value;
}

void ObjectReader::Number(std::string_view key, double* out, double min, double max) {
  const Json* v = Raw(key);
  if (v == nullptr) return;
  std::string path = JoinPath(path_, key);
  std::string msg = path + " must be a number from " + Dump(Json(min)) + " to " + Dump(Json(max));
  if (!v->is_number()) {
    AddError(errors_, "wrong_type", path, msg + ", got " + Describe(*v) + " " + Preview(*v));
    return;
  }
  double d = v->get<double>();
  if (!std::isfinite(d) || d < min || d > max) {
    AddError(errors_, "out_of_range", path, msg + ", got " + Preview(*v));
    return;
  }
  *out = d;
}

void ObjectReader::Bool(std::string_view key, bool* out) {
  const Json* v = Raw(key);
  if (v == nullptr) return;
  if (!v->is_boolean()) {
    std::string path = JoinPath(path_, key);
    AddError(errors_, "wrong_type", path, path + " must be true or false, got " + Describe(*v) + " " + Preview(*v));
    return;
  }
  *out = v->get<bool>();
}

void ObjectReader::String(std::string_view key, std::string* out, size_t max_len) {
  const Json* v = Raw(key);
  if (v == nullptr) return;
  std::string path = JoinPath(path_, key);
  if (!v->is_string()) {
    AddError(errors_, "wrong_type", path, path + " must be a string, got " + Describe(*v) + " " + Preview(*v));
    return;
  }
  const std::string& s = v->get_ref<const std::string&>();
  if (s.size() > max_len) {
    AddError(errors_, "out_of_range", path, path + " must be at most " + std::to_string(max_len) + " characters");
    return;
  }
  *out = s;
}

void ObjectReader::StringList(std::string_view key, std::vector<std::string>* out, size_t max_items) {
  const Json* v = Raw(key);
  if (v == nullptr) return;
  ReadStringList(*v, JoinPath(path_, key), out, max_items, errors_);
}

void ReadStringList(const Json& v, const std::string& path, std::vector<std::string>* out, size_t max_items, Issues* errors) {
  if (!v.is_array() || v.size() > max_items) {
    AddError(errors, "wrong_type", path,
             path + " must be a list of at most " + std::to_string(max_items) + " strings, got " + Describe(v));
    return;
  }
  std::vector<std::string> items;
  for (size_t i = 0; i < v.size(); ++i) {
    const Json& item = v[i];
    if (!item.is_string() || item.get_ref<const std::string&>().empty() ||
        item.get_ref<const std::string&>().size() > kMaxListItemChars) {
      std::string ipath = path + "[" + std::to_string(i) + "]";
      AddError(errors, "wrong_type", ipath, ipath + " must be a non-empty module name, got " + Preview(item));
      return;
    }
    items.push_back(item.get<std::string>());
  }
  *out = std::move(items);
}

void ObjectReader::AddEnumError(const std::string& path, const Json& v, const std::vector<std::string>& names) {
  std::string msg = path + " must be one of: " + JoinNames(names) + "; got " + Preview(v);
  if (v.is_string()) {
    std::string hint = Suggest(v.get_ref<const std::string&>(), names);
    if (!hint.empty()) msg += " (did you mean \"" + hint + "\"?)";
    AddError(errors_, "unknown_value", path, msg);
  } else {
    AddError(errors_, "wrong_type", path, msg);
  }
}

bool ObjectReader::Choice(std::string_view key, const std::vector<std::string_view>& names, size_t* index) {
  const Json* v = Raw(key);
  if (v == nullptr) return false;
  if (v->is_string()) {
    const std::string& s = v->get_ref<const std::string&>();
    for (size_t i = 0; i < names.size(); ++i) {
      if (s == names[i]) {
        *index = i;
        return true;
      }
    }
  }
  AddEnumError(JoinPath(path_, key), *v, std::vector<std::string>(names.begin(), names.end()));
  return false;
}

void ObjectReader::RejectUnknownKeys() {
  if (obj_ == nullptr) return;
  for (auto it = obj_->begin(); it != obj_->end(); ++it) {
    if (std::find(asked_.begin(), asked_.end(), it.key()) != asked_.end()) continue;
    // User keys reach the path and the message only escaped and cut short (io/message_text.h).
    std::string path = JoinPath(path_, Printable(it.key(), 40));
    std::string msg = "unknown key " + Quote(it.key()) + " in " + (path_.empty() ? std::string("the scenario") : path_);
    std::string hint = Suggest(it.key(), asked_);
    if (!hint.empty()) {
      msg += " (did you mean \"" + hint + "\"?)";
    } else {
      msg += "; allowed: " + JoinNames(asked_);
    }
    AddError(errors_, "unknown_key", path, msg);
  }
}

}  // namespace vramplan::io
