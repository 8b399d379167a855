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

std::vector<int64_t> VirtualStageLayerCounts(const ParallelConfig& p, int64_t num_layers) {
  const int64_t pp = std::max<int64_t>(1, p.pp);
  const int64_t vpp = pp > 1 ? std::max<int64_t>(1, p.vpp) : 1;
  const int64_t n = pp * vpp;
  if (static_cast<int64_t>(p.pp_layers.size()) == n) return p.pp_layers;
  if (vpp == 1 || p.pp_layers.empty()) {
    // An even split; a remainder (refused by the validator) goes to the first stages.
    std::vector<int64_t> counts(static_cast<size_t>(n), num_layers / n);
    for (int64_t i = 0; i < num_layers % n; ++i) ++counts[static_cast<size_t>(i)];
    return counts;
  }
  // pp_layers per rank with vpp > 1 (refused by the validator): each rank's layers spread over its chunks.
  std::vector<int64_t> counts(static_cast<size_t>(n), 0);
  for (int64_t r = 0; r < pp && r < static_cast<int64_t>(p.pp_layers.size()); ++r) {
    for (int64_t v = 0; v < vpp; ++v) counts[static_cast<size_t>(v * pp + r)] = p.pp_layers[static_cast<size_t>(r)] / vpp;
  }
  return counts;
}

std::vector<int64_t> StageLayerCounts(const ParallelConfig& p, int64_t num_layers) {
  const int64_t pp = std::max<int64_t>(1, p.pp);
  const std::vector<int64_t> virtual_counts = VirtualStageLayerCounts(p, num_layers);
  std::vector<int64_t> counts(static_cast<size_t>(pp), 0);
  for (size_t k = 0; k < virtual_counts.size(); ++k) counts[k % static_cast<size_t>(pp)] += virtual_counts[k];
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

std::vector<int64_t> ChunkInFlight(int64_t pp, int64_t vpp, int64_t chunk_forwards) {
  // Megatron's interleaved order (schedules.py get_model_chunk_id, microbatch_group_size_per_vp_stage
  // = pp): forward k runs chunk (k mod (pp x vpp)) / pp.
  std::vector<int64_t> counts(static_cast<size_t>(vpp), 0);
  const int64_t round = pp * vpp;
  for (int64_t v = 0; v < vpp; ++v) {
    const int64_t full = chunk_forwards / round, rest = chunk_forwards % round;
    counts[static_cast<size_t>(v)] = full * pp + std::clamp<int64_t>(rest - v * pp, 0, pp);
  }
  return counts;
}

std::vector<PipelineStage> PipelineStages(const ParallelConfig& p, int64_t num_layers, int64_t microbatches) {
  const int64_t pp = std::max<int64_t>(1, p.pp);
  const int64_t vpp = pp > 1 ? std::max<int64_t>(1, p.vpp) : 1;
  const std::vector<int64_t> virtual_counts = VirtualStageLayerCounts(p, num_layers);
  std::vector<int64_t> virtual_first(virtual_counts.size(), 0);
  for (size_t k = 1; k < virtual_counts.size(); ++k) virtual_first[k] = virtual_first[k - 1] + virtual_counts[k - 1];
  const PipelineSchedule schedule = ScheduleOf(p);
  std::vector<PipelineStage> stages;
  stages.reserve(static_cast<size_t>(pp));
  for (int64_t r = 0; r < pp; ++r) {
    PipelineStage s;
    s.index = r;
    s.first_layer = virtual_first[static_cast<size_t>(r)];
    s.embedding = r == 0;
    s.head = r == pp - 1;
    s.vpp = vpp;
    s.in_flight_chunks = pp > 1 ? InFlightChunks(schedule, pp, vpp, r, microbatches) : 1;
    // Chunk v of rank r is virtual stage v x pp + r.
    for (int64_t v = 0; v < vpp; ++v) {
      const size_t k = static_cast<size_t>(v * pp + r);
      s.num_layers += virtual_counts[k];
      if (vpp > 1) {
        s.chunk_layers.push_back(virtual_counts[k]);
        s.chunk_first_layer.push_back(virtual_first[k]);
      }
    }
    if (vpp > 1) {
      s.chunk_in_flight = schedule == PipelineSchedule::kInterleaved1F1B ? ChunkInFlight(pp, vpp, s.in_flight_chunks)
                                                                          : std::vector<int64_t>(static_cast<size_t>(vpp), s.in_flight_chunks / vpp);
    }
    stages.push_back(s);
  }
  return stages;
}

void ValidatePipeline(const ParallelConfig& p, int64_t num_layers, Issues* errors) {
  const int64_t pp = p.pp;
  const int64_t vpp = std::max<int64_t>(1, p.vpp);
  if (!p.pp_layers.empty()) {
    // With interleaving, Megatron's custom layouts (--decoder-first/last-pipeline-num-layers,
    // --account-for-embedding/loss-in-pipeline-split, --pipeline-model-parallel-layout) set each
    // virtual stage's layers: pp_layers lists the pp x vpp virtual stages.
    const int64_t expected = vpp > 1 ? pp * vpp : pp;
    if (static_cast<int64_t>(p.pp_layers.size()) != expected) {
      AddError(errors, "parallel.pp_layers",
               "parallel.pp_layers lists " + std::to_string(p.pp_layers.size()) + " stages; " +
                   (vpp > 1 ? "with parallel.vpp " + std::to_string(vpp) + " it lists the pp x vpp = " + std::to_string(expected) +
                                  " virtual stages (virtual stage v x pp + r is chunk v of pipeline rank r)"
                            : "parallel.pp is " + std::to_string(pp)));
      return;
    }
    const int64_t sum = std::accumulate(p.pp_layers.begin(), p.pp_layers.end(), int64_t{0});
    if (sum != num_layers) {
      AddError(errors, "parallel.pp_layers",
               "parallel.pp_layers adds up to " + std::to_string(sum) + " layers; the model has " + std::to_string(num_layers));
      return;
    }
    if (vpp > 1 && pp < 2) AddError(errors, "parallel.vpp", "parallel.vpp > 1 (virtual pipeline stages) needs parallel.pp > 1");
  } else if (pp > 1 && num_layers % pp != 0) {
    AddError(errors, "parallel.pp",
             "parallel.pp (" + std::to_string(pp) + ") must divide the layers (" + std::to_string(num_layers) +
                 "), or give the split in parallel.pp_layers");
    return;
  } else if (p.vpp > 1) {
    if (pp < 2) {
      AddError(errors, "parallel.vpp", "parallel.vpp > 1 (virtual pipeline stages) needs parallel.pp > 1");
    } else if (num_layers % (pp * p.vpp) != 0) {
      AddError(errors, "parallel.vpp",
               "parallel.pp x parallel.vpp (" + std::to_string(pp * p.vpp) + ") must divide the layers (" + std::to_string(num_layers) +
                   "), or give each virtual stage's layers in parallel.pp_layers");
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
