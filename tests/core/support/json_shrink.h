// Greedy delta-debugging of a JSON tree: drops object members and array elements and replaces
// subtrees by simpler values ({} [] "" 0 1) for as long as the failure persists, so a failing
// scenario is printed as the few keys that matter. Raw markers (structured_mutator.h) are kept
// or dropped whole.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "support/json_access.h"

namespace vramplan::fuzzing {

namespace shrink_detail {

// A path of object keys / array indices from the root.
struct Step {
  bool is_index = false;
  std::string key;
  size_t index = 0;
};
using Path = std::vector<Step>;

inline json* Resolve(json& root, const Path& path) {
  json* cur = &root;
  for (const Step& s : path) {
    if (s.is_index) {
      if (!cur->is_array() || s.index >= cur->size()) return nullptr;
      cur = &(*cur)[s.index];
    } else {
      cur = Member(*cur, s.key);
      if (cur == nullptr) return nullptr;
    }
  }
  return cur;
}

// Every node's path, parents before children.
inline void Paths(const json& node, Path& prefix, std::vector<Path>* out) {
  out->push_back(prefix);
  if (node.is_object()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      prefix.push_back({false, it.key(), 0});
      Paths(*it, prefix, out);
      prefix.pop_back();
    }
  } else if (node.is_array()) {
    for (size_t i = 0; i < node.size(); ++i) {
      prefix.push_back({true, "", i});
      Paths(node[i], prefix, out);
      prefix.pop_back();
    }
  }
}

// Simpler replacements for a node, simplest first.
inline std::vector<json> Simpler(const json& node) {
  std::vector<json> out;
  if (node.is_object()) {
    if (!node.empty()) out.push_back(json::object());
  } else if (node.is_array()) {
    if (!node.empty()) out.push_back(json::array());
    if (node.size() > 1) out.push_back(json::array({node[0]}));
  } else if (node.is_string()) {
    if (!node.get<std::string>().empty()) out.push_back("");
  } else if (node.is_number()) {
    if (!(node.is_number_integer() && node.get<int64_t>() == 0)) out.push_back(0);
    if (!(node.is_number_integer() && node.get<int64_t>() == 1)) out.push_back(1);
  }
  return out;
}

}  // namespace shrink_detail

// Shrinks `doc` while `fails(candidate)` stays true; at most `max_tries` evaluations. Each pass
// walks the nodes parents first; after a successful edit it resumes at the same position (the
// nodes before it were tried already); passes repeat until one changes nothing.
inline json ShrinkJson(json doc, const std::function<bool(const json&)>& fails, int max_tries = 3000) {
  using namespace shrink_detail;
  int tries = 0;
  bool progress = true;
  while (progress && tries < max_tries) {
    progress = false;
    size_t i = 0;
    while (tries < max_tries) {
      std::vector<Path> paths;
      Path prefix;
      Paths(doc, prefix, &paths);
      if (i >= paths.size()) break;
      const Path p = paths[i];
      if (p.empty()) {
        ++i;
        continue;
      }
      // 1. drop the node from its parent
      json candidate = doc;
      json* parent = Resolve(candidate, Path(p.begin(), p.end() - 1));
      if (parent != nullptr) {
        if (p.back().is_index) {
          if (parent->is_array() && p.back().index < parent->size()) parent->erase(p.back().index);
        } else if (parent->is_object()) {
          parent->erase(p.back().key);
        }
        ++tries;
        if (fails(candidate)) {
          doc = std::move(candidate);
          progress = true;
          continue;  // the same position now holds the next node
        }
      }
      // 2. replace it by something simpler
      bool replaced = false;
      if (json* node = Resolve(doc, p)) {
        for (const json& simpler : Simpler(*node)) {
          if (tries >= max_tries) break;
          json c2 = doc;
          *Resolve(c2, p) = simpler;
          ++tries;
          if (fails(c2)) {
            doc = std::move(c2);
            replaced = true;
            break;
          }
        }
      }
      if (replaced) progress = true;
      ++i;
    }
  }
  return doc;
}

}  // namespace vramplan::fuzzing
