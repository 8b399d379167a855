// The fuzzers' dictionary, read from the same sources the core validates against: every field of
// the scenario JSON Schema (SchemaJson(), i.e. docs/scenario.schema.json) with its path, its
// types, its enum values and its numeric range; and every config.json key the presets use plus
// the keys the config reader looks up (core/src/model/hf_config.cpp). The structure-aware
// mutator inserts these keys at their right paths with values at and beyond their bounds; the
// libFuzzer target writes them out as a -dict file.
#pragma once

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/catalog.h"
#include "support/json_access.h"
#include "vramplan/estimate.h"

namespace vramplan::fuzzing {

struct SchemaField {
  std::vector<std::string> path;  // {"train", "lora", "rank"}
  std::vector<std::string> types; // JSON Schema types of every oneOf branch ("integer", "string", ...)
  std::vector<json> enum_values;  // enum and const values of every branch
  std::vector<json> item_enum;    // enum of array items (lora.modules_to_save)
  std::optional<double> minimum, maximum;
  bool object_with_properties = false;  // a nested object the schema describes field by field

  std::string Dotted() const {
    std::string s;
    for (const auto& p : path) s += (s.empty() ? "" : ".") + p;
    return s;
  }
};

// config.json keys that change the resolved model, including ones no preset carries. Drawn from
// the keys ModelSpecFromHfConfig reads; values of these are where unchecked numbers hide (rope
// fractions, expert counts, head counts, group sizes).
inline const std::vector<std::string>& ConfigKeysRead() {
  static const std::vector<std::string> keys = {
      "activation_function", "architectures", "attention_bias", "attention_dropout", "attn_pdrop", "d_model",
      "decoder_sparse_step", "embd_pdrop", "experts_per_token", "ffn_dim", "ffn_hidden_size", "first_k_dense_replace",
      "head_dim", "hidden_act", "hidden_activation", "hidden_dropout", "hidden_size", "intermediate_size",
      "kv_channels", "kv_lora_rank", "layer_types", "max_position_embeddings", "max_window_layers", "mlp_bias",
      "mlp_only_layers", "model_type", "moe_intermediate_size", "moe_layer_freq", "multi_query", "n_embd", "n_head",
      "n_head_kv", "n_inner", "n_layer", "n_positions", "n_routed_experts", "n_shared_experts",
      "new_decoder_architecture", "num_attention_heads", "num_experts", "num_experts_per_tok", "num_heads",
      "num_hidden_layers", "num_key_value_heads", "num_kv_heads", "num_layers", "num_ln_in_parallel_attn",
      "num_local_experts", "num_nextn_predict_layers", "parallel_attn", "partial_rotary_factor", "q_lora_rank",
      "qk_layernorm", "qk_nope_head_dim", "qk_rope_head_dim", "resid_pdrop", "rotary_pct", "seq_length",
      "shared_expert_intermediate_size", "sliding_window", "sliding_window_pattern", "softmax_in_fp32", "text_config",
      "tie_word_embeddings", "topk_method", "use_parallel_residual", "use_sliding_window", "v_head_dim", "vocab_size",
      "bias", "no_bias", "_name_or_path", "quantization_config"};
  return keys;
}

class SchemaDictionary {
 public:
  // Built once from the embedded schema and the preset configs.
  static const SchemaDictionary& Get() {
    static const SchemaDictionary d = Build();
    return d;
  }

  const std::vector<SchemaField>& fields() const { return fields_; }
  // Every key name of the scenario schema and of the config dictionary, and every enum string.
  const std::vector<std::string>& scenario_keys() const { return scenario_keys_; }
  const std::vector<std::string>& config_keys() const { return config_keys_; }
  const std::vector<std::string>& enum_strings() const { return enum_strings_; }

 private:
  static SchemaDictionary Build() {
    SchemaDictionary d;
    json schema = ParseOrDiscard(SchemaJson());
    d.Walk(schema, {});
    std::set<std::string> keys, enums, config;
    for (const auto& f : d.fields_) {
      keys.insert(f.path.back());
      for (const auto& e : f.enum_values) {
        if (e.is_string()) enums.insert(e.get<std::string>());
      }
      for (const auto& e : f.item_enum) {
        if (e.is_string()) enums.insert(e.get<std::string>());
      }
    }
    for (const auto& k : ConfigKeysRead()) config.insert(k);
    for (const auto& p : Presets()) {
      if (p.config == nullptr || !p.config->is_object()) continue;
      for (auto it = p.config->begin(); it != p.config->end(); ++it) {
        config.insert(it.key());
        if (it->is_string()) enums.insert(it->get<std::string>());  // model_type, hidden_act, ...
      }
    }
    d.scenario_keys_.assign(keys.begin(), keys.end());
    d.config_keys_.assign(config.begin(), config.end());
    d.enum_strings_.assign(enums.begin(), enums.end());
    return d;
  }

  static void Collect(const json& node, SchemaField* f) {
    if (const json* t = Member(node, "type"); t != nullptr && t->is_string()) f->types.push_back(t->get<std::string>());
    if (const json* e = Member(node, "enum"); e != nullptr && e->is_array()) {
      for (const auto& v : *e) f->enum_values.push_back(v);
    }
    if (const json* c = Member(node, "const")) f->enum_values.push_back(*c);
    if (const json* mn = Member(node, "minimum"); mn != nullptr && mn->is_number()) f->minimum = mn->get<double>();
    if (const json* mx = Member(node, "maximum"); mx != nullptr && mx->is_number()) f->maximum = mx->get<double>();
    if (const json* items = Member(node, "items")) {
      if (const json* e = Member(*items, "enum"); e != nullptr && e->is_array()) {
        for (const auto& v : *e) f->item_enum.push_back(v);
      }
    }
    if (const json* one = Member(node, "oneOf"); one != nullptr && one->is_array()) {
      for (const auto& branch : *one) Collect(branch, f);
    }
  }

  // Records every property (recursively) of an object node.
  void Walk(const json& node, const std::vector<std::string>& prefix) {
    auto visit_properties = [&](const json& obj_node) {
      const json* props = Member(obj_node, "properties");
      if (props == nullptr || !props->is_object()) return;
      for (auto it = props->begin(); it != props->end(); ++it) {
        SchemaField f;
        f.path = prefix;
        f.path.push_back(it.key());
        Collect(*it, &f);
        const bool nested = Member(*it, "properties") != nullptr;
        f.object_with_properties = nested;
        fields_.push_back(f);
        if (nested) Walk(*it, f.path);
        // gpu: oneOf [string, object with properties]
        if (const json* one = Member(*it, "oneOf"); one != nullptr && one->is_array()) {
          for (const auto& branch : *one) {
            if (Member(branch, "properties") != nullptr) Walk(branch, f.path);
          }
        }
      }
    };
    visit_properties(node);
  }

  std::vector<SchemaField> fields_;
  std::vector<std::string> scenario_keys_, config_keys_, enum_strings_;
};

}  // namespace vramplan::fuzzing
