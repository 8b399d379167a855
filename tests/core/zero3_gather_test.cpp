// DeepSpeed ZeRO-3's gathered parameters at the forward/backward turn (parallel/zero3_gather.h).
// Every expectation is worked out by hand from DeepSpeed's rules
// (deepspeed/runtime/zero/partitioned_param_coordinator.py: a module is kept when the elements
// walked before its reuse, 2 x those after it in the forward, are < max_reuse_distance; prefetch
// adds whole parameters while under min(bucket, max_live - gathered); parameter_offload.py:
// numel <= persistence threshold is never partitioned), not read off the code's output.
#include "parallel/zero3_gather.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace vramplan {
namespace zero3_gather_test {

// embedding 1000; two layers of [norm 10, A 300, B 300, norm 10, C 400]; final norm 10; lm_head 1000.
std::vector<Zero3Module> TinyModel() {
  std::vector<Zero3Module> m = {{1000, 0}};
  for (int layer = 0; layer < 2; ++layer) {
    for (int64_t n : {10, 300, 300, 10, 400}) m.push_back({n, 0});
  }
  m.push_back({10, 0});
  m.push_back({1000, 0});
  return m;
}

struct Case {
  const char* name;
  Zero3Knobs knobs;
  int64_t persistent, kept, prefetched;
};

TEST(Zero3Gather, HandWorkedCases) {
  // Walking back from lm_head (F = elements after the module; kept while 2F < distance):
  //   lm_head F=0, final norm F=1000, C F=1010, norm F=1410, B F=1420, A F=1720, ...
  const Case cases[] = {
      // distance 3000: lm_head, norm, C, norm, B kept (2F = 2840 < 3000; A: 3440): 1000+400+300;
      // prefetch min(250, 10000-1700): A (300, one whole parameter past 250). Norms: 5 x 10.
      {"defaults-like", {250, 10, 10000, 3000}, 50, 1700, 300},
      // max live 1700: nothing left to prefetch.
      {"max live reached", {250, 10, 1700, 3000}, 50, 1700, 0},
      // max live 1800: room for 100, still one whole parameter (A, 300).
      {"max live overshoot", {250, 10, 1800, 3000}, 50, 1700, 300},
      // distance 0: only lm_head (it runs at the turn); prefetch C (400 >= 250) after the final norm.
      {"no reuse", {250, 10, 10000, 0}, 50, 1000, 400},
      // threshold 5: the norms are partitioned like the rest: final norm and the layer's second norm join the tail.
      {"nothing persistent", {250, 5, 10000, 3000}, 0, 1720, 300},
      // prefetch 0: DeepSpeed skips the prefetch.
      {"no prefetch", {0, 10, 10000, 3000}, 50, 1700, 0},
      // distance 1e9: every module kept (the embedding's F = 3050); 1000 + 2 x 1000 + 1000, nothing left to prefetch.
      {"whole model", {250, 10, 1'000'000'000, 1'000'000'000}, 50, 4000, 0},
  };
  for (const Case& c : cases) {
    const Zero3Gathered g = Zero3GatheredAtTurn(c.knobs, TinyModel());
    EXPECT_EQ(g.persistent, c.persistent) << c.name;
    EXPECT_EQ(g.kept, c.kept) << c.name;
    EXPECT_EQ(g.prefetched, c.prefetched) << c.name;
  }
}

TEST(Zero3Gather, Llama2_70bWithDeepSpeedDefaults) {
  // h 8192, ffn 28672, vocab 32000, 80 layers. lm_head 32000 x 8192 = 262,144,000 (F = 0);
  // down_proj 234,881,024 (F = 262,152,192 with the final norm: 2F < 1e9, kept); up_proj
  // (F = 497,033,216: 2F = 994,066,432 < 1e9, kept); gate_proj (F = 731,914,240: released).
  // Prefetch min(5e7, 1e9 - 731,906,048): gate_proj, one whole parameter. Norms (8192 <= 1e5):
  // 161 x 8192 = 1,318,912.
  const ModelSpec& spec = testing_support::PresetSpec("meta-llama/Llama-2-70b-hf");
  ASSERT_EQ(spec.hidden_size, 8192);
  const Zero3Gathered g = Zero3GatheredAtTurn(Zero3Knobs{}, Zero3ModulesOf(spec));
  EXPECT_EQ(g.persistent, 1'318'912);
  EXPECT_EQ(g.kept, 262'144'000 + 2 * 234'881'024);
  EXPECT_EQ(g.prefetched, 234'881'024);
}

TEST(Zero3Gather, KnobsDefaultToDeepSpeedConfig) {
  const Zero3Knobs k = Zero3KnobsOf(ParallelConfig{});
  EXPECT_EQ(k.prefetch_bucket, 50'000'000);
  EXPECT_EQ(k.persistence_threshold, 100'000);
  EXPECT_EQ(k.max_live, 1'000'000'000);
  EXPECT_EQ(k.max_reuse_distance, 1'000'000'000);
  ParallelConfig p;
  p.stage3_max_reuse_distance = 0;
  EXPECT_EQ(Zero3KnobsOf(p).max_reuse_distance, 0);
}

}  // namespace
}  // namespace vramplan
