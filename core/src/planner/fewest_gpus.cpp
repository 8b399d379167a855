// The fewest GPUs and their cheapest layout. Each layout's smallest count is the estimate's own
// data-parallel search (train/train_capacity.h), bounded by the best count found so far (a layout
// that needs more GPUs than another cannot be the answer), so most layouts cost a probe or two.
#include "planner/fewest_gpus.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "inference/engines.h"
#include "io/scenario_json.h"
#include "parallel/topology.h"
#include "planner/simulate.h"
#include "train/train_capacity.h"
#include "util/size_limits.h"

namespace vramplan {
namespace {

struct Layout {
  int64_t tp = 1, pp = 1;
  int zero = 0;
  bool fsdp = false;
};

// The layouts the user's trainer runs, the user's own first (ties go to the fewest changes).
std::vector<Layout> Layouts(const Scenario& s) {
  const ParallelConfig& p = s.parallel;
  const Layout own{std::max<int64_t>(1, p.tp), std::max<int64_t>(1, p.pp), p.zero, p.fsdp};
  std::vector<Layout> out{own};
  auto add = [&out](Layout l) {
    for (const Layout& o : out) {
      if (o.tp == l.tp && o.pp == l.pp && o.zero == l.zero && o.fsdp == l.fsdp) return;
    }
    out.push_back(l);
  };
  if (s.framework.trainer == Trainer::kHf) {
    // transformers' Trainer shards with DeepSpeed (ZeRO-3 first: it shards the most) or FSDP.
    if (!p.fsdp) {
      for (int zero : {3, 2, 1, 0}) add(Layout{own.tp, own.pp, zero, false});
    }
    return out;
  }
  // Megatron / torchtitan: tensor parallel inside a node, pipeline stages up to 16; Megatron's
  // distributed optimizer (ZeRO-1) on or as configured.
  const int64_t node = GpusPerNode(p);
  std::vector<int> zeros{p.zero};
  if (s.framework.trainer == Trainer::kMegatron && p.zero == 0) zeros.push_back(1);
  for (int zero : zeros) {
    for (int64_t tp = 1; tp <= std::min<int64_t>(8, node); tp *= 2) {
      for (int64_t pp = 1; pp <= 16 && pp <= s.model.num_layers; pp *= 2) add(Layout{tp, pp, zero, p.fsdp});
    }
  }
  std::stable_sort(out.begin() + 1, out.end(), [](const Layout& a, const Layout& b) { return a.tp * a.pp < b.tp * b.pp; });
  return out;
}

void ApplyLayout(const Layout& l, Scenario* s) {
  ParallelConfig& p = s->parallel;
  if (p.tp != l.tp) {
    p.tp = l.tp;
    p.etp = 0;
    if (s->framework.trainer == Trainer::kMegatron) p.sequence_parallel = l.tp > 1;
  }
  if (p.pp != l.pp) {
    p.pp = l.pp;
    p.vpp = 1;
    p.pp_layers.clear();
    p.pp_schedule.reset();
  }
  p.zero = l.zero;
  p.fsdp = l.fsdp;
}

std::string LayoutLabel(const Scenario& s) {
  const ParallelConfig& p = s.parallel;
  std::string out = std::to_string(p.gpus) + (p.gpus == 1 ? " GPU" : " GPUs");
  if (p.fsdp) out += ", FSDP";
  else if (s.framework.trainer == Trainer::kMegatron && p.zero >= 1) out += ", distributed optimizer";
  else if (p.zero > 0) out += ", DeepSpeed ZeRO-" + std::to_string(p.zero);
  else if (s.framework.trainer == Trainer::kHf && p.gpus > 1) out += ", DDP";
  out += " (";
  if (p.tp > 1) out += "TP " + std::to_string(p.tp) + ", ";
  if (p.pp > 1) out += "PP " + std::to_string(p.pp) + ", ";
  out += "DP " + std::to_string(DataParallelDegree(p)) + ")";
  return out;
}

}  // namespace

FewestGpus FindFewestGpus(const Scenario& base, int64_t base_total, const Prepared& prepared, const HardwareRates& rates,
                          double base_gpu_seconds_per_token) {
  FewestGpus out;
  const int64_t capacity = base.gpu.memory_bytes;
  if (base.mode == Mode::kInference) {
    out.gpus = InferenceMinGpus(base, prepared);
    return out;
  }
  const std::vector<Layout> layouts = Layouts(base);
  std::vector<std::pair<Layout, int64_t>> counts;  // each layout's fewest GPUs (0: none within the bound)
  int64_t best = 0;
  for (size_t i = 0; i < layouts.size(); ++i) {
    const Layout& l = layouts[i];
    const int64_t mp = l.tp * l.pp * std::max<int64_t>(1, base.parallel.cp);
    // The user's layout and ZeRO-3 are searched whole (the estimate's two answers); the others
    // only up to the best count so far.
    const bool own = i == 0;
    const bool zero3_answer = !own && out.gpus == 0 && base.framework.trainer == Trainer::kHf && l.zero == 3 && base.parallel.zero < 3 && !base.parallel.fsdp;
    if (best > 0 && mp > best && !own && !zero3_answer) continue;
    Scenario work = base;
    ApplyLayout(l, &work);
    work.parallel.gpus = mp;
    if (!own && !ValidateCombination(work).empty()) continue;
    ++out.layouts;
    const int64_t bound = best > 0 && !zero3_answer ? best : kMaxGpus;
    const int64_t g = SmallestGpusFitting(std::move(work), prepared, capacity, own ? base.parallel.gpus : 0, own ? base_total : 0, bound);
    if (own) out.gpus = g;
    if (zero3_answer) out.gpus_with_zero3 = g;
    if (g > 0) {
      counts.emplace_back(l, g);
      best = best == 0 ? g : std::min(best, g);
    }
  }
  if (best == 0) return out;
  // The cheapest layout at the fewest count (the first, the user's own when it is among them, on a tie).
  for (const auto& [l, g] : counts) {
    if (g != best) continue;
    Scenario s = base;
    ApplyLayout(l, &s);
    s.parallel.gpus = g;
    if (!ValidateCombination(s).empty()) continue;
    const StepTime t = TrainingStepTime(s, base.model, prepared.params, rates);
    const double cost = base_gpu_seconds_per_token > 0 ? t.GpuSecondsPerToken() / base_gpu_seconds_per_token : 1.0;
    if (out.layout && cost >= out.layout->cost - 1e-9) continue;
    SimulateOptions o;
    o.warnings = true;
    std::optional<Result> r = Probe(s, prepared, o);
    if (!r || !r->gpu.fits) continue;
    GpuLayout gl;
    gl.label = LayoutLabel(s);
    gl.scenario = std::move(s);
    gl.result = std::move(*r);
    gl.time = t;
    gl.cost = cost;
    out.layout = std::move(gl);
  }
  return out;
}

}  // namespace vramplan
