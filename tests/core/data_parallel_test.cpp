// Data-parallel sharding: ZeRO stages and FSDP divide exactly the model states they shard, offload
// moves them to host RAM, and a single GPU is unchanged.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "test_support.h"

namespace vramplan {
namespace data_parallel_test {

using testing_support::GpuTerm;

int64_t CeilDivForTest(int64_t a, int64_t b) { return (a + b - 1) / b; }

Result RunWith(const std::string& parallel) {
  return testing_support::EstimateText(
      R"({"model":"meta-llama/Llama-3.1-8B","train":{"method":"full","precision":"mixed_bf16","optimizer":"adamw","optimizer_impl":"fused"},"parallel":)" + parallel + "}");
}


TEST(DataParallel, ZeroStagesShardWhatTheySay) {
  const Result one = RunWith(R"({"gpus":1})");
  const Result z1 = RunWith(R"({"gpus":8,"zero":1})");
  const Result z2 = RunWith(R"({"gpus":8,"zero":2})");
  const Result z3 = RunWith(R"({"gpus":8,"zero":3})");
  const int64_t states = one.gpu.optimizer_state_bytes, grads = one.gpu.gradient_bytes, weights = GpuTerm(one, "weights");
  EXPECT_EQ(z1.gpu.optimizer_state_bytes, (states + 7) / 8);
  EXPECT_EQ(z1.gpu.gradient_bytes, grads);
  EXPECT_EQ(GpuTerm(z1, "weights"), weights);
  EXPECT_EQ(z2.gpu.gradient_bytes, (grads + 7) / 8);
  EXPECT_EQ(GpuTerm(z2, "weights"), weights);
  EXPECT_EQ(GpuTerm(z3, "weights"), (weights + 7) / 8);
  EXPECT_LT(z3.gpu.peak_allocated_bytes, z2.gpu.peak_allocated_bytes);
  EXPECT_LT(z2.gpu.peak_allocated_bytes, z1.gpu.peak_allocated_bytes);
}

TEST(DataParallel, FsdpMatchesZero3AndOffloadMovesStatesToHost) {
  const Result fsdp = RunWith(R"({"gpus":4,"fsdp":true})");
  const Result z3 = RunWith(R"({"gpus":4,"zero":3})");
  EXPECT_EQ(GpuTerm(fsdp, "weights"), GpuTerm(z3, "weights"));
  EXPECT_GT(fsdp.gpu.phase_peaks.backward, z3.gpu.phase_peaks.backward);  // FSDP keeps its root unit gathered, reduces whole units
  const Result off = RunWith(R"({"gpus":4,"zero":3,"offload_optimizer":"cpu","offload_params":"cpu"})");
  EXPECT_EQ(GpuTerm(off, "optimizer_states"), 0);
  EXPECT_EQ(GpuTerm(off, "weights"), 0);
  EXPECT_GT(off.cpu.bytes, z3.gpu.optimizer_state_bytes);
  EXPECT_GT(GpuTerm(off, "comm_buffers"), GpuTerm(RunWith(R"({"gpus":1})"), "comm_buffers"));  // NCCL buffers
}

// FSDP's sharding strategies (torch/distributed/fsdp/api.py ShardingStrategy): NO_SHARD keeps
// everything whole (like DDP), HYBRID_SHARD shards over the node's GPUs only, SHARD_GRAD_OP keeps
// every unit gathered from its forward to its backward.
TEST(DataParallel, FsdpShardingStrategies) {
  const Result one = RunWith(R"({"gpus":1})");
  const Result full = RunWith(R"({"gpus":16,"fsdp":true})");
  const Result none = RunWith(R"({"gpus":16,"fsdp":true,"fsdp_sharding":"no_shard"})");
  const Result hybrid = RunWith(R"({"gpus":16,"fsdp":true,"fsdp_sharding":"hybrid_shard"})");
  const Result grad_op = RunWith(R"({"gpus":16,"fsdp":true,"fsdp_sharding":"shard_grad_op"})");
  const int64_t weights = GpuTerm(one, "weights");
  EXPECT_EQ(GpuTerm(none, "weights"), weights);
  EXPECT_EQ(none.gpu.optimizer_state_bytes, one.gpu.optimizer_state_bytes);
  EXPECT_EQ(GpuTerm(full, "weights"), CeilDivForTest(weights, 16));
  EXPECT_EQ(GpuTerm(hybrid, "weights"), CeilDivForTest(weights, 8));  // 8 GPUs per node by default
  EXPECT_EQ(hybrid.gpu.optimizer_state_bytes, CeilDivForTest(one.gpu.optimizer_state_bytes, 8));
  EXPECT_EQ(GpuTerm(grad_op, "weights"), GpuTerm(full, "weights"));   // sharded at rest
  // ... but by the end of the forward all 32 layers are gathered, where FULL_SHARD has resharded the
  // last one before the loss (its post-forward): at the loss, the forward's peak, 32 layers more (a
  // layer: the weights less embedding, lm_head and final norm, / 32).
  const int64_t root = (2 * 128256 * 4096 + 4096) * 2;
  EXPECT_EQ(grad_op.gpu.phase_peaks.forward - full.gpu.phase_peaks.forward, 32 * ((weights - root) / 32));
}

// torchtune's custom_sharded_layers ['tok_embeddings', 'output'] (parallel.fsdp_embedding_units):
// the embedding and the output layer are units of their own, so the root keeps only the final norm.
// At the loss (the forward's peak) no decoder layer is gathered: the output layer and the norm
// instead of embedding + output + norm, E less on Llama-3.1-8B, worked by hand from its config
// (E = 128,256 x 4,096 x 2 B); in the layers, max(2 layers, output + layer) + norm instead of
// 2 layers + 2E + norm.
TEST(DataParallel, FsdpEmbeddingUnitsLeaveTheRoot) {
  const Result one = RunWith(R"({"gpus":1})");
  const Result root_unit = RunWith(R"({"gpus":16,"fsdp":true})");
  const Result own_units = RunWith(R"({"gpus":16,"fsdp":true,"fsdp_embedding_units":true})");
  const int64_t embedding = int64_t{128256} * 4096 * 2;
  const int64_t layer = (GpuTerm(one, "weights") - (2 * embedding + 4096 * 2)) / 32;
  // (the forward: in the backward the root's gradients are reduced at other moments too, below)
  EXPECT_EQ(root_unit.gpu.phase_peaks.forward - own_units.gpu.phase_peaks.forward, embedding);
  (void)layer;
  EXPECT_EQ(GpuTerm(own_units, "weights"), GpuTerm(root_unit, "weights"));  // the shards are the same
  // Nothing gathered differs without FSDP's resharding after forward.
  const Result grad_op = RunWith(R"({"gpus":16,"fsdp":true,"fsdp_sharding":"shard_grad_op"})");
  EXPECT_EQ(RunWith(R"({"gpus":16,"fsdp":true,"fsdp_sharding":"shard_grad_op","fsdp_embedding_units":true})").gpu.phase_peaks.forward,
            grad_op.gpu.phase_peaks.forward);
}

// PyTorch DDP's buckets (torch/csrc/distributed/c10d/reducer.cpp initialize_buckets): without
// gradient_as_bucket_view, a flat copy of every gradient, allocated when the model is wrapped.
TEST(DataParallel, DdpBucketsCopyTheGradients) {
  const Result one = RunWith(R"({"gpus":1})");
  const Result ddp = RunWith(R"({"gpus":8})");
  const Result view = RunWith(R"({"gpus":8,"ddp_bucket_view":true})");
  EXPECT_EQ(view.gpu.phase_peaks.optimizer_step, one.gpu.phase_peaks.optimizer_step);
  EXPECT_EQ(ddp.gpu.phase_peaks.optimizer_step - one.gpu.phase_peaks.optimizer_step, one.gpu.gradient_bytes);
}

// DeepSpeed's gradient buckets (deepspeed/runtime/zero/stage_1_and_2.py backward(): one
// reduce_bucket_size buffer in the 16-bit dtype, a second with overlap_comm, freed in the backward
// epilogue; stage3.py: one buffer allocated at init and kept). Sizes by hand from the ds_config.
TEST(DataParallel, DeepSpeedGradientBuckets) {
  const Result none = RunWith(R"({"gpus":8,"zero":2,"contiguous_gradients":false})");
  const Result one = RunWith(R"({"gpus":8,"zero":2,"reduce_bucket_size":200000000})");
  const Result two = RunWith(R"({"gpus":8,"zero":2,"reduce_bucket_size":200000000,"overlap_comm":true})");
  const Result dflt = RunWith(R"({"gpus":8,"zero":2})");  // DeepSpeed default 5e8, overlap_comm off below stage 3
  EXPECT_EQ(one.gpu.phase_peaks.backward - none.gpu.phase_peaks.backward, 200000000 * 2);
  EXPECT_EQ(two.gpu.phase_peaks.backward - none.gpu.phase_peaks.backward, 2 * 200000000 * 2);
  EXPECT_EQ(dflt.gpu.phase_peaks.backward - none.gpu.phase_peaks.backward, 500000000 * 2);
  EXPECT_EQ(two.gpu.phase_peaks.forward, none.gpu.phase_peaks.forward);  // not alive outside backward
  EXPECT_EQ(two.gpu.phase_peaks.optimizer_step, none.gpu.phase_peaks.optimizer_step);
  const Result z3_none = RunWith(R"({"gpus":8,"zero":3,"contiguous_gradients":false})");
  const Result z3 = RunWith(R"({"gpus":8,"zero":3,"reduce_bucket_size":16777216})");  // "auto" = hidden_size^2
  EXPECT_EQ(z3.gpu.phase_peaks.forward - z3_none.gpu.phase_peaks.forward, 16777216 * 2);
  EXPECT_EQ(z3.gpu.phase_peaks.optimizer_step - z3_none.gpu.phase_peaks.optimizer_step, 16777216 * 2);
  const Result fsdp = RunWith(R"({"gpus":8,"fsdp":true,"reduce_bucket_size":16777216})");
  const Result fsdp_none = RunWith(R"({"gpus":8,"fsdp":true})");
  EXPECT_EQ(fsdp.gpu.peak_allocated_bytes, fsdp_none.gpu.peak_allocated_bytes);  // DeepSpeed keys do not touch FSDP
  EXPECT_TRUE(testing_support::HasWarning(fsdp, "no_effect", "parallel.reduce_bucket_size"));
}


// Host RAM per rank and per node: each rank's process offloads its own 1/dp shard of the optimizer
// states and fp32 gradients (ZeRO-Offload, DeepSpeedCPUAdam), so a host running 8 ranks needs 8x
// what one rank offloads.
TEST(DataParallel, OffloadHostRamPerRankAndPerNode) {
  const Result one = RunWith(R"({"gpus":1})");
  const int64_t states = one.gpu.optimizer_state_bytes, trainable = one.trainable_params;
  const Result r8 = RunWith(R"({"gpus":8,"zero":2,"offload_optimizer":"cpu"})");
  EXPECT_EQ(testing_support::TermBytes(r8.cpu.breakdown, "offloaded_optimizer_states"), CeilDivForTest(states, 8) + CeilDivForTest(4 * trainable, 8));
  EXPECT_EQ(r8.cpu.node_processes, 8);
  EXPECT_EQ(r8.cpu.node_bytes, 8 * r8.cpu.bytes);
  // 16 GPUs: each rank's shard halves; a node still runs 8 of them (default gpus_per_node 8).
  const Result r16 = RunWith(R"({"gpus":16,"zero":2,"offload_optimizer":"cpu"})");
  EXPECT_EQ(testing_support::TermBytes(r16.cpu.breakdown, "offloaded_optimizer_states"), CeilDivForTest(states, 16) + CeilDivForTest(4 * trainable, 16));
  EXPECT_EQ(r16.cpu.node_bytes, 8 * r16.cpu.bytes);
  const Result r16x4 = RunWith(R"({"gpus":16,"gpus_per_node":4,"zero":2,"offload_optimizer":"cpu"})");
  EXPECT_EQ(r16x4.cpu.bytes, r16.cpu.bytes);  // the node size changes the node's figure only
  EXPECT_EQ(r16x4.cpu.node_processes, 4);
  EXPECT_EQ(r16x4.cpu.node_bytes, 4 * r16.cpu.bytes);
  EXPECT_EQ(r16x4.gpu.device_total_bytes, r16.gpu.device_total_bytes);
}

// Every rank of a data-parallel job is alike: one role counting every GPU, whose figures are gpu's.
TEST(DataParallel, OneRankRoleHoldsWhatGpuSays) {
  const std::pair<const char*, int64_t> cases[] = {{R"({"gpus":1})", 1}, {R"({"gpus":8,"zero":1})", 8},
                                                    {R"({"gpus":8,"zero":3,"offload_optimizer":"cpu","offload_params":"cpu"})", 8},
                                                    {R"({"gpus":4,"fsdp":true})", 4}};
  for (const auto& [p, gpus] : cases) {
    const Result r = RunWith(p);
    ASSERT_EQ(r.ranks.size(), 1u) << p;
    const RankResult& k = r.ranks[0];
    EXPECT_EQ(k.role, "all");
    EXPECT_EQ(k.count, gpus) << p;
    EXPECT_EQ(k.peak_allocated_bytes, r.gpu.peak_allocated_bytes) << p;
    EXPECT_EQ(k.reserved_bytes, r.gpu.reserved_bytes) << p;
    EXPECT_EQ(k.device_total_bytes, r.gpu.device_total_bytes) << p;
    EXPECT_EQ(k.host_bytes, r.cpu.bytes) << p;
    EXPECT_EQ(k.phase_peaks.backward, r.gpu.phase_peaks.backward) << p;
    ASSERT_EQ(k.breakdown.size(), r.gpu.breakdown.size()) << p;
    for (size_t i = 0; i < k.breakdown.size(); ++i) EXPECT_EQ(k.breakdown[i].bytes, r.gpu.breakdown[i].bytes) << p << " " << k.breakdown[i].key;
  }
}

// FSDP reduces a decoder layer's gradient once its last parameter gradient exists, after copying the
// per-parameter gradients into one flat tensor (FSDP1: autograd's SplitWithSizesBackward cats the
// FlatParameter views' gradients, torch/csrc/autograd/FunctionsManual.cpp split_with_sizes_backward;
// FSDP2: foreach_reduce's reduce_scatter_input): for a moment the unit's gradient exists twice in
// full. The root unit (embedding, final norm, lm_head) reduces only when the embedding's gradient,
// the backward's last, exists: the lm_head's weight gradient is whole until then, and at the end
// the root's gradients are whole twice. Worked by hand on Llama-3.1-8B (pure bf16, 16 ranks, one
// 16-token sequence so that activations, logits and the batch stay below 64 MiB): the rank holds its
// shards of the weights, the AdamW moments and every gradient reduced so far, the gathered units
// (two layers and the root), the largest layer's gradient whole (the rank view's in-flight unit) and:
//   at layer 0's flattening: layer 0's flat copy and the lm_head's gradient whole;
//   at the embedding's backward: the root's gradients whole and their flat copy, and of the gathered
//   units the root alone (layer 0 resharded in its post-backward).
const TimelinePoint* StepNamed(const Result& r, const std::string& step) {
  for (const auto& p : r.timeline) {
    if (p.step == step) return &p;
  }
  return nullptr;
}

TEST(DataParallel, FsdpFlattensAUnitsGradientBeforeItsReduceScatter) {
  auto run = [](const std::string& parallel) {
    return testing_support::EstimateText(R"({"model":"meta-llama/Llama-3.1-8B","train":{"method":"full","precision":"bf16","optimizer":"adamw","optimizer_impl":"fused",)"
                                         R"("micro_batch_size":1,"seq_len":16,"gradient_checkpointing":true},"parallel":)" + parallel + "}");
  };
  const Result one = run(R"({"gpus":1})");
  const Result fsdp = run(R"({"gpus":16,"fsdp":true})");
  const int64_t layer_params = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336 + 2 * 4096;  // q, o; k, v; gate, up, down; 2 norms
  const int64_t layer = layer_params * 2;                                                           // bf16 weights and gradients
  const int64_t embedding = int64_t{128256} * 4096 * 2;                                             // as is lm_head
  const int64_t root = 2 * embedding + 4096 * 2;
  const int64_t gathered = 2 * layer + root;
  const int64_t grads = one.gpu.gradient_bytes;
  const int64_t states = CeilDivForTest(GpuTerm(one, "weights"), 16) + CeilDivForTest(one.gpu.optimizer_state_bytes, 16);
  const TimelinePoint* flat0 = StepNamed(fsdp, "layer 0 gradient flattened for its reduce-scatter (FSDP)");
  ASSERT_NE(flat0, nullptr);
  const int64_t at_layer0 = states + CeilDivForTest(grads - embedding - embedding - layer, 16) + embedding + gathered + 2 * layer;
  EXPECT_GE(flat0->allocated_bytes, at_layer0 - (int64_t{1} << 20));
  EXPECT_LE(flat0->allocated_bytes, at_layer0 + (int64_t{64} << 20));
  const TimelinePoint* emb = StepNamed(fsdp, "embedding backward");
  ASSERT_NE(emb, nullptr);
  const int64_t at_embedding = states + CeilDivForTest(grads - root, 16) + 2 * root + root + layer;
  EXPECT_GE(emb->allocated_bytes, at_embedding - (int64_t{1} << 20));
  EXPECT_LE(emb->allocated_bytes, at_embedding + (int64_t{64} << 20));
  EXPECT_EQ(fsdp.gpu.phase_peaks.backward, emb->allocated_bytes);
  // DeepSpeed ZeRO-3 reduces through its buckets (no flat copy of a unit's gradient, no root unit).
  EXPECT_LT(run(R"({"gpus":16,"zero":3})").gpu.phase_peaks.backward, at_layer0);
}

// FSDP's all-gathers allocate on their own stream (FSDP1 _unshard's unshard_stream, FSDP2
// foreach_all_gather's copy-in stream), and the caching allocator reuses a freed block only for its
// own stream (c10/cuda/CUDACachingAllocator.cpp get_free_block): the gathered units' segments stay
// reserved through the optimizer step. torchtune's 7B full fine-tuning on 4 GPUs (FSDP1, bf16, AdamW,
// batch 2 x 512, checkpointing on) peaks at the optimizer step; its reserve is the usual one plus two
// decoder layers and the root unit, by hand from Llama-2-7B's config:
// layer (3 x 4096^2 + 4096^2 + 3 x 4096 x 11008 + 2 x 4096) x 2 B, root (2 x 32000 x 4096 + 4096) x 2 B.
TEST(DataParallel, FsdpGatherPoolStaysReservedThroughTheOptimizerStep) {
  auto run = [](int batch, int seq) {
    return testing_support::EstimateText(R"({"model":"meta-llama/Llama-2-7b-hf","train":{"method":"full","precision":"bf16","optimizer":"adamw","optimizer_impl":"foreach",)"
                                         R"("micro_batch_size":)" + std::to_string(batch) + R"(,"seq_len":)" + std::to_string(seq) +
                                         R"(,"gradient_checkpointing":true},"parallel":{"gpus":4,"fsdp":true}})");
  };
  auto usual_reserve = [](const Result& r) {
    const int64_t static_bytes = GpuTerm(r, "weights") + GpuTerm(r, "optimizer_states");
    return static_cast<int64_t>(std::llround(0.01 * static_cast<double>(static_bytes) + 0.10 * static_cast<double>(r.gpu.peak_allocated_bytes - static_bytes)));
  };
  const int64_t layer = (4 * int64_t{4096} * 4096 + 3 * int64_t{4096} * 11008 + 2 * 4096) * 2;
  const int64_t root = (2 * int64_t{32000} * 4096 + 4096) * 2;
  const Result at_step = run(2, 512);
  ASSERT_EQ(at_step.peak_phase, "optimizer_step");
  // (within 256 B: the model's 128-B RoPE inv_freq buffer is spread over the layers' share of the weights)
  EXPECT_NEAR(static_cast<double>(GpuTerm(at_step, "allocator_overhead") - usual_reserve(at_step)), static_cast<double>(2 * layer + root), 256.0);
  // A peak in the backward holds the gathered units itself: the usual reserve.
  const Result in_backward = run(8, 2048);
  ASSERT_EQ(in_backward.peak_phase, "backward");
  EXPECT_EQ(GpuTerm(in_backward, "allocator_overhead"), usual_reserve(in_backward));
}

// DeepSpeed ZeRO-3 gathers on its coordinator's own stream too (PartitionedParameterCoordinator
// .fetch_sub_module / __all_gather_params_ and the handles' wait() under __allgather_stream;
// partition_parameters.py all_gather_coalesced allocates the buffers there; DeepSpeed v0.16.5), so
// the blocks of the parameters gathered at the turn stay cached through the optimizer step. Llama-2-7B
// (h 4096, ffn 11008, vocab 32000), full fine-tuning in mixed bf16 on 4 ranks, batch 1 x 128, no
// checkpointing: the step is the peak. By hand from DeepSpeed's defaults (zero3_gather.h's rules),
// walking back from lm_head (F = elements after the module in the forward, norms included; kept
// while 2F < 1e9): lm_head 131,072,000; layer 31 all seven linears (4 x 16,777,216 + 3 x 45,088,768
// = 202,375,168; q_proj's F = 316,678,144); layer 30's down, up, gate (135,266,304), o and v
// (33,554,432; v's F = 485,507,072, k's 502,284,288 is past 5e8): kept 502,267,904. Prefetch while
// under 5e7 in flight: layer 30's k and q (33,554,432), then layer 29's down_proj (45,088,768; its
// input norm is persistent): 78,643,200. The norms (4096 <= 1e5) are never partitioned, never freed:
// not in the idle pool. Pool = (502,267,904 + 78,643,200) x 2 B.
TEST(DataParallel, Zero3GatherPoolStaysReservedThroughTheOptimizerStep) {
  auto run = [](int zero, int batch, int seq, bool checkpointing) {
    return testing_support::EstimateText(R"({"model":"meta-llama/Llama-2-7b-hf","train":{"method":"full","precision":"mixed_bf16","optimizer":"adamw","optimizer_impl":"foreach",)"
                                         R"("micro_batch_size":)" + std::to_string(batch) + R"(,"seq_len":)" + std::to_string(seq) +
                                         R"(,"gradient_checkpointing":)" + (checkpointing ? "true" : "false") + R"(},"parallel":{"gpus":4,"zero":)" +
                                         std::to_string(zero) + "}}");
  };
  auto usual_reserve = [](const Result& r) {
    const int64_t static_bytes = GpuTerm(r, "weights") + GpuTerm(r, "optimizer_states");
    return static_cast<int64_t>(std::llround(0.01 * static_cast<double>(static_bytes) + 0.10 * static_cast<double>(r.gpu.peak_allocated_bytes - static_bytes)));
  };
  const int64_t pool = (int64_t{502'267'904} + 78'643'200) * 2;
  const Result at_step = run(3, 1, 128, false);
  ASSERT_EQ(at_step.peak_phase, "optimizer_step");
  EXPECT_NEAR(static_cast<double>(GpuTerm(at_step, "allocator_overhead") - usual_reserve(at_step)), static_cast<double>(pool), 1.0);
  // ZeRO-2 gathers nothing: the usual reserve.
  const Result zero2 = run(2, 1, 128, false);
  ASSERT_EQ(zero2.peak_phase, "optimizer_step");
  EXPECT_EQ(GpuTerm(zero2, "allocator_overhead"), usual_reserve(zero2));
  // A peak in the backward holds the gathered parameters itself: the usual reserve.
  const Result in_backward = run(3, 8, 4096, false);
  ASSERT_EQ(in_backward.peak_phase, "backward");
  EXPECT_EQ(GpuTerm(in_backward, "allocator_overhead"), usual_reserve(in_backward));
}

}  // namespace
}  // namespace vramplan

namespace vramplan {
namespace data_parallel_test {

// accelerate gives every FSDP job of the Hugging Face stack FSDP's MixedPrecision(param_dtype=bf16)
// (parallel/fsdp_mixed_precision.h): fp32 shards and states, 16-bit compute. With amp_bf16 the
// stored terms equal the fp32 ones, the saved activations those of a bf16 model (the residual
// stream is 16-bit), and ZeRO-3 (DeepSpeed's own bf16 handling, not this policy) is unchanged.
TEST(DataParallel, FsdpMixedPrecisionComputesIn16Bit) {
  auto run = [](const std::string& precision, const std::string& parallel) {
    return testing_support::EstimateText(R"({"model":"meta-llama/Llama-3.1-8B","train":{"method":"lora","precision":")" + precision +
                                         R"(","gradient_checkpointing":true,"micro_batch_size":4,"seq_len":2048,"lora":{"rank":8,"targets":"all-linear","adapter_dtype":"fp32"}},"parallel":)" +
                                         parallel + "}");
  };
  const Result amp_fsdp = run("amp_bf16", R"({"gpus":8,"fsdp":true})");
  const Result amp_z3 = run("amp_bf16", R"({"gpus":8,"zero":3})");
  const Result bf16_fsdp = run("bf16", R"({"gpus":8,"fsdp":true})");
  const Result amp_one = run("amp_bf16", R"({"gpus":1})");
  EXPECT_EQ(GpuTerm(amp_fsdp, "weights"), GpuTerm(amp_z3, "weights"));  // fp32 shards
  EXPECT_EQ(amp_fsdp.gpu.optimizer_state_bytes, amp_z3.gpu.optimizer_state_bytes);
  // Checkpointed layer inputs: bf16 under FSDP mixed precision, fp32 (the residual stream) under
  // plain autocast: at least 2 B less per layer, token and hidden unit (32 layers x 4 x 2,048 tokens
  // x 4,096), worked by hand from Llama-3.1-8B's config; the recomputed layer's saved set shrinks too.
  EXPECT_GE(amp_z3.gpu.saved_activation_bytes - amp_fsdp.gpu.saved_activation_bytes, int64_t{32} * 4 * 2048 * 4096 * 2);
  EXPECT_EQ(amp_z3.gpu.saved_activation_bytes, amp_one.gpu.saved_activation_bytes);
  EXPECT_LE(amp_fsdp.gpu.saved_activation_bytes, bf16_fsdp.gpu.saved_activation_bytes * 11 / 10);
}

}  // namespace
}  // namespace vramplan
