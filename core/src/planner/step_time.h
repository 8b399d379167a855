// The planner's cost axis: how long a training step (or serving the requested batch) takes, from
// the work it does and the rates of the hardware it runs on. It exists to RANK plans against each
// other (a plan's cost is its GPU-seconds per token divided by the user's scenario's), not to
// predict throughput; docs/planner.md ("Cost model") gives every rate and factor with its source,
// and the page labels the figure an estimate.
#pragma once

#include <cstdint>
#include <vector>

#include "model/catalog.h"
#include "vramplan/model_spec.h"
#include "vramplan/scenario.h"

namespace vramplan {

// Rates of one GPU and its links, all in per-second units.
struct HardwareRates {
  double matmul_flops_per_s = 0;   // 16-bit tensor throughput achieved: dense peak x kMatmulEfficiency
  double fp32_flops_per_s = 0;     // fp32 (no TF32: PyTorch's default since 1.12)
  double hbm_bytes_per_s = 0;
  double host_link_bytes_per_s = 0;   // PCIe to the host, per GPU
  double intra_node_bytes_per_s = 0;  // GPU-to-GPU inside a node (NVLink, else PCIe)
  double inter_node_bytes_per_s = 0;  // GPU-to-GPU across nodes (one 400 Gb/s NIC per GPU)
  double host_memory_bytes_per_s = 0; // one process's share of host DRAM bandwidth (CPU Adam, CPU layers)
  double nvme_bytes_per_s = 0;
};

// `gpu` nullptr (a custom GPU): an H100-class default, said in the plan's notes.
HardwareRates RatesFor(const GpuEntry* gpu);

// Seconds of one step (training: one optimizer step over the global batch; serving: the requested
// batch of requests, prompt and generation) on one GPU of the job, by cause.
struct StepTime {
  double compute_s = 0;        // forward + backward matmuls and attention
  double recompute_s = 0;      // activation checkpointing's second forward
  double pipeline_bubble_s = 0;
  double launch_s = 0;         // per micro-batch kernel-launch floor
  double dequant_s = 0;        // quantized base weights expanded for every matmul (QLoRA)
  double optimizer_s = 0;      // the optimizer step on the GPU
  double communication_s = 0;  // what compute does not hide (data, tensor, expert parallel)
  double offload_s = 0;        // PCIe / host / NVMe traffic of offloaded states and layers
  double rollout_s = 0;        // online RL: generation, the no-grad log-prob passes, weight sync, sleep (rollout_time.h)
  double total_s = 0;
  double tokens = 0;           // tokens the whole job processes in the step (serving: generated)
  int64_t gpus = 1;
  double GpuSecondsPerToken() const { return tokens > 0 ? total_s * static_cast<double>(gpus) / tokens : 0; }
};

// Layers of each kind (most models have one to three kinds: per kind instead of per layer, the
// planner prices every lever combination with this).
std::vector<double> KindCounts(const ModelSpec& model);

// `model` is passed apart from the scenario so the search can price variants that do not carry a
// copy of the model (s.model is not read). `kind_counts`: KindCounts(model) when the caller keeps
// it (the plan search prices ~2,000 variants of one model), else counted here.
StepTime TrainingStepTime(const Scenario& s, const ModelSpec& model, const ParamCounts& params, const HardwareRates& rates,
                          const std::vector<double>* kind_counts = nullptr);

// `weight_bytes`: the weights one GPU holds; `kv_bytes_per_token`: one token's K/V over all layers
// (the estimate's); `requests`: the user's batch, served s.inference.batch_size at a time (the rest
// wait their turn).
StepTime ServingTime(const Scenario& s, const ModelSpec& model, const ParamCounts& params, int64_t weight_bytes,
                     int64_t kv_bytes_per_token, int64_t requests, const HardwareRates& rates);

}  // namespace vramplan
