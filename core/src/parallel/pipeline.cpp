#include "parallel/pipeline.h"

#include <algorithm>
#include <numeric>
#include <string>

namespace vramplan {
namespace {

void AddError(Issues* errors, const std::string& field, std::string message) {
  errors->push_back(Issue{"invalid_value", field, std::move(message)});
}

}  // namespace

PipelineSchedule ScheduleOf(const ParallelConfig& p) {
  if (p.pp_schedule) return *p.pp_schedule;
  return p.vpp > 1 ? PipelineSchedule::kInterleaved1F1B : PipelineSchedule::k1F1B;
}

std::vector<int64_t> StageLayerCounts(const ParallelConfig& p, int64_t num_layers) {
  const int64_t pp = std::max<int64_t>(1, p.pp);
  if (static_cast<int64_t>(p.pp_layers.size()) == pp) return p.pp_layers;
  // An even split; a remainder (refused by the validator) goes to the first stages.
  std::vector<int64_t> counts(static_cast<size_t>(pp), num_layers / pp);
  for (int64_t i = 0; i < num_layers % pp; ++i) ++counts[static_cast<size_t>(i)];
  return counts;
}

int64_t InFlightChunks(PipelineSchedule schedule, int64_t pp, int64_t vpp, int64_t rank, int64_t microbatches) {
  const int64_t m = std::max<int64_t>(1, microbatches);
  switch (schedule) {
    case PipelineSchedule::kGpipe: return m * std::max<int64_t>(1, vpp);
    case PipelineSchedule::k1F1B: return std::min(pp - rank, m);
    case PipelineSchedule::kInterleaved1F1B: {
      const int64_t total = m * vpp;
      const int64_t warmup = std::min((pp - rank - 1) * 2 + (vpp - 1) * pp, total);
      return std::min(warmup + 1, total);
    }
  }
  return 1;
}

std::vector<PipelineStage> PipelineStages(const ParallelConfig& p, int64_t num_layers, int64_t microbatches) {
  const int64_t pp = std::max<int64_t>(1, p.pp);
  const int64_t vpp = pp > 1 ? std::max<int64_t>(1, p.vpp) : 1;
  const std::vector<int64_t> counts = StageLayerCounts(p, num_layers);
  const PipelineSchedule schedule = ScheduleOf(p);
  std::vector<PipelineStage> stages;
  stages.reserve(static_cast<size_t>(pp));
  int64_t first = 0;
  for (int64_t r = 0; r < pp; ++r) {
    PipelineStage s;
    s.index = r;
    s.num_layers = counts[static_cast<size_t>(r)];
    // Interleaved: chunk c of rank r holds layers [(c * pp + r) * Lc, +Lc), Lc = L / (pp * vpp).
    s.first_layer = vpp > 1 ? r * (num_layers / (pp * vpp)) : first;
    first += s.num_layers;
    s.embedding = r == 0;
    s.head = r == pp - 1;
    s.vpp = vpp;
    s.in_flight_chunks = pp > 1 ? InFlightChunks(schedule, pp, vpp, r, microbatches) : 1;
    stages.push_back(s);
  }
  return stages;
}

void ValidatePipeline(const ParallelConfig& p, int64_t num_layers, Issues* errors) {
  const int64_t pp = p.pp;
  if (!p.pp_layers.empty()) {
    if (static_cast<int64_t>(p.pp_layers.size()) != pp) {
      AddError(errors, "parallel.pp_layers",
               "parallel.pp_layers lists " + std::to_string(p.pp_layers.size()) + " stages; parallel.pp is " + std::to_string(pp));
      return;
    }
    const int64_t sum = std::accumulate(p.pp_layers.begin(), p.pp_layers.end(), int64_t{0});
    if (sum != num_layers) {
      AddError(errors, "parallel.pp_layers",
               "parallel.pp_layers adds up to " + std::to_string(sum) + " layers; the model has " + std::to_string(num_layers));
      return;
    }
    if (p.vpp > 1) AddError(errors, "parallel.vpp", "parallel.vpp > 1 needs an even split: leave parallel.pp_layers out");
  } else if (pp > 1 && num_layers % pp != 0) {
    AddError(errors, "parallel.pp",
             "parallel.pp (" + std::to_string(pp) + ") must divide the layers (" + std::to_string(num_layers) +
                 "), or give the split in parallel.pp_layers");
    return;
  }
  if (p.vpp > 1) {
    if (pp < 2) {
      AddError(errors, "parallel.vpp", "parallel.vpp > 1 (virtual pipeline stages) needs parallel.pp > 1");
    } else if (num_layers % (pp * p.vpp) != 0) {
      AddError(errors, "parallel.vpp",
               "parallel.pp x parallel.vpp (" + std::to_string(pp * p.vpp) + ") must divide the layers (" + std::to_string(num_layers) + ")");
    }
  }
  const PipelineSchedule schedule = ScheduleOf(p);
  if (schedule == PipelineSchedule::kInterleaved1F1B && p.vpp < 2) {
    AddError(errors, "parallel.pp_schedule", "parallel.pp_schedule \"interleaved_1f1b\" needs parallel.vpp > 1 model chunks per rank");
  }
  if (schedule == PipelineSchedule::k1F1B && p.vpp > 1) {
    AddError(errors, "parallel.pp_schedule", "parallel.vpp > 1 runs the interleaved schedule: use parallel.pp_schedule \"interleaved_1f1b\" (or leave it out)");
  }
}

}  // namespace vramplan
