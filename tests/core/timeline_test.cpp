// One timeline, from the same moments as the peak: for every scenario the highest timeline point is
// the headline peak, to the byte, and each phase's highest point is that phase's peak. The peak is
// a maximum over moments; if the chart were drawn from other numbers (unsharded gradients under
// ZeRO, a loss head's moments left out, a load that is not a moment) the two would disagree and the
// page would show a chart above the capacity line next to "Fits". The same holds per rank: each
// role of ranks[] peaks at its own peak, and gpu is the worst rank. Checked over the generated grid
// (scenario_grid.h), the measured CPU fixtures and the GPU accuracy rows.
#include <algorithm>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "scenario_grid.h"
#include "test_support.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace timeline_test {

struct Violations {
  int scenarios = 0;
  int refused = 0;
  int peak = 0;       // max(timeline) != peak_allocated
  int phase = 0;      // some phase's max(timeline) != its phase peak
  int peak_phase = 0;  // no timeline point at the peak carries peak_phase
  int explain_off = 0;  // without explain strings (and timeline) the figures differ
  int rank_peak = 0;   // some rank role's max(timeline) != its peak_allocated (or a phase's != its phase peak)
  int worst = 0;       // gpu is not the worst rank, or the role counts do not add up to parallel.gpus
  std::string first;  // the first failing scenario, for the message
};

int64_t PhasePeak(const PhasePeaks& p, const std::string& phase) {
  if (phase == "load") return p.load;
  if (phase == "forward") return p.forward;
  if (phase == "backward") return p.backward;
  if (phase == "optimizer_step") return p.optimizer_step;
  return -1;  // zero_grad, prefill, decode: no phase peak of their own
}

// Per rank: every role's timeline peaks at that role's peak (and, in training, each phase at its
// phase peak); gpu is the worst rank and the roles count every GPU once.
void CheckRanks(const std::string& json, const Scenario& s, const Result& r, Violations* v) {
  int64_t count = 0;
  const RankResult* worst = nullptr;
  for (const RankResult& k : r.ranks) {
    count += k.count;
    if (worst == nullptr || k.device_total_bytes > worst->device_total_bytes) worst = &k;
    int64_t highest = -1;
    std::map<std::string, int64_t> by_phase;
    for (const auto& p : k.timeline) {
      highest = std::max(highest, p.allocated_bytes);
      by_phase[p.phase] = std::max(by_phase[p.phase], p.allocated_bytes);
    }
    bool ok = highest == k.peak_allocated_bytes;
    if (s.mode == Mode::kTrain) {
      for (const char* phase : {"load", "forward", "backward", "optimizer_step"}) {
        auto it = by_phase.find(phase);
        ok = ok && it != by_phase.end() && it->second == PhasePeak(k.phase_peaks, phase);
      }
    }
    if (!ok) {
      ++v->rank_peak;
      if (v->first.empty()) v->first = json + ": rank " + k.role + " max(timeline) " + std::to_string(highest) + " != its peak " + std::to_string(k.peak_allocated_bytes) + " (or a phase maximum differs)";
    }
  }
  if (worst == nullptr || count != s.parallel.gpus || worst->device_total_bytes != r.gpu.device_total_bytes ||
      worst->peak_allocated_bytes != r.gpu.peak_allocated_bytes || worst->reserved_bytes != r.gpu.reserved_bytes) {
    ++v->worst;
    if (v->first.empty()) v->first = json + ": gpu is not the worst rank (" + std::to_string(r.ranks.size()) + " roles, counts " + std::to_string(count) + ")";
  }
}

// The breakdown at the peak, term by term (the explain strings aside).
bool SameBreakdownBytes(const std::vector<Term>& a, const std::vector<Term>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].key != b[i].key || a[i].bytes != b[i].bytes) return false;
  }
  return true;
}

void Check(const std::string& json, Violations* v) {
  auto s = ParseScenario(json);
  if (!s.ok()) {
    ++v->refused;
    return;
  }
  ++v->scenarios;
  EstimateOptions options;
  options.explain = true;
  options.inverse = false;
  const Result r = Estimate(s.value(), options);
  // The timeline is built only with explain; the moments, and so the figures, must not depend on it.
  options.explain = false;
  const Result quiet = Estimate(s.value(), options);
  const PhasePeaks& a = r.gpu.phase_peaks;
  const PhasePeaks& b = quiet.gpu.phase_peaks;
  if (quiet.gpu.peak_allocated_bytes != r.gpu.peak_allocated_bytes || quiet.gpu.reserved_bytes != r.gpu.reserved_bytes ||
      a.load != b.load || a.forward != b.forward || a.backward != b.backward || a.optimizer_step != b.optimizer_step ||
      quiet.peak_at != r.peak_at || quiet.timeline.empty() != (s.value().mode == Mode::kTrain) ||  // inference engines always draw theirs
      !SameBreakdownBytes(quiet.gpu.breakdown, r.gpu.breakdown)) {
    if (v->explain_off++ == 0 && v->first.empty()) v->first = json + ": explain off changes the figures";
  }
  CheckRanks(json, s.value(), r, v);
  if (r.timeline.empty()) {
    ++v->peak;
    if (v->first.empty()) v->first = json + " (empty timeline)";
    return;
  }
  int64_t highest = 0;
  std::map<std::string, int64_t> by_phase;
  bool peak_phase_found = false;
  for (const auto& p : r.timeline) {
    highest = std::max(highest, p.allocated_bytes);
    by_phase[p.phase] = std::max(by_phase[p.phase], p.allocated_bytes);
  }
  for (const auto& p : r.timeline) peak_phase_found = peak_phase_found || (p.allocated_bytes == highest && p.phase == r.peak_phase);
  if (highest != r.gpu.peak_allocated_bytes) {
    ++v->peak;
    if (v->first.empty()) v->first = json + ": max(timeline) " + std::to_string(highest) + " != peak_allocated " + std::to_string(r.gpu.peak_allocated_bytes);
  }
  if (s.value().mode == Mode::kTrain) {
    bool phase_ok = true;
    for (const char* phase : {"load", "forward", "backward", "optimizer_step"}) {
      auto it = by_phase.find(phase);
      const int64_t expected = PhasePeak(r.gpu.phase_peaks, phase);
      if (it == by_phase.end() || it->second != expected) {
        phase_ok = false;
        if (v->first.empty()) {
          v->first = json + ": phase " + phase + " max(timeline) " + (it == by_phase.end() ? std::string("absent") : std::to_string(it->second)) +
                     " != phase_peaks " + std::to_string(expected);
        }
      }
    }
    if (!phase_ok) ++v->phase;
    if (!peak_phase_found) {
      ++v->peak_phase;
      if (v->first.empty()) v->first = json + ": no timeline point at the peak has phase " + r.peak_phase;
    }
  }
}

TEST(Timeline, MaxEqualsPeakOverTheTrainingGrid) {
  Violations v;
  for (const auto& json : testing_support::TrainingGrid()) Check(json, &v);
  EXPECT_GE(v.scenarios, 1000);
  EXPECT_LE(v.refused, v.scenarios / 10) << "too many generated scenarios refused by the parser";
  EXPECT_EQ(v.peak, 0) << v.first;
  EXPECT_EQ(v.phase, 0) << v.first;
  EXPECT_EQ(v.peak_phase, 0) << v.first;
  EXPECT_EQ(v.explain_off, 0) << v.first;
  EXPECT_EQ(v.rank_peak, 0) << v.first;
  EXPECT_EQ(v.worst, 0) << v.first;
  std::cout << "[ timeline ] training grid: " << v.scenarios << " scenarios (" << v.refused << " refused), max != peak in " << v.peak
            << ", phase max != phase peak in " << v.phase << ", peak_phase absent at the peak in " << v.peak_phase
            << ", per rank max != peak in " << v.rank_peak << ", gpu != worst rank in " << v.worst << "\n";
}

TEST(Timeline, MaxEqualsPeakOverTheInferenceGrid) {
  Violations v;
  for (const auto& json : testing_support::InferenceGrid()) Check(json, &v);
  EXPECT_GE(v.scenarios, 400);
  EXPECT_EQ(v.peak, 0) << v.first;
  EXPECT_EQ(v.explain_off, 0) << v.first;
  EXPECT_EQ(v.rank_peak, 0) << v.first;
  EXPECT_EQ(v.worst, 0) << v.first;
  std::cout << "[ timeline ] inference grid: " << v.scenarios << " scenarios (" << v.refused << " refused), max != peak in " << v.peak << "\n";
}

// The measured steps (CPU, exact bytes) and the published GPU rows: real scenarios, including the
// host-only quirks (oneDNN buffers) and torchtune 0.1's replayed load.
TEST(Timeline, MaxEqualsPeakOverTheFixtures) {
  Violations v;
  for (const char* file : {"training/measured_cpu.json", "training/measured_cpu_ext.json", "training/measured_cpu_dora.json",
                           "training/measured_cpu_gptq.json", "training/measured_cpu_random.json",
                           "training/measured_cpu_frameworks.json"}) {
    const auto table = testing_support::LoadFixture(file);
    ASSERT_TRUE(table.is_object()) << file;
    for (const auto& row : table["rows"]) Check(row["scenario"].dump(), &v);
  }
  const auto gpu = testing_support::LoadFixture("gpu/training_rows.json");
  ASSERT_TRUE(gpu.is_object());
  for (const auto& row : gpu["rows"]) {
    if (row.value("representable", false)) Check(row["scenario"].dump(), &v);
  }
  EXPECT_GE(v.scenarios, 138);
  EXPECT_EQ(v.refused, 0);
  EXPECT_EQ(v.peak, 0) << v.first;
  EXPECT_EQ(v.phase, 0) << v.first;
  EXPECT_EQ(v.peak_phase, 0) << v.first;
  EXPECT_EQ(v.explain_off, 0) << v.first;
  EXPECT_EQ(v.rank_peak, 0) << v.first;
  EXPECT_EQ(v.worst, 0) << v.first;
}

}  // namespace
}  // namespace vramplan
