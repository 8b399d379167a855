// The planner's search. Outer lever combinations are priced first (the step-time model needs no
// estimate), then walked in increasing order of their cheapest possible cost; a combination is
// estimated only while it could still add a point to the front (its fidelity beats every plan
// found at a lower cost). Inside a combination, checkpointing x the batch-like chain is searched
// by bisection (memory grows and cost falls along the chain). Two prunings are exact under the
// memory orders levers.h declares (property-tested): a combination whose every lever needs at
// least the memory of one that already failed at its smallest setting fails too, and so does a
// point (checkpointing level, chain value) where such a combination failed; before a point is
// estimated, the least combination below it in those orders is estimated there first (SmallerFails).
#include "planner/plan_search.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <queue>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "diagnostics/warning_codes.h"
#include "inference/engines.h"
#include "io/scenario_json.h"
#include "model/catalog.h"
#include "parallel/topology.h"
#include "planner/prepared.h"
#include "planner/simulate.h"

namespace vramplan {
namespace {

constexpr double kCostEpsilon = 1e-9;

double QuantizedCost(double cost) { return std::round(cost * 200.0) / 200.0; }

struct Combo {
  std::vector<uint8_t> pick;  // option index per dim
  double cost_floor = 0;      // cost at the cheapest inner point
  int fidelity = 100;
  int changes = 0;
};

// Warnings that make a variant unusable as a plan when the user's own scenario does not have
// them: the engine would not start, would queue requests, substitutes or ignores a setting.
bool Disqualifying(const std::string& code) {
  for (WarningCode c : {WarningCode::kWouldNotStart, WarningCode::kWouldQueue, WarningCode::kSubstituted, WarningCode::kNoEffect,
                        WarningCode::kUnsupportedCombination}) {
    if (code == WarningCodeName(c)) return true;
  }
  return false;
}

class Searcher {
 public:
  explicit Searcher(const PlanRequest& request) : request_(request) {}

  bool Setup(PlanSearch* out) {
    base_ = request_.scenario;
    if (!request_.budget.gpu_id.empty() && request_.budget.gpu_id != base_.gpu.id) {
      const GpuEntry* g = FindGpu(request_.budget.gpu_id);
      if (g == nullptr) {
        out->errors.push_back(Issue{"unknown_value", "budget.gpu", "budget.gpu must be a GPU id of the catalogue (the gpus op lists them)"});
        return false;
      }
      base_.gpu.id = g->id;
      base_.gpu.name = g->name;
      base_.gpu.memory_bytes = g->usable_memory_bytes > 0 ? g->usable_memory_bytes : g->memory_bytes;
    }
    gpu_ = FindGpu(base_.gpu.id);
    rates_ = RatesFor(gpu_);
    prepared_ = PrepareModel(base_);
    kind_counts_ = KindCounts(base_.model);
    const bool train = base_.mode == Mode::kTrain;
    space_ = train ? TrainingLevers(base_, request_.levers, request_.budget, gpu_)
                   : ServingLevers(base_, request_.levers, request_.budget, gpu_);
    std::optional<Result> r = Evaluate(base_);
    if (!r) {
      out->errors.push_back(Issue{"too_large", "scenario", "the scenario itself cannot be estimated (its byte counts are too large)"});
      return false;
    }
    for (const Issue& w : r->warnings) base_warnings_.emplace_back(w.code, w.field_path);
    base_result_ = *r;
    base_time_ = TimeOf(base_, &base_result_);
    base_fits_ = Fits(base_, base_result_);
    return true;
  }

  // The variant of a combination, without its model (light_ has none: copies stay cheap).
  bool Light(const std::vector<uint8_t>& pick, Scenario* out) const {
    *out = light_;
    for (size_t d = 0; d < pick.size(); ++d) {
      if (!space_.dims[d].options[pick[d]].Apply(out)) return false;
    }
    return CombinationRuns(base_, *out);
  }

  // All outer combinations, priced; those an option refuses are dropped.
  void Enumerate() {
    light_ = base_;
    light_.model = ModelSpec{};
    work_ = base_;
    levels_ = Levels();
    // Whether a checkpointing level sets nothing but the checkpointing mode (so that applying one
    // level over another leaves the variant as applying it alone would: Expand relies on it).
    levels_absolute_ = true;
    for (const LeverOption& o : space_.checkpointing) {
      for (const Assign& a : o.sets) levels_absolute_ = levels_absolute_ && a.knob == Knob::kCheckpointing;
    }
    const size_t n = space_.dims.size();
    ordered_.assign(n, false);
    for (size_t d = 0; d < n; ++d) {
      const LeverDim& dim = space_.dims[d];
      for (size_t a = 0; a < dim.options.size(); ++a) {
        for (size_t b = 0; b < dim.options.size(); ++b) ordered_[d] = ordered_[d] || (a != b && dim.no_more_memory[a][b]);
      }
    }
    std::vector<uint8_t> pick(n, 0);
    Scenario work;
    while (true) {
      Combo c;
      c.pick = pick;
      for (size_t d = 0; d < n; ++d) {
        const LeverOption& o = space_.dims[d].options[pick[d]];
        c.fidelity -= o.fidelity_loss;
        c.changes += pick[d] != 0 ? 1 : 0;
      }
      if (Light(pick, &work)) {
        c.cost_floor = FloorOf(&work);
        combos_.push_back(std::move(c));
      }
      size_t d = 0;
      while (d < n && ++pick[d] == space_.dims[d].options.size()) pick[d++] = 0;
      if (d == n) break;
    }
    std::stable_sort(combos_.begin(), combos_.end(), [](const Combo& a, const Combo& b) {
      if (a.cost_floor != b.cost_floor) return a.cost_floor < b.cost_floor;
      if (a.fidelity != b.fidelity) return a.fidelity > b.fidelity;
      return a.changes < b.changes;
    });
    for (size_t i = 0; i < combos_.size(); ++i) combo_index_.emplace(PickCode(combos_[i].pick), i);
    spec_ = base_;
  }

  // The cheapest cost a combination can reach: its largest chain value, at the cheapest
  // checkpointing level (no checkpointing, unless offloaded activations make the smaller
  // checkpointed transfer cheaper).
  // `variant` is a scratch copy: it is changed.
  double FloorOf(Scenario* variant) {
    auto at = [this](const LeverOption* level, Scenario* w) {
      if (level != nullptr) level->Apply(w);
      const InnerChain& chain = ChainOf(*w);
      if (!chain.values.empty()) chain.Apply(w, chain.values.back());
      return CostOf(*w, nullptr);
    };
    // Without offloaded activations no checkpointing is the cheapest level.
    if (!variant->train.activation_offload) return at(levels_.front(), variant);
    double floor = std::numeric_limits<double>::infinity();
    for (const LeverOption* level : levels_) {
      floor_scratch_ = *variant;
      floor = std::min(floor, at(level, &floor_scratch_));
    }
    return floor;
  }

  // The front over (cost, fidelity).
  std::vector<Plan> Walk() {
    auto later = [](const Plan& a, const Plan& b) {
      if (a.cost != b.cost) return a.cost > b.cost;
      if (a.fidelity != b.fidelity) return a.fidelity < b.fidelity;
      return a.levers.size() > b.levers.size();
    };
    std::priority_queue<Plan, std::vector<Plan>, decltype(later)> pending(later);
    std::vector<Plan> front;
    int best = -1;
    // Plans cheaper than every combination still to come are final (at an equal cost a later
    // combination may still bring a higher fidelity).
    auto commit = [&](double below) {
      while (!pending.empty() && pending.top().cost < below - kCostEpsilon) {
        if (pending.top().fidelity > best) {
          best = pending.top().fidelity;
          front.push_back(pending.top());
        }
        pending.pop();
      }
    };
    for (const Combo& c : combos_) {
      commit(c.cost_floor);
      if (c.fidelity <= best) continue;
      std::optional<Plan> p = Expand(c, Bound(c.fidelity));
      if (p) {
        found_.emplace_back(p->cost, p->fidelity);
        pending.push(std::move(*p));
      }
    }
    commit(std::numeric_limits<double>::infinity());
    return front;
  }

  // Every inner point of every combination (the oracle).
  std::vector<std::pair<double, int>> Exhaust() {
    std::vector<std::pair<double, int>> fits;
    for (const Combo& c : combos_) {
      Scenario v = Full(c);
      if (!ValidateCombination(v).empty()) continue;
      const std::vector<const LeverOption*> levels = Levels();
      for (const LeverOption* level : levels) {
        Scenario w = v;
        if (level != nullptr) level->Apply(&w);
        const InnerChain chain = InnerChainFor(space_, w, base_.model);
        for (int64_t value : chain.values) {
          Scenario x = w;
          chain.Apply(&x, value);
          std::optional<Result> r = Evaluate(x);
          if (r && Fits(x, *r)) fits.emplace_back(CostOf(x, &*r), c.fidelity);
        }
      }
    }
    std::sort(fits.begin(), fits.end(), [](const auto& a, const auto& b) { return a.first != b.first ? a.first < b.first : a.second > b.second; });
    std::vector<std::pair<double, int>> front;
    int best = -1;
    for (const auto& f : fits) {
      if (f.second > best) {
        best = f.second;
        front.push_back(f);
      }
    }
    return front;
  }

  void Fill(PlanSearch* out) {
    out->base = base_;
    out->base_result = base_result_;
    out->base_time = base_time_;
    out->base_fits = base_fits_;
    out->combinations = static_cast<int64_t>(combos_.size());
    out->estimates = estimates_;
    out->notes = space_.notes;
    if (gpu_ == nullptr) out->notes.push_back("a custom GPU: the cost model uses H100-class rates");
    out->rates = rates_;
    out->prepared = std::make_shared<const Prepared>(std::move(prepared_));  // the search is over
  }

  int64_t estimates() const { return estimates_; }

 private:
  std::optional<Result> Evaluate(const Scenario& s) {
    ++estimates_;
    SimulateOptions o;
    o.warnings = true;
    o.ranks = request_.budget.host_ram_bytes_per_node > 0;
    return Probe(s, prepared_, o);
  }

  bool Fits(const Scenario& s, const Result& r) const { return MemoryFits(s, r) && Usable(r); }

  // The memory verdict: the part the memory orders speak about.
  bool MemoryFits(const Scenario& s, const Result& r) const {
    if (!r.errors.empty()) return false;
    if (s.mode == Mode::kInference ? !InferenceFits(s, r) : !r.gpu.fits) return false;
    if (r.gpu.headroom_bytes < request_.min_headroom_bytes) return false;
    const int64_t host = request_.budget.host_ram_bytes_per_node;
    return host <= 0 || r.cpu.node_bytes <= host;
  }

  // No setting the engine would refuse, ignore or replace (beyond what the user's scenario has).
  bool Usable(const Result& r) const {
    for (const Issue& w : r.warnings) {
      if (!Disqualifying(w.code)) continue;
      if (std::find(base_warnings_.begin(), base_warnings_.end(), std::make_pair(w.code, w.field_path)) == base_warnings_.end()) return false;
    }
    return true;
  }

  // The step time; for serving, the estimate's weights and KV bytes when known (`r`), else the
  // preparation's weight bytes and no KV (a lower bound).
  StepTime TimeOf(const Scenario& s, const Result* r) const {
    if (s.mode == Mode::kTrain) return TrainingStepTime(s, base_.model, prepared_.params, rates_, &kind_counts_);
    // The weights one GPU reads per token when every layer is on it (ServingTime moves the share
    // of the layers llama.cpp leaves on the CPU to host memory itself).
    const int64_t weights = prepared_.WeightBytesFor(base_.model, s.inference.weights, std::max<int64_t>(1, s.parallel.tp),
                                                     PackedLoaderFor(s.inference.engine)).total_bytes /
                            (s.inference.engine == Engine::kVllm ? 1 : std::max<int64_t>(1, s.parallel.gpus));
    const int64_t kv_per_token = r != nullptr ? r->inference.kv_bytes_per_token : 0;
    return ServingTime(s, base_.model, prepared_.params, weights, kv_per_token, base_.inference.batch_size, rates_);
  }

  // Relative cost in steps of 0.5%: the step-time model is no finer than that, and finer
  // differences (an 8-bit optimizer step a few milliseconds faster) would make fronts of noise.
  double CostOf(const Scenario& s, const Result* r) const { return CostOf(TimeOf(s, r)); }
  double CostOf(const StepTime& t) const {
    const double base = base_time_.GpuSecondsPerToken();
    return base > 0 ? QuantizedCost(t.GpuSecondsPerToken() / base) : 1.0;
  }

  Scenario Full(const Combo& c) const {
    Scenario v;
    Light(c.pick, &v);
    v.model = base_.model;
    return v;
  }

  // The checkpointing levels, cheapest first; {nullptr}: the scenario's own.
  std::vector<const LeverOption*> Levels() const {
    std::vector<const LeverOption*> out;
    for (const LeverOption& o : space_.checkpointing) out.push_back(&o);
    if (out.empty()) out.push_back(nullptr);
    return out;
  }

  // InnerChainFor(space_, s, model), kept per value of what it reads from the variant (the
  // micro-batch chain: the data-parallel degree, optimizer-in-backward and GRPO's completions per
  // prompt; the serving chains: the
  // user's layers on the GPU or batch size): the search asked for it ~900 times per 8B search and
  // each time built its list of values anew. References stay valid (a deque).
  const InnerChain& ChainOf(const Scenario& s) {
    std::pair<int64_t, int64_t> key;
    switch (space_.inner) {
      // GRPO's completions per prompt scale the global batch (InnerChainFor): part of the key.
      case Knob::kMicroBatch:
        key = {DataParallelDegree(s.parallel), (s.train.optimizer_in_backward ? 1 : 0) + 2 * s.train.rollout.num_generations};
        break;
      case Knob::kGpuLayers: key = {s.inference.n_gpu_layers, 0}; break;
      default: key = {s.inference.batch_size, 0}; break;
    }
    for (const auto& [k, chain] : chains_) {
      if (k == key) return chain;
    }
    chains_.emplace_back(key, InnerChainFor(space_, s, base_.model));
    return chains_.back().second;
  }

  // The inner chain's value in words when it differs from the user's.
  std::string ChainLabel(const std::string& name, const Scenario& p) const {
    if (name == "micro_batch_size" && (p.train.micro_batch_size != base_.train.micro_batch_size || p.train.grad_accum_steps != base_.train.grad_accum_steps)) {
      return "micro-batch " + std::to_string(p.train.micro_batch_size) + " x " + std::to_string(p.train.grad_accum_steps) + " accumulation steps";
    }
    if (name == "n_gpu_layers" && p.inference.n_gpu_layers != base_.inference.n_gpu_layers) {
      return p.inference.n_gpu_layers < 0 ? "every layer on the GPU" : std::to_string(p.inference.n_gpu_layers) + " of " + std::to_string(base_.model.num_layers) + " layers on the GPU (the rest on the CPU)";
    }
    if (name == "batch_size" && p.inference.batch_size != base_.inference.batch_size) {
      return std::to_string(p.inference.batch_size) + " sequences at once (the rest queue)";
    }
    return "";
  }

  // Whether `failed` needs no more memory than `c` in every lever.
  bool AtMostAsLarge(const std::vector<uint8_t>& failed, const Combo& c) const {
    for (size_t d = 0; d < c.pick.size(); ++d) {
      if (!space_.dims[d].no_more_memory[c.pick[d]][failed[d]]) return false;
    }
    return true;
  }

  // Failures are kept by the options of the levers without a declared memory order: a failure
  // can only bound a combination with the same options there (each of those options bounds
  // itself only), so one bucket is compared instead of every failure.
  uint64_t UnorderedKey(const std::vector<uint8_t>& pick) const {
    uint64_t key = 0;
    for (size_t d = 0; d < pick.size(); ++d) {
      if (!ordered_[d]) key = key * space_.dims[d].options.size() + pick[d];
    }
    return key;
  }

  bool DominatedByFailure(const Combo& c, uint64_t key) const {
    const auto it = failed_.find(key);
    if (it == failed_.end()) return false;
    for (const std::vector<uint8_t>* failed : it->second) {
      if (AtMostAsLarge(*failed, c)) return true;
    }
    return false;
  }

  // A combination that needs no more memory failed at a checkpointing level that saves at least as
  // much and a chain value no larger (memory grows along the chain): this point fails too.
  // kBySmaller: only a failure SmallerFails found says so.
  enum class Failed { kNo, kYes, kBySmaller };
  Failed FailedBefore(const Combo& c, uint64_t key, size_t level, int64_t value) const {
    const auto it = inner_failures_.find(key);
    if (it == inner_failures_.end()) return Failed::kNo;
    bool by_smaller = false;
    for (const InnerFailure& f : it->second) {
      if (f.level >= level && f.value <= value && AtMostAsLarge(*f.pick, c)) {
        if (!f.smaller) return Failed::kYes;
        by_smaller = true;
      }
    }
    return by_smaller ? Failed::kBySmaller : Failed::kNo;
  }

  // Aims a working variant (work_ or spec_, each holding the user's model) at a combination: the
  // light variant's fields, the model kept in place (two moves of the model instead of a copy).
  void Aim(const Combo& c, Scenario* s) const {
    ModelSpec model = std::move(s->model);
    Light(c.pick, s);  // the combination ran in Enumerate (combos_ holds no other)
    s->model = std::move(model);
  }

  // A variant's estimate and verdicts (memory alone; memory and usable).
  struct Check {
    std::optional<Result> result;
    bool memory_fits = false;
    bool fits = false;
  };
  Check Estimate(const Scenario& s) {
    Check out;
    out.result = Evaluate(s);
    if (out.result) {
      out.memory_fits = MemoryFits(s, *out.result);
      out.fits = out.memory_fits && Usable(*out.result);
    }
    return out;
  }

  // Estimate(x), `x` being combination c at (level, value): SmallerFails' estimate of that very
  // point when it made one (the same variant: levels and chain values are set absolutely).
  Check EstimateAt(const Combo& c, size_t li, int64_t value, const Scenario& x) {
    if (!kept_.empty()) {
      const auto it = kept_.find(std::make_tuple(static_cast<size_t>(&c - combos_.data()), li, value));
      if (it != kept_.end()) {
        Check r = std::move(it->second);
        kept_.erase(it);
        ++smaller_balance_;  // not spent in vain after all
        return r;
      }
    }
    return Estimate(x);
  }

  // A pick as one number (mixed radix over the levers' option counts).
  uint64_t PickCode(const std::vector<uint8_t>& pick) const {
    uint64_t code = 0;
    for (size_t d = 0; d < pick.size(); ++d) code = code * space_.dims[d].options.size() + pick[d];
    return code;
  }

  // The combination that needs the least memory of those the declared orders put at or below `c`:
  // in each ordered lever, the option that every option at or below c's is at or above (c's own
  // when there is none); the unordered levers as c has them.
  std::vector<uint8_t> SmallestBelow(const Combo& c) const {
    std::vector<uint8_t> m = c.pick;
    for (size_t d = 0; d < m.size(); ++d) {
      if (!ordered_[d]) continue;
      const auto& order = space_.dims[d].no_more_memory;
      const size_t n = order.size();
      for (size_t b = 0; b < n; ++b) {
        if (!order[c.pick[d]][b]) continue;
        bool least = true;
        for (size_t o = 0; o < n && least; ++o) least = !order[c.pick[d]][o] || order[o][b];
        if (least) {
          m[d] = static_cast<uint8_t>(b);
          break;
        }
      }
    }
    return m;
  }

  // Exact pruning across a bucket (docs/planner.md, "Search"): before estimating combination `c`
  // at (level, chain value), the combination `m` below it that needs the least memory
  // (SmallestBelow: the same unordered options, in every ordered lever an option never needing
  // more memory than c's) is estimated at the same point, once per point. If m does not fit
  // there, neither does c (m needs no more memory in any lever: the declared orders), and m's
  // failure, kept in inner_failures_, bounds every combination above m at that point, the ones
  // the walk reaches later included. The walk visits combinations by cost, so the cheap ones (more
  // memory) come first and their failures bound nothing below them: one estimate of the bucket's
  // least combination replaces one failing estimate per combination above it (the 8B LoRA search:
  // ~300 combinations whose no-checkpointing point fails). A point m fits costs one estimate more:
  // where that happens more often than m's failures save estimates (full fine-tuning, whose least
  // combinations offload and fit), smaller_balance_ falls and the estimates stop (a heuristic of
  // cost only: every pruned point is a failure either way).
  // Only in training, where m runs, is valid and has c's chain (values compared as the same
  // micro-batch), and only on the GPU's verdict.
  bool SmallerFails(const Combo& c, uint64_t key, const InnerChain& chain, size_t li, int64_t value) {
    if (base_.mode != Mode::kTrain) return false;  // training's GPU verdict only (below)
    if (smaller_balance_ < -kSmallerSlack) return false;  // it has not paid lately
    // Only where some combination's estimate failed at a point that needs no more memory (a level
    // saving at least as much, a value no larger): a region that fails elsewhere, likely here too.
    bool failing_region = false;
    for (const auto& [level, v] : failed_points_) failing_region = failing_region || (level >= li && v <= value);
    if (!failing_region) return false;
    const std::vector<uint8_t> m_pick = SmallestBelow(c);
    if (m_pick == c.pick) return false;
    const auto found = combo_index_.find(PickCode(m_pick));
    if (found == combo_index_.end()) return false;  // an option refused it (it does not run)
    const size_t mi = found->second;
    const Combo& m = combos_[mi];
    if (!spoken_.emplace(mi, li, value).second) return false;  // asked before: its failure, if any, is in inner_failures_
    Aim(m, &spec_);
    if (!ValidateCombination(spec_).empty()) return false;
    if (&ChainOf(spec_) != &chain) return false;
    if (levels_[li] != nullptr) levels_[li]->Apply(&spec_);
    chain.Apply(&spec_, value);
    // The GPU's verdict alone: the orders speak of GPU memory (an offloading m can fail on host RAM
    // where c does not), and an m too large to estimate says nothing about c.
    Check r = Estimate(spec_);
    if (!r.result || !r.result->errors.empty() || (r.result->gpu.fits && r.result->gpu.headroom_bytes >= request_.min_headroom_bytes)) {
      // Spent for nothing, unless m's own expansion asks for this point (EstimateAt).
      --smaller_balance_;
      kept_.emplace(std::make_tuple(mi, li, value), std::move(r));
      return false;
    }
    inner_failures_[key].push_back(InnerFailure{&m.pick, li, value, true});
    return true;
  }

  // The lowest cost of a plan found so far with at least this fidelity: a plan that costs more
  // is dominated, so a combination need not look for one.
  double Bound(int fidelity) const {
    double bound = std::numeric_limits<double>::infinity();
    for (const auto& [cost, fid] : found_) {
      if (fid >= fidelity) bound = std::min(bound, cost);
    }
    return bound;
  }

  std::optional<Plan> Expand(const Combo& c, double bound) {
    // Every plan of this combination costs at least its floor: above the bound, a plan already
    // found with at least its fidelity is cheaper (nothing to estimate).
    if (c.cost_floor > bound + kCostEpsilon) return std::nullopt;
    const uint64_t key = UnorderedKey(c.pick);
    if (DominatedByFailure(c, key)) return std::nullopt;
    // One variant, aimed at this combination, then at each checkpointing level and chain value in
    // place: a level sets the checkpointing mode only (levels_absolute_) and a chain value every
    // field the chain moves, whatever they held, so the variant at (level, value) is the
    // combination's with that level and value applied, as if copied afresh (the copies were a
    // fifth of the 8B search's work).
    Scenario& x = work_;
    Aim(c, &x);
    if (!ValidateCombination(x).empty()) return std::nullopt;
    const std::vector<const LeverOption*>& levels = levels_;
    // The chain reads what no checkpointing level sets (ChainOf's key): one for every level.
    const InnerChain& chain = ChainOf(x);
    if (chain.values.empty()) return std::nullopt;
    // The smallest setting: the dearest checkpointing level, the first chain value (kept: the
    // bisection of the last level starts there). Estimated first when it could itself be a plan
    // (its cost is within the bound): a failure there bounds every point of this combination and,
    // through failed_, the combinations that need no less memory. When it costs more than the
    // bound it cannot be a plan, and only the cheaper points are estimated: each of them needs at
    // least its memory, so the first of them to fail says as much about this combination (one
    // estimate instead of two; the memory orders are those of the bisection below).
    Check smallest;
    bool smallest_known = false;
    if (levels.back() != nullptr) levels.back()->Apply(&x);
    chain.Apply(&x, chain.values.front());
    if (CostOf(x, nullptr) <= bound + kCostEpsilon) {
      smallest = EstimateAt(c, levels.size() - 1, chain.values.front(), x);
      smallest_known = true;
      if (!smallest.memory_fits) {
        failed_[key].push_back(&c.pick);
        return std::nullopt;
      }
      if (!smallest.fits) return std::nullopt;
    }
    std::optional<Plan> best;
    for (size_t li = 0; li < levels.size(); ++li) {
      if (!levels_absolute_) Aim(c, &x);
      if (levels[li] != nullptr) levels[li]->Apply(&x);
      // Chain values dearer than the bound (or than this combination's best so far) cannot make
      // a front point: costs fall along the chain, so only a suffix of it is searched.
      const double limit = std::min(bound, best ? best->cost : std::numeric_limits<double>::infinity());
      int64_t first = 0;
      const int64_t last = static_cast<int64_t>(chain.values.size()) - 1;
      while (first <= last) {
        chain.Apply(&x, chain.values[static_cast<size_t>(first)]);
        if (CostOf(x, nullptr) <= limit + kCostEpsilon) break;
        ++first;
      }
      if (first > last) continue;
      // Bisection for the largest chain value that fits.
      int64_t lo = first, hi = last;
      std::optional<Result> at_lo;
      auto fits_at = [&](int64_t i, std::optional<Result>* keep) {
        if (smallest_known && li + 1 == levels.size() && i == 0) {  // the smallest setting, already estimated (asked once)
          *keep = std::move(smallest.result);
          return true;
        }
        const int64_t value = chain.values[static_cast<size_t>(i)];
        const Failed failed = FailedBefore(c, key, li, value);
        if (failed == Failed::kYes) return false;
        if (failed == Failed::kBySmaller || SmallerFails(c, key, chain, li, value)) {
          // c fails here (the declared orders): kept as if estimated, and what SmallerFails
          // spent paid back by the estimate saved.
          if (failed == Failed::kBySmaller) ++smaller_balance_;
          inner_failures_[key].push_back(InnerFailure{&c.pick, li, value, false});
          return false;
        }
        chain.Apply(&x, value);
        Check r = EstimateAt(c, li, value, x);
        if (!r.memory_fits) {
          inner_failures_[key].push_back(InnerFailure{&c.pick, li, value, false});
          if (std::find(failed_points_.begin(), failed_points_.end(), std::make_pair(li, value)) == failed_points_.end()) failed_points_.emplace_back(li, value);
          return false;
        }
        if (!r.fits) return false;
        *keep = std::move(r.result);
        return true;
      };
      if (!fits_at(lo, &at_lo)) continue;
      while (lo < hi) {
        const int64_t mid = (lo + hi + 1) / 2;
        std::optional<Result> r;
        if (fits_at(mid, &r)) {
          lo = mid;
          at_lo = std::move(r);
        } else {
          hi = mid - 1;
        }
      }
      chain.Apply(&x, chain.values[static_cast<size_t>(lo)]);
      Plan p;
      p.scenario = x;  // with the user's model
      p.result = std::move(*at_lo);
      p.time = TimeOf(p.scenario, &p.result);
      p.cost = CostOf(p.time);
      p.fidelity = c.fidelity;
      for (size_t d = 0; d < c.pick.size(); ++d) {
        if (c.pick[d] == 0) continue;
        const LeverOption& o = space_.dims[d].options[c.pick[d]];
        p.levers.push_back(o.label);
        if (!o.fidelity_note.empty()) p.gave_up.push_back(o.fidelity_note);
      }
      if (levels[li] != nullptr && p.scenario.train.gradient_checkpointing != base_.train.gradient_checkpointing) p.levers.push_back(levels[li]->label);
      const std::string chain_label = ChainLabel(chain.name, p.scenario);
      if (!chain_label.empty()) p.levers.push_back(chain_label);
      if (!best || p.cost < best->cost - kCostEpsilon || (std::abs(p.cost - best->cost) <= kCostEpsilon && p.levers.size() < best->levers.size())) {
        best = std::move(p);
      }
    }
    return best;
  }

  const PlanRequest& request_;
  Scenario base_;
  Scenario light_;  // base_ without its model
  Scenario work_;   // the variant Expand aims (Aim), with the user's model
  std::vector<double> kind_counts_;  // KindCounts(base_.model), for the step times
  Scenario spec_;   // the smaller combination SmallerFails estimates, with the user's model
  std::unordered_map<uint64_t, size_t> combo_index_;     // PickCode -> index in combos_
  std::set<std::tuple<size_t, size_t, int64_t>> spoken_;  // (combination, level, value) SmallerFails estimated
  // Estimates SmallerFails saved less those it spent in vain; below -kSmallerSlack it waits.
  int64_t smaller_balance_ = 0;
  std::map<std::tuple<size_t, size_t, int64_t>, Check> kept_;  // SmallerFails' estimates that did not prune (EstimateAt)
  static constexpr int64_t kSmallerSlack = 0;
  std::vector<std::pair<size_t, int64_t>> failed_points_;  // (level, value) of the walk's own failed estimates
  bool levels_absolute_ = true;  // every checkpointing level sets the checkpointing mode only
  const GpuEntry* gpu_ = nullptr;
  HardwareRates rates_;
  Prepared prepared_;
  LeverSpace space_;
  Result base_result_;
  StepTime base_time_;
  bool base_fits_ = false;
  std::vector<std::pair<std::string, std::string>> base_warnings_;
  std::vector<Combo> combos_;
  std::vector<const LeverOption*> levels_;  // Levels()
  std::deque<std::pair<std::pair<int64_t, int64_t>, InnerChain>> chains_;  // ChainOf
  Scenario floor_scratch_;
  std::vector<bool> ordered_;  // per lever: whether any option is declared no larger than another
  std::unordered_map<uint64_t, std::vector<const std::vector<uint8_t>*>> failed_;
  struct InnerFailure {
    const std::vector<uint8_t>* pick;
    size_t level;
    int64_t value;
    bool smaller;  // found by SmallerFails (an estimate the walk did not ask for)
  };
  std::unordered_map<uint64_t, std::vector<InnerFailure>> inner_failures_;
  std::vector<std::pair<double, int>> found_;  // (cost, fidelity) of every plan an expansion returned
  int64_t estimates_ = 0;
};

void Rank(RankBy by, std::vector<Plan>* plans) {
  for (Plan& p : *plans) {
    switch (by) {
      // Each fidelity point weighs as a 10% slower step (docs/planner.md, "Ranking").
      case RankBy::kBalanced: p.score = p.cost * std::pow(1.1, 100 - p.fidelity); break;
      case RankBy::kFidelity: p.score = (100 - p.fidelity) * 1e6 + p.cost; break;
      case RankBy::kCost: p.score = p.cost; break;
    }
  }
  std::stable_sort(plans->begin(), plans->end(), [](const Plan& a, const Plan& b) { return a.score < b.score; });
}

}  // namespace

PlanSearch SearchPlans(const PlanRequest& request) {
  PlanSearch out;
  Searcher s(request);
  if (!s.Setup(&out)) return out;
  s.Enumerate();
  out.plans = s.Walk();
  s.Fill(&out);
  // The point that changes nothing is the user's own scenario (when it fits): it shapes the front
  // (nothing it dominates is a plan) but is not itself a plan.
  out.plans.erase(std::remove_if(out.plans.begin(), out.plans.end(), [](const Plan& p) { return p.levers.empty(); }), out.plans.end());
  Rank(request.rank_by, &out.plans);
  if (request.max_plans > 0 && static_cast<int64_t>(out.plans.size()) > request.max_plans) out.plans.resize(static_cast<size_t>(request.max_plans));
  return out;
}

std::vector<std::pair<double, int>> BruteForceFront(const PlanRequest& request, int64_t* estimates) {
  PlanSearch out;
  Searcher s(request);
  if (!s.Setup(&out)) return {};
  s.Enumerate();
  auto front = s.Exhaust();
  if (estimates != nullptr) *estimates = s.estimates();
  return front;
}

}  // namespace vramplan
