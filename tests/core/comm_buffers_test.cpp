// NCCL's communicator buffers per rank (core/src/parallel/comm_buffers.h): 10 MiB per connection
// (LL 512 KiB + LL128 4,915,200 B + Simple 4 MiB = 9,633,792 B of FIFOs, NVIDIA/nccl src/init.cc
// computeBuffSizes, in 2 MiB granules), 2 connections per channel for a collective, channels by
// link (32 NVLink, 4 PCIe), one connection per channel for each point-to-point peer (32 NVLink in a
// node, 2 PCIe, 4 across nodes). Expected bytes are written out from those numbers.
#include "parallel/comm_buffers.h"

#include <string>

#include <gtest/gtest.h>

#include "test_support.h"

namespace vramplan {
namespace comm_buffers_test {

constexpr int64_t kMiB = 1024 * 1024;

TEST(CommBuffers, ConnectionIsTheThreeProtocolFifosInTwoMibGranules) {
  const int64_t ll = 8 * 512 * 8 * 16, ll128 = 120 * 640 * 8 * 8, simple = 4 * kMiB;
  EXPECT_EQ(ll + ll128 + simple, 9633792);
  EXPECT_EQ(kNcclConnectionBytes, (ll + ll128 + simple + 2 * kMiB - 1) / (2 * kMiB) * (2 * kMiB));
  DeviceTraits nvlink, pcie;
  nvlink.nvlink = true;
  EXPECT_EQ(NcclCollectiveBytes(nvlink), 640 * kMiB);
  EXPECT_EQ(NcclCollectiveBytes(pcie), 80 * kMiB);
  EXPECT_EQ(NcclPeerBytes(nvlink, true), 320 * kMiB);
  EXPECT_EQ(NcclPeerBytes(pcie, true), 20 * kMiB);
  EXPECT_EQ(NcclPeerBytes(nvlink, false), 40 * kMiB);
}

struct Row {
  const char* what;
  const char* scenario;   // parsed; every row trains on H100 SXM (NVLink) unless it names a GPU
  int64_t stage;          // the rank role's pipeline stage
  int64_t expected_mib;
};

const Row kRows[] = {
    {"one GPU: no communicator", R"({"model":"meta-llama/Llama-3.1-8B","parallel":{"gpus":1}})", 0, 0},
    {"DDP / ZeRO on 8 NVLink GPUs: the dp collective", R"({"model":"meta-llama/Llama-3.1-8B","parallel":{"gpus":8,"zero":3}})", 0, 640},
    {"the same over PCIe", R"({"model":"meta-llama/Llama-3.1-8B","gpu":"l40s-48gb","parallel":{"gpus":8,"zero":3}})", 0, 80},
    {"TP8 alone: the tp collective", R"({"model":"meta-llama/Llama-3.1-8B","parallel":{"gpus":8,"tp":8},"framework":{"trainer":"megatron"}})", 0, 640},
    {"TP8 x DP2: tp + dp", R"({"model":"meta-llama/Llama-3.1-8B","parallel":{"gpus":16,"tp":8},"framework":{"trainer":"megatron"}})", 0, 1280},
    // TP8 x PP4 on 8-GPU nodes: pp peers are 8 ranks apart, across nodes (4 channels x 10 MiB each).
    {"TP8 x PP4, first stage: tp + 1 pp peer", R"({"model":"meta-llama/Llama-3.1-8B","parallel":{"gpus":32,"tp":8,"pp":4},"framework":{"trainer":"megatron"}})", 0, 680},
    {"TP8 x PP4, middle stage: tp + 2 pp peers", R"({"model":"meta-llama/Llama-3.1-8B","parallel":{"gpus":32,"tp":8,"pp":4},"framework":{"trainer":"megatron"}})", 1, 720},
    {"TP2 x PP4 in one node: NVLink peers", R"({"model":"meta-llama/Llama-3.1-8B","parallel":{"gpus":8,"tp":2,"pp":4},"framework":{"trainer":"megatron"}})", 1, 640 + 2 * 320},
    {"interleaved: 2 pp peers on the end stages too", R"({"model":"meta-llama/Llama-3.1-8B","parallel":{"gpus":32,"tp":8,"pp":4,"vpp":2},"framework":{"trainer":"megatron"}})", 0, 720},
    {"the 4D 405B job's middle stage: tp + dp x cp + 2 pp + 1 cp peer",
     R"({"model":"meta-llama/Llama-3.1-405B","train":{"seq_len":8192,"attention":"flash"},"parallel":{"gpus":576,"tp":8,"pp":9,"cp":2,"sequence_parallel":true,"zero":1},"framework":{"trainer":"megatron"}})", 4, 640 + 640 + 80 + 40},
    {"Mixtral EP8 (Megatron): ep all-to-all (7 NVLink peers) + edp", R"({"model":"mistralai/Mixtral-8x7B-v0.1","parallel":{"gpus":16,"ep":8},"framework":{"trainer":"megatron"}})", 0,
     640 + 7 * 320 + 640},
};

TEST(CommBuffers, CommunicatorsFollowTheDegrees) {
  for (const Row& row : kRows) {
    auto s = ParseScenario(row.scenario);
    ASSERT_TRUE(s.ok()) << row.what << ": " << s.errors()[0].message;
    const Scenario& sc = s.value();
    const CommBuffers c = CommBuffersOf(sc, TopologyOf(sc), DeviceTraitsFor(sc.gpu.id), row.stage, true);
    EXPECT_EQ(c.bytes, row.expected_mib * kMiB) << row.what << ": " << c.explain;
    EXPECT_EQ(c.explain.empty(), row.expected_mib == 0) << row.what;
  }
}

TEST(CommBuffers, AreTheirOwnTermOutsideTheAllocator) {
  const Result one = testing_support::EstimateText(R"({"model":"meta-llama/Llama-3.1-8B","parallel":{"gpus":1}})");
  EXPECT_EQ(testing_support::GpuTerm(one, "comm_buffers"), 0);
  const Result eight = testing_support::EstimateText(R"({"model":"meta-llama/Llama-3.1-8B","parallel":{"gpus":8,"zero":3}})");
  const int64_t comm = testing_support::GpuTerm(eight, "comm_buffers");
  EXPECT_EQ(comm, 640 * kMiB);
  EXPECT_EQ(eight.gpu.device_total_bytes, eight.gpu.reserved_bytes + testing_support::GpuTerm(eight, "cuda_context") + comm);
  // Every rank role carries its own (a pipeline's end stages have one pp peer, the middle ones two).
  const Result pp = testing_support::EstimateText(
      R"({"model":"meta-llama/Llama-3.1-8B","parallel":{"gpus":32,"tp":8,"pp":4},"framework":{"trainer":"megatron"}})");
  ASSERT_EQ(pp.ranks.size(), 4u);
  EXPECT_EQ(testing_support::TermBytes(pp.ranks[0].breakdown, "comm_buffers"), 680 * kMiB);
  EXPECT_EQ(testing_support::TermBytes(pp.ranks[1].breakdown, "comm_buffers"), 720 * kMiB);
}

}  // namespace
}  // namespace vramplan
