// The contract of the JSON API on any input, hostile or not: EstimateJson, EstimateSummaryJson
// and ParseHfConfigJson each answer with one JSON object {"ok": true|false, ...}; errors are
// non-empty, bounded and carry no control characters; answers are not amplified far beyond the
// input; an ok estimate satisfies every result invariant (result_invariants.h); the summary call
// agrees with the full one on every number it repeats; an ok config parse has sane parameter
// counts. Crashes, aborts (JSON_NOEXCEPTION) and sanitizer reports end the process instead.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "support/json_access.h"
#include "support/result_invariants.h"
#include "vramplan/api.h"
#include "vramplan/estimate.h"

namespace vramplan::fuzzing {

struct ContractFailure {
  std::string check;   // stable name: "estimate_not_json", "invariant:timeline_max_is_peak", ...
  std::string detail;  // what was seen
};

// An answer larger than this for an input of n bytes is an amplification (the normalized echo
// and the timeline make ok answers some tens of KB; a 20 KB config must not print 200 MB).
inline size_t MaxAnswerBytes(size_t input_bytes) { return 8 * input_bytes + (size_t{1} << 20); }

namespace contract_detail {

inline std::optional<ContractFailure> Envelope(const char* api, const std::string& answer, size_t input_bytes, json* parsed) {
  *parsed = ParseOrDiscard(answer);
  if (parsed->is_discarded()) return ContractFailure{std::string(api) + "_not_json", answer.substr(0, 300)};
  if (auto e = CheckEnvelope(*parsed)) return ContractFailure{std::string(api) + "_envelope:" + e->kind, e->detail};
  if (answer.size() > MaxAnswerBytes(input_bytes)) {
    return ContractFailure{std::string(api) + "_amplified",
                           std::to_string(answer.size()) + " bytes answered for " + std::to_string(input_bytes) + " bytes of input"};
  }
  return std::nullopt;
}

inline bool IsOk(const json& answer) { return AsBool(Member(answer, "ok")).value_or(false); }

}  // namespace contract_detail

// EstimateSummaryJson answers like EstimateJson: the same ok, the same numbers it repeats.
inline std::optional<ContractFailure> SummaryAgrees(const json& full, const json& summary) {
  using namespace contract_detail;
  if (IsOk(summary) != IsOk(full)) {
    return ContractFailure{"summary_disagrees", std::string("EstimateSummaryJson ok=") + (IsOk(summary) ? "true" : "false") +
                                                    " but EstimateJson ok=" + (IsOk(full) ? "true" : "false")};
  }
  if (IsOk(full)) {
    static const std::pair<const char*, const char*> same[] = {
        {"peak_allocated_bytes", "peak_allocated_bytes"}, {"reserved_bytes", "reserved_bytes"}, {"device_total_bytes", "device_total_bytes"},
        {"capacity_bytes", "capacity_bytes"}, {"headroom_bytes", "headroom_bytes"}, {"fits", "fits"}};
    for (const auto& [s_key, g_key] : same) {
      const json* a = Member(summary, s_key);
      const json* b = At(full, {"gpu", g_key});
      if (a == nullptr || b == nullptr || *a != *b) {
        return ContractFailure{"summary_disagrees", std::string(s_key) + ": summary " + (a ? DumpCompact(*a) : "missing") + " vs estimate " +
                                                        (b ? DumpCompact(*b) : "missing")};
      }
    }
    const json* phase_s = Member(summary, "peak_phase");
    const json* phase_f = Member(full, "peak_phase");
    if (phase_s == nullptr || phase_f == nullptr || *phase_s != *phase_f) {
      return ContractFailure{"summary_disagrees", "peak_phase: summary " + (phase_s ? DumpCompact(*phase_s) : std::string("missing")) +
                                                      " vs estimate " + (phase_f ? DumpCompact(*phase_f) : std::string("missing"))};
    }
    const json* pt = Member(summary, "params_total");
    const json* tp = Member(summary, "trainable_params");
    if (pt == nullptr || tp == nullptr || At(full, {"params", "total"}) == nullptr || *pt != *At(full, {"params", "total"}) ||
        At(full, {"params", "trainable"}) == nullptr || *tp != *At(full, {"params", "trainable"})) {
      return ContractFailure{"summary_disagrees", "params_total / trainable_params differ from params.total / params.trainable"};
    }
  }
  return std::nullopt;
}

// Checks one scenario text through the op table (vramplan/api.h: the estimate, summary and
// parse_config ops); returns every broken part of the contract (empty: all kept).
// `model_config_text`, when given, is the inline model config the scenario carries, also fed to
// ParseHfConfigJson.
inline std::vector<ContractFailure> CheckApiContract(const std::string& text, const std::string* model_config_text = nullptr) {
  using namespace contract_detail;
  std::vector<ContractFailure> out;
  json full;
  if (auto f = Envelope("estimate", CallOp("estimate", text), text.size(), &full)) out.push_back(*f);
  if (IsOk(full)) {
    for (const auto& inv : ResultInvariants()) {
      if (auto d = inv.check(full)) out.push_back({std::string("invariant:") + inv.name, *d});
    }
  }
  json summary;
  if (auto f = Envelope("summary", CallOp("summary", text), text.size(), &summary)) out.push_back(*f);
  if (auto f = SummaryAgrees(full, summary)) out.push_back(*f);
  if (model_config_text != nullptr) {
    json cfg;
    if (auto f = Envelope("config", CallOp("parse_config", *model_config_text), model_config_text->size(), &cfg)) out.push_back(*f);
    if (IsOk(cfg)) {
      for (const char* name : {"active_at_most_total", "param_buckets_sum_to_total"}) {
        if (auto d = FindInvariant(name)->check(cfg)) out.push_back({std::string("config_invariant:") + name, *d});
      }
      std::vector<std::string> negatives;
      if (const json* params = Member(cfg, "params")) invariant_detail::FindNegatives(*params, "params", &negatives);
      if (!negatives.empty()) out.push_back({"config_invariant:no_negative_params", negatives[0]});
    }
  }
  return out;
}

}  // namespace vramplan::fuzzing
