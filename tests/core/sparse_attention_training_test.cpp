// DeepSeek sparse attention in training (DeepSeek-V3.2, GLM-5), worked by hand from transformers'
// modeling_deepseek_v32.py / modeling_glm_moe_dsa.py:
//  * the lightning indexer runs under @torch.no_grad: its linears save nothing, while its scoring
//    holds two fp32
//    [b, s, index_n_heads, s] tensors at once (`matmul(q.float(), k^T.float()) * softmax_scale`, then
//    `F.relu(scores)`);
//  * the top-k indices become a dense [b, 1, s, s] mask in every layer, which SDPA turns into the
//    query's dtype (convert_boolean_attn_mask) and its memory-efficient kernel keeps for backward.
// DeepSeek-V3.2's indexer: index_n_heads 64, index_head_dim 128, q_lora_rank 1536, hidden 7168,
// 61 layers.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_support.h"

#include "train/activations.h"
#include "train/precision.h"

namespace vramplan {
namespace sparse_attention_training_test {

using nlohmann::json;

constexpr const char* kV32 = "deepseek-ai/DeepSeek-V3.2";

// A layer walk under bf16 autocast (the step these tests read) with `impl` attention.
ActivationContext AmpContext(int64_t batch, int64_t seq, AttentionImpl impl) {
  ActivationContext ctx;
  ctx.batch = batch;
  ctx.seq = seq;
  ctx.prec = PrecisionFor(Precision::kAmpBf16);
  ctx.attention = impl;
  return ctx;
}

LayerKind WithoutIndexer(LayerKind k) {
  std::vector<LinearSpec> kept;
  for (const auto& l : k.linears) {
    if (!IsNoGradIndexer(l.slot)) kept.push_back(l);
  }
  k.linears = kept;
  k.attention.index_n_heads = 0;
  k.attention.index_head_dim = 0;
  return k;
}

// One layer's saved set: the SDPA layer keeps one more [b, 1, s, s] tensor in the matmul dtype (bf16
// under autocast: 2 B); FlashAttention gets no mask. The indexer's scratch is 2 x 4 B x b x s x 64 x s.
TEST(SparseAttentionTraining, LayerKeepsTheTopKMaskUnderSdpa) {
  const ModelSpec& m = testing_support::PresetSpec(kV32);
  const LayerKind& dsa = m.kinds[m.layer_kind.back()];
  ASSERT_EQ(dsa.attention.index_n_heads, 64);
  const LayerKind dense = WithoutIndexer(dsa);
  const LayerPlan full{true, true, false};  // weights trainable: the indexer's linears would save inputs if walked
  for (AttentionImpl impl : {AttentionImpl::kSdpa, AttentionImpl::kFlash}) {
    const ActivationContext ctx = AmpContext(2, 1024, impl);
    const LayerSaved with = ComputeLayerSaved(dsa, full, ctx), without = ComputeLayerSaved(dense, full, ctx);
    const int64_t mask = impl == AttentionImpl::kSdpa ? 2LL * 2 * 1024 * 1024 : 0;  // 4 MiB
    EXPECT_EQ(with.total_bytes - without.total_bytes, mask) << static_cast<int>(impl);
    EXPECT_EQ(with.indexer_transient_bytes, 2LL * 4 * 2 * 1024 * 64 * 1024);  // 1 GiB
    EXPECT_EQ(without.indexer_transient_bytes, 0);
  }
}

// Sliding-window layers (Gemma-3-1B: sliding_window 512) get their own mask from the window on
// (masking_utils _ignore_causal_mask_sdpa skips it only while kv_length < the window): one
// [b, 1, s, s] bf16 tensor (b = 2: 2 x 2 B x s^2) kept by SDPA; below the window, and under
// FlashAttention-2 (the window is a kernel argument), nothing.
TEST(SparseAttentionTraining, SlidingLayersKeepTheirMaskFromTheWindowOn) {
  const ModelSpec& m = testing_support::PresetSpec("google/gemma-3-1b-it");
  const LayerKind* sliding = nullptr;
  for (const auto& k : m.kinds) {
    if (k.attention.sliding_window > 0) sliding = &k;
  }
  ASSERT_NE(sliding, nullptr);
  ASSERT_EQ(sliding->attention.sliding_window, 512);
  LayerKind global = *sliding;
  global.attention.sliding_window = 0;
  const LayerPlan lora{false, false, true};
  struct Row {
    AttentionImpl impl;
    int64_t seq;
    int64_t mask;
  };
  const Row rows[] = {{AttentionImpl::kSdpa, 511, 0},
                      {AttentionImpl::kSdpa, 512, 2LL * 2 * 512 * 512},
                      {AttentionImpl::kSdpa, 2048, 2LL * 2 * 2048 * 2048},  // 16 MiB
                      {AttentionImpl::kFlash, 2048, 0}};
  for (const Row& row : rows) {
    ActivationContext ctx = AmpContext(2, row.seq, row.impl);
    LoraConfig adapters;
    adapters.rank = 8;
    adapters.targets = {"q_proj", "v_proj"};
    ctx.lora = &adapters;
    EXPECT_EQ(ComputeLayerSaved(*sliding, lora, ctx).total_bytes - ComputeLayerSaved(global, lora, ctx).total_bytes, row.mask)
        << row.seq << " " << static_cast<int>(row.impl);
  }
}

// A padded batch (unpacked rows of b > 1 with the 2-D attention_mask): masking_utils' sdpa_mask
// is never skipped, so every layer's SDPA converts it and keeps its own [b, 1, s, s] copy (b = 4,
// s = 500, bf16: 2,000,000 B); FlashAttention-2 takes the lengths instead (no mask).
TEST(SparseAttentionTraining, PaddedBatchesKeepAMaskPerLayerUnderSdpa) {
  const ModelSpec& m = testing_support::PresetSpec("meta-llama/Llama-3.1-8B");
  const LayerKind& k = m.kinds[m.layer_kind.front()];
  const LayerPlan lora{false, false, true};
  for (AttentionImpl impl : {AttentionImpl::kSdpa, AttentionImpl::kFlash}) {
    ActivationContext ctx = AmpContext(4, 500, impl);
    LoraConfig adapters;
    adapters.targets = {"q_proj", "v_proj"};
    ctx.lora = &adapters;
    const int64_t packed = ComputeLayerSaved(k, lora, ctx).total_bytes;
    ctx.padded_sdpa_mask = impl == AttentionImpl::kSdpa;  // what train_step sets for this batch
    EXPECT_EQ(ComputeLayerSaved(k, lora, ctx).total_bytes - packed, impl == AttentionImpl::kSdpa ? 2LL * 4 * 500 * 500 : 0);
  }
  EXPECT_EQ(2LL * 4 * 500 * 500, 2000000);
}

// Full fine-tuning: the indexers' weights count as trainable (ZeRO / FSDP flat buffers hold their
// gradients and states), and the step peaks in the optimizer; the forward has the indexer moment.
TEST(SparseAttentionTraining, FullFineTuningKeepsTheIndexerTrainable) {
  const json sc = {{"model", kV32},
                   {"mode", "train"},
                   {"gpu", "h200-sxm-141gb"},
                   {"train", {{"method", "full"}, {"precision", "bf16"}, {"micro_batch_size", 1}, {"seq_len", 4096},
                              {"gradient_checkpointing", true}, {"attention", "sdpa"}}}};
  const Result r = testing_support::EstimateText(sc.dump());
  EXPECT_EQ(r.trainable_params, r.params.total);
  bool forward_scores = false;
  for (const auto& p : r.timeline) forward_scores = forward_scores || (p.phase == "forward" && p.step == "layer 60 DSA indexer scores");
  EXPECT_TRUE(forward_scores);
  for (const auto& w : r.warnings) EXPECT_EQ(w.message.find("sparse attention"), std::string::npos) << w.message;
}

// The forward's indexer moment of the last layer against the end of layer 57 (the timeline keeps
// every third layer), LoRA on q_a_proj under full checkpointing (batch 1, 4,096 tokens, bf16): every
// layer keeps only its checkpointed input (bf16 4,096 x 7,168 = 58,720,256 B), so layers 58-60 add
// three inputs, and at layer 60's indexer the decoder layer's `residual` and the two fp32 score
// tensors (2 x 4 B x 4,096 x 64 x 4,096 = 8 GiB) are alive: the step's peak.
TEST(SparseAttentionTraining, ForwardPeaksAtTheIndexerForLongSequences) {
  const json sc = {{"model", kV32},
                   {"mode", "train"},
                   {"gpu", "h200-sxm-141gb"},
                   {"train", {{"method", "lora"}, {"precision", "bf16"}, {"micro_batch_size", 1}, {"seq_len", 4096},
                              {"gradient_checkpointing", true}, {"attention", "sdpa"},
                              {"lora", {{"rank", 16}, {"targets", {"q_a_proj"}}}}}}};
  const Result r = testing_support::EstimateText(sc.dump());
  int64_t scores = -1, layer57 = -1;
  for (const auto& p : r.timeline) {
    if (p.phase == "forward" && p.step == "layer 60 DSA indexer scores") scores = p.allocated_bytes;
    if (p.phase == "forward" && p.step == "layer 57") layer57 = p.allocated_bytes;
  }
  ASSERT_GT(scores, 0);
  ASSERT_GT(layer57, 0);
  const int64_t input = 2LL * 4096 * 7168;
  EXPECT_EQ(input, 58720256);
  EXPECT_EQ(scores - layer57, 3 * input + input + 2LL * 4 * 4096 * 64 * 4096);
  EXPECT_EQ(r.peak_at, "layer 60 DSA indexer scores");
}

}  // namespace
}  // namespace vramplan
