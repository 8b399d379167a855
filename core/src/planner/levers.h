// The levers the planner turns (docs/planner.md, "Levers"): for one scenario, each lever is a
// short list of options (the user's value first), each with the fidelity it gives up, and what
// is known about their memory order. Two levers per mode are "inner" chains searched by bisection
// because memory grows and cost falls along them (tests/core/properties_test.cpp proves the
// monotonicity): checkpointing x micro-batch for training, GPU layers x concurrency for serving.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "model/catalog.h"
#include "vramplan/scenario.h"

namespace vramplan {

// Which lever groups the search may turn (the request's "levers" object).
struct LeverSwitches {
  // training
  bool method = true;          // full -> freeze / LoRA / QLoRA
  bool precision = true;       // drop fp32 master weights (pure 16-bit)
  bool optimizer = true;       // 8-bit / paged AdamW, the fused implementation
  bool kernels = true;         // attention kernel, chunked / fused cross-entropy
  bool checkpointing = true;
  bool micro_batch = true;     // smaller micro-batches, more accumulation, the same global batch
  bool sharding = true;        // ZeRO stages, FSDP, CPU / NVMe offload
  bool gpus = true;            // more GPUs of the budget's kind, parallel degrees
  bool seq_len = false;        // a shorter training sequence (changes the job: off unless asked)
  bool lora_rank = false;      // smaller LoRA ranks (adapters are ~0.5% of the weights: rarely a memory lever; off unless asked)
  bool activation_offload = false;  // saved activations to host RAM (doubles the training search: off unless asked)
  bool rollout = true;         // GRPO / PPO with vLLM: sleep level, gpu_memory_utilization, colocate vs server
  bool num_generations = true; // GRPO: fewer completions per prompt (the same prompts per step: a smaller global batch)
  // serving
  bool weights = true;         // weight format
  bool kv_cache = true;        // KV cache dtype
  bool engine_knobs = true;    // flash attention, n_ubatch, n_gpu_layers, gpu_memory_utilization, ...
  bool concurrency = true;     // fewer sequences at once (the rest queue)
  bool context = false;        // a shorter context (changes the job: off unless asked)
};

struct PlanBudget {
  std::string gpu_id;              // the GPU kind plans run on ("" = the scenario's)
  int64_t max_gpus = 0;            // GPUs of that kind at most (0 = the default, docs/planner.md)
  int64_t host_ram_bytes_per_node = 0;  // 0 = not limited
  bool nvme = true;                // NVMe offload allowed
};

// What an option sets: one scenario field (or a small group that moves together), as data, so
// that every option of every lever shares one Apply (levers.cpp) instead of a closure each.
enum class Knob : uint8_t {
  // training
  kMethod, kPrecision, kOptimizer, kFusedAdamW, kTrainAttention, kLoss, kDropOutputs, kZero, kFsdp,
  kOffloadOptimizer, kOffloadParams, kGpus, kTp, kPp, kSeqLen, kCheckpointing, kMicroBatch, kQloraBits,
  kFreezeLayers, kLoraRank, kActivationOffload, kOptimizerInBackward, kPrecomputeRefLogProbs,
  kNumGenerations, kCompletionLength, kVllmSleepLevel, kVllmGpuMemoryUtilizationHundredths, kVllmServer, kTrainingGpusAtMost,
  // serving
  kWeights, kKvCache, kFlashAttn, kUbatch, kGpuMemoryUtilization95, kNoCudaGraphs, kMaxBatchedTokens,
  kServeAttention, kServeGpus, kContextDivisor, kBatch, kGpuLayers, kMaxNumSeqs,
};

struct Assign {
  Knob knob;
  int64_t value = 0;  // the enum's value, a count or a length
};

// Sets one knob. False when it does not apply to the variant the earlier levers made (the fused
// AdamW step once an 8-bit optimizer was chosen, FlashAttention under fp32): such a combination
// repeats another one and is skipped.
bool ApplyAssign(const Assign& a, Scenario* s);

struct LeverOption {
  std::string label;            // what the plan says: "fused AdamW", "ZeRO-3 + CPU offload"
  int fidelity_loss = 0;        // points off 100 (docs/planner.md, "Fidelity")
  std::string fidelity_note;    // "", or what the plan gives up
  std::vector<Assign> sets;     // empty: keep the user's value

  bool Apply(Scenario* s) const {
    for (const Assign& a : sets) {
      if (!ApplyAssign(a, s)) return false;
    }
    return true;
  }
};

// One lever. `no_more_memory[a][b]`: option b never needs more GPU memory than option a, with
// every other lever fixed: a documented fact, property-tested (tests/core/plan_search_test.cpp,
// DeclaredMemoryOrders...); false where not known.
struct LeverDim {
  std::string name;
  std::vector<LeverOption> options;  // options[0]: the user's value
  std::vector<std::vector<bool>> no_more_memory;
};

// A chain searched by bisection: values in increasing memory and decreasing cost.
struct InnerChain {
  std::string name;  // "micro_batch_size", "n_gpu_layers", "batch_size"
  Knob knob = Knob::kBatch;
  std::vector<int64_t> values;
  int64_t replica_batch = 0;  // micro_batch_size: samples per replica per step (the global batch kept)
  int64_t layers = 0;         // n_gpu_layers: the model's layers (all of them = -1)
  void Apply(Scenario* s, int64_t value) const;
};

// The checkpointing levels, from the cheapest (most memory) to the dearest.
struct LeverSpace {
  std::vector<LeverDim> dims;
  std::vector<LeverOption> checkpointing;  // empty: the scenario's own
  // The batch-like chain for one combination of the outer levers (the micro-batch chain depends
  // on the data-parallel degree they chose).
  Knob inner = Knob::kMicroBatch;
  bool inner_free = true;           // the chain may move (else: the user's value only)
  int64_t global_batch = 0;         // training: samples per optimizer step, kept
  int64_t user_micro_batch = 1;
  // GRPO: the user's completions per prompt; a plan with fewer keeps the prompts per step, so its
  // global batch (completions) is global_batch x its num_generations / this.
  int64_t user_num_generations = 0;
  std::vector<std::string> notes;   // what the space leaves out, said in the reply
};

InnerChain InnerChainFor(const LeverSpace& space, const Scenario& variant, const ModelSpec& model);

// Whether a combination is one its framework runs: unsloth's loss on one GPU without ZeRO/FSDP,
// torchtune's optimizer-in-backward without ZeRO/FSDP (each only where the plan turned it on).
// A combination that fails is skipped, like one an option refused.
bool CombinationRuns(const Scenario& user, const Scenario& variant);

// Marks a chain order: options[i+1] never needs more memory than options[i] (i >= start).
void ChainOrder(LeverDim* dim, size_t start = 0);
// Marks no order: every option only bounds itself.
void Incomparable(LeverDim* dim);

LeverSpace TrainingLevers(const Scenario& user, const LeverSwitches& on, const PlanBudget& budget, const GpuEntry* gpu);
LeverSpace ServingLevers(const Scenario& user, const LeverSwitches& on, const PlanBudget& budget, const GpuEntry* gpu);

// The budget's GPU count when the request leaves it out: the scenario's own (more GPUs are a
// budget the user grants; the reply's fewest_gpus answers "how many" separately).
int64_t DefaultMaxGpus(const Scenario& user);

}  // namespace vramplan
