// Invariants every successful result must satisfy, whatever the scenario (docs/schema.md, the
// comment on Result in core/include/vramplan/result.h, docs/testing.md). Each is a named check on
// the result JSON, so the property suite can report each one as its own test and the fuzz loop
// can check them all on every input that comes back ok.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "support/json_access.h"

namespace vramplan::fuzzing {

// nullopt when the invariant holds, else what is wrong (numbers included).
using InvariantCheck = std::optional<std::string> (*)(const json& result);

struct NamedInvariant {
  const char* name;
  InvariantCheck check;
};

namespace invariant_detail {

inline std::optional<int64_t> Gpu(const json& r, const char* key) { return AsInt(At(r, {"gpu", key})); }
inline std::optional<int64_t> Term(const json& r, const char* key) { return AsInt(At(r, {"gpu", "breakdown", key})); }
// a - b as text, without signed overflow (results of hostile inputs may hold any int64).
inline std::string Diff(int64_t a, int64_t b) {
  int64_t d = 0;
  if (__builtin_sub_overflow(a, b, &d)) return "beyond int64";
  return (d > 0 ? "+" : "") + std::to_string(d);
}

inline std::string Missing(const char* what) { return std::string("missing or non-integer ") + what; }

// a + b, or nullopt when the sum leaves int64.
inline std::optional<int64_t> Add(int64_t a, int64_t b) {
  int64_t s = 0;
  if (__builtin_add_overflow(a, b, &s)) return std::nullopt;
  return s;
}

// peak_allocated = weights + gradients + optimizer_states + activations + logits_and_loss + kv_cache + temporary.
inline std::optional<std::string> BreakdownSumsToPeak(const json& r) {
  static const char* keys[] = {"weights", "gradients", "optimizer_states", "activations", "logits_and_loss", "kv_cache", "temporary"};
  auto peak = Gpu(r, "peak_allocated_bytes");
  if (!peak) return Missing("gpu.peak_allocated_bytes");
  int64_t sum = 0;
  std::string terms;
  for (const char* k : keys) {
    auto v = Term(r, k);
    if (!v) return Missing((std::string("gpu.breakdown.") + k).c_str());
    auto s = Add(sum, *v);
    if (!s) return std::string("breakdown sum overflows int64");
    sum = *s;
    terms += std::string(terms.empty() ? "" : " + ") + k + " " + std::to_string(*v);
  }
  if (sum == *peak) return std::nullopt;
  return terms + " = " + std::to_string(sum) + " != peak_allocated " + std::to_string(*peak);
}

// reserved = peak_allocated + allocator_overhead; device_total = reserved + cuda_context + comm_buffers.
inline std::optional<std::string> OverheadsComposeDeviceTotal(const json& r) {
  auto peak = Gpu(r, "peak_allocated_bytes"), reserved = Gpu(r, "reserved_bytes"), total = Gpu(r, "device_total_bytes");
  auto alloc = Term(r, "allocator_overhead"), ctx = Term(r, "cuda_context"), comm = Term(r, "comm_buffers");
  if (!peak || !reserved || !total || !alloc || !ctx || !comm) return Missing("gpu totals or overhead terms");
  auto r1 = Add(*peak, *alloc), t0 = Add(*reserved, *ctx);
  auto t1 = t0 ? Add(*t0, *comm) : std::nullopt;
  if (!r1 || !t1) return std::string("overhead sums overflow int64");
  if (*r1 == *reserved && *t1 == *total) return std::nullopt;
  return "peak " + std::to_string(*peak) + " + allocator_overhead " + std::to_string(*alloc) + " = " + std::to_string(*r1) +
         " vs reserved " + std::to_string(*reserved) + "; reserved + cuda_context " + std::to_string(*ctx) + " + comm_buffers " +
         std::to_string(*comm) + " = " + std::to_string(*t1) + " vs device_total " + std::to_string(*total);
}

inline std::optional<std::string> ReservedAtLeastPeak(const json& r) {
  auto peak = Gpu(r, "peak_allocated_bytes"), reserved = Gpu(r, "reserved_bytes");
  if (!peak || !reserved) return Missing("gpu.peak_allocated_bytes / reserved_bytes");
  if (*reserved >= *peak) return std::nullopt;
  return "reserved " + std::to_string(*reserved) + " < peak_allocated " + std::to_string(*peak);
}

inline std::optional<std::string> ReservedAtLeastLoadReserved(const json& r) {
  auto reserved = Gpu(r, "reserved_bytes"), load = Gpu(r, "load_reserved_bytes");
  if (!reserved || !load) return Missing("gpu.reserved_bytes / load_reserved_bytes");
  if (*reserved >= *load) return std::nullopt;
  return "reserved " + std::to_string(*reserved) + " < load_reserved " + std::to_string(*load);
}

inline std::optional<std::string> DeviceTotalAtLeastReserved(const json& r) {
  auto reserved = Gpu(r, "reserved_bytes"), total = Gpu(r, "device_total_bytes");
  if (!reserved || !total) return Missing("gpu.reserved_bytes / device_total_bytes");
  if (*total >= *reserved) return std::nullopt;
  return "device_total " + std::to_string(*total) + " < reserved " + std::to_string(*reserved);
}

// fits == (headroom >= 0) and headroom == capacity - device_total.
inline std::optional<std::string> FitsMatchesHeadroom(const json& r) {
  auto cap = Gpu(r, "capacity_bytes"), total = Gpu(r, "device_total_bytes"), head = Gpu(r, "headroom_bytes");
  auto fits = AsBool(At(r, {"gpu", "fits"}));
  if (!cap || !total || !head || !fits) return Missing("gpu.capacity_bytes / device_total_bytes / headroom_bytes / fits");
  int64_t diff = 0;
  if (__builtin_sub_overflow(*cap, *total, &diff)) return std::string("capacity - device_total overflows int64");
  if (diff == *head && *fits == (*head >= 0)) return std::nullopt;
  return "capacity " + std::to_string(*cap) + " - device_total " + std::to_string(*total) + " = " + std::to_string(diff) + ", headroom " +
         std::to_string(*head) + ", fits " + (*fits ? "true" : "false");
}

// No negative number anywhere in the result, except headroom (negative: does not fit) and the
// echoed scenario (user settings such as n_gpu_layers -1) and the messages.
inline void FindNegatives(const json& j, const std::string& path, std::vector<std::string>* out) {
  if (out->size() >= 5) return;
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string& k = it.key();
      if (path.empty() && (k == "scenario" || k == "warnings" || k == "errors")) continue;
      if (k == "headroom_bytes") continue;
      FindNegatives(*it, path.empty() ? k : path + "." + k, out);
    }
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) FindNegatives(j[i], path + "[" + std::to_string(i) + "]", out);
  } else if (j.is_number_integer() && !j.is_number_unsigned() && j.get<int64_t>() < 0) {
    out->push_back(path + " = " + std::to_string(j.get<int64_t>()));
  } else if (j.is_number_float() && (j.get<double>() < 0 || j.get<double>() != j.get<double>())) {
    out->push_back(path + " = " + DumpCompact(j));
  }
}

inline std::optional<std::string> NoNegativeNumbers(const json& r) {
  std::vector<std::string> found;
  FindNegatives(r, "", &found);
  if (found.empty()) return std::nullopt;
  std::string s;
  for (const auto& f : found) s += (s.empty() ? "" : "; ") + f;
  return s;
}

inline std::optional<std::string> ActiveAtMostTotal(const json& r) {
  auto total = AsInt(At(r, {"params", "total"})), active = AsInt(At(r, {"params", "active_per_token"}));
  if (!total || !active) return Missing("params.total / active_per_token");
  if (*active <= *total) return std::nullopt;
  return "active_per_token " + std::to_string(*active) + " > total " + std::to_string(*total);
}

// Full and freeze train a subset of the model's parameters. (LoRA/QLoRA adapters and their
// modules_to_save copies are parameters added on top of params.total: rank x (in + out) per
// adapted linear, more than the linear itself once the rank exceeds its width.)
inline std::optional<std::string> TrainableAtMostTotal(const json& r) {
  auto total = AsInt(At(r, {"params", "total"})), trainable = AsInt(At(r, {"params", "trainable"}));
  if (!total || !trainable) return Missing("params.total / trainable");
  const std::string method = AsString(At(r, {"scenario", "train", "method"})).value_or("");
  if (AsString(At(r, {"scenario", "mode"})).value_or("") == "train" && (method == "lora" || method == "qlora")) return std::nullopt;
  if (*trainable <= *total) return std::nullopt;
  return "trainable " + std::to_string(*trainable) + " > total " + std::to_string(*total);
}

// params.total is the sum of params.by_module's in-memory buckets (each tied tensor counted once);
// params.checkpoint_total adds the checkpoint-only ones (MTP layers, vision tower, projector,
// quantization scales, a stored copy of tied embeddings, an audio tower, weights skipped on load).
inline std::optional<std::string> ParamBucketsSumToTotal(const json& r) {
  auto total = AsInt(At(r, {"params", "total"}));
  auto checkpoint_total = AsInt(At(r, {"params", "checkpoint_total"}));
  const json* by = At(r, {"params", "by_module"});
  if (!total || !checkpoint_total || by == nullptr || !by->is_object()) return Missing("params.total / checkpoint_total / by_module");
  static const std::vector<std::string> kCheckpointOnly = {"mtp", "vision", "projector", "quantization_scales", "tied_lm_head_copy",
                                                                   "audio", "unloaded"};
  int64_t sum = 0, all = 0;
  for (auto it = by->begin(); it != by->end(); ++it) {
    auto v = AsInt(&*it);
    if (!v) return Missing(("params.by_module." + it.key()).c_str());
    auto a = Add(all, *v);
    if (!a) return std::string("params.by_module sum overflows int64");
    all = *a;
    if (std::find(kCheckpointOnly.begin(), kCheckpointOnly.end(), it.key()) != kCheckpointOnly.end()) continue;
    sum = *Add(sum, *v);  // at most `all`
  }
  if (sum != *total) return "sum of by_module's in-memory buckets " + std::to_string(sum) + " != total " + std::to_string(*total);
  // Packed weights: FP4 experts two values per stored element (params.fp4_packing_saved,
  // DeepSeek-V4), BitNet four (ternary_packing_saved), GPTQ / AWQ 32 / bits (int32_packing_saved).
  for (const char* saved : {"fp4_packing_saved", "ternary_packing_saved", "int32_packing_saved"}) {
    if (auto packed = AsInt(At(r, {"params", saved}))) all -= *packed;
  }
  if (all != *checkpoint_total) return "sum of by_module " + std::to_string(all) + " != checkpoint_total " + std::to_string(*checkpoint_total);
  return std::nullopt;
}

// peak_allocated is max_memory_allocated: the highest point of the timeline, no more, no less.
inline std::optional<std::string> TimelineMaxIsPeak(const json& r) {
  auto peak = Gpu(r, "peak_allocated_bytes");
  const json* tl = Member(r, "timeline");
  if (!peak || tl == nullptr || !tl->is_array()) return Missing("gpu.peak_allocated_bytes / timeline");
  if (tl->empty()) return std::string("timeline is empty");
  int64_t best = INT64_MIN;
  std::string at;
  for (const auto& p : *tl) {
    auto v = AsInt(Member(p, "allocated_bytes"));
    if (!v) return Missing("timeline[].allocated_bytes");
    if (*v > best) {
      best = *v;
      at = AsString(Member(p, "phase")).value_or("?") + " / " + AsString(Member(p, "step")).value_or("?");
    }
  }
  if (best == *peak) return std::nullopt;
  return "max(timeline) " + std::to_string(best) + " (at " + at + ") != peak_allocated " + std::to_string(*peak) + " (diff " + Diff(best, *peak) + ")";
}

// peak_allocated >= every phase peak, the model load included.
inline std::optional<std::string> PhasePeaksAtMostPeak(const json& r) {
  auto peak = Gpu(r, "peak_allocated_bytes");
  const json* phases = At(r, {"gpu", "phase_peaks"});
  if (!peak || phases == nullptr || !phases->is_object()) return Missing("gpu.peak_allocated_bytes / phase_peaks");
  std::string bad;
  for (auto it = phases->begin(); it != phases->end(); ++it) {
    auto v = AsInt(&*it);
    if (!v) return Missing(("gpu.phase_peaks." + it.key()).c_str());
    if (*v > *peak) bad += (bad.empty() ? "" : "; ") + it.key() + " " + std::to_string(*v) + " > peak " + std::to_string(*peak) + " (" + Diff(*v, *peak) + ")";
  }
  if (bad.empty()) return std::nullopt;
  return bad;
}

// Every rank role with a timeline: max(its timeline) == its peak_allocated_bytes (as for the
// top-level timeline). A job of one role has it; with several roles only the worst one, which
// `gpu` reports, is explained and carries one (planner/simulate.cpp SimulateRanks).
inline std::optional<std::string> RankTimelineMaxIsPeak(const json& r) {
  const json* ranks = Member(r, "ranks");
  if (ranks == nullptr || !ranks->is_array() || ranks->empty()) return Missing("ranks");
  for (const auto& k : *ranks) {
    auto peak = AsInt(Member(k, "peak_allocated_bytes"));
    const json* tl = Member(k, "timeline");
    const std::string role = AsString(Member(k, "role")).value_or("?");
    if (!peak || tl == nullptr || !tl->is_array()) return Missing("ranks[].peak_allocated_bytes / timeline");
    if (tl->empty() && ranks->size() == 1) return "rank " + role + ": timeline is empty";
    if (tl->empty()) continue;
    int64_t best = INT64_MIN;
    for (const auto& p : *tl) {
      auto v = AsInt(Member(p, "allocated_bytes"));
      if (!v) return Missing("ranks[].timeline[].allocated_bytes");
      best = std::max(best, *v);
    }
    if (best != *peak) return "rank " + role + ": max(timeline) " + std::to_string(best) + " != peak_allocated " + std::to_string(*peak) + " (diff " + Diff(best, *peak) + ")";
  }
  return std::nullopt;
}

// gpu is the worst rank: its device total is the largest of the ranks', and its peak, reserve and
// breakdown are that rank's; the ranks' counts add up to parallel.gpus.
inline std::optional<std::string> GpuIsWorstRank(const json& r) {
  const json* ranks = Member(r, "ranks");
  auto gpus = AsInt(At(r, {"scenario", "parallel", "gpus"}));
  if (ranks == nullptr || !ranks->is_array() || ranks->empty() || !gpus) return Missing("ranks / scenario.parallel.gpus");
  const json* worst = nullptr;
  int64_t count = 0;
  for (const auto& k : *ranks) {
    auto total = AsInt(Member(k, "device_total_bytes"));
    auto n = AsInt(Member(k, "count"));
    if (!total || !n) return Missing("ranks[].device_total_bytes / count");
    count += *n;
    if (worst == nullptr || *total > AsInt(Member(*worst, "device_total_bytes")).value_or(INT64_MIN)) worst = &k;
  }
  if (count != *gpus) return "rank counts add up to " + std::to_string(count) + ", parallel.gpus is " + std::to_string(*gpus);
  for (const char* key : {"device_total_bytes", "peak_allocated_bytes", "reserved_bytes"}) {
    auto g = Gpu(r, key);
    auto w = AsInt(Member(*worst, key));
    if (!g || !w) return Missing(key);
    if (*g != *w) return std::string("gpu.") + key + " " + std::to_string(*g) + " != worst rank's " + std::to_string(*w) + " (" + Diff(*g, *w) + ")";
  }
  const json* gb = At(r, {"gpu", "breakdown"});
  const json* wb = Member(*worst, "breakdown");
  if (gb == nullptr || wb == nullptr || *gb != *wb) return std::string("gpu.breakdown differs from the worst rank's");
  return std::nullopt;
}

// Host RAM per node = one rank's process x the processes on the fullest host (at most gpus_per_node).
inline std::optional<std::string> NodeHostRamIsRankTimesProcesses(const json& r) {
  auto bytes = AsInt(At(r, {"cpu", "bytes"}));
  auto node = AsInt(At(r, {"cpu", "node_bytes"}));
  auto procs = AsInt(At(r, {"cpu", "node_processes"}));
  auto per_node = AsInt(At(r, {"scenario", "parallel", "gpus_per_node"}));
  auto gpus = AsInt(At(r, {"scenario", "parallel", "gpus"}));
  if (!bytes || !node || !procs || !per_node || !gpus) return Missing("cpu.bytes / node_bytes / node_processes / parallel.gpus_per_node");
  if (*procs < 1 || *procs > std::min(*per_node, *gpus)) {
    return "cpu.node_processes " + std::to_string(*procs) + " outside 1..min(gpus, gpus_per_node) = " + std::to_string(std::min(*per_node, *gpus));
  }
  // The fullest host runs node_processes processes of the rank that needs the most host RAM
  // (ranks[].host_bytes; with pipeline stages that is not always the worst GPU rank, whose host RAM
  // is cpu.bytes). Alike ranks: cpu.bytes x node_processes.
  int64_t largest = *bytes;
  if (const json* ranks = At(r, {"ranks"}); ranks != nullptr && ranks->is_array()) {
    for (const auto& rank : *ranks) {
      if (auto h = AsInt(At(rank, {"host_bytes"}))) largest = std::max(largest, *h);
    }
  }
  int64_t product = 0;
  if (__builtin_mul_overflow(largest, *procs, &product)) return std::string("the largest rank's host bytes x node_processes overflows int64");
  if (product != *node) {
    return "cpu.node_bytes " + std::to_string(*node) + " != the largest rank's host bytes " + std::to_string(largest) + " x " + std::to_string(*procs) +
           " (cpu.bytes " + std::to_string(*bytes) + ")";
  }
  return std::nullopt;
}

}  // namespace invariant_detail

inline const std::vector<NamedInvariant>& ResultInvariants() {
  using namespace invariant_detail;
  static const std::vector<NamedInvariant> all = {
      {"breakdown_sums_to_peak", &BreakdownSumsToPeak},
      {"overheads_compose_device_total", &OverheadsComposeDeviceTotal},
      {"reserved_at_least_peak", &ReservedAtLeastPeak},
      {"reserved_at_least_load_reserved", &ReservedAtLeastLoadReserved},
      {"device_total_at_least_reserved", &DeviceTotalAtLeastReserved},
      {"fits_matches_headroom", &FitsMatchesHeadroom},
      {"no_negative_numbers", &NoNegativeNumbers},
      {"active_at_most_total", &ActiveAtMostTotal},
      {"trainable_at_most_total", &TrainableAtMostTotal},
      {"param_buckets_sum_to_total", &ParamBucketsSumToTotal},
      {"timeline_max_is_peak", &TimelineMaxIsPeak},
      {"phase_peaks_at_most_peak", &PhasePeaksAtMostPeak},
      {"rank_timeline_max_is_peak", &RankTimelineMaxIsPeak},
      {"gpu_is_worst_rank", &GpuIsWorstRank},
      {"node_host_ram_is_rank_times_processes", &NodeHostRamIsRankTimesProcesses},
  };
  return all;
}

inline const NamedInvariant* FindInvariant(const std::string& name) {
  for (const auto& inv : ResultInvariants()) {
    if (name == inv.name) return &inv;
  }
  return nullptr;
}

// The shape every answer of the JSON API has: {"ok": true, ...} or {"ok": false, "errors":
// [{code, field_path, message}, ...]} with at least one error, each message non-empty, bounded and
// free of control characters (a newline in a user string must not forge another `error:` line,
// an ESC must not reach the terminal). Returns {kind, detail} of the first problem: kinds are
// "not_object", "no_ok", "no_errors", "malformed_error", "empty_message", "unbounded_message",
// "newline", "escape", "control_character".
struct EnvelopeProblem {
  std::string kind;
  std::string detail;
};

inline std::optional<EnvelopeProblem> CheckEnvelope(const json& out) {
  if (!out.is_object()) return EnvelopeProblem{"not_object", "the answer is not a JSON object"};
  auto ok = AsBool(Member(out, "ok"));
  if (!ok) return EnvelopeProblem{"no_ok", "the answer has no boolean \"ok\""};
  if (*ok) return std::nullopt;
  const json* errors = Member(out, "errors");
  if (errors == nullptr || !errors->is_array() || errors->empty()) return EnvelopeProblem{"no_errors", "ok:false without a non-empty errors array"};
  for (const auto& e : *errors) {
    auto code = AsString(Member(e, "code")), path = AsString(Member(e, "field_path")), msg = AsString(Member(e, "message"));
    if (!code || !path || !msg) return EnvelopeProblem{"malformed_error", "an error lacks code/field_path/message: " + DumpCompact(e).substr(0, 300)};
    if (msg->empty()) return EnvelopeProblem{"empty_message", DumpCompact(e).substr(0, 300)};
    if (msg->size() > 4096 || path->size() > 1024) {
      return EnvelopeProblem{"unbounded_message", std::to_string(msg->size()) + "-byte message, " + std::to_string(path->size()) +
                                                     "-byte field_path: " + msg->substr(0, 120) + "..."};
    }
    for (const std::string* s : {&*code, &*path, &*msg}) {
      for (unsigned char c : *s) {
        if (c == '\n' || c == '\r') return EnvelopeProblem{"newline", DumpCompact(e).substr(0, 300)};
        if (c == 0x1b) return EnvelopeProblem{"escape", DumpCompact(e).substr(0, 300)};
        if (c < 0x20 || c == 0x7f) return EnvelopeProblem{"control_character", "byte " + std::to_string(c) + " in " + DumpCompact(e).substr(0, 300)};
      }
    }
  }
  return std::nullopt;
}

}  // namespace vramplan::fuzzing
