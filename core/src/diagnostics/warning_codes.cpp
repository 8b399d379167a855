// The warning code table (diagnostics/warning_codes.h).
#include "diagnostics/warning_codes.h"

#include <utility>

namespace vramplan {

const std::vector<WarningCodeInfo>& WarningCodeTable() {
  static const std::vector<WarningCodeInfo> kTable = {
      {WarningCode::kWouldNotStart, "would_not_start",
       "the engine would refuse to start with these settings (vLLM: no memory left for the KV cache, or one max_model_len request does not fit it; llama.cpp: a quantized V cache without flash attention); the numbers show what it would need"},
      {WarningCode::kWouldQueue, "would_queue",
       "the engine starts, but not every requested sequence runs at once: the scheduler queues or preempts the rest"},
      {WarningCode::kNotModeled, "not_modeled",
       "a setting's memory effect is not modelled yet; the result is computed as if it were absent"},
      {WarningCode::kNoEffect, "no_effect",
       "a setting does not apply to this engine or configuration and changes nothing"},
      {WarningCode::kSubstituted, "substituted",
       "the engine has no such option; the nearest one it does have is counted instead"},
      {WarningCode::kApproximate, "approximate",
       "modelled, but with a simplification of what the framework does, or without a measured fixture yet"},
      {WarningCode::kUnsupportedCombination, "unsupported_combination",
       "the framework does not run this combination as asked and falls back to another kernel"},
      {WarningCode::kUnknownModelType, "unknown_model_type",
       "the config's model_type has no dedicated reader; it is read as a Llama-style decoder and its parameter counts may be off"},
      {WarningCode::kTextModelOnly, "text_model_only",
       "a multimodal config: only its text decoder is counted, not the vision or audio tower"},
      {WarningCode::kNotEstimated, "not_estimated",
       "nothing was estimated: the typed input has no decoder layers or a count out of range (the JSON reader refuses these first)"},
      {WarningCode::kExceedsModelContext, "exceeds_model_context",
       "a sequence (training seq_len, prompt + new tokens, vLLM max_model_len, llama.cpp n_ctx per sequence) is longer than the model's context limit (max_position_embeddings with rope scaling, as vLLM derives it); memory is still counted for the length asked"},
  };
  return kTable;
}

const char* WarningCodeName(WarningCode code) {
  for (const WarningCodeInfo& info : WarningCodeTable()) {
    if (info.code == code) return info.name;
  }
  return "";  // unreachable: the table test checks that every enumerator has a row
}

Issue MakeWarning(WarningCode code, std::string field_path, std::string message) {
  return Issue{WarningCodeName(code), std::move(field_path), std::move(message)};
}

}  // namespace vramplan
