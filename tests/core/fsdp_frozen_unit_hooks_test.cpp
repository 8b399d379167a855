// FSDP1's reshard-only hook on PEFT's frozen decoder-layer units (parallel.fsdp_frozen_unit_hooks;
// parallel/fsdp_frozen_unit_hooks.h): under HF's reentrant checkpointing each layer's recomputed
// input and that input's gradient stay allocated from the layer's backward to the end of the
// backward. Worked by hand on Llama-3.1-8B (32 layers, hidden 4,096), one 1,024-token sample per
// GPU, bf16 (a 2-B residual stream): one tensor is T x h x 2 B = 1,024 x 4,096 x 2 = 8 MiB.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "test_support.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace fsdp_frozen_unit_hooks_test {

constexpr int64_t kLayers = 32;
constexpr int64_t kTensor = int64_t{1024} * 4096 * 2;

std::string Scenario(const std::string& method, const std::string& parallel, const std::string& framework = "{}") {
  return R"({"model":"meta-llama/Llama-3.1-8B","train":{"method":")" + method +
         R"(","precision":"bf16","optimizer":"adamw","micro_batch_size":1,"seq_len":1024,"gradient_checkpointing":true},"parallel":)" +
         parallel + R"(,"framework":)" + framework + "}";
}

// The highest backward moment of each decoder layer (timeline steps "layer j ...").
std::map<int64_t, int64_t> BackwardLayers(const Result& r) {
  std::map<int64_t, int64_t> out;
  for (const auto& p : r.timeline) {
    if (p.phase != "backward" || p.step.rfind("layer ", 0) != 0) continue;
    const int64_t j = std::stoll(p.step.substr(6));
    out[j] = std::max(out[j], p.allocated_bytes);
  }
  return out;
}

// At layer j's backward the layers above have released their inputs (L - 1 - j of them, held now)
// and their input gradients; the gradient of layer j + 1's input is layer j's incoming gradient,
// counted either way, so L - 2 - j gradients are held beside it.
TEST(FsdpFrozenUnitHooks, EachLayerHoldsTheInputsAndGradientsOfTheLayersAbove) {
  const Result off = testing_support::EstimateText(Scenario("lora", R"({"gpus":2,"fsdp":true,"fsdp_frozen_unit_hooks":false})"));
  const Result on = testing_support::EstimateText(Scenario("lora", R"({"gpus":2,"fsdp":true})"));  // the default
  const auto a = BackwardLayers(off), b = BackwardLayers(on);
  ASSERT_EQ(a.size(), b.size());  // the timeline's layers (thinned on deep models: 0 and L - 1 always)
  ASSERT_TRUE(a.count(0) && a.count(kLayers - 1));
  for (const auto& [j, bytes] : a) {
    const int64_t held = (kLayers - 1 - j) * kTensor + std::max<int64_t>(0, kLayers - 2 - j) * kTensor;
    EXPECT_EQ(b.at(j) - bytes, held) << "layer " << j;
  }
  // Layer 0 holds (L - 1) inputs and (L - 2) gradients more: 61 x 8 MiB, the most of any layer;
  // the moments before the layers (here the loss head's backward, the peak) do not change.
  EXPECT_EQ(b.at(0) - a.at(0), (2 * kLayers - 3) * kTensor);
  EXPECT_EQ(on.gpu.phase_peaks.backward, std::max(off.gpu.phase_peaks.backward, b.at(0)));
  for (const auto& [j, bytes] : b) EXPECT_LE(bytes, b.at(0)) << "layer " << j;
  // Removed at the end of the backward (_finalize_params): the optimizer step does not see them.
  EXPECT_EQ(on.gpu.phase_peaks.optimizer_step, off.gpu.phase_peaks.optimizer_step);
  EXPECT_EQ(on.gpu.phase_peaks.forward, off.gpu.phase_peaks.forward);
}

// FSDP2 (torchtitan), a full fine-tune (no frozen unit), one GPU (no FSDP) and no checkpointing
// (the hook is registered in the forward on the real activations, which the graph holds anyway):
// unchanged, and the field cannot be set there.
TEST(FsdpFrozenUnitHooks, OnlyFsdp1WithFrozenUnitsAndCheckpointing) {
  const std::string fsdp = R"({"gpus":2,"fsdp":true})";
  const Result titan = testing_support::EstimateText(Scenario("lora", fsdp, R"({"trainer":"torchtitan"})"));
  const Result full = testing_support::EstimateText(Scenario("full", fsdp));
  const Result full_off = testing_support::EstimateText(Scenario("full", R"({"gpus":2,"fsdp":true,"fsdp_frozen_unit_hooks":false})"));
  EXPECT_EQ(full.gpu.peak_allocated_bytes, full_off.gpu.peak_allocated_bytes);
  EXPECT_GT(titan.gpu.peak_allocated_bytes, 0);
  for (const std::string& bad : {Scenario("lora", R"({"gpus":2,"fsdp":true,"fsdp_frozen_unit_hooks":true})", R"({"trainer":"torchtitan"})"),
                                 Scenario("full", R"({"gpus":2,"fsdp":true,"fsdp_frozen_unit_hooks":true})"),
                                 Scenario("lora", R"({"gpus":2,"fsdp_frozen_unit_hooks":true})")}) {
    auto s = ParseScenario(bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.errors()[0].field_path, "parallel.fsdp_frozen_unit_hooks") << bad;
  }
  // Set true where it applies: the default.
  EXPECT_EQ(testing_support::EstimateText(Scenario("lora", R"({"gpus":2,"fsdp":true,"fsdp_frozen_unit_hooks":true})")).gpu.peak_allocated_bytes,
            testing_support::EstimateText(Scenario("lora", fsdp)).gpu.peak_allocated_bytes);
}

// Without explain only the run's last layer is simulated when the moments rise layer by layer
// (RunKeeps): the figures must be those of the full simulation, on the GPU, on the CPU (RNG states
// released per layer), with grad accumulation (no gradient growth) and with layers of two kinds.
TEST(FsdpFrozenUnitHooks, ExplainOffGivesTheSameFigures) {
  for (const std::string& json :
       {Scenario("lora", R"({"gpus":2,"fsdp":true})"), Scenario("qlora", R"({"gpus":4,"fsdp":true})"),
        Scenario("lora", R"({"gpus":2,"fsdp":true})", R"({"device":"cpu"})"),
        std::string(R"({"model":"meta-llama/Llama-3.1-8B","train":{"method":"lora","precision":"bf16","micro_batch_size":2,"seq_len":2048,"grad_accum_steps":4,"gradient_checkpointing":true},"parallel":{"gpus":2,"fsdp":true}})"),
        std::string(R"({"model":"google/gemma-3-4b-it","train":{"method":"lora","precision":"bf16","micro_batch_size":1,"seq_len":4096,"gradient_checkpointing":true},"parallel":{"gpus":2,"fsdp":true}})")}) {
    auto s = ParseScenario(json);
    ASSERT_TRUE(s.ok()) << json;
    EstimateOptions options;
    options.inverse = false;
    const Result loud = Estimate(s.value(), options);
    options.explain = false;
    const Result quiet = Estimate(s.value(), options);
    EXPECT_EQ(quiet.gpu.peak_allocated_bytes, loud.gpu.peak_allocated_bytes) << json;
    EXPECT_EQ(quiet.gpu.phase_peaks.backward, loud.gpu.phase_peaks.backward) << json;
    EXPECT_EQ(quiet.peak_at, loud.peak_at) << json;
  }
}

// The CPU measurement (measured_cpu_fsdp_hooks.json, measure_fsdp_hooks.py: the hook emulated as
// FSDP1 registers it, on the harness's reentrant-checkpointed LoRA Llama): with the hook the
// backward's peak moves from the last layer to layer 0, where every input is still held (as at the
// last layer without it) plus the input gradients of layers 2..L-1 -- L - 2 tensors of b x s x h x
// residual bytes -- plus the LoRA gradients produced meanwhile; the forward and the optimizer step
// are unchanged (the hooks are gone by then).
TEST(FsdpFrozenUnitHooks, CpuMeasurementHoldsLMinus2InputGradientsAtLayer0) {
  const auto fx = testing_support::LoadFixture("training/measured_cpu_fsdp_hooks.json");
  ASSERT_TRUE(fx.is_object());
  const auto& rows = fx["rows"];
  ASSERT_EQ(rows.size(), 4u);
  for (size_t k = 0; k + 1 < rows.size(); k += 2) {
    const auto& off = rows[k];
    const auto& on = rows[k + 1];
    ASSERT_FALSE(off["hooks"].get<bool>());
    ASSERT_TRUE(on["hooks"].get<bool>());
    const int64_t bytes = off["precision"] == "fp32" ? 4 : 2;
    const int64_t tensor = off["batch"].get<int64_t>() * off["seq"].get<int64_t>() * off["hidden"].get<int64_t>() * bytes;
    const int64_t grads = on["backward_breakdown"]["gradients"].get<int64_t>() - off["backward_breakdown"]["gradients"].get<int64_t>();
    EXPECT_EQ(on["backward_peak"].get<int64_t>() - off["backward_peak"].get<int64_t>() - grads, (off["layers"].get<int64_t>() - 2) * tensor)
        << off["name"];
    EXPECT_EQ(on["optimizer_peak"], off["optimizer_peak"]);
    EXPECT_EQ(on["forward_peak"], off["forward_peak"]);
  }
}

}  // namespace
}  // namespace vramplan
