// The training levers (docs/planner.md, "Levers"): what each option sets, what fidelity it gives
// up, and the memory orders the search may rely on.
#include <algorithm>
#include <string>

#include "planner/levers.h"

namespace vramplan {
namespace {

// Fidelity points off 100 of each method (docs/planner.md, "Fidelity"): full > freeze > LoRA > QLoRA.
int MethodLoss(TrainMethod m) {
  switch (m) {
    case TrainMethod::kFull: return 0;
    case TrainMethod::kFreeze: return 10;  // the order only; the option's loss scales with the frozen share
    case TrainMethod::kLora: return 20;
    case TrainMethod::kQlora: return 30;
  }
  return 0;
}

const char* MethodLabel(TrainMethod m) {
  switch (m) {
    case TrainMethod::kFull: return "full fine-tuning";
    case TrainMethod::kFreeze: return "freeze all but the last layers";
    case TrainMethod::kLora: return "LoRA r16 on every linear";
    case TrainMethod::kQlora: return "QLoRA (4-bit base) r16 on every linear";
  }
  return "";
}

bool HasFp32Master(Precision p) {
  return p == Precision::kFp32 || p == Precision::kAmpBf16 || p == Precision::kAmpFp16 || p == Precision::kMixedBf16 ||
         p == Precision::kMixedFp16;
}

bool Bf16Capable(const GpuEntry* gpu) {
  return gpu == nullptr || !(gpu->arch == "pascal" || gpu->arch == "volta" || gpu->arch == "turing");
}

// FlashAttention-2 needs Ampere or newer (its README) and 16-bit inputs.
bool FlashCapable(const GpuEntry* gpu) {
  return gpu == nullptr || gpu->arch == "ampere" || gpu->arch == "ada" || gpu->arch == "hopper" || gpu->arch == "blackwell";
}

void AllIncomparable(LeverDim* d) {
  d->no_more_memory.assign(d->options.size(), std::vector<bool>(d->options.size(), false));
  for (size_t i = 0; i < d->options.size(); ++i) d->no_more_memory[i][i] = true;
}

int64_t DataParallel(const ParallelConfig& p) {
  return std::max<int64_t>(1, p.gpus / (std::max<int64_t>(1, p.tp) * std::max<int64_t>(1, p.pp) * std::max<int64_t>(1, p.cp)));
}

LeverDim MethodDim(const Scenario& user) {
  LeverDim d{"method", {}, {}};
  const TrainMethod u = user.train.method;
  d.options.push_back({MethodLabel(u), 0, "", nullptr});
  const TrainMethod order[] = {TrainMethod::kFull, TrainMethod::kFreeze, TrainMethod::kLora, TrainMethod::kQlora};
  for (TrainMethod m : order) {
    if (MethodLoss(m) <= MethodLoss(u)) continue;
    // Freeze trains the last N layers: the fewer, the further from full fine-tuning, but always
    // above LoRA (the order the fidelity axis keeps: full > freeze > LoRA > QLoRA).
    int loss = MethodLoss(m) - MethodLoss(u);
    if (m == TrainMethod::kFreeze) {
      const double frozen = 1.0 - static_cast<double>(std::min(user.train.freeze.trainable_layers, user.model.num_layers)) /
                                      static_cast<double>(std::max<int64_t>(1, user.model.num_layers));
      loss = 1 + static_cast<int>(18.0 * frozen + 0.5);
    }
    LeverOption o{MethodLabel(m), loss, std::string("trains ") + (m == TrainMethod::kFreeze ? "the last layers only" : "low-rank adapters, not the weights"), nullptr};
    o.apply = [m, u](Scenario* s) {
      s->train.method = m;
      if ((m == TrainMethod::kLora || m == TrainMethod::kQlora) && u != TrainMethod::kLora) {
        // PEFT LoraConfig(r=16, target_modules="all-linear"): the common recipe (LLaMA-Factory
        // lora_target all, axolotl lora_target_linear).
        s->train.lora.rank = 16;
        s->train.lora.alpha = 32;
        s->train.lora.all_linear = true;
        s->train.lora.targets.clear();
      }
      if (m == TrainMethod::kQlora) {
        s->train.qlora_bits = 4;
        s->train.qlora_backend = QloraBackend::kBitsandbytes;
      }
      return true;
    };
    d.options.push_back(std::move(o));
  }
  // Not memory-ordered: LoRA / QLoRA add adapter activations (and, under autocast, weight casts)
  // that can outweigh the states they save on small models and long sequences (the planner
  // test's DeclaredMemoryOrders found such scenarios).
  AllIncomparable(&d);
  return d;
}

LeverDim PrecisionDim(const Scenario& user, const GpuEntry* gpu) {
  LeverDim d{"precision", {{"", 0, "", nullptr}}, {}};
  const Precision u = user.train.precision;
  const bool bf16 = Bf16Capable(gpu);
  if (u == Precision::kFp32) {
    const Precision amp = bf16 ? Precision::kAmpBf16 : Precision::kAmpFp16;
    d.options.push_back({bf16 ? "AMP bf16 (fp32 weights, bf16 compute)" : "AMP fp16", 0, "", [amp](Scenario* s) {
                           s->train.precision = amp;
                           return true;
                         }});
  }
  if (HasFp32Master(u)) {
    const Precision pure = bf16 ? Precision::kBf16 : Precision::kFp16;
    d.options.push_back({bf16 ? "pure bf16 (no fp32 master weights)" : "pure fp16", 5, "no fp32 master weights", [pure](Scenario* s) {
                           s->train.precision = pure;
                           s->train.autocast = false;
                           return true;
                         }});
  }
  AllIncomparable(&d);  // not memory-ordered in every scenario (see the planner test)
  return d;
}

LeverDim OptimizerDim(const Scenario& user) {
  LeverDim d{"optimizer", {{"", 0, "", nullptr}}, {}};
  const Optimizer u = user.train.optimizer;
  if (u == Optimizer::kAdamW) {
    d.options.push_back({"8-bit AdamW (bitsandbytes)", 3, "8-bit optimizer states", [](Scenario* s) {
                           s->train.optimizer = Optimizer::kAdamW8bit;
                           s->train.optimizer_impl.reset();
                           return true;
                         }});
  }
  if (u == Optimizer::kAdamW || u == Optimizer::kAdamW8bit) {
    d.options.push_back({"paged 8-bit AdamW (states in unified memory)", 3, "8-bit optimizer states", [](Scenario* s) {
                           s->train.optimizer = Optimizer::kPagedAdamW8bit;
                           s->train.optimizer_impl.reset();
                           return true;
                         }});
  }
  ChainOrder(&d);
  return d;
}

LeverDim OptimizerImplDim(const Scenario& user) {
  LeverDim d{"optimizer_impl", {{"", 0, "", nullptr}}, {}};
  if (user.train.optimizer == Optimizer::kAdamW && user.framework.device == Device::kCuda &&
      user.train.optimizer_impl != OptimizerImpl::kFused) {
    // torch.optim.AdamW(fused=True): one kernel per parameter group, no group-wide temporaries.
    d.options.push_back({"fused AdamW (torch fused=True)", 0, "", [](Scenario* s) {
                           if (s->train.optimizer != Optimizer::kAdamW) return false;
                           s->train.optimizer_impl = OptimizerImpl::kFused;
                           return true;
                         }});
  }
  AllIncomparable(&d);  // not memory-ordered in every scenario (see the planner test)
  return d;
}

LeverDim AttentionDim(const Scenario& user, const GpuEntry* gpu) {
  LeverDim d{"attention", {{"", 0, "", nullptr}}, {}};
  const AttentionImpl u = user.train.attention;
  if (u == AttentionImpl::kEager) {
    d.options.push_back({"SDPA attention", 0, "", [](Scenario* s) {
                           s->train.attention = AttentionImpl::kSdpa;
                           return true;
                         }});
  }
  if (u != AttentionImpl::kFlash && FlashCapable(gpu) && user.framework.trainer == Trainer::kHf) {
    d.options.push_back({"FlashAttention-2", 0, "", [](Scenario* s) {
                           if (s->train.precision == Precision::kFp32) return false;
                           s->train.attention = AttentionImpl::kFlash;
                           return true;
                         }});
  }
  AllIncomparable(&d);  // not memory-ordered in every scenario (see the planner test)
  return d;
}

LeverDim LossDim(const Scenario& user) {
  LeverDim d{"loss", {{"", 0, "", nullptr}}, {}};
  const LossImpl u = user.train.loss;
  if (u == LossImpl::kStandard) {
    d.options.push_back({"chunked cross-entropy", 0, "", [](Scenario* s) {
                           s->train.loss = LossImpl::kChunked;
                           return true;
                         }});
  }
  if (u != LossImpl::kFusedLinear) {
    d.options.push_back({"fused linear cross-entropy (Liger)", 0, "", [](Scenario* s) {
                           s->train.loss = LossImpl::kFusedLinear;
                           return true;
                         }});
  }
  AllIncomparable(&d);  // not memory-ordered in every scenario (see the planner test)
  return d;
}

LeverDim KeepOutputsDim(const Scenario& user) {
  LeverDim d{"keep_outputs", {{"", 0, "", nullptr}}, {}};
  if (user.framework.keep_outputs) {
    d.options.push_back({"drop full-logit outputs (no compute_metrics on logits)", 1, "no full-logit metrics during training", [](Scenario* s) {
                           s->framework.keep_outputs = false;
                           return true;
                         }});
  }
  ChainOrder(&d);
  return d;
}

struct Sharding {
  const char* label;
  int zero;
  bool fsdp;
  Offload optimizer;
  Offload params;
};

// ZeRO-1 is left out: ZeRO-2 shards the gradients too at the same communication volume (one
// reduce-scatter + all-gather per step, Rajbhandari et al. 2020 section 7), so it is never dearer
// and never needs more memory. On one GPU (a budget of one) only the offloading stages remain:
// sharding over one rank saves nothing, offloading does (ZeRO-Offload's single-GPU case).
LeverDim ShardingDim(const Scenario& user, const PlanBudget& budget, bool one_gpu) {
  LeverDim d{"sharding", {{"", 0, "", nullptr}}, {}};
  const ParallelConfig& p = user.parallel;
  std::vector<Sharding> all;
  if (p.fsdp) {
    all = {{"FSDP full shard", 0, true, Offload::kNone, Offload::kNone},
           {"FSDP with CPU offload", 0, true, Offload::kCpu, Offload::kCpu}};
  } else {
    all = {{"DeepSpeed ZeRO-2", 2, false, Offload::kNone, Offload::kNone},
           {"DeepSpeed ZeRO-2 + optimizer on CPU", 2, false, Offload::kCpu, Offload::kNone},
           {"DeepSpeed ZeRO-3", 3, false, Offload::kNone, Offload::kNone},
           {"DeepSpeed ZeRO-3 + optimizer on CPU", 3, false, Offload::kCpu, Offload::kNone},
           {"DeepSpeed ZeRO-3 + optimizer and weights on CPU", 3, false, Offload::kCpu, Offload::kCpu}};
    if (budget.nvme) all.push_back({"DeepSpeed ZeRO-3 + optimizer and weights on NVMe", 3, false, Offload::kNvme, Offload::kNvme});
  }
  if (one_gpu) all.erase(std::remove_if(all.begin(), all.end(), [](const Sharding& sh) { return sh.optimizer == Offload::kNone && sh.params == Offload::kNone; }), all.end());
  std::vector<Sharding> kept;
  for (const Sharding& sh : all) {
    const bool same = sh.zero == p.zero && sh.fsdp == p.fsdp && sh.optimizer == p.offload_optimizer && sh.params == p.offload_params;
    if (same) continue;
    kept.push_back(sh);
    d.options.push_back({sh.label, 0, "", [sh](Scenario* s) {
                           s->parallel.zero = sh.zero;
                           s->parallel.fsdp = sh.fsdp;
                           s->parallel.offload_optimizer = sh.optimizer;
                           s->parallel.offload_params = sh.params;
                           return true;
                         }});
  }
  AllIncomparable(&d);
  // Offloading more of the same stage never needs more GPU memory; ZeRO-2 shards what ZeRO-1
  // shards and the gradients too (DeepSpeed stage_1_and_2.py, the same buckets).
  auto rank = [](const Sharding& sh) { return (sh.optimizer != Offload::kNone ? 1 : 0) + (sh.params != Offload::kNone ? 1 : 0) + (sh.optimizer == Offload::kNvme ? 1 : 0); };
  for (size_t a = 0; a < kept.size(); ++a) {
    for (size_t b = 0; b < kept.size(); ++b) {
      const Sharding& x = kept[a];
      const Sharding& y = kept[b];
      const bool offload_chain = x.zero == y.zero && x.fsdp == y.fsdp && rank(y) >= rank(x) &&
                                 (x.optimizer == Offload::kNone || y.optimizer != Offload::kNone) &&
                                 (x.params == Offload::kNone || y.params != Offload::kNone);
      const bool stage_1_to_2 = !x.fsdp && !y.fsdp && x.zero == 1 && y.zero == 2 && x.optimizer == Offload::kNone && y.optimizer == Offload::kNone;
      d.no_more_memory[a + 1][b + 1] = offload_chain || stage_1_to_2;
    }
  }
  return d;
}

// More GPUs of the budget's kind: data parallel (HF trainer), or data x tensor x pipeline layouts
// (Megatron, torchtitan). Not memory-ordered (DDP's buckets appear with the second GPU).
LeverDim GpusDim(const Scenario& user, int64_t max_gpus, int64_t global_batch) {
  LeverDim d{"gpus", {{"", 0, "", nullptr}}, {}};
  const ParallelConfig& p = user.parallel;
  const bool model_parallel = user.framework.trainer != Trainer::kHf;
  const int64_t node = p.gpus_per_node > 0 ? p.gpus_per_node : 8;
  for (int64_t g = 1; g <= max_gpus; g *= 2) {
    for (int64_t tp = 1; tp <= (model_parallel ? std::min<int64_t>(8, node) : 1); tp *= 2) {
      for (int64_t pp = 1; pp <= (model_parallel ? 8 : 1); pp *= 2) {
        const int64_t cp = std::max<int64_t>(1, p.cp);
        if (g % (tp * pp * cp) != 0) continue;
        if (g == p.gpus && tp == p.tp && pp == p.pp) continue;
        if (!model_parallel && g < p.gpus) continue;  // fewer GPUs never helps data parallelism
        const int64_t dp = g / (tp * pp * cp);
        const bool batch_kept = global_batch % dp == 0;
        std::string label = std::to_string(g) + " GPUs";
        if (model_parallel) label += " (TP " + std::to_string(tp) + ", PP " + std::to_string(pp) + ", DP " + std::to_string(dp) + ")";
        d.options.push_back({label, batch_kept ? 0 : 5, batch_kept ? "" : "a different global batch", [g, tp, pp, model_parallel](Scenario* s) {
                               s->parallel.gpus = g;
                               if (model_parallel) {
                                 s->parallel.tp = tp;
                                 s->parallel.pp = pp;
                                 s->parallel.vpp = 1;
                                 s->parallel.pp_layers.clear();
                                 s->parallel.pp_schedule.reset();
                                 s->parallel.etp = 0;
                                 if (s->framework.trainer == Trainer::kMegatron) s->parallel.sequence_parallel = tp > 1;
                               }
                               return true;
                             }});
      }
    }
  }
  AllIncomparable(&d);
  return d;
}

LeverDim SeqLenDim(const Scenario& user) {
  LeverDim d{"seq_len", {{"", 0, "", nullptr}}, {}};
  int loss = 0;
  for (int64_t len = user.train.seq_len / 2; len >= 256 && loss < 30; len /= 2) {
    loss += 10;
    d.options.push_back({"sequence length " + std::to_string(len), loss, "shorter training sequences", [len](Scenario* s) {
                           s->train.seq_len = len;
                           return true;
                         }});
  }
  ChainOrder(&d);
  return d;
}

std::vector<int64_t> Divisors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t i = 1; i * i <= n; ++i) {
    if (n % i == 0) {
      out.push_back(i);
      if (i != n / i) out.push_back(n / i);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

void ChainOrder(LeverDim* dim, size_t start) {
  const size_t n = dim->options.size();
  dim->no_more_memory.assign(n, std::vector<bool>(n, false));
  for (size_t a = 0; a < n; ++a) {
    for (size_t b = 0; b < n; ++b) dim->no_more_memory[a][b] = a == b || (a >= start && b > a);
  }
}

int64_t DefaultMaxGpus(const Scenario& user) { return std::max<int64_t>(1, user.parallel.gpus); }

LeverSpace TrainingLevers(const Scenario& user, const LeverSwitches& on, const PlanBudget& budget, const GpuEntry* gpu) {
  LeverSpace space;
  const int64_t user_dp = DataParallel(user.parallel);
  const int64_t global_batch = user.train.micro_batch_size * std::max<int64_t>(1, user.train.grad_accum_steps) * user_dp;
  // Megatron and torchtitan run their own kernels (TransformerEngine / SDPA), full-parameter
  // training with fp32 master weights and their own optimizers: their levers are the parallel
  // layout, the distributed optimizer and activation recomputation.
  const bool hf = user.framework.trainer == Trainer::kHf;
  if (!hf) space.notes.push_back("Megatron / torchtitan: the method, precision, optimizer and kernel levers are left to the framework's own settings");
  if (on.method && hf) space.dims.push_back(MethodDim(user));
  if (on.precision && hf) space.dims.push_back(PrecisionDim(user, gpu));
  if (on.optimizer && hf) {
    space.dims.push_back(OptimizerDim(user));
    space.dims.push_back(OptimizerImplDim(user));
  }
  if (on.kernels && hf) {
    space.dims.push_back(AttentionDim(user, gpu));
    space.dims.push_back(LossDim(user));
    space.dims.push_back(KeepOutputsDim(user));
  }
  const int64_t max_gpus = budget.max_gpus > 0 ? budget.max_gpus : DefaultMaxGpus(user);
  if (on.sharding && user.framework.trainer == Trainer::kHf) space.dims.push_back(ShardingDim(user, budget, max_gpus == 1 && user.parallel.gpus == 1));
  if (on.sharding && user.framework.trainer == Trainer::kMegatron && user.parallel.zero == 0) {
    LeverDim d{"sharding", {{"", 0, "", nullptr}, {"Megatron distributed optimizer", 0, "", [](Scenario* s) {
                                                      s->parallel.zero = 1;
                                                      return true;
                                                    }}},
               {}};
    ChainOrder(&d);
    space.dims.push_back(std::move(d));
  }
  if (on.gpus && max_gpus > 1) space.dims.push_back(GpusDim(user, max_gpus, global_batch));
  if (on.seq_len) space.dims.push_back(SeqLenDim(user));
  // Drop levers left with the user's value only.
  space.dims.erase(std::remove_if(space.dims.begin(), space.dims.end(), [](const LeverDim& d) { return d.options.size() < 2; }),
                   space.dims.end());

  if (on.checkpointing) {
    const bool selective = user.framework.trainer != Trainer::kHf;
    space.checkpointing.push_back({"no activation checkpointing", 0, "", [](Scenario* s) {
                                     s->train.gradient_checkpointing = Checkpointing::kNone;
                                     return true;
                                   }});
    if (selective) {
      space.checkpointing.push_back({"selective activation recomputation", 0, "", [](Scenario* s) {
                                       s->train.gradient_checkpointing = Checkpointing::kSelective;
                                       return true;
                                     }});
    }
    space.checkpointing.push_back({"full activation checkpointing", 0, "", [](Scenario* s) {
                                     s->train.gradient_checkpointing = Checkpointing::kFull;
                                     return true;
                                   }});
  }
  const bool micro = on.micro_batch;
  const int64_t user_mbs = user.train.micro_batch_size;
  space.inner = [global_batch, micro, user_mbs](const Scenario& s, const ModelSpec&) {
    InnerChain c;
    c.name = "micro_batch_size";
    const int64_t dp = DataParallel(s.parallel);
    const int64_t replica = std::max<int64_t>(1, (global_batch + dp - 1) / dp);
    if (micro) {
      c.values = Divisors(replica);
    } else {
      c.values = {std::min(user_mbs, replica)};
    }
    c.apply = [replica](Scenario* v, int64_t mbs) {
      v->train.micro_batch_size = mbs;
      v->train.grad_accum_steps = std::max<int64_t>(1, replica / mbs);
    };
    return c;
  };
  return space;
}

}  // namespace vramplan
