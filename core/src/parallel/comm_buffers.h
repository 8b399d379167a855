// NCCL's communication buffers on one rank: gpu.breakdown.comm_buffers, outside PyTorch's caching
// allocator (NCCL allocates them itself with cuMem / cudaMalloc), one set per communicator the
// rank's collectives and sends use. docs/parallel.md, "Communication buffers", has the formulas.
//
// Per connection (a peer the rank receives from, on one channel): the FIFOs of NCCL's three
// protocols, NVIDIA/nccl src/init.cc computeBuffSizes (commit 5067397c): LL 8 x 512 x 8 x 16 B =
// 512 KiB (DEFAULT_LL_BUFFSIZE), LL128 120 x 640 x 8 x 8 B = 4,915,200 B (DEFAULT_LL128_BUFFSIZE),
// Simple 4 MiB (DEFAULT_BUFFSIZE, NCCL_BUFFSIZE) = 9,633,792 B, allocated in 2 MiB granules:
// 10 MiB (the "allocations of 10 MiB" seen in NVIDIA/nccl#1685).
//   collective communicator (all-reduce, reduce-scatter, all-gather): channels x 2 connections
//       (ring and tree) x 10 MiB; 32 channels on NVLink boards (nccl#1685: 32 channels per H100
//       pair; 640 MiB, inside the 544-688 MB nccl#964 measured per all-reduce group on A100
//       NVLink), 4 over PCIe (2 rings, duplicated).
//   point-to-point peers (pipeline send/recv, ring attention, the MoE all-to-all): per peer,
//       channels x 10 MiB; channels per peer from src/graph/paths.cc ncclTopoGetNchannels: 2 x
//       NVLinks (32 on H100 NVSwitch boards), 2 over PCIe, max(NICs, bandwidth / 14 GB/s) = 4
//       over the network (one 400 Gb/s NIC per GPU).
// Which communicators a rank uses follows the degrees and Megatron-LM's rank order tp-cp-ep-dp-pp
// (megatron/core/parallel_state.py initialize_model_parallel): a group whose ranks span at most
// gpus_per_node consecutive ranks stays inside a node. Process groups are created for more
// (model-parallel, position-embedding, tp-dp-cp ...), but PyTorch creates a NCCL communicator only
// at a group's first collective; those carrying scalars only (loss, grad norm) are left out.
#pragma once

#include <cstdint>
#include <string>

#include "gpu/device_overhead.h"
#include "parallel/topology.h"
#include "vramplan/scenario.h"

namespace vramplan {

inline constexpr int64_t kNcclConnectionBytes = 10LL * 1024 * 1024;  // 9,633,792 B of FIFOs in 2 MiB granules

// One communicator's buffers on a rank: a collective over `ranks` ranks, or `peers` point-to-point
// peers; `intra_node` when its ranks share a node.
int64_t NcclCollectiveBytes(const DeviceTraits& device);
int64_t NcclPeerBytes(const DeviceTraits& device, bool intra_node);

// The communicators of a training rank on pipeline stage `stage` (inference jobs: the calibrated
// flat kNcclMiB of gpu/device_overhead.h, as before); none on one GPU.
CommBuffers CommBuffersOf(const Scenario& scenario, const Topology& topology, const DeviceTraits& device, int64_t stage, bool explain);

}  // namespace vramplan
