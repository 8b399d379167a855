#include "planner/context_limit_check.h"

#include <algorithm>

#include "diagnostics/warning_codes.h"
#include "format.h"

namespace vramplan {

AskedLength LongestSequenceAsked(const Scenario& s) {
  if (s.mode == Mode::kTrain) return {s.train.seq_len, "train.seq_len"};
  const InferenceConfig& i = s.inference;
  AskedLength asked{i.prompt_len + i.new_tokens, "inference.prompt_len"};
  if (i.engine == Engine::kVllm && i.max_model_len > asked.tokens) asked = {i.max_model_len, "inference.max_model_len"};
  if (i.engine == Engine::kLlamaCpp && i.n_ctx > 0) {
    const int64_t per_seq = i.n_ctx / std::max<int64_t>(1, i.batch_size);
    if (per_seq > asked.tokens) asked = {per_seq, "inference.n_ctx"};
  }
  return asked;
}

bool ExceedsModelContext(const Scenario& s) {
  return s.model.context_limit > 0 && LongestSequenceAsked(s).tokens > s.model.context_limit;
}

void WarnBeyondModelContext(const Scenario& s, Result* r) {
  if (!ExceedsModelContext(s)) return;
  const AskedLength asked = LongestSequenceAsked(s);
  const std::string limit = "the model's context limit of " + WithCommas(s.model.context_limit) + " tokens (" + s.model.context_limit_source + ")";
  std::string what, consequence;
  if (s.mode == Mode::kTrain) {
    what = "seq_len " + WithCommas(asked.tokens);
    consequence = "positions beyond it were never trained";
  } else if (asked.field == "inference.max_model_len") {
    what = "max_model_len " + WithCommas(asked.tokens);
    consequence = "vLLM refuses to start unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set (vllm/config.py _get_and_verify_max_len)";
  } else if (asked.field == "inference.n_ctx") {
    what = "n_ctx per sequence " + WithCommas(asked.tokens);
    consequence = "llama.cpp starts but warns n_ctx_per_seq > n_ctx_train (possible training context overflow)";
  } else {
    what = "prompt_len + new_tokens = " + WithCommas(asked.tokens);
    consequence = s.inference.engine == Engine::kVllm
                      ? "vLLM rejects such a request (its max_model_len stops at the limit unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1)"
                      : "positions beyond it were never trained";
  }
  r->warnings.push_back(MakeWarning(WarningCode::kExceedsModelContext, asked.field,
                                    what + " is longer than " + limit + ": " + consequence + "; memory is counted for the length asked"));
}

int64_t CapAtModelContext(const ModelSpec& m, int64_t bound) {
  return m.context_limit > 0 ? std::min(bound, m.context_limit) : bound;
}

std::string SearchBound(const ModelSpec& m, int64_t answer, int64_t hi) {
  if (answer <= 0 || answer < hi) return "memory";
  return m.context_limit > 0 && hi == m.context_limit ? "model_context" : "input_limit";
}

}  // namespace vramplan
