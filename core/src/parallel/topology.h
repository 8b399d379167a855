// The parallel layout of a job, validated once: how many GPUs it occupies, how they are grouped
// (tensor x pipeline x context parallel inside a model replica, data parallel across replicas,
// expert parallel across the experts), how many share a host, and the distinct rank roles the
// estimate has to compute.
//
// One meaning of parallel.gpus: the number of GPUs the job occupies, one rank per GPU. Every figure
// under `gpu` and `ranks[]` is for one GPU; `cpu` is for one rank's process, and cpu.node_bytes for
// the fullest host. How the GPUs are grouped:
//   gpus = dp x tp x pp x cp                       (Megatron-LM initialize_model_parallel:
//                                                   data_parallel_size = world_size / (tp x pp x cp))
//   training: dp data-parallel replicas (DeepSpeed ZeRO / FSDP shard the model states over dp);
//   transformers generate() with tp = 1: one process, the model's layers split over all the GPUs
//            (accelerate device_map="auto"), no replicas; with tp > 1, tp ranks (torchrun,
//            tp_plan="auto") hold one model and more GPUs are replicas;
//   vLLM: tp workers hold one engine; more GPUs than tp are replicas that change nothing per GPU;
//   llama.cpp: the GPU holding the offloaded layers is modeled (its layer split over several GPUs
//            is not).
// More than one GPU adds the communicator buffers to each GPU's context (gpu/device_overhead.h).
//
// Rank roles: ranks that hold the same bytes form one role, estimated once and reported with its
// count. A training job with pipeline parallelism has one role per stage (first stage: embeddings,
// last stage: output layer and loss, each with its own micro-batches in flight); every other job
// has one role (tensor, context and expert-parallel ranks hold equal shares).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "units.h"
#include "vramplan/error.h"
#include "vramplan/model_spec.h"
#include "vramplan/scenario.h"

namespace vramplan {

// The nodes of the clusters the defaults describe hold 8 GPUs (NVIDIA DGX/HGX H100 and A100: 8
// GPUs per system); a job smaller than a node occupies one node.
inline constexpr int64_t kDefaultGpusPerNode = 8;

struct RankRole {
  std::string name = "all";  // "all" while every rank is alike; "stage 0", "stage 1", ... under pipeline parallelism
  int64_t count = 1;         // GPUs (ranks) in this role
  int64_t pipeline_stage = 0;  // the pipeline stage this role runs
};

struct Topology {
  int64_t gpus = 1;           // GPUs (ranks) of the job
  int64_t tp = 1, pp = 1, cp = 1, ep = 1;
  int64_t dp = 1;             // data-parallel replicas: gpus / (tp x pp x cp)
  int64_t layer_split = 1;    // transformers inference: GPUs the layers are split over (device_map="auto")
  int64_t gpus_per_node = 1;  // GPUs sharing one host (parallel.gpus_per_node, default min(gpus, 8))
  // Processes on the fullest host that each hold a rank's host memory: one per GPU under torchrun /
  // the DeepSpeed launcher / vLLM's workers / transformers' tensor parallelism; one for all GPUs
  // with transformers' device_map="auto" and in llama.cpp.
  int64_t host_processes_per_node = 1;
  // Whether a rank's process joins a NCCL communicator (and holds its buffers, outside PyTorch's
  // allocator: gpu/device_overhead.h). Every multi-GPU job does, except transformers'
  // device_map="auto", which is one process moving activations between GPUs with tensor copies.
  bool communicator = false;
  std::vector<RankRole> roles;  // distinct rank roles; their counts sum to gpus

  int64_t RanksPerNode() const { return std::min(gpus, gpus_per_node); }
  int64_t Nodes() const { return CeilDiv(gpus, gpus_per_node); }
};

// parallel.gpus_per_node as given, or its default min(gpus, 8).
int64_t GpusPerNode(const ParallelConfig& parallel);

// Data-parallel replicas of a training job: gpus / (tp x pp x cp), at least 1.
int64_t DataParallelDegree(const ParallelConfig& parallel);

// The degrees alone: gpus a multiple of tp x pp x cp, ZeRO or FSDP (not both). Errors name the
// field (parallel.gpus, parallel.fsdp). Ranges of each field are the scenario reader's.
void ValidateTopology(const ParallelConfig& parallel, Issues* errors);
// The training-only combinations (the trainer, pipeline, context and expert parallelism).
void ValidateTrainingTopology(const Scenario& scenario, Issues* errors);
// The degrees against the model: tp divides the attention heads, ep the experts, pp at most the layers.
void ValidateTopologyForModel(const ParallelConfig& parallel, const ModelSpec& model, Issues* errors);

// The topology of a scenario (validated or not: degrees below 1 count as 1).
Topology TopologyOf(const Scenario& scenario);

}  // namespace vramplan
