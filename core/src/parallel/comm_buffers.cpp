#include "parallel/comm_buffers.h"

#include <algorithm>

#include "format.h"
#include "util/checked_math.h"

namespace vramplan {
namespace {

constexpr int64_t kMiB = 1024 * 1024;
constexpr int64_t kNvlinkChannels = 32;   // nccl#1685: 32 channels per H100 pair (NVSwitch)
constexpr int64_t kPcieChannels = 4;      // 2 rings over PCIe, duplicated (ncclTopoPostset)
constexpr int64_t kPciePeerChannels = 2;  // paths.cc ncclTopoGetNchannels: PCIe peers
constexpr int64_t kNetPeerChannels = 4;   // max(NICs, 50 GB/s / 14 GB/s per channel), one 400 Gb/s NIC per GPU

// Whether `size` ranks `stride` apart fit inside one node of `per_node` consecutive ranks.
bool IntraNode(int64_t stride, int64_t size, int64_t per_node) { return stride * (size - 1) + 1 <= per_node; }

struct Adder {
  const DeviceTraits& device;
  int64_t per_node;
  bool explain;
  CommBuffers out;

  // The explanation's strings are built only when asked for: every rank role of every estimate
  // (and every inverse-search probe) sizes its communicators.
  void Collective(const char* name, int64_t ranks, int64_t stride) {
    if (ranks < 2) return;
    const int64_t bytes = NcclCollectiveBytes(device);
    out.bytes = checked::Add(out.bytes, bytes);
    if (explain) {
      Explain(name, bytes, std::to_string(ranks) + " ranks, collective, " + std::to_string(device.nvlink ? kNvlinkChannels : kPcieChannels) +
                               " channels x 2 x 10 MiB", IntraNode(stride, ranks, per_node));
    }
  }
  void Peers(const char* name, int64_t peers, int64_t size, int64_t stride) {
    if (peers < 1) return;
    const bool intra = IntraNode(stride, size, per_node);
    const int64_t bytes = checked::Mul(peers, NcclPeerBytes(device, intra));
    out.bytes = checked::Add(out.bytes, bytes);
    if (explain) Explain(name, bytes, std::to_string(peers) + (peers == 1 ? " peer" : " peers") + " x " + Gib(NcclPeerBytes(device, intra)) + ", point-to-point", intra);
  }
  void Explain(const char* name, int64_t bytes, const std::string& how, bool intra) {
    out.explain += std::string(out.explain.empty() ? "" : " + ") + name + " (" + how + (intra ? ", in a node" : ", across nodes") + ") " + Gib(bytes);
  }
};

}  // namespace

int64_t NcclCollectiveBytes(const DeviceTraits& device) {
  return (device.nvlink ? kNvlinkChannels : kPcieChannels) * 2 * kNcclConnectionBytes;
}

int64_t NcclPeerBytes(const DeviceTraits& device, bool intra_node) {
  const int64_t channels = !intra_node ? kNetPeerChannels : device.nvlink ? kNvlinkChannels : kPciePeerChannels;
  return channels * kNcclConnectionBytes;
}

CommBuffers CommBuffersOf(const Scenario& s, const Topology& t, const DeviceTraits& device, int64_t stage, bool explain) {
  CommBuffers none;
  if (!t.communicator) return none;
  if (s.mode != Mode::kTrain) {
    // Inference keeps the flat calibration (transformers' tensor parallelism; vLLM counts its own).
    none.bytes = kNcclMiB * kMiB;
    if (explain) none.explain = "NCCL communicator buffers, outside the allocator: " + Gib(none.bytes) + " (nccl#964; docs/parallel.md, Communication buffers)";
    return none;
  }
  const ParallelConfig& p = s.parallel;
  const int64_t tp = t.tp, cp = t.cp, pp = t.pp, dp = t.dp, ep = t.ep;
  const int64_t etp = p.etp > 0 ? p.etp : tp;
  bool moe = false;
  for (const auto& kind : s.model.kinds) moe = moe || kind.mlp.num_experts > 0;
  const bool megatron = s.framework.trainer == Trainer::kMegatron;
  Adder a{device, t.gpus_per_node, explain, {}};
  // Decoder grid tp-cp-dp-pp: strides 1, tp, tp x cp, tp x cp x dp.
  a.Collective("tp", tp, 1);
  if (cp > 1) {
    // Ring attention exchanges K/V with its two neighbours (one when cp = 2); Ulysses runs an
    // all-to-all over the cp group.
    const int64_t peers = p.cp_kind == ContextParallelKind::kRing ? std::min<int64_t>(2, cp - 1) : cp - 1;
    a.Peers("cp", peers, cp, tp);
  }
  // Gradient reduction (DDP all-reduce, ZeRO / FSDP / distributed-optimizer reduce-scatter and
  // all-gather) over the data-parallel ranks with the context-parallel ones.
  a.Collective("dp", dp * cp, tp);
  if (pp > 1) {
    // Sends to the next stage, receives from the previous; the interleaved schedule wraps around
    // (the last rank feeds the first rank's next chunk).
    const bool end = stage == 0 || stage == pp - 1;
    const int64_t peers = pp == 2 ? 1 : (p.vpp > 1 || !end) ? 2 : 1;
    a.Peers("pp", peers, pp, tp * cp * dp);
    // Megatron all-reduces a tied embedding's gradient between the first and the last stage
    // (parallel_state.py embedding group; language_module.py).
    if (megatron && s.model.tied_embeddings && end) a.Collective("embedding", 2, tp * cp * dp * (pp - 1));
  }
  if (moe) {
    // Expert grid etp-ep-edp-pp (megatron/core/parallel_state.py): the token all-to-all over ep, the
    // expert-tensor-parallel collectives, the experts' gradients over the expert-data-parallel group.
    const int64_t edp = std::max<int64_t>(1, t.gpus / (etp * ep * pp));
    a.Peers("ep", ep - 1, ep, etp);
    if (megatron) {
      a.Collective("etp", etp, 1);
      a.Collective("edp", edp, etp * ep);
    }
  }
  if (explain && a.out.bytes > 0) {
    a.out.explain = "NCCL buffers outside the allocator, per communicator: " + a.out.explain + " = " + Gib(a.out.bytes) +
                    " (10 MiB per connection: LL + LL128 + Simple FIFOs; docs/parallel.md, Communication buffers)";
  }
  return a.out;
}

}  // namespace vramplan
