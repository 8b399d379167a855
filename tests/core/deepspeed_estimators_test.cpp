// DeepSpeed ZeRO-2/3 per rank against DeepSpeed's own model-states estimators
// (tests/fixtures/frameworks/deepspeed_estimators.json: the outputs of
// estimate_zero2_model_states_mem_needs, deepspeed/runtime/zero/stage_1_and_2.py, and
// estimate_zero3_model_states_mem_needs, deepspeed/runtime/zero/stage3.py, at commit edaa7221).
//
// The two sides do not count the same things, so the test asserts, term by term, the relation
// that must hold (docs/parallel.md, "DeepSpeed's own estimators"). P parameters, G = nodes x
// gpus_per_node ranks, mixed precision with AdamW (DeepSpeed's stage_1_and_2.py comment: "2 =
// params_16bit, 18 = 2_grads_16bit + 4_grads_32bit + 4_params_32bit + 8_optimizer_states_32bit"):
//   16-bit parameters   DeepSpeed 2P (ZeRO-2) or 2P/G (ZeRO-3); vramplan the same, plus the
//                       model's non-parameter buffers (RoPE inv_freq).
//   16-bit gradients    DeepSpeed's ZeRO-2 estimator 2P/G without offload, its ZeRO-3 one none;
//                       vramplan ceil(2P/G), none on the GPU with offload_optimizer (both keep
//                       the reduced partitions on the host there).
//   fp32 master + Adam  DeepSpeed 12P/G; vramplan ceil(12P/G) (optimizer_states), exactly.
//   fp32 gradients      DeepSpeed 4P/G as a standing term; vramplan the same copy as a temporary of
//                       the optimizer step (with the foreach AdamW's own fp32 list, 4P/G more);
//                       under ZeRO-3 one sub-group's (at most about 1e9 elements) at a time.
//   ZeRO-3 live params  DeepSpeed 4 x largest module (its 16-bit parameters and gradient);
//                       vramplan what DeepSpeed's coordinator keeps gathered (parallel/zero3_gather.h), 16-bit.
//   host RAM            DeepSpeed: offloaded states x additional_buffer_factor, and the fp32 model
//                       each process builds at init (4 B x P x gpus_per_node); vramplan: the
//                       offloaded shards only, no buffer factor, nothing at init.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_support.h"
#include "units.h"

namespace vramplan {
namespace deepspeed_estimators_test {

using nlohmann::json;
using testing_support::TermBytes;

// The presets with the fixture's parameter counts (DeepSpeed's total_params).
const std::map<std::string, std::string> kPresetOf = {{"llama2_7b", "meta-llama/Llama-2-7b-hf"},
                                                      {"llama2_70b", "meta-llama/Llama-2-70b-hf"}};

// What is on the GPU at the optimizer step beside the model states and the step's temporaries:
// the batch tensors (24 B per token) and the cuBLAS workspace (at most 32 MiB).
constexpr int64_t kStepExtrasMax = int64_t{64} << 20;
// DeepSpeed's default reduce_bucket_size (deepspeed/runtime/zero/config.py): ZeRO-3 keeps one
// bucket of that many 16-bit elements for the whole run (stage3.py __init__, ipg_buckets).
constexpr int64_t kZero3BucketBytes = 500'000'000 * 2;

struct Row {
  int stage = 2;
  std::string model;
  int64_t params = 0, largest_layer_params = 0;
  int64_t gpus_per_node = 1, nodes = 1;
  bool offload_optimizer = false, offload_params = false, zero_init = false;
  double buffer_factor = 1.0;
  int64_t ds_gpu = 0, ds_cpu = 0;
  int64_t Gpus() const { return gpus_per_node * nodes; }
  std::string Describe() const {
    return "ZeRO-" + std::to_string(stage) + " " + model + " " + std::to_string(gpus_per_node) + " GPU/node x " + std::to_string(nodes) +
           " nodes, offload_optimizer=" + std::to_string(offload_optimizer) + " offload_params=" + std::to_string(offload_params) +
           " zero_init=" + std::to_string(zero_init) + " abf=" + std::to_string(buffer_factor);
  }
};

std::vector<Row> FixtureRows() {
  const json doc = testing_support::LoadFixture("frameworks/deepspeed_estimators.json");
  EXPECT_TRUE(doc.is_object());
  std::vector<Row> rows;
  if (!doc.is_object()) return rows;
  for (int stage : {2, 3}) {
    for (const json& c : doc[stage == 2 ? "zero2" : "zero3"]) {
      const json& a = c["args"];
      Row r;
      r.stage = stage;
      r.model = c["model"];
      r.params = a["total_params"];
      r.largest_layer_params = stage == 3 ? a["largest_layer_params"].get<int64_t>() : 0;
      r.gpus_per_node = a["num_gpus_per_node"];
      r.nodes = a["num_nodes"];
      r.offload_optimizer = a["cpu_offload"];
      r.offload_params = stage == 3 && a["cpu_offload_params"].get<bool>();
      r.zero_init = stage == 3 && a["zero_init"].get<bool>();
      r.buffer_factor = a["additional_buffer_factor"];
      r.ds_gpu = c["gpu_mem_bytes"];
      r.ds_cpu = c["cpu_mem_bytes"];
      rows.push_back(r);
    }
  }
  return rows;
}

// The fixture row as a vramplan scenario; `stage` overrides the row's (the ZeRO-2 twin of a ZeRO-3
// row). zero_init and the buffer factor have no vramplan counterpart: they change only DeepSpeed's
// host figure.
Result EstimateRow(const Row& row, int stage, const std::string& precision) {
  json parallel = {{"gpus", row.Gpus()}, {"gpus_per_node", row.gpus_per_node}, {"zero", stage}};
  if (row.offload_optimizer) parallel["offload_optimizer"] = "cpu";
  if (row.offload_params && stage == 3) parallel["offload_params"] = "cpu";
  const json scenario = {{"mode", "train"}, {"model", kPresetOf.at(row.model)}, {"gpu", {{"name", "big"}, {"memory_bytes", int64_t{1} << 48}}},
                         {"parallel", parallel},
                         {"train", {{"method", "full"}, {"precision", precision}, {"optimizer", "adamw"}, {"micro_batch_size", 1}, {"seq_len", 4096},
                                    {"grad_accum_steps", 1}, {"gradient_checkpointing", true}, {"attention", "flash"}}}};
  return testing_support::EstimateText(scenario.dump());
}

TEST(DeepSpeedEstimators, FixtureHasEveryConfiguration) {
  const std::vector<Row> rows = FixtureRows();
  EXPECT_EQ(rows.size(), 48u + 144u);
  for (const Row& r : rows) {
    ASSERT_EQ(kPresetOf.count(r.model), 1u) << r.model;
    // The fixture's own arithmetic: DeepSpeed's formulas, as its "formulas" entry writes them.
    const int64_t P = r.params, G = r.Gpus();
    if (r.stage == 2) {
      EXPECT_EQ(r.ds_gpu, r.offload_optimizer ? 2 * P : 2 * P + 18 * P / G) << r.Describe();
    } else {
      const int64_t live = 4 * r.largest_layer_params;
      EXPECT_EQ(r.ds_gpu, r.offload_params ? live : live + (r.offload_optimizer ? 2 : 18) * P / G) << r.Describe();
    }
  }
}

// Bytes of the model's non-parameter buffers in vramplan's weights (Llama: the RoPE inv_freq, 64
// elements in the model's 16-bit dtype): the weights of a replicated model less its 2 B parameters.
// DeepSpeed's estimators count parameters only.
int64_t BufferBytes(int64_t replicated_weights, int64_t params) { return replicated_weights - 2 * params; }

// The GPU side, term by term, for every fixture row in mixed bf16 and mixed fp16 (the same bytes).
TEST(DeepSpeedEstimators, GpuModelStatesTermByTerm) {
  int checked = 0;
  for (const Row& row : FixtureRows()) {
    for (const char* precision : {"mixed_bf16", "mixed_fp16"}) {
      const std::string where = row.Describe() + " " + precision;
      const Result r = EstimateRow(row, row.stage, precision);
      const Result zero2 = EstimateRow(row, 2, precision);  // the same job with replicated parameters
      ASSERT_EQ(r.ranks.size(), 1u) << where;
      const int64_t P = row.params, G = row.Gpus();
      ASSERT_EQ(r.trainable_params, P) << where;  // the preset has DeepSpeed's total_params
      ASSERT_EQ(r.ranks[0].count, G) << where;
      const int64_t weights = TermBytes(r.gpu.breakdown, "weights");  // the same at every moment of the step
      const int64_t replicated = TermBytes(zero2.gpu.breakdown, "weights");
      const int64_t buffers = BufferBytes(replicated, P);
      EXPECT_EQ(TermBytes(r.ranks[0].breakdown, "weights"), weights) << where;
      ASSERT_GE(buffers, 0) << where;
      ASSERT_LT(buffers, 4096) << where;

      // 16-bit parameters. DeepSpeed: 2P (ZeRO-2), 2P/G (ZeRO-3), none with offload_param.
      // vramplan: the same, with the buffers (sharded with the parameters under ZeRO-3).
      const bool params_on_host = row.stage == 3 && row.offload_params;
      const int64_t ds_params = row.stage == 2 ? 2 * P : params_on_host ? 0 : 2 * P / G;
      EXPECT_EQ(weights, row.stage == 2 ? 2 * P + buffers : params_on_host ? 0 : CeilDiv(2 * P + buffers, G)) << where;
      EXPECT_LE(weights - ds_params, buffers) << where;

      // 16-bit gradients. vramplan: the rank's ceil(2P/G) shard, on the GPU in every case.
      // DeepSpeed's estimators count 2P/G only in ZeRO-2 without offload ("2_grads_16bit"). Its
      // ZeRO-3 18P/G is 2 (16-bit params) + 16 (fp32 params, grads, momentum, variance: the docs'
      // memory.rst) with no 16-bit gradient partition, although stage3.py keeps one
      // (grad_partitions_flat_buffer, on the GPU without offload): there vramplan counts what the
      // estimator leaves out. With offload_optimizer DeepSpeed holds no gradient partition on the GPU
      // (stage_1_and_2.py copy_grads_in_partition copies each reduced partition into the host fp32
      // buffer and never allocates grads_in_partition; stage3.py puts grad_partitions_flat_buffer on
      // self.device, the CPU): vramplan keeps none on the GPU either (parallel/data_parallel.h
      // grads_on_host).
      EXPECT_EQ(r.gpu.gradient_bytes, row.offload_optimizer ? 0 : CeilDiv(2 * P, G)) << where;
      const int64_t ds_gradients = row.stage == 2 && !row.offload_optimizer ? 2 * P / G : 0;
      const int64_t gradients_beyond_ds = r.gpu.gradient_bytes - ds_gradients;

      // fp32 master weights + Adam moments. DeepSpeed: 12P/G (4_params_32bit + 8_optimizer_states),
      // none on the GPU with offload. vramplan: optimizer_states, exactly the same shard.
      EXPECT_EQ(r.gpu.optimizer_state_bytes, row.offload_optimizer ? 0 : CeilDiv(12 * P, G)) << where;

      // fp32 gradients. DeepSpeed counts 4P/G standing; the code converts the 16-bit partition to
      // fp32 inside step() and frees it after (stage_1_and_2.py step(): flat_grad_partition.to(fp32),
      // per parameter group: the whole 4P/G). ZeRO-3 does it per sub-group of sub_group_size (1e9)
      // elements of the rank's partition and drops it before the next (stage3.py
      // _prepare_fp32_grad_for_sub_group / _release_sub_group; parallel/zero3_sub_groups.h): its S
      // elements, S between min(P/G, 1e9) and min(P/G + one element per parameter, 1e9 + the
      // largest parameter's partition, the 32000 x h embedding). vramplan: a temporary of the
      // optimizer step, that fp32 copy with the foreach AdamW's own fp32 list (as much again; none
      // with optimizer_impl fused), both on the host with offload_optimizer: 8P/G under ZeRO-2, 8S
      // under ZeRO-3 (the moment's 16-bit flat copy beside the fp32 one, 6S, is below it). The step
      // moment also holds the weights, the gradient and state shards, the batch and the cuBLAS
      // workspace, and under ZeRO-3 the bucket DeepSpeed keeps all run long.
      const int64_t bucket = row.stage == 3 ? kZero3BucketBytes : 0;
      const int64_t step_temporaries = r.gpu.phase_peaks.optimizer_step - weights - r.gpu.gradient_bytes - r.gpu.optimizer_state_bytes - bucket;
      const int64_t hidden = row.model == "llama2_7b" ? 4096 : 8192;
      const int64_t sub_group_min = row.stage == 3 ? std::min<int64_t>(P / G, 1'000'000'000) : P / G;
      const int64_t sub_group_max = row.stage == 3 ? std::min<int64_t>(CeilDiv(P, G) + 1000, 1'000'000'000 + CeilDiv(32000 * hidden, G)) : CeilDiv(P, G);
      const int64_t fp32_copies_min = row.offload_optimizer ? 0 : row.stage == 3 ? 8 * sub_group_min : CeilDiv(8 * P, G);
      const int64_t fp32_copies_max = row.offload_optimizer ? 0 : row.stage == 3 ? 8 * sub_group_max : CeilDiv(8 * P, G);
      EXPECT_GE(step_temporaries, fp32_copies_min) << where;
      EXPECT_LE(step_temporaries, fp32_copies_max + kStepExtrasMax) << where;
      // What DeepSpeed's 4P/G fp32 gradients count beyond the sub-group ZeRO-3 really converts.
      const int64_t ds_fp32_beyond = row.stage == 3 && !row.offload_optimizer ? std::max<int64_t>(0, 4 * P / G - 4 * sub_group_min) : 0;

      // The optimizer step as a whole against DeepSpeed's figure less its live parameters (the step
      // runs on partitions: nothing is gathered): at least DeepSpeed's model states, and above them
      // by no more than the foreach list, the buffers, the batch and workspace, and the gradient
      // shard wherever the estimator leaves it out (above).
      const int64_t ds_live = row.stage == 3 ? 4 * row.largest_layer_params : 0;
      const int64_t ds_states = row.ds_gpu - ds_live;
      const int64_t step_states = r.gpu.phase_peaks.optimizer_step - bucket;
      const int64_t rounding = 4;  // int(18P/G) against three ceilings
      const int64_t foreach_list = row.offload_optimizer ? 0 : CeilDiv(4 * P, G);
      EXPECT_GE(step_states + ds_fp32_beyond, ds_states) << where;
      EXPECT_LE(step_states - ds_states, foreach_list + gradients_beyond_ds + buffers + rounding + kStepExtrasMax) << where;

      if (row.stage == 3) {
        // Live parameters. DeepSpeed's estimator: 4 B x its largest module (the embedding / lm_head
        // here): the module's 16-bit parameters gathered and its 16-bit gradient. vramplan: what
        // DeepSpeed's coordinator keeps gathered at the forward/backward turn (the gradient being
        // produced is counted with the gradients), worked out by hand in zero3_gather_test.cpp:
        // 7B: lm_head 131,072,000 + the last layer (202,375,168) + layer 30's down/up/gate/o/v
        // (168,820,736) kept, k, q and layer 29's down prefetched (78,643,200), 65 norms of 4096;
        // 70B: 968,105,984 elements. Read off the forward: ZeRO-3 less the same job under ZeRO-2 is
        // the change in weights, the gathered parameters and the persistent bucket.
        const int64_t gathered = r.gpu.phase_peaks.forward - zero2.gpu.phase_peaks.forward - (weights - replicated) - kZero3BucketBytes;
        const int64_t gathered_elements = row.model == "llama2_7b" ? 502'267'904 + 78'643'200 + 65 * 4096 : 968'105'984;
        EXPECT_EQ(gathered, 2 * gathered_elements) << where;
        EXPECT_GE(gathered, ds_live) << where;  // a decoder layer outweighs the embedding on these models
      }

      // Whatever else each side counts, vramplan's per-GPU peak never falls below DeepSpeed's figure
      // less the fp32 gradients ZeRO-3 never holds at once.
      EXPECT_GE(r.gpu.peak_allocated_bytes + ds_fp32_beyond, row.ds_gpu) << where;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 2 * (48 + 144));
}

// The host side. DeepSpeed's cpu figure is x additional_buffer_factor; vramplan applies none, and
// counts the offloaded shards of a step in progress, not the model's initialization.
TEST(DeepSpeedEstimators, HostRamPerRankAndPerNode) {
  int checked = 0;
  for (const Row& row : FixtureRows()) {
    const std::string where = row.Describe();
    const Result r = EstimateRow(row, row.stage, "mixed_bf16");
    const int64_t P = row.params, G = row.Gpus(), gpn = row.gpus_per_node;
    const int64_t replicated = TermBytes(EstimateRow(row, 2, "mixed_bf16").gpu.breakdown, "weights");
    ASSERT_EQ(r.ranks.size(), 1u) << where;
    // One process per GPU, each holding its own shard: the node holds gpus_per_node of them.
    EXPECT_EQ(r.cpu.node_processes, gpn) << where;
    EXPECT_EQ(r.cpu.node_bytes, gpn * r.cpu.bytes) << where;
    EXPECT_EQ(r.ranks[0].host_bytes, r.cpu.bytes) << where;
    // Per rank: the offloaded fp32 master weights + Adam moments (12P/G) and fp32 gradients (4P/G)
    // for DeepSpeedCPUAdam, and with offload_param the 16-bit parameter shard.
    const bool params_on_host = row.stage == 3 && row.offload_params;
    const int64_t expected = (row.offload_optimizer ? CeilDiv(12 * P, G) + CeilDiv(4 * P, G) : 0) + (params_on_host ? CeilDiv(replicated, G) : 0);
    EXPECT_EQ(r.cpu.bytes, expected) << where;

    // DeepSpeed's figure before its buffer factor bounds vramplan's node from above, up to the
    // rounding of the per-rank shards and the buffers vramplan offloads with the parameters.
    const double ds = static_cast<double>(row.ds_cpu) / row.buffer_factor;
    const double node = static_cast<double>(r.cpu.node_bytes);
    const double rounding = static_cast<double>(gpn) * (3 + CeilDiv(BufferBytes(replicated, P), G));
    EXPECT_LE(node, ds + rounding) << where;
    if (row.stage == 3 && row.offload_optimizer && row.zero_init) {
      // ZeRO-3 with zero.Init: P x 16 (or 18 with offload_param) / nodes, what the node's ranks
      // offload: the same bytes.
      EXPECT_NEAR(node, ds, rounding) << where;
    } else if (row.stage == 3 && row.offload_optimizer) {
      // Without zero.Init DeepSpeed takes the larger of that and each process's fp32 model built on
      // the host before partitioning (4 B x P x gpus_per_node), which vramplan does not model.
      const int64_t per_param = row.offload_params ? 18 : 16;
      if (4 * G <= per_param) EXPECT_NEAR(node, ds, rounding) << where;  // max(4 x gpus_per_node, per_param / nodes) is the latter
    } else if (row.stage == 2 && row.offload_optimizer) {
      // ZeRO-2: P x max(4G, 16): 16P, the whole model's offloaded states, on one host whatever the
      // node count (no gpus_factor, unlike ZeRO-3), or 4 B x P for each of all G processes' fp32
      // model at init. vramplan: the node's ranks' shards, 16P / nodes.
      EXPECT_NEAR(node, static_cast<double>(16 * P / row.nodes), rounding) << where;
      if (row.nodes == 1 && 4 * G <= 16) EXPECT_NEAR(node, ds, rounding) << where;
    } else {
      // No offload: DeepSpeed counts the model's initialization on the host (4 B x P, or x the
      // largest module with zero.Init, per process); vramplan counts no host RAM for the step.
      EXPECT_EQ(r.cpu.bytes, 0) << where;
    }
    ++checked;
  }
  EXPECT_EQ(checked, 48 + 144);
}

}  // namespace
}  // namespace vramplan
