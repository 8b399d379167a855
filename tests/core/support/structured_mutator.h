// A structure-aware mutator for scenario documents. It edits the JSON tree: keys from the
// schema's dictionary set at their right paths with enum values, range bounds and values just
// beyond them; type swaps; deleted and unknown keys; inline config.json objects whose keys
// (rope fractions, expert counts, head counts, ...) get boundary values. What a tree cannot hold
// (1e400, duplicate keys, invalid UTF-8, nesting 100,000 deep) is stored as a *raw marker*: a
// string "@@raw@@<hex of the text>" that Render() splices into the serialized text verbatim, so
// the tree stays shallow and cheap to copy and shrink while the text is as hostile as needed.
// Shared by the GoogleTest mutation loop (tests/core/fuzz_structured_test.cpp) and the libFuzzer
// target (tests/fuzz/scenario_fuzzer.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "support/json_access.h"
#include "support/schema_dictionary.h"

namespace vramplan::fuzzing {

inline constexpr const char* kRawPrefix = "@@raw@@";

// A tree value that renders as `text` verbatim.
inline json RawText(const std::string& text) {
  static const char* hex = "0123456789abcdef";
  std::string s = kRawPrefix;
  for (unsigned char c : text) {
    s += hex[c >> 4];
    s += hex[c & 15];
  }
  return s;
}

inline std::string UnHex(const std::string& h) {
  auto v = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  std::string out;
  for (size_t i = 0; i + 1 < h.size(); i += 2) out += static_cast<char>(v(h[i]) * 16 + v(h[i + 1]));
  return out;
}

// Serializes the tree and splices in the raw markers (as values and as keys).
inline std::string Render(const json& doc) {
  std::string text = DumpCompact(doc);
  const std::string needle = std::string("\"") + kRawPrefix;
  size_t pos = text.find(needle);
  if (pos == std::string::npos) return text;
  std::string out;
  size_t last = 0;
  while (pos != std::string::npos) {
    size_t start = pos + needle.size();
    size_t end = text.find('"', start);
    if (end == std::string::npos) break;
    out.append(text, last, pos - last);
    out += UnHex(text.substr(start, end - start));
    last = end + 1;
    pos = text.find(needle, last);
  }
  out.append(text, last, std::string::npos);
  return out;
}

// One place in the tree: the node, and how to reach it from its parent.
struct NodeRef {
  json* node = nullptr;
  json* parent = nullptr;  // nullptr for the root
  std::string key;         // when the parent is an object
  size_t index = 0;        // when the parent is an array
};

inline void CollectNodes(json& root, std::vector<NodeRef>* out) {
  std::vector<NodeRef> stack{{&root, nullptr, "", 0}};
  while (!stack.empty()) {
    NodeRef ref = stack.back();
    stack.pop_back();
    out->push_back(ref);
    if (ref.node->is_object()) {
      for (auto it = ref.node->begin(); it != ref.node->end(); ++it) stack.push_back({&*it, ref.node, it.key(), 0});
    } else if (ref.node->is_array()) {
      for (size_t i = 0; i < ref.node->size(); ++i) stack.push_back({&(*ref.node)[i], ref.node, "", i});
    }
  }
}

// Sets doc[path...] = value, turning whatever is in the way into objects.
inline void SetAtPath(json& doc, const std::vector<std::string>& path, json value) {
  json* cur = &doc;
  for (size_t i = 0; i < path.size(); ++i) {
    if (!cur->is_object()) *cur = json::object();
    if (i + 1 == path.size()) {
      (*cur)[path[i]] = std::move(value);
      return;
    }
    cur = &(*cur)[path[i]];
  }
}

class StructuredMutator {
 public:
  explicit StructuredMutator(const SchemaDictionary& dict = SchemaDictionary::Get()) : dict_(dict) {}

  // Applies one randomly chosen mutation to `doc` (any JSON value; scenarios are objects).
  void Mutate(json& doc, Rng& rng) const {
    if (!doc.is_object() && rng.Chance(0.8)) doc = json::object({{"model", "meta-llama/Llama-3.2-1B-Instruct"}});
    switch (rng.Below(21)) {
      case 0: case 1: case 2: case 3: case 4: SetSchemaField(doc, rng); break;
      case 5: case 6: ReplaceRandomNode(doc, rng); break;
      case 7: DeleteRandomKey(doc, rng); break;
      case 8: InsertUnknownKey(doc, rng); break;
      case 9: DuplicateKey(doc, rng); break;
      case 10: DeepNesting(doc, rng); break;
      case 11: HostileString(doc, rng); break;
      case 12: InlineConfig(doc, rng); break;
      case 13: case 14: case 15: case 16: MutateConfig(doc, rng); break;
      case 17: SwapMode(doc, rng); break;
      case 18: ScaleUp(doc, rng); break;
      default: SetSchemaField(doc, rng); break;
    }
  }

  // ---- value pools -------------------------------------------------------------------------

  // Numbers at and beyond every representable edge; some only exist as text.
  static json BoundaryNumber(Rng& rng) {
    switch (rng.Below(20)) {
      case 0: return 0;
      case 1: return -1;
      case 2: return 1;
      case 3: return int64_t{1} << 31;
      case 4: return (int64_t{1} << 31) - 1;
      case 5: return int64_t{1} << 32;
      case 6: return int64_t{1} << 53;
      case 7: return (int64_t{1} << 53) + 1;
      case 8: return INT64_MAX;
      case 9: return INT64_MIN;
      case 10: return UINT64_MAX;
      case 11: return 1e308;
      case 12: return -1e308;
      case 13: return 0.5;
      case 14: return int64_t{1} << 24;
      case 15: return (int64_t{1} << 24) + 1;
      default: return RawNumber(rng);
    }
  }

  // Number texts a tree cannot hold: out of double range, beyond 64 bits, odd spellings.
  static json RawNumber(Rng& rng) {
    static const std::vector<std::string> texts = {"1e400", "-1e400", "1e-400", "18446744073709551616", "-9223372036854775809",
                                                   "-0", "1.0", "1E2", "4096.000", "123456789012345678901234567890", "2e9", "0e0"};
    return RawText(rng.Pick(texts));
  }

  // Values of another type than the field expects.
  static json TypeSwap(Rng& rng) {
    switch (rng.Below(9)) {
      case 0: return nullptr;
      case 1: return true;
      case 2: return "16";
      case 3: return json::array();
      case 4: return json::object();
      case 5: return json::array({1, "x", nullptr});
      case 6: return json::object({{"rank", -3}});
      case 7: return "";
      default: return 2.5;
    }
  }

  static std::string LongString(Rng& rng) {
    static const std::vector<size_t> lengths = {80, 81, 120, 121, 200, 201, 1000, 4096, 65536};
    size_t n = rng.Pick(lengths);
    if (rng.Chance(0.02)) n = size_t{1} << 20;  // a 1 MB id: the "did you mean" search must stay bounded
    if (kSanitizerBuild) n = std::min<size_t>(n, 65536);  // same draws, shorter text: -O0 + ASan is ~20x slower
    const char c = static_cast<char>('a' + rng.Below(26));
    std::string s(n, c);
    if (rng.Chance(0.5)) s.replace(0, std::min<size_t>(n, 10), "meta-llama");
    return s;
  }

  // Strings with newlines, terminal escapes, bidi overrides, NULs; as tree strings (valid
  // UTF-8) or as raw text (invalid UTF-8, lone surrogates, overlong forms).
  static json HostileStringValue(Rng& rng) {
    static const std::vector<std::string> valid = {
        "line\nerror: forged line", "\r\nerror: x", "\x1b[31mred\x1b[0m", "\x1b]0;title\x07", "tab\there", "\x7f",
        std::string("nul\0inside", 10), "\u202eevil", "\xF0\x9F\x98\x80", "\xC3\xA9t\xC3\xA9", "\xEF\xBB\xBF" "bom", "meta-llama/Llama-3.1-8B\n",
        "</script><script>alert(1)</script>", "%00%2e%2e/", "${jndi:x}", " ", "h100-sxm-80gb "};
    static const std::vector<std::string> raw = {"\"\xff\xfe\"", "\"\xc3\x28\"", "\"\xed\xa0\x80\"", "\"\xc0\xaf\"", "\"\\ud800\"",
                                                 "\"\\udc00\\ud800\"", "\"\\u0000\"", "\"\\u001b[2J\"", "\"a\\nb\""};
    switch (rng.Below(3)) {
      case 0: return LongString(rng);
      case 1: return rng.Pick(valid);
      default: return RawText(rng.Pick(raw));
    }
  }

  // Text of `depth` nested arrays or objects around a number.
  static json Nested(Rng& rng) {
    static const std::vector<size_t> depths = {63, 64, 65, 100, 257, 1000, 5000, 100000};
    const size_t depth = rng.Pick(depths);
    std::string s;
    if (rng.Chance(0.5)) {
      s = std::string(depth, '[') + "1" + std::string(depth, ']');
    } else {
      s.reserve(depth * 6 + 1);
      for (size_t i = 0; i < depth; ++i) s += "{\"a\":";
      s += "1";
      s += std::string(depth, '}');
    }
    return RawText(s);
  }

  // A value for a schema field: mostly its enum values or its range edges and one past them.
  json FieldValue(const SchemaField& f, Rng& rng) const {
    const bool has_enum = !f.enum_values.empty();
    const bool numeric = std::find(f.types.begin(), f.types.end(), "integer") != f.types.end() ||
                         std::find(f.types.begin(), f.types.end(), "number") != f.types.end();
    const uint64_t pick = rng.Below(10);
    if (has_enum && pick < 5) return rng.Pick(f.enum_values);
    if (!f.item_enum.empty() && pick < 6) {
      json arr = json::array();
      for (uint64_t i = 0, n = rng.Below(4); i < n; ++i) arr.push_back(rng.Pick(f.item_enum));
      return arr;
    }
    if (numeric && pick < 7) {
      std::vector<json> edges;
      const bool integer = std::find(f.types.begin(), f.types.end(), "integer") != f.types.end();
      auto add = [&](double v) {
        if (integer && v >= -9.2e18 && v <= 9.2e18) edges.push_back(static_cast<int64_t>(v));
        else edges.push_back(v);
      };
      if (f.minimum) {
        add(*f.minimum);
        add(*f.minimum - 1);
        edges.push_back(*f.minimum + 0.5);
      }
      if (f.maximum) {
        add(*f.maximum);
        add(*f.maximum + 1);
        add(*f.maximum / 2);
      }
      if (!edges.empty() && rng.Chance(0.7)) return rng.Pick(edges);
      return BoundaryNumber(rng);
    }
    if (pick < 8) {
      if (std::find(f.types.begin(), f.types.end(), "string") != f.types.end() || has_enum) {
        return rng.Chance(0.5) ? json(rng.Pick(dict_.enum_strings())) : HostileStringValue(rng);
      }
      return BoundaryNumber(rng);
    }
    return TypeSwap(rng);
  }

  // ---- mutations ---------------------------------------------------------------------------

  void SetSchemaField(json& doc, Rng& rng) const {
    const SchemaField& f = rng.Pick(dict_.fields());
    if (f.path.size() == 1 && f.path[0] == "model") {
      InlineConfig(doc, rng);
      return;
    }
    SetAtPath(doc, f.path, FieldValue(f, rng));
  }

  static void ReplaceRandomNode(json& doc, Rng& rng) {
    std::vector<NodeRef> nodes;
    CollectNodes(doc, &nodes);
    NodeRef ref = nodes[rng.Below(nodes.size())];
    if (ref.parent == nullptr) return;
    switch (rng.Below(4)) {
      case 0: *ref.node = BoundaryNumber(rng); break;
      case 1: *ref.node = HostileStringValue(rng); break;
      default: *ref.node = TypeSwap(rng); break;
    }
  }

  static void DeleteRandomKey(json& doc, Rng& rng) {
    std::vector<NodeRef> nodes;
    CollectNodes(doc, &nodes);
    NodeRef ref = nodes[rng.Below(nodes.size())];
    if (ref.parent == nullptr) return;
    if (ref.parent->is_object()) ref.parent->erase(ref.key);
    else if (ref.parent->is_array()) ref.parent->erase(ref.index);
  }

  // A key that does not belong where it is put: another level's key, a config key in the
  // scenario, a near-miss spelling, or a hostile key.
  void InsertUnknownKey(json& doc, Rng& rng) const {
    std::vector<NodeRef> nodes;
    CollectNodes(doc, &nodes);
    std::vector<json*> objects;
    for (const auto& n : nodes) {
      if (n.node->is_object()) objects.push_back(n.node);
    }
    if (objects.empty()) return;
    json& obj = *objects[rng.Below(objects.size())];
    std::string key;
    switch (rng.Below(5)) {
      case 0: key = rng.Pick(dict_.scenario_keys()); break;
      case 1: key = rng.Pick(dict_.config_keys()); break;
      case 2: key = rng.Pick(dict_.scenario_keys()) + "s"; break;
      case 3: {
        json s = HostileStringValue(rng);
        if (s.is_string() && s.get<std::string>().rfind(kRawPrefix, 0) == 0) {
          obj[s.get<std::string>()] = BoundaryNumber(rng);  // a raw (invalid UTF-8) key
          return;
        }
        key = s.is_string() ? s.get<std::string>() : "k";
        break;
      }
      default: key = LongString(rng); break;
    }
    obj[key] = rng.Chance(0.5) ? BoundaryNumber(rng) : TypeSwap(rng);
  }

  // The same key twice in one object (parsers differ on which wins; ours must not crash).
  static void DuplicateKey(json& doc, Rng& rng) {
    std::vector<NodeRef> nodes;
    CollectNodes(doc, &nodes);
    std::vector<NodeRef> members;
    for (const auto& n : nodes) {
      if (n.parent != nullptr && n.parent->is_object() && n.key.rfind(kRawPrefix, 0) != 0) members.push_back(n);
    }
    if (members.empty()) return;
    const NodeRef& m = members[rng.Below(members.size())];
    json value = rng.Chance(0.5) ? BoundaryNumber(rng) : TypeSwap(rng);
    (*m.parent)[RawText(DumpCompact(json(m.key))).get<std::string>()] = std::move(value);
  }

  static void DeepNesting(json& doc, Rng& rng) {
    static const std::vector<std::vector<std::string>> places = {
        {"train", "micro_batch_size"}, {"train", "lora", "targets"}, {"train", "lora"}, {"inference", "batch_size"},
        {"gpu"}, {"parallel"}, {"framework", "preset"}, {"schema"}, {"extra"}};
    if (rng.Chance(0.3)) {
      json* model = Member(doc, "model");
      if (model != nullptr && model->is_object()) {
        (*model)[rng.Chance(0.5) ? "extra_key" : "text_config"] = Nested(rng);
        return;
      }
    }
    SetAtPath(doc, rng.Pick(places), Nested(rng));
  }

  static void HostileString(json& doc, Rng& rng) {
    static const std::vector<std::vector<std::string>> places = {
        {"model"}, {"gpu"}, {"gpu", "name"}, {"mode"}, {"train", "method"}, {"inference", "weights"}, {"train", "lora", "targets"}};
    std::vector<std::string> path = rng.Pick(places);
    json value = HostileStringValue(rng);
    if (path.back() == "targets") value = json::array({value});
    SetAtPath(doc, path, value);
  }

  // Replaces a preset id by its config.json (or another preset's), sometimes wrapped as a
  // multimodal config's text_config.
  static void InlineConfig(json& doc, Rng& rng) {
    if (!doc.is_object()) doc = json::object();
    const auto& presets = Presets();
    const PresetEntry* preset = nullptr;
    if (const json* m = Member(doc, "model"); m != nullptr && m->is_string()) preset = FindPreset(m->get<std::string>());
    if (preset == nullptr || rng.Chance(0.3)) preset = &presets[rng.Below(presets.size())];
    if (preset->config == nullptr) return;
    json config = *preset->config;
    if (rng.Chance(0.1)) config = json::object({{"model_type", "llava"}, {"text_config", config}});
    doc["model"] = std::move(config);
  }

  // Edits one key of the inline config (making one first when the model is a preset id).
  void MutateConfig(json& doc, Rng& rng) const {
    json* model = Member(doc, "model");
    if (model == nullptr || !model->is_object()) {
      InlineConfig(doc, rng);
      model = Member(doc, "model");
      if (model == nullptr || !model->is_object()) return;
    }
    json* cfg = model;
    if (json* text = Member(*model, "text_config"); text != nullptr && text->is_object() && rng.Chance(0.7)) cfg = text;
    static const std::vector<std::string> sensitive = {
        "partial_rotary_factor", "rotary_pct", "num_experts", "num_local_experts", "n_routed_experts", "num_experts_per_tok",
        "experts_per_token", "num_attention_heads", "num_key_value_heads", "head_dim", "n_head", "hidden_size", "intermediate_size",
        "num_hidden_layers", "vocab_size", "sliding_window", "kv_lora_rank", "qk_rope_head_dim", "moe_intermediate_size",
        "n_shared_experts", "first_k_dense_replace", "q_lora_rank", "v_head_dim", "layer_types", "tie_word_embeddings", "model_type"};
    const std::string key = rng.Chance(0.6) ? rng.Pick(sensitive) : rng.Pick(dict_.config_keys());
    if (rng.Chance(0.1)) {
      cfg->erase(key);
      return;
    }
    json value;
    const json* current = Member(*cfg, key);
    const std::optional<int64_t> cur = AsInt(current);
    switch (rng.Below(8)) {
      case 0:
        if (key == "partial_rotary_factor" || key == "rotary_pct") {
          value = rng.Pick<double>({0.0, -1.0, 1e300, -1e300, -1e6, 0.25, 1.0, 1.0000001, 2.0, 1e-300});
          break;
        }
        [[fallthrough]];
      case 1:
        if (cur && *cur > -(int64_t{1} << 40) && *cur < (int64_t{1} << 40)) {
          value = rng.Pick<int64_t>({*cur + 1, *cur - 1, *cur * 2, 0, -*cur, *cur * 1000});
          break;
        }
        [[fallthrough]];
      case 2:
        if (key == "num_experts_per_tok" || key == "experts_per_token") {
          value = rng.Pick<int64_t>({0, 1, 129, 257, int64_t{1} << 24, -1});
          break;
        }
        [[fallthrough]];
      case 3: case 4: value = BoundaryNumber(rng); break;
      case 5: value = TypeSwap(rng); break;
      case 6: value = HostileStringValue(rng); break;
      default: value = rng.Chance(0.5) ? json(rng.Pick(dict_.enum_strings())) : json::array({"sliding_attention", "full_attention"}); break;
    }
    (*cfg)[key] = std::move(value);
  }

  // Several size fields of one section at or near their maxima at once (batch x length x heads
  // products are where int64 overflows hide), with the kernel that materializes the most.
  void ScaleUp(json& doc, Rng& rng) const {
    if (!doc.is_object()) return;
    const bool train = rng.Chance(0.5);
    doc["mode"] = train ? "train" : "inference";
    const std::string section = train ? "train" : "inference";
    std::vector<const SchemaField*> sizes;
    for (const auto& f : dict_.fields()) {
      if (f.path.size() == 2 && f.path[0] == section && f.maximum && *f.maximum >= 1024) sizes.push_back(&f);
    }
    for (const SchemaField* f : sizes) {
      if (!rng.Chance(0.6)) continue;
      const int64_t max = static_cast<int64_t>(*f->maximum);
      SetAtPath(doc, f->path, rng.Pick<int64_t>({max, max / 2, max / 16, max / 256 + 1}));
    }
    if (rng.Chance(0.5)) SetAtPath(doc, {section, "attention"}, "eager");
    if (!train && rng.Chance(0.5)) SetAtPath(doc, {"inference", "engine"}, rng.Pick<const char*>({"transformers", "vllm", "llama_cpp"}));
    if (rng.Chance(0.3)) SetAtPath(doc, {"parallel", "gpus"}, rng.Pick<int64_t>({1, 1024, 1 << 20}));
  }

  static void SwapMode(json& doc, Rng& rng) {
    if (!doc.is_object()) return;
    doc["mode"] = rng.Chance(0.5) ? "train" : "inference";
  }

 private:
  const SchemaDictionary& dict_;
};

}  // namespace vramplan::fuzzing
