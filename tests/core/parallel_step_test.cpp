// The model-parallel training step against Megatron-LM's own memory formula
// (tests/fixtures/frameworks/megatron_theoretical_memory.json: the outputs of
// megatron/training/theoretical_memory_usage.py at commit d98e8a64, run on each case's arguments)
// and the structure of a pipeline (per-stage roles, micro-batches in flight).
#include "train/parallel_step.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_support.h"

namespace vramplan {
namespace parallel_step_test {

using nlohmann::json;

// The presets with the shapes of the fixture's models (hidden, layers, heads, KV heads, ffn, vocab).
const std::map<std::string, std::string> kPresetOf = {
    {"llama2_7b", "meta-llama/Llama-2-7b-hf"},   {"llama2_70b", "meta-llama/Llama-2-70b-hf"},
    {"llama3_8b", "meta-llama/Llama-3.1-8B"},    {"llama3_70b", "meta-llama/Meta-Llama-3-70B"},
    {"llama3_405b", "meta-llama/Llama-3.1-405B"}, {"mixtral_8x7b", "mistralai/Mixtral-8x7B-v0.1"}};

// GPT-3 shapes (LayerNorm, GELU, ffn = 4h, biases, dropout 0.1, tied) as GPT-2 configs: the
// architecture Megatron's activation formula assumes.
json Gpt3Config(const json& args, int64_t vocab) {
  return json{{"model_type", "gpt2"}, {"n_embd", args["hidden_size"]}, {"n_layer", args["num_layers"]},
              {"n_head", args["num_attention_heads"]}, {"n_positions", 2048}, {"vocab_size", vocab},
              {"resid_pdrop", 0.1}, {"embd_pdrop", 0.1}, {"attn_pdrop", 0.1}, {"tie_word_embeddings", true}};
}

// recompute_granularity: "selective", "full" or null (none).
std::string Recompute(const json& args) {
  const json& g = args["recompute_granularity"];
  return g.is_string() ? g.get<std::string>() : "none";
}

json ScenarioOf(const json& c, const json& model) {
  const json& a = c["args"];
  const int64_t tp = a["tensor_model_parallel_size"], pp = a["pipeline_model_parallel_size"], dp = a["data_parallel_size"];
  json parallel = {{"gpus", tp * pp * dp}, {"tp", tp}, {"pp", pp}, {"sequence_parallel", a["sequence_parallel"].get<bool>()},
                   {"zero", a["use_distributed_optimizer"].get<bool>() ? 1 : 0}};
  if (!a["virtual_pipeline_model_parallel_size"].is_null()) parallel["vpp"] = a["virtual_pipeline_model_parallel_size"];
  if (a.contains("expert_model_parallel_size") && a["expert_model_parallel_size"].get<int64_t>() > 1) parallel["ep"] = a["expert_model_parallel_size"];
  if (a.contains("expert_tensor_parallel_size") && a["expert_tensor_parallel_size"].is_number()) parallel["etp"] = a["expert_tensor_parallel_size"];
  const std::string recompute = Recompute(a);
  return json{{"mode", "train"}, {"model", model}, {"gpu", {{"name", "big"}, {"memory_bytes", int64_t{1} << 48}}},
              {"parallel", parallel},
              {"train", {{"method", "full"}, {"precision", "mixed_bf16"}, {"micro_batch_size", a["micro_batch_size"]},
                         {"seq_len", a["seq_length"]}, {"grad_accum_steps", c["num_microbatches"].is_null() ? 1 : c["num_microbatches"].get<int64_t>()},
                         {"gradient_checkpointing", recompute == "full" ? json(true) : recompute == "selective" ? json("selective") : json(false)},
                         {"attention", "flash"}}},
              {"framework", {{"trainer", "megatron"}}}};
}

const RankResult& FirstStage(const Result& r) { return r.ranks.front(); }

int64_t WorstHostBytes(const Result& r) {
  int64_t most = 0;
  for (const RankResult& k : r.ranks) most = std::max(most, k.host_bytes);
  return most;
}

TEST(ParallelStep, ModelStatesMatchMegatronsFormula) {
  const json doc = testing_support::LoadFixture("frameworks/megatron_theoretical_memory.json");
  ASSERT_TRUE(doc.is_object());
  int checked = 0;
  for (const json& c : doc["cases"]) {
    const std::string model = c["model"];
    if (kPresetOf.count(model) == 0 || c["num_microbatches"].is_null()) continue;
    const json& a = c["args"];
    const Result r = testing_support::EstimateText(ScenarioOf(c, kPresetOf.at(model)).dump());
    ASSERT_FALSE(r.ranks.empty()) << c.dump();
    const RankResult& first = FirstStage(r);
    const double ours = static_cast<double>(testing_support::TermBytes(first.breakdown, "weights") +
                                            testing_support::TermBytes(first.breakdown, "gradients") +
                                            testing_support::TermBytes(first.breakdown, "optimizer_states"));
    const double theirs = c["weight_and_optimizer_bytes"].get<double>();
    // Megatron counts the norms as split over tp (they are whole on every rank) and our weights
    // include the RoPE inv_freq buffer: both far below 0.5%.
    EXPECT_NEAR(ours / theirs, 1.0, 0.005) << model << " " << a.dump();
    ++checked;
  }
  EXPECT_GE(checked, 100);
}

TEST(ParallelStep, ActivationsMatchMegatronsFormulaWhereItsAssumptionsHold) {
  // compute_activation_memory: Korthikanti et al.'s 34 sbh / t per layer (sequence parallel,
  // selective recompute, flash attention, GELU MLP of 4h, dropout masks), the first stage's
  // micro-batches in flight, the embedding's ids and dropout mask, and with pp = 1 the output
  // layer's input and the fp32 logits. Our extra terms (norm statistics, the softmax LSE, the
  // final norm's input) stay within 1%.
  const json doc = testing_support::LoadFixture("frameworks/megatron_theoretical_memory.json");
  int checked = 0;
  for (const json& c : doc["cases"]) {
    const std::string model = c["model"];
    if (model != "gpt3_13b" && model != "gpt3_175b") continue;
    if (c["report_activation_function"] != "compute_activation_memory" || c["num_microbatches"].is_null()) continue;
    const json& a = c["args"];
    const Result r = testing_support::EstimateText(ScenarioOf(c, Gpt3Config(doc["models"][model]["args"], a["padded_vocab_size"])).dump());
    ASSERT_FALSE(r.ranks.empty());
    // The first stage's saved total: the gpu result is the worst stage, which is the first here.
    ASSERT_EQ(r.gpu.peak_allocated_bytes, FirstStage(r).peak_allocated_bytes) << a.dump();
    const double ours = static_cast<double>(r.gpu.saved_activation_bytes);
    const double theirs = c["compute_activation_memory_bytes"].get<double>();
    EXPECT_NEAR(ours / theirs, 1.0, 0.01) << model << " " << a.dump();
    ++checked;
  }
  EXPECT_GE(checked, 20);
}

json Llama70b(int64_t tp, int64_t pp, int64_t cp, bool sp, int64_t microbatches) {
  return json{{"mode", "train"}, {"model", "meta-llama/Llama-2-70b-hf"}, {"gpu", "h100-sxm-80gb"},
              {"parallel", {{"gpus", tp * pp * cp * 2}, {"tp", tp}, {"pp", pp}, {"cp", cp}, {"sequence_parallel", sp}, {"zero", 1}}},
              {"train", {{"method", "full"}, {"precision", "mixed_bf16"}, {"micro_batch_size", 1}, {"seq_len", 4096},
                         {"grad_accum_steps", microbatches}, {"gradient_checkpointing", false}, {"attention", "flash"}}},
              {"framework", {{"trainer", "megatron"}}}};
}

TEST(ParallelStep, EveryPipelineStageIsItsOwnRankRole) {
  const Result r = testing_support::EstimateText(Llama70b(4, 4, 1, true, 32).dump());
  ASSERT_EQ(r.ranks.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(r.ranks[i].role, "stage " + std::to_string(i));
    EXPECT_EQ(r.ranks[i].count, 8);
  }
  // 1F1B: the first stage holds 4 micro-batches, the last one; the first is the worst here.
  EXPECT_GT(testing_support::TermBytes(r.ranks[0].breakdown, "activations"), 3 * testing_support::TermBytes(r.ranks[3].breakdown, "activations"));
  EXPECT_EQ(r.gpu.device_total_bytes, WorstRank(r.ranks).device_total_bytes);
  EXPECT_GT(testing_support::TermBytes(r.ranks[3].breakdown, "logits_and_loss"), 0);
  EXPECT_EQ(testing_support::TermBytes(r.ranks[0].breakdown, "logits_and_loss"), 0);
}

TEST(ParallelStep, SequenceAndContextParallelismShrinkActivations) {
  const auto saved = [](const json& s) { return testing_support::EstimateText(s.dump()).gpu.saved_activation_bytes; };
  const int64_t plain = saved(Llama70b(8, 1, 1, false, 1));
  const int64_t sp = saved(Llama70b(8, 1, 1, true, 1));
  const int64_t cp = saved(Llama70b(8, 1, 2, true, 1));
  EXPECT_LT(sp, plain);  // the norm regions / 8
  EXPECT_NEAR(static_cast<double>(cp) / static_cast<double>(sp), 0.5, 0.01);  // half the sequence per rank
}

json Titan8b(const json& checkpointing, int64_t accumulation, const json& no_sync) {
  json s = {{"mode", "train"}, {"model", "meta-llama/Llama-3.1-8B"}, {"gpu", "h100-sxm-80gb"},
            {"parallel", {{"gpus", 8}, {"fsdp", true}}},
            {"train", {{"method", "full"}, {"precision", "amp_bf16"}, {"micro_batch_size", 1}, {"seq_len", 8192},
                       {"grad_accum_steps", accumulation}, {"gradient_checkpointing", checkpointing}, {"attention", "flash"}}},
            {"framework", {{"trainer", "torchtitan"}}}};
  if (!no_sync.is_null()) s["parallel"]["fsdp_no_sync"] = no_sync;
  return s;
}

TEST(ParallelStep, TorchtitanOpLevelCheckpointingKeepsEveryOtherMatmul) {
  // Per Llama block: the input, q, v, gate, down (the 1st, 3rd, 5th, 7th mm) and the attention
  // output with its logsumexp, in bf16 (torchtitan activation_checkpoint.py _get_custom_policy).
  const int64_t T = 8192, h = 4096, q = 4096, v = 1024, gate = 14336, down = 4096, attn = 4096, heads = 32;
  const int64_t per_layer = 2 * T * (h + q + v + gate + down + attn) + 4 * T * heads;
  const Result sac = testing_support::EstimateText(Titan8b("selective", 1, nullptr).dump());
  const Result full = testing_support::EstimateText(Titan8b(true, 1, nullptr).dump());
  const Result none = testing_support::EstimateText(Titan8b(false, 1, nullptr).dump());
  // Saved totals differ by the layers' share only (the loss head and embedding are the same).
  EXPECT_EQ(sac.gpu.saved_activation_bytes - full.gpu.saved_activation_bytes, 32 * (per_layer - 2 * T * h));
  EXPECT_LT(sac.gpu.saved_activation_bytes, none.gpu.saved_activation_bytes / 2);
}

TEST(ParallelStep, FsdpNoSyncKeepsFullGradientsThroughAccumulation) {
  // FSDP1 under accelerate (trainer hf): no_sync() accumulates unsharded gradients; torchtitan and
  // sync_each_batch reduce-scatter every micro-batch.
  auto backward_grads = [](json s) {
    s["framework"]["trainer"] = "hf";
    const Result r = testing_support::EstimateText(s.dump());
    return testing_support::GpuTerm(r, "gradients");
  };
  const int64_t synced = backward_grads(Titan8b(true, 4, false));
  const int64_t no_sync = backward_grads(Titan8b(true, 4, nullptr));
  EXPECT_GT(no_sync, 6 * synced);  // 8 ranks: the full gradients instead of a 1/8 shard
}

TEST(ParallelStep, MegatronRecomputeMethods) {
  // Full recomputation of Llama-2-70B on TP8 (80 layers, one stage): uniform chunks of n layers keep
  // one input each (transformer_block.py _checkpointed_forward); block keeps the first n layers'
  // inputs and everything of the others.
  auto saved = [](const json& recompute_method, int64_t n) {
    json s = Llama70b(8, 1, 1, true, 1);
    s["train"]["gradient_checkpointing"] = true;
    s["train"]["recompute_method"] = recompute_method;
    s["train"]["recompute_num_layers"] = n;
    return testing_support::EstimateText(s.dump()).gpu.saved_activation_bytes;
  };
  const int64_t input = 2 * 4096 * 8192 / 8;  // bf16, T x h / tp (sequence parallel)
  EXPECT_EQ(saved("uniform", 1) - saved("uniform", 4), (80 - 20) * input);
  const int64_t none = testing_support::EstimateText(Llama70b(8, 1, 1, true, 1).dump()).gpu.saved_activation_bytes;
  const int64_t block40 = saved("block", 40);
  EXPECT_GT(block40, saved("uniform", 1));
  EXPECT_LT(block40, none);
  EXPECT_EQ(saved("block", 0), saved("uniform", 1));
}

TEST(ParallelStep, ActivationOffloadMovesSavedTensorsToHostRam) {
  json s = Llama70b(4, 4, 1, true, 32);
  const Result kept = testing_support::EstimateText(s.dump());
  s["train"]["activation_offload"] = true;
  const Result off = testing_support::EstimateText(s.dump());
  // Stage 0 keeps 20 layers x 4 micro-batches on the GPU without offload; with it, a layer or two.
  const int64_t gpu_before = testing_support::TermBytes(kept.ranks[0].breakdown, "activations");
  const int64_t gpu_after = testing_support::TermBytes(off.ranks[0].breakdown, "activations");
  EXPECT_LT(gpu_after * 8, gpu_before);
  EXPECT_GT(off.ranks[0].host_bytes, gpu_before / 2);  // the stage's layers and its micro-batches in flight
  EXPECT_EQ(off.cpu.node_bytes, off.cpu.node_processes * WorstHostBytes(off));
}

TEST(ParallelStep, SingleGpuJobsKeepTheSingleReplicaStep) {
  Scenario s;
  s.mode = Mode::kTrain;
  EXPECT_FALSE(UsesModelParallelStep(s));
  s.parallel.tp = 2;
  EXPECT_TRUE(UsesModelParallelStep(s));
  s.parallel.tp = 1;
  s.framework.trainer = Trainer::kMegatron;
  EXPECT_TRUE(UsesModelParallelStep(s));
}

}  // namespace
}  // namespace vramplan

namespace vramplan {
namespace parallel_step_test {

// Megatron's token dropping (moe_utils.py get_capacity: ceil((tokens x top_k / experts) x factor);
// token_dispatcher.py MoEAlltoAllTokenDispatcher.preprocess: padded, each local expert computes
// capacity x etp x ep rows, i.e. experts x etp x capacity on the rank).
struct CapacityRow {
  int64_t tokens_per_rank, top_k, experts, etp;
  double factor;
  bool pad;
  int64_t rows;
};

const CapacityRow kCapacity[] = {
    {4096, 2, 8, 1, 0.0, false, 8192},    // dropless: Tu x top_k x etp
    {4096, 2, 8, 2, 0.0, false, 16384},   // ... gathered over the expert-tensor-parallel group
    {4096, 2, 8, 1, 1.0, false, 8192},    // capacity 1024 per expert = the balanced load: nothing dropped
    {4096, 2, 8, 1, 1.25, false, 8192},   // capacity above the load: still what was sent
    {4096, 2, 8, 1, 1.25, true, 10240},   // padded: 8 x ceil(1024 x 1.25) = 8 x 1280
    {4096, 2, 8, 1, 0.5, false, 4096},    // capacity 512 < 1024: half dropped
    {4096, 2, 8, 2, 0.5, true, 8192},     // padded, etp 2: 8 x 2 x 512
    {1000, 6, 64, 1, 1.1, true, 6656},    // ceil((6000 / 64) x 1.1) = ceil(103.125) = 104; 64 x 104
    {1000, 6, 64, 1, 1.1, false, 6000},
};

TEST(ParallelStep, MoeCapacityFactorSizesTheRoutedRows) {
  for (const CapacityRow& row : kCapacity) {
    RankGeometry g;
    g.Tu = row.tokens_per_rank;
    g.etp = row.etp;
    g.moe_capacity_factor = row.factor;
    g.moe_pad_to_capacity = row.pad;
    EXPECT_EQ(RoutedRows(g, row.experts, row.top_k), row.rows) << row.tokens_per_rank << " " << row.factor << " " << row.pad;
  }
}

json MixtralEp(const json& extra) {
  json s = {{"mode", "train"}, {"model", "mistralai/Mixtral-8x7B-v0.1"}, {"gpu", "h100-sxm-80gb"},
            {"parallel", {{"gpus", 64}, {"tp", 2}, {"pp", 4}, {"ep", 8}, {"sequence_parallel", true}, {"zero", 1}}},
            {"train", {{"method", "full"}, {"precision", "mixed_bf16"}, {"micro_batch_size", 1}, {"seq_len", 4096},
                       {"grad_accum_steps", 8}, {"gradient_checkpointing", false}, {"attention", "flash"}}},
            {"framework", {{"trainer", "megatron"}}}};
  s["parallel"].update(extra);
  return s;
}

TEST(ParallelStep, MoeCapacityFactorChangesOnlyTheRoutedActivations) {
  const auto saved = [](const json& extra) { return testing_support::EstimateText(MixtralEp(extra).dump()).gpu.saved_activation_bytes; };
  const int64_t dropless = saved(json::object());
  EXPECT_EQ(saved({{"moe_capacity_factor", 1.0}}), dropless);  // balanced routing fits capacity 1.0
  EXPECT_GT(saved({{"moe_capacity_factor", 1.5}, {"moe_pad_expert_input_to_capacity", true}}), dropless);
  EXPECT_LT(saved({{"moe_capacity_factor", 0.5}}), dropless);
  // Other trainers route dropless: the factor is accepted and said to have no effect.
  json titan = MixtralEp({{"moe_capacity_factor", 0.5}, {"pp", 1}, {"zero", 0}, {"fsdp", true}});
  titan["framework"]["trainer"] = "torchtitan";
  const Result r = testing_support::EstimateText(titan.dump());
  EXPECT_TRUE(testing_support::HasWarning(r, "no_effect", "parallel.moe_capacity_factor"));
}

}  // namespace
}  // namespace vramplan

namespace vramplan {
namespace parallel_step_test {

// Megatron-LM's MoE GPT functional test gpt3_mcore_te_tp2_pp1_te_8experts_etp1_ep4 (d98e8a64dd): 12
// layers, h 512, 8 heads, 8 non-gated GeLU experts of 2048, tp 2 + SP, ep 4, etp 1, b 4, s 1024.
json MegatronMoeGpt(int64_t top_k) {
  const json model = {{"model_type", "gpt2"}, {"n_embd", 512}, {"n_layer", 12}, {"n_head", 8}, {"n_positions", 1024},
                       {"vocab_size", 50257}, {"activation_function", "gelu"}, {"num_local_experts", 8},
                       {"num_experts_per_tok", top_k}, {"add_bias_linear", false}};
  return {{"mode", "train"}, {"model", model}, {"gpu", "h100-sxm-80gb"},
          {"parallel", {{"gpus", 8}, {"tp", 2}, {"ep", 4}, {"etp", 1}, {"sequence_parallel", true}}},
          {"train", {{"method", "full"}, {"precision", "mixed_bf16"}, {"micro_batch_size", 4}, {"seq_len", 1024},
                     {"grad_accum_steps", 2}, {"gradient_checkpointing", false}, {"attention", "eager"}}},
          {"framework", {{"trainer", "megatron"}}}};
}

TEST(ParallelStep, MegatronMoeGptKeepsThreeExpertActivationsPerRoutedRow) {
  const Result top2 = testing_support::EstimateText(MegatronMoeGpt(2).dump());
  // Weights on a rank, by hand: embedding 50432 / 2 = 25,216 rows (vocab padded to 128 x tp) x 512
  // = 12,910,592, positions 1024 x 512 = 524,288; per layer two LayerNorms 2,048, linear_qkv
  // 512 x 1536 / 2 = 393,216, linear_proj 131,072, router 8 x 512 = 4,096, 2 local experts x
  // (512 x 2048 x 2) = 4,194,304, i.e. 4,724,736 x 12 = 56,696,832; final LayerNorm 1,024:
  // 70,132,736 params x 2 B (bf16).
  EXPECT_EQ(testing_support::TermBytes(top2.ranks.back().breakdown, "weights"), 70132736 * 2);
  // One more expert per token routes Tu x etp = 2,048 more rows to each rank's experts, and each
  // row saves fc1's input (h) and, for a non-gated expert, three ffn-wide tensors (the GeLU's input,
  // its output kept by the multiply with the routing probabilities, the bf16 product that is fc2's
  // input: experts.py TEGroupedMLP.forward bias_act_func at d98e8a64dd), in bf16, in 12 layers:
  // 12 x 2,048 x 2 B x (512 + 3 x 2048) = 327,155,712 B.
  const Result top1 = testing_support::EstimateText(MegatronMoeGpt(1).dump());
  EXPECT_EQ(top2.gpu.saved_activation_bytes - top1.gpu.saved_activation_bytes, int64_t{12} * 2048 * 2 * (512 + 3 * 2048));
}

// Host RAM per node with pipeline stages (found by the scenario fuzzer): the worst GPU rank (stage 0,
// which holds pp micro-batches in flight) is not the rank with the most host RAM (stage 3's offloaded
// optimizer shard has the lm_head's). cpu.bytes is the worst GPU rank's; cpu.node_bytes sizes the
// fullest host from the largest rank's host RAM: 8 processes of stage 3's.
TEST(ParallelStep, HostRamPerNodeTakesTheRankWithTheMostHostRam) {
  const Result r = testing_support::EstimateText(
      R"({"model":"meta-llama/Llama-3.1-70B-Instruct","mode":"train","framework":{"trainer":"megatron"},)"
      R"("parallel":{"gpus":16,"pp":4,"zero":1,"offload_optimizer":"cpu"},)"
      R"("train":{"method":"full","precision":"mixed_bf16","seq_len":8192,"grad_accum_steps":8,"gradient_checkpointing":false}})");
  ASSERT_EQ(r.ranks.size(), 4u);
  int64_t largest = 0;
  for (const auto& rank : r.ranks) largest = std::max(largest, rank.host_bytes);
  EXPECT_EQ(r.ranks.front().device_total_bytes, r.gpu.device_total_bytes);  // stage 0 is the worst GPU rank
  EXPECT_EQ(r.cpu.bytes, r.ranks.front().host_bytes);
  EXPECT_GT(r.ranks.back().host_bytes, r.ranks.front().host_bytes);
  EXPECT_EQ(r.cpu.node_processes, 8);
  EXPECT_EQ(r.cpu.node_bytes, largest * 8);
}

}  // namespace
}  // namespace vramplan
