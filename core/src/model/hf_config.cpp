#include "model/hf_config.h"

#include "diagnostics/warning_codes.h"
#include "io/json_reader.h"
#include "io/message_text.h"
#include "model/context_limit.h"
#include "model/unquantized_modules.h"
#include "model/families/config_reader.h"
#include "model/families/registry.h"

namespace vramplan {
namespace {

using io::Json;

// The decoder config (the top level, or text_config of a multimodal wrapper), dispatched to its
// family's builder through the registry.
Expected<ModelSpec> BuildSpec(const Json& config, const std::string& path, Issues* warnings) {
  Issues errors;
  if (!config.is_object()) {
    return Issues{Issue{"wrong_type", path, path + " must be a preset id (string) or a config.json object, got " + io::Describe(config)}};
  }
  // Multimodal wrappers (gemma3, mistral3, llava...) keep the decoder under text_config.
  const Json* cfg = &config;
  std::string cfg_path = path;
  std::string type;
  {
    families::ConfigReader top(config, path, &errors);
    type = top.String("model_type", "");
    auto tc = config.find("text_config");
    if (tc != config.end() && tc->is_object() && families::FindModelFamily(type) == nullptr) {
      cfg = &*tc;
      cfg_path = io::JoinPath(path, "text_config");
      families::ConfigReader inner(*cfg, cfg_path, &errors);
      std::string outer = type;
      type = inner.String("model_type", "");
      if (type == "gemma3") type = "gemma3_text";
      warnings->push_back(MakeWarning(WarningCode::kTextModelOnly, path, io::Quote(outer) + " is multimodal: only its text decoder (text_config, model_type " + io::Quote(type) + ") is counted; the vision tower is not"));
    }
    if (!errors.empty()) return errors;
  }
  families::ConfigReader c(*cfg, cfg_path, &errors);
  ModelSpec spec;
  spec.model_type = type;
  spec.max_position_embeddings = c.Int({"max_position_embeddings", "n_positions", "seq_length"}).value_or(0);
  {
    auto arch = cfg->find("architectures");
    if (arch != cfg->end() && arch->is_array() && !arch->empty() && (*arch)[0].is_string()) {
      spec.architecture = (*arch)[0].get<std::string>();
    }
  }
  if (!errors.empty()) return errors;
  spec.unquantized_modules = UnquantizedModulesFromConfig(config);
  spec.quantization_method = QuantizationMethodFromConfig(config);
  ContextLimit limit = ContextLimitFromConfig(*cfg, type);
  spec.context_limit = limit.tokens;
  spec.context_limit_source = std::move(limit.source);
  if (const families::ModelFamily* family = families::FindModelFamily(type)) return family->build(c, std::move(spec));
  warnings->push_back(MakeWarning(WarningCode::kUnknownModelType, io::JoinPath(cfg_path, "model_type"),
                            (type.empty() ? std::string("no model_type given") : "model_type " + io::Quote(type) + " has no dedicated reader") +
                                ": read as a Llama-style decoder (RMSNorm, SwiGLU, q/k/v/o); parameter counts may be off for this family"));
  return families::GenericFamily().build(c, std::move(spec));
}

}  // namespace

const std::vector<std::string>& SupportedModelTypes() {
  static const std::vector<std::string> kTypes = [] {
    std::vector<std::string> types;
    for (const families::ModelFamily& f : families::ModelFamilies()) {
      if (f.alias_of.empty()) types.emplace_back(f.model_type);
    }
    return types;
  }();
  return kTypes;
}

Expected<ModelSpec> ModelSpecFromHfConfig(const Json& config, const std::string& path, Issues* warnings) {
  Expected<ModelSpec> spec = BuildSpec(config, path, warnings);
  if (!spec.ok()) return spec;
  // Reject absurd sizes before any exact int64 arithmetic can overflow.
  double params = 0;
  for (uint8_t k : spec.value().layer_kind) {
    for (const auto& l : spec.value().kinds[k].linears) {
      params += static_cast<double>(l.in_features) * static_cast<double>(l.out_features) * static_cast<double>(l.copies);
    }
  }
  params += 2.0 * static_cast<double>(spec.value().vocab_size) * static_cast<double>(spec.value().hidden_size);
  if (params > 1e15) {
    return Issues{Issue{"out_of_range", path, "this config describes more than 10^15 parameters; check hidden_size, intermediate_size, num_hidden_layers and the expert counts"}};
  }
  if (spec.value().kinds.empty()) {
    return Issues{Issue{"invalid_value", path, "the model config has no decoder layers"}};
  }
  return spec;
}

}  // namespace vramplan
