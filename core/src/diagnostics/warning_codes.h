// The one table of warning codes. A warning (Result::warnings, and the parse warnings of a model
// config) says the estimate was made but something about it deserves the reader's attention; its
// code says what happened, so a caller can act on it without reading the sentence. Every warning
// is raised through MakeWarning(WarningCode, ...): a code that is not in this enum does not
// compile. The strings are stable API (docs/schema.md, "Warning codes", lists them; a test
// checks that the doc and this table agree). Errors (refusals) keep their own codes.
#pragma once

#include <string>
#include <vector>

#include "vramplan/error.h"

namespace vramplan {

enum class WarningCode {
  kWouldNotStart,           // the engine would refuse to start with these settings
  kWouldQueue,              // the engine starts, but not every requested sequence runs at once
  kNotModeled,              // a setting's memory effect is not modelled: the result ignores it
  kNoEffect,                // a setting does not apply to this engine / configuration
  kSubstituted,             // the engine has no such option: the nearest one it has is counted
  kApproximate,             // modelled, with a simplification or without a measured fixture
  kUnsupportedCombination,  // the framework falls back to another kernel for this combination
  kUnknownModelType,        // model_type has no dedicated reader: read as a Llama-style decoder
  kTextModelOnly,           // a multimodal config: only its text decoder is counted
  kNotEstimated,            // nothing was estimated (typed API input the JSON reader refuses)
  kExceedsModelContext,     // a sequence is longer than the model's own context limit
};

struct WarningCodeInfo {
  WarningCode code;
  const char* name;     // the stable JSON string, snake_case
  const char* meaning;  // one line, as listed in docs/schema.md
};

// Every code, in enum order.
const std::vector<WarningCodeInfo>& WarningCodeTable();
const char* WarningCodeName(WarningCode code);
Issue MakeWarning(WarningCode code, std::string field_path, std::string message);

}  // namespace vramplan
