// The `plan` op and the pre-launch guard (vramplan/plan.h): reads the request, runs the search
// (planner/plan_search.h), and writes each plan as a diff against the user's scenario with its
// estimate, cost, fidelity and one sentence on why it fits.
#include "vramplan/plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "io/input_limits.h"
#include "io/json_reader.h"
#include "io/json_writer.h"
#include "io/result_json.h"
#include "io/scenario_json.h"
#include "model/catalog.h"
#include "parallel/topology.h"
#include "gpu/device_overhead.h"
#include "planner/fewest_gpus.h"
#include "planner/plan_search.h"
#include "planner/simulate.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace {

using io::Json;
using io::JsonWriter;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string Gib(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / kGiB);
  return buf;
}

// Reads the request into `req`; false with errors when it is not valid.
bool ReadRequest(std::string_view text, PlanRequest* req, Issues* errors) {
  Json doc;
  if (!io::ParseUserJson(text, "", "plan request", &doc, errors)) return false;
  if (!doc.is_object()) {
    errors->push_back(Issue{"wrong_type", "", "the plan request must be a JSON object: a scenario, or {\"scenario\": {...}, \"budget\": {...}}"});
    return false;
  }
  const bool wrapped = doc.contains("scenario") && doc["scenario"].is_object();
  Issues warnings;
  Expected<Scenario> s = ParseScenarioWithWarnings(io::Dump(wrapped ? doc["scenario"] : doc), &warnings);
  if (!s.ok()) {
    for (Issue e : s.errors()) {
      if (wrapped) e.field_path = e.field_path.empty() ? "scenario" : "scenario." + e.field_path;
      errors->push_back(std::move(e));
    }
    return false;
  }
  req->scenario = s.value();
  if (!wrapped) return true;
  io::ObjectReader r(doc, "", errors);
  r.Raw("scenario");
  if (const Json* b = r.Raw("budget")) {
    io::ObjectReader br(*b, "budget", errors);
    br.String("gpu", &req->budget.gpu_id, 64);
    br.Int("max_gpus", &req->budget.max_gpus, 1, 4096);
    br.Int("host_ram_bytes_per_node", &req->budget.host_ram_bytes_per_node, 0, int64_t{1} << 50);
    br.Bool("nvme", &req->budget.nvme);
    br.RejectUnknownKeys();
  }
  if (const Json* l = r.Raw("levers")) {
    io::ObjectReader lr(*l, "levers", errors);
    LeverSwitches& o = req->levers;
    const std::pair<const char*, bool*> switches[] = {
        {"method", &o.method}, {"precision", &o.precision}, {"optimizer", &o.optimizer}, {"kernels", &o.kernels},
        {"checkpointing", &o.checkpointing}, {"micro_batch", &o.micro_batch}, {"sharding", &o.sharding}, {"gpus", &o.gpus},
        {"seq_len", &o.seq_len}, {"lora_rank", &o.lora_rank}, {"activation_offload", &o.activation_offload}, {"weights", &o.weights}, {"kv_cache", &o.kv_cache}, {"engine_knobs", &o.engine_knobs},
        {"concurrency", &o.concurrency}, {"context", &o.context}, {"rollout", &o.rollout}, {"num_generations", &o.num_generations}};
    for (const auto& [key, slot] : switches) lr.Bool(key, slot);
    lr.RejectUnknownKeys();
  }
  r.Int("min_headroom_bytes", &req->min_headroom_bytes, 0, int64_t{1} << 50);
  r.Int("max_plans", &req->max_plans, 0, 1000);
  static const io::EnumName<RankBy> kRankBy[] = {{"balanced", RankBy::kBalanced}, {"fidelity", RankBy::kFidelity}, {"cost", RankBy::kCost}};
  r.Enum("rank_by", &req->rank_by, kRankBy);
  r.RejectUnknownKeys();
  return errors->empty();
}

// Leaves of a JSON document as path -> value (arrays are leaves).
void Flatten(const Json& v, const std::string& path, std::vector<std::pair<std::string, const Json*>>* out) {
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) Flatten(it.value(), path.empty() ? it.key() : path + "." + it.key(), out);
    return;
  }
  out->emplace_back(path, &v);
}

// The user's scenario as leaves, flattened once per reply (every plan's changes are against it).
struct UserLeaves {
  Json doc;
  std::vector<std::pair<std::string, const Json*>> leaves;
  explicit UserLeaves(const Scenario& user) : doc(Json::parse(ScenarioToJson(user), nullptr, false)) { Flatten(doc, "", &leaves); }
};

// The fields the plan (its scenario as JSON) sets to another value than the user's scenario, as
// scenario paths.
void WriteChanges(JsonWriter& w, const UserLeaves& user, const std::string& plan_json) {
  const Json b = Json::parse(plan_json, nullptr, false);
  std::vector<std::pair<std::string, const Json*>> fb;
  Flatten(b, "", &fb);
  const auto& fa = user.leaves;
  w.BeginObject();
  for (const auto& leaf : fb) {
    const std::string& path = leaf.first;
    const auto it = std::find_if(fa.begin(), fa.end(), [&path](const auto& p) { return p.first == path; });
    if (it != fa.end() && *it->second == *leaf.second) continue;
    w.Key(path).Raw(io::Dump(*leaf.second));
  }
  w.EndObject();
}

void WriteSummary(JsonWriter& w, const Scenario& s, const Result& r) {
  w.BeginObject()
      .Field("gpu", s.gpu.id)
      .Field("gpus", s.parallel.gpus)
      .Field("peak_allocated_bytes", r.gpu.peak_allocated_bytes)
      .Field("reserved_bytes", r.gpu.reserved_bytes)
      .Field("device_total_bytes", r.gpu.device_total_bytes)
      .Field("capacity_bytes", r.gpu.capacity_bytes)
      .Field("headroom_bytes", r.gpu.headroom_bytes)
      .Field("fits", r.gpu.fits)
      .Field("host_bytes", r.cpu.bytes);
  if (s.mode == Mode::kInference) w.Field("kv_token_capacity", r.inference.kv_token_capacity).Field("max_concurrency", r.inference.max_concurrency);
  w.EndObject();
}

std::string TermWords(const std::string& key) {
  std::string out = key;
  std::replace(out.begin(), out.end(), '_', ' ');
  return out;
}

std::string Join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

// "<levers>: <the two largest savings> (<device total> of <capacity>)".
std::string Why(const Plan& p, const Result& user) {
  std::vector<std::pair<int64_t, std::string>> drops;
  for (const Term& t : p.result.gpu.breakdown) {
    int64_t before = 0;
    for (const Term& u : user.gpu.breakdown) {
      if (u.key == t.key) before = u.bytes;
    }
    if (t.bytes < before) drops.emplace_back(before - t.bytes, t.key);
  }
  std::sort(drops.begin(), drops.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> saved;
  for (size_t i = 0; i < drops.size() && i < 2; ++i) {
    if (drops[i].first >= (int64_t{1} << 27)) saved.push_back(TermWords(drops[i].second) + " -" + Gib(drops[i].first));
  }
  std::string out = Join(p.levers, " + ");
  if (!saved.empty()) out += ": " + Join(saved, ", ");
  out += " (" + Gib(p.result.gpu.device_total_bytes) + " of " + Gib(p.result.gpu.capacity_bytes) + " per GPU)";
  return out;
}

void WriteStepTime(JsonWriter& w, const StepTime& t) {
  w.BeginObject()
      .Field("total_s", t.total_s)
      .Field("compute_s", t.compute_s)
      .Field("recompute_s", t.recompute_s)
      .Field("pipeline_bubble_s", t.pipeline_bubble_s)
      .Field("launch_s", t.launch_s)
      .Field("dequant_s", t.dequant_s)
      .Field("optimizer_s", t.optimizer_s)
      .Field("communication_s", t.communication_s)
      .Field("offload_s", t.offload_s)
      .Field("rollout_s", t.rollout_s)
      .Field("gpus", t.gpus)
      .EndObject();
}

double Round(double v, double per_unit) { return std::round(v * per_unit) / per_unit; }

int64_t Capacity(const GpuEntry& g) { return g.usable_memory_bytes > 0 ? g.usable_memory_bytes : g.memory_bytes; }

// The smallest GPUs of the catalogue on which the unchanged scenario fits (at most 5), tried in
// increasing memory from the first one large enough for the device total the user's GPU needs
// (the per-GPU overheads differ a little between GPUs, so each is estimated; at most 12 tried).
// Each is probed from the search's preparation with the GPU's own traits (what a preparation
// holds besides them depends on the model only), without explain strings or inverse answers.
std::vector<std::pair<const GpuEntry*, Result>> OtherGpus(const Scenario& user, const PlanSearch& ps) {
  const Result& user_result = ps.base_result;
  std::vector<const GpuEntry*> candidates;
  for (const GpuEntry& g : Gpus()) {
    if (Capacity(g) <= user_result.gpu.capacity_bytes || g.id == user.gpu.id) continue;
    if (g.segment == "unified" && user.framework.device == Device::kCuda) continue;
    if (Capacity(g) < user_result.gpu.device_total_bytes * 95 / 100) continue;
    candidates.push_back(&g);
  }
  std::stable_sort(candidates.begin(), candidates.end(), [](const GpuEntry* a, const GpuEntry* b) { return Capacity(*a) < Capacity(*b); });
  std::vector<std::pair<const GpuEntry*, Result>> out;
  Prepared prepared = *ps.prepared;
  SimulateOptions o;
  o.warnings = false;
  for (size_t i = 0; i < candidates.size() && i < 12 && out.size() < 5; ++i) {
    const GpuEntry& g = *candidates[i];
    Scenario v = ps.base;  // the user's scenario with the budget's GPU resolved: its model included
    v.gpu.id = g.id;
    v.gpu.name = g.name;
    v.gpu.memory_bytes = Capacity(g);
    prepared.gpu_id = g.id;
    prepared.device = DeviceTraitsFor(g.id);
    std::optional<Result> r = Probe(v, prepared, o);
    if (r && r->errors.empty() && r->gpu.fits) out.emplace_back(&g, std::move(*r));
  }
  return out;
}

struct Reply {
  PlanRequest request;
  PlanSearch search;
};

// "How many GPUs of this kind": as configured (data parallel), with ZeRO-3, and the fewest over the
// parallel layouts with the cheapest layout at that count (planner/fewest_gpus.h).
void WriteFewestGpus(JsonWriter& w, const UserLeaves& user, const PlanSearch& ps) {
  const FewestGpus f = FindFewestGpus(ps.base, ps.base_result.gpu.device_total_bytes, *ps.prepared, ps.rates, ps.base_time.GpuSecondsPerToken());
  w.BeginObject().Field("gpus", f.gpus);
  if (ps.base.mode != Mode::kTrain) {
    w.EndObject();
    return;
  }
  w.Field("gpus_with_zero3", f.gpus_with_zero3);
  w.Key("layout");
  if (!f.layout) {
    w.Raw("null");
  } else {
    const GpuLayout& l = *f.layout;
    const ParallelConfig& p = l.scenario.parallel;
    w.BeginObject()
        .Field("gpus", p.gpus)
        .Field("tp", std::max<int64_t>(1, p.tp))
        .Field("pp", std::max<int64_t>(1, p.pp))
        .Field("dp", DataParallelDegree(p))
        .Field("zero", static_cast<int64_t>(p.zero))
        .Field("fsdp", p.fsdp)
        .Field("label", l.label)
        .Field("cost", Round(l.cost, 1e4));
    const std::string scenario = ScenarioToJson(l.scenario);
    w.Key("changes");
    WriteChanges(w, user, scenario);
    w.Key("estimate");
    WriteSummary(w, l.scenario, l.result);
    w.Key("step_time");
    WriteStepTime(w, l.time);
    w.Key("scenario").Raw(scenario);
    w.EndObject();
  }
  w.Field("layouts_tried", f.layouts);
  w.EndObject();
}

std::string WriteReply(const Reply& reply) {
  const PlanRequest& req = reply.request;
  const PlanSearch& ps = reply.search;
  JsonWriter w;
  w.BeginObject().Field("ok", true).Field("schema", kSchemaVersion).Field("fits_as_is", ps.base_fits);
  w.Key("estimate");
  WriteSummary(w, ps.base, ps.base_result);
  w.Key("step_time");
  WriteStepTime(w, ps.base_time);
  const UserLeaves user(req.scenario);
  w.Key("plans").BeginArray();
  for (const Plan& p : ps.plans) {
    const std::string scenario = ScenarioToJson(p.scenario);
    w.BeginObject();
    w.Key("changes");
    WriteChanges(w, user, scenario);
    w.Key("levers").StringList(p.levers);
    w.Field("why", Why(p, ps.base_result));
    w.Field("cost", Round(p.cost, 1e4)).Field("fidelity", p.fidelity);
    w.Key("gave_up").StringList(p.gave_up);
    w.Key("estimate");
    WriteSummary(w, p.scenario, p.result);
    w.Key("step_time");
    WriteStepTime(w, p.time);
    w.Key("scenario").Raw(scenario);
    w.EndObject();
  }
  w.EndArray();
  w.Key("fewest_gpus");
  if (!ps.base_fits) {
    WriteFewestGpus(w, user, ps);
  } else {
    w.Raw("null");
  }
  w.Key("other_gpus").BeginArray();
  if (!ps.base_fits) {
    for (const auto& [g, r] : OtherGpus(req.scenario, ps)) {
      w.BeginObject().Field("gpu", g->id).Field("name", g->name).Field("capacity_bytes", r.gpu.capacity_bytes).Field("headroom_bytes", r.gpu.headroom_bytes).EndObject();
    }
  }
  w.EndArray();
  w.Key("search").BeginObject().Field("combinations", ps.combinations).Field("estimates", ps.estimates).EndObject();
  w.Key("notes").StringList(ps.notes);
  w.EndObject();
  return w.Take();
}

}  // namespace

std::string PlanJson(std::string_view request_json) {
  Reply reply;
  Issues errors;
  if (!ReadRequest(request_json, &reply.request, &errors)) return ErrorsToJson(errors);
  reply.search = SearchPlans(reply.request);
  if (!reply.search.errors.empty()) return ErrorsToJson(reply.search.errors);
  return WriteReply(reply);
}

CheckOutcome CheckScenario(std::string_view request_json) {
  CheckOutcome out;
  PlanRequest req;
  Issues errors;
  if (!ReadRequest(request_json, &req, &errors)) {
    for (const Issue& e : errors) out.report += "error: " + (e.field_path.empty() ? std::string() : e.field_path + ": ") + e.message + "\n";
    return out;
  }
  req.max_plans = req.max_plans > 0 ? req.max_plans : 3;
  const PlanSearch ps = SearchPlans(req);
  if (!ps.errors.empty()) {
    for (const Issue& e : ps.errors) out.report += "error: " + e.message + "\n";
    return out;
  }
  const Result& r = ps.base_result;
  const std::string where = std::to_string(ps.base.parallel.gpus) + "x " + ps.base.gpu.name;
  if (ps.base_fits) {
    out.exit_code = 0;
    out.report = "fits on " + where + ": " + Gib(r.gpu.device_total_bytes) + " of " + Gib(r.gpu.capacity_bytes) + " per GPU, " +
                 Gib(r.gpu.headroom_bytes) + " headroom\n";
    return out;
  }
  out.exit_code = 1;
  out.report = "does not fit on " + where + ": " + Gib(r.gpu.device_total_bytes) + " of " + Gib(r.gpu.capacity_bytes) + " per GPU, " +
               Gib(-r.gpu.headroom_bytes) + " short\n";
  if (ps.plans.empty()) {
    out.report += "no plan within the budget fits; see `vramplan plan` with a larger budget (more GPUs, another GPU)\n";
  } else {
    out.report += "plans that fit (vramplan plan FILE for the whole list and the scenarios):\n";
    int i = 0;
    for (const Plan& p : ps.plans) {
      char cost[32];
      std::snprintf(cost, sizeof cost, "%.2f", p.cost);
      out.report += "  " + std::to_string(++i) + ". " + Why(p, ps.base_result) + "; cost x" + cost + ", fidelity " + std::to_string(p.fidelity) + "\n";
    }
  }
  return out;
}

}  // namespace vramplan
