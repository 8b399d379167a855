#include "model/hf_config.h"

#include "diagnostics/warning_codes.h"
#include "io/json_reader.h"
#include "io/message_text.h"
#include "model/checkpoint_format.h"
#include "model/context_limit.h"
#include "model/unquantized_modules.h"
#include "model/legacy_buffers.h"
#include "model/families/config_reader.h"
#include "model/packed_linears.h"
#include "model/families/registry.h"
#include "model/structural_keys.h"
#include "model/vision_tower.h"
#include "model/vision_shape.h"

namespace vramplan {
namespace {

using io::Json;

// The decoder config (the top level, or text_config of a multimodal wrapper), dispatched to its
// family's builder through the registry.
// The quantization layout of the stored tensors (CheckpointLayout) from quantization_config:
// FP8 with weight_block_size (DeepSeek-V3's "fp8" checkpoints), MXFP4 experts (gpt-oss), GPTQ /
// AWQ / compressed-tensors pack-quantized linears (model/packed_linears.h).
void ReadCheckpointQuantization(const Json& config, ModelSpec* spec) {
  auto qc = config.find("quantization_config");
  if (qc == config.end() || !qc->is_object()) return;
  if (spec->quantization_method == "mxfp4") spec->checkpoint.mxfp4_experts = true;
  {
    PackedLinearsReading packed = PackedLinearsFromConfig(*qc);
    spec->checkpoint.packed_linears = packed.packed;
    if (!packed.note.empty()) spec->notes.push_back(std::move(packed.note));
  }
  if (spec->quantization_method == "bitnet") {
    // transformers BitNetQuantConfig (utils/quantization_config.py): linear_class "bitlinear" (packed
    // only) or "autobitlinear"; quantization_mode "offline" (packed weights, the default) or
    // "online" (AutoBitLinear on bf16 master weights, e.g. microsoft/bitnet-b1.58-2B-4T-bf16).
    auto text = [&](const char* key, const char* fallback) {
      auto it = qc->find(key);
      return it != qc->end() && it->is_string() ? it->get<std::string>() : std::string(fallback);
    };
    spec->checkpoint.ternary_packed_linears = !(text("linear_class", "bitlinear") == "autobitlinear" && text("quantization_mode", "offline") == "online");
    if (spec->checkpoint.ternary_packed_linears) {
      spec->notes.push_back("BitNet packed checkpoint: the memory terms hold the decoder linears at the weight dtype; transformers' BitLinear "
                            "keeps them packed (four ternary values per byte), so the weights term is an upper bound");
    }
  }
  auto block = qc->find("weight_block_size");
  if (spec->quantization_method == "fp8" && block != qc->end() && block->is_array() && block->size() == 2 &&
      (*block)[0].is_number_integer() && (*block)[1].is_number_integer() && (*block)[0].get<int64_t>() > 0 &&
      (*block)[1].get<int64_t>() > 0 && (*block)[0].get<int64_t>() <= families::kMaxDim && (*block)[1].get<int64_t>() <= families::kMaxDim) {
    spec->checkpoint.fp8_block_rows = (*block)[0].get<int64_t>();
    spec->checkpoint.fp8_block_cols = (*block)[1].get<int64_t>();
  }
}

std::string SupportedList() {
  std::string out;
  for (const std::string& t : SupportedModelTypes()) out += (out.empty() ? "" : ", ") + t;
  return out;
}

std::string KeyList(const std::vector<UnreadKey>& keys) {
  std::string out;
  for (const UnreadKey& k : keys) out += (out.empty() ? "" : "; ") + k.path + " (" + k.what + ")";
  return out;
}

// A model_type without a dedicated reader: the generic MoE reader when the config names routed
// experts with the standard keys, else the Llama-style one. Structural keys neither understands
// are an error naming them, unless the scenario asked for an approximate reading.
Expected<ModelSpec> BuildUnknown(families::ConfigReader& c, const Json& cfg, const Json& config, const std::string& path,
                                 const std::string& cfg_path, const std::string& type, ModelSpec spec, Issues* warnings,
                                 ModelReading reading) {
  std::vector<UnreadKey> unread = UnreadStructuralKeys(cfg, cfg_path);
  if (&cfg != &config) {  // a multimodal wrapper whose text decoder is unknown too
    for (UnreadKey& k : UnreadStructuralKeys(config, path)) {
      if (k.path != io::JoinPath(path, "text_config")) unread.push_back(std::move(k));
    }
  }
  const std::string what = type.empty() ? std::string("no model_type given") : "model_type " + io::Quote(type) + " has no dedicated reader";
  const bool moe = HasStandardMoeKeys(cfg);
  const std::string generic = moe ? "a decoder with Llama-style attention and standard mixture-of-experts layers"
                                  : "a Llama-style decoder (RMSNorm, SwiGLU, q/k/v/o)";
  if (!unread.empty() && reading == ModelReading::kExact) {
    return Issues{Issue{"unsupported_model", io::JoinPath(cfg_path, "model_type"),
                        what + ", and its config has keys the generic readers do not understand: " + KeyList(unread) +
                            ". Supported model_types: " + SupportedList() +
                            " (and unknown ones whose config has only standard decoder and mixture-of-experts keys). "
                            "Set \"model_reading\": \"approximate\" to read it as " + generic + " with these keys ignored"}};
  }
  warnings->push_back(MakeWarning(WarningCode::kUnknownModelType, io::JoinPath(cfg_path, "model_type"),
                                  what + ": read as " + generic + "; parameter counts may be off for this family"));
  if (!unread.empty()) {
    warnings->push_back(MakeWarning(WarningCode::kApproximate, io::JoinPath(cfg_path, "model_type"),
                                    "model_reading \"approximate\": these keys were ignored, so what they configure is not counted: " +
                                        KeyList(unread)));
  }
  return moe ? families::BuildGenericMoe(c, std::move(spec)) : families::GenericFamily().build(c, std::move(spec));
}

Expected<ModelSpec> BuildSpec(const Json& config, const std::string& path, Issues* warnings, ModelReading reading) {
  Issues errors;
  if (!config.is_object()) {
    return Issues{Issue{"wrong_type", path, path + " must be a preset id (string) or a config.json object, got " + io::Describe(config)}};
  }
  // Multimodal wrappers (gemma3, mistral3, llava...) keep the decoder under text_config;
  // Qwen2.5-VL's Hub configs keep it at the top level beside vision_config.
  const Json* cfg = &config;
  Json patched_text;  // a text_config adjusted to what the wrapper's text model builds (GLM-4.1V below)
  std::string cfg_path = path;
  std::string type;
  std::string wrapper;  // the multimodal model_type whose vision tower is counted, if any
  // Qwen3VLMoeTextSparseMoeBlock renormalises the top-k weights unconditionally ("all the models
  // use norm_topk_prob", transformers models/qwen3_vl_moe/modeling_qwen3_vl_moe.py v4.57;
  // Qwen3VLMoeTextTopKRouter in v5 likewise), whatever the text_config says.
  bool always_norm_topk = false;
  {
    families::ConfigReader top(config, path, &errors);
    type = top.String("model_type", "");
    auto tc = config.find("text_config");
    auto vc = config.find("vision_config");
    const bool tower_counted = vc != config.end() && vc->is_object() && VisionTowerCounted(type, config);
    if (tc != config.end() && tc->is_object() && families::FindModelFamily(type) == nullptr) {
      cfg = &*tc;
      cfg_path = io::JoinPath(path, "text_config");
      families::ConfigReader inner(*cfg, cfg_path, &errors);
      std::string outer = type;
      type = inner.String("model_type", "");
      if (type == "gemma3") type = "gemma3_text";
      if (outer == "gemma4" && (type == "gemma4" || type.empty())) type = "gemma4_text";
      if (outer == "gemma3n" && (type == "gemma3n" || type.empty())) type = "gemma3n_text";
      if (outer == "gemma4_unified" && (type == "gemma4_unified_text" || type.empty())) type = "gemma4_text";
      if (outer == "mllama" && (type == "mllama" || type.empty())) type = "mllama_text_model";
      if (outer == "qwen2_5_vl" && (type == "qwen2_5_vl_text" || type == "qwen2_5_vl" || type.empty())) type = "qwen2";
      // PaliGemmaConfig builds text_config as model_type "gemma" when it names none.
      if (outer == "paligemma" && type.empty()) type = "gemma";
      // Idefics3Config / SmolVLMConfig build text_config as model_type "llama" when it names none.
      if ((outer == "idefics3" || outer == "smolvlm") && type.empty()) type = "llama";
      // LlavaOnevisionConfig builds text_config as model_type "qwen2" when it names none.
      if (outer == "llava_onevision" && type.empty()) type = "qwen2";
      // Lfm2VlConfig builds text_config as model_type "lfm2" when it names none.
      if ((outer == "lfm2-vl" || outer == "lfm2_vl") && type.empty()) type = "lfm2";
      // InternVLConfig builds text_config as model_type "qwen2" when it names none (configuration_internvl.py).
      if (outer == "internvl" && type.empty()) type = "qwen2";
      // KimiVLConfig (the Hub's configuration_kimi_vl.py) builds text_config as DeepseekV3Config, and
      // AyaVisionConfig (configuration_aya_vision.py) as model_type "cohere2", when it names none.
      if (outer == "kimi_vl" && type.empty()) type = "deepseek_v3";
      if (outer == "aya_vision" && type.empty()) type = "cohere2";
      // transformers Glm4vTextModel (modeling_glm4v.py) is the GLM-4-0414 decoder (four RMSNorms a layer, fused
      // gate_up_proj), and Glm4vTextAttention builds q/k/v with bias=True whatever attention_bias says;
      // Glm4vMoeTextModel (modeling_glm4v_moe.py) is GLM-4.5's MoE decoder without the MTP layer.
      if (outer == "glm4v" && (type == "glm4v_text" || type == "glm4v" || type.empty())) {
        type = "glm4";
        patched_text = *cfg;
        patched_text["attention_bias"] = true;
        cfg = &patched_text;
      }
      if (outer == "glm4v_moe" && (type == "glm4v_moe_text" || type == "glm4v_moe" || type.empty())) type = "glm4_moe";
      // transformers Qwen2VLTextModel (modeling_qwen2_vl.py) is the Qwen2 decoder too.
      if (outer == "qwen2_vl" && (type == "qwen2_vl_text" || type == "qwen2_vl" || type.empty())) type = "qwen2";
      // transformers Qwen3VLTextModel is the Qwen3 decoder (q/k RMSNorm); Qwen3VLMoeTextModel the Qwen3-MoE
      // one (its experts are fused tensors there, with the same element counts).
      if (outer == "qwen3_vl" && (type == "qwen3_vl_text" || type.empty())) type = "qwen3";
      if (outer == "qwen3_vl_moe" && (type == "qwen3_vl_moe_text" || type.empty())) type = "qwen3_moe", always_norm_topk = true;
      // transformers Qwen3_5Config / Qwen3_5MoeConfig (models/qwen3_5*/configuration_*.py) default
      // text_config to Qwen3_5TextConfig / Qwen3_5MoeTextConfig.
      if (outer == "qwen3_5" && type.empty()) type = "qwen3_5_text";
      if (outer == "qwen3_5_moe" && type.empty()) type = "qwen3_5_moe_text";
      if (tower_counted) {
        wrapper = outer;
      } else {
        warnings->push_back(MakeWarning(WarningCode::kTextModelOnly, path, io::Quote(outer) + " is multimodal: only its text decoder (text_config, model_type " + io::Quote(type) + ") is counted; the vision tower is not" + (config.contains("audio_config") ? std::string(", nor the audio tower (audio_config)") : std::string())));
      }
    } else if (tower_counted && (type == "qwen2_5_vl" || type == "qwen2_vl")) {
      // transformers Qwen2_5_VLTextModel / Qwen2VLTextModel are the Qwen2 decoder (q/k/v bias, SwiGLU,
      // RMSNorm); the Hub configs of both keep its keys at the top level beside vision_config.
      wrapper = type;
      type = "qwen2";
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
  {
    CheckpointFormat stored = CheckpointFormatFromConfig(config);
    spec.checkpoint_weights = std::move(stored.weights);
    spec.checkpoint_quantization = std::move(stored.description);
  }
  ReadCheckpointQuantization(config, &spec);
  ContextLimit limit = ContextLimitFromConfig(*cfg, type);
  spec.context_limit = limit.tokens;
  spec.context_limit_source = std::move(limit.source);
  if (const families::ModelFamily* family = families::FindModelFamily(type)) {
    if (family->build == nullptr) {
      // Only in the page's WASM module, which links the presets' readers alone (registry.cpp): the
      // page asks vramplan-full, which has them all, on this code (web/core.js).
      return Issues{Issue{"reader_on_demand", io::JoinPath(cfg_path, "model_type"),
                          "the reader of model_type " + io::Quote(type) +
                              " is in the full module (vramplan-full), which the page loads on demand"}};
    }
    Expected<ModelSpec> built = family->build(c, std::move(spec));
    if (built.ok() && always_norm_topk) {
      ModelSpec& moe = built.value();
      for (LayerKind& k : moe.kinds) k.mlp.norm_topk_prob = true, k.mlp.measured_expert_loop = false;
      // Its experts are fused parameters (Qwen3VLMoeTextExperts: one gate_up_proj / down_proj tensor
      // over all experts, sliced per expert in training, v4.57), not the nn.Linear loop of
      // Qwen3MoeSparseMoeBlock that the MoE rules were measured on (measured_cpu_qwen_moe.json).
      moe.approximations.training =
          "Qwen3-VL-MoE's experts are fused tensors (Qwen3VLMoeTextExperts: a gate_up_proj matmul per expert slice, "
          "routing weights over all experts): its MoE activations follow the measured Qwen3-MoE per-expert loop, "
          "not that code";
    }
    if (!built.ok() || wrapper.empty()) return built;
    ModelSpec text = std::move(built.value());
    std::optional<VisionTowerParams> tower = CountVisionTower(wrapper, config, path, text.hidden_size, &errors);
    if (!errors.empty()) return errors;
    if (tower) {
      text.checkpoint.vision_params = tower->vision;
      text.checkpoint.projector_params = tower->projector;
      text.checkpoint.audio_params = tower->audio;
      text.vision = ReadVisionShape(wrapper, config, text.hidden_size);
      if (wrapper == "gemma4_unified") {
        // No VisionShape for the encoder-free embedders: their weights are counted, not held.
        text.notes.push_back("\"gemma4_unified\" (Gemma 4 12B) embeds image patches and audio frames without towers: its "
                             "embedders are counted in params.checkpoint_total and by_module.vision / projector, not in "
                             "params.total; image and audio inputs and the embedders' weights are not in the memory estimate");
        return text;
      }
      // Said once per result: the tower is held and its image inputs are modelled (docs/models.md
      // "Image inputs"), but params.total stays the text decoder's.
      text.notes.push_back(io::Quote(wrapper) +
                           " is multimodal: its vision tower and projector (vision_config) are counted in "
                           "params.checkpoint_total and by_module.vision / projector, not in params.total; the memory "
                           "estimate holds them beside the decoder and models images from train.images_per_sample / "
                           "inference.images_per_request" +
                           (tower->audio > 0 ? std::string(" (the audio tower's weights are held, audio inputs are not modelled)") : std::string()));
      if (wrapper == "kimi_vl") {
        // KimiVLImageProcessor's in_token_limit lives in preprocessor_config.json, not config.json.
        text.notes.push_back("\"kimi_vl\": image tokens assume the processor's in_token_limit of 4,096 patches "
                             "(Kimi-VL-A3B-Instruct's preprocessor_config.json); a checkpoint whose processor allows more "
                             "(Kimi-VL-A3B-Thinking-2506's higher resolution) puts more tokens in a large image than counted here");
      }
      if (wrapper == "gemma3n") {
        // MobileNetV5 is a CNN: the ViT walk of a trained tower (train/vision_memory.cpp) does not apply.
        text.approximations.training +=
            "; with a trained vision tower, MobileNetV5's activations (a CNN over the 768 x 768 image) are not walked: an "
            "image keeps its pixel input and the embedder's tensors only";
      }
    }
    return text;
  }
  return BuildUnknown(c, *cfg, config, path, cfg_path, type, std::move(spec), warnings, reading);
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

void ApplyCheckpointFacts(const nlohmann::json& facts, ModelSpec* spec) {
  if (!facts.is_object()) return;
  auto flag = [&](const char* key, bool* out) {
    auto it = facts.find(key);
    if (it != facts.end() && it->is_boolean()) *out = it->get<bool>();
  };
  flag("tied_lm_head_stored", &spec->checkpoint.tied_lm_head_stored);
  flag("mtp_stores_embeddings", &spec->checkpoint.mtp_stores_embeddings);
  // A rotary inv_freq buffer saved with every decoder layer (model.layers.N.self_attn.rotary_emb.inv_freq):
  // Moonshot's Kimi K2 checkpoints, converted to the DeepSeek-V3 layout, keep one in bf16 ([56] in
  // Kimi-K2-Base / Instruct, [128] in Kimi-K2-Instruct-0905), although modeling_deepseek.py registers
  // inv_freq as a non-persistent buffer. The engines skip it when loading (vLLM deepseek_v2.py
  // DeepseekV2Model.load_weights at 002d6073: `if "rotary_emb.inv_freq" in name: continue`; ROCm ATOM
  // d6e6cffd "inv_freq is not needed from checkpoint"), so it counts as unloaded.
  // A GPTQ exporter that builds every QuantLinear with bias=True stores a 16-bit zero bias for
  // each packed linear (RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16: 43,008 F16 elements a
  // layer, the seven linears' output features, beside its qweight).
  flag("packed_linears_store_bias", &spec->checkpoint.packed_linears.bias_stored);
  auto inv_freq = facts.find("rope_inv_freq_per_layer");
  if (inv_freq != facts.end() && inv_freq->is_number_integer()) {
    const int64_t per_layer = inv_freq->get<int64_t>();
    if (per_layer > 0 && per_layer <= (int64_t{1} << 20)) {
      spec->checkpoint.unloaded_params += per_layer * static_cast<int64_t>(spec->layer_kind.size());
    }
  }
}

Expected<ModelSpec> ModelSpecFromHfConfig(const Json& config, const std::string& path, Issues* warnings, ModelReading reading) {
  Expected<ModelSpec> spec = BuildSpec(config, path, warnings, reading);
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
  // Causal masks and rotary inv_freq that older transformers versions saved (model/legacy_buffers.h),
  // on a config whose sizes passed the check above.
  AddLegacyStoredBuffers(config, &spec.value());
  return spec;
}

}  // namespace vramplan
