#include "parallel/topology.h"

#include <algorithm>
#include <string>

#include "parallel/fsdp_frozen_unit_hooks.h"
#include "parallel/pipeline.h"

namespace vramplan {
namespace {

void AddError(Issues* errors, const std::string& field, std::string message) {
  errors->push_back(Issue{"invalid_value", field, std::move(message)});
}

}  // namespace

int64_t GpusPerNode(const ParallelConfig& p) {
  return p.gpus_per_node > 0 ? p.gpus_per_node : std::min(std::max<int64_t>(1, p.gpus), kDefaultGpusPerNode);
}

int64_t DataParallelDegree(const ParallelConfig& p) {
  const int64_t model = std::max<int64_t>(1, p.tp) * std::max<int64_t>(1, p.pp) * std::max<int64_t>(1, p.cp);
  return std::max<int64_t>(1, std::max<int64_t>(1, p.gpus) / model);
}

void ValidateTopology(const ParallelConfig& p, Issues* errors) {
  const int64_t model_parallel = p.tp * p.pp * p.cp;
  if (model_parallel < 1 || p.gpus % model_parallel != 0) {
    AddError(errors, "parallel.gpus",
             "parallel.gpus (" + std::to_string(p.gpus) + ") must be a multiple of tp x pp x cp (" + std::to_string(model_parallel) + ")");
  }
  if (p.fsdp && p.zero > 0) AddError(errors, "parallel.fsdp", "choose either parallel.fsdp or parallel.zero, not both");
}

void ValidateTrainingTopology(const Scenario& s, Issues* errors) {
  const ParallelConfig& p = s.parallel;
  const int64_t etp = p.etp > 0 ? p.etp : p.tp;
  if (s.framework.trainer == Trainer::kMegatron) {
    if (p.zero > 1 || p.fsdp) {
      AddError(errors, p.fsdp ? "parallel.fsdp" : "parallel.zero",
               "framework.trainer \"megatron\" shards optimizer states with its distributed optimizer: parallel.zero 0 or 1 "
               "(--use-distributed-optimizer), not ZeRO-2/3 or FSDP");
    }
  }
  if (s.framework.trainer == Trainer::kTorchtitan && p.zero > 0) {
    AddError(errors, "parallel.zero", "framework.trainer \"torchtitan\" shards with FSDP2 (parallel.fsdp true), not DeepSpeed ZeRO");
  }
  if (p.fsdp_frozen_unit_hooks.value_or(false) && !FsdpFrozenUnitHooksApply(s)) {
    AddError(errors, "parallel.fsdp_frozen_unit_hooks",
             "parallel.fsdp_frozen_unit_hooks needs FSDP1's frozen units: parallel.fsdp true, framework.trainer \"hf\", "
             "train.method lora or qlora, full gradient checkpointing without activation_offload");
  }
  if (s.framework.trainer == Trainer::kHf && p.pp > 1) {
    AddError(errors, "parallel.pp",
             "pipeline parallelism needs framework.trainer \"megatron\" or \"torchtitan\" (HF Trainer / accelerate do not run pipeline schedules)");
  }
  if (p.cp > 1) {
    if (s.train.attention == AttentionImpl::kEager) {
      AddError(errors, "train.attention", "context parallelism runs fused attention (ring or all-to-all): train.attention \"sdpa\" or \"flash\"");
    }
    if (p.cp_kind == ContextParallelKind::kRing && s.train.seq_len % (2 * p.cp) != 0) {
      AddError(errors, "train.seq_len",
               "train.seq_len must be a multiple of 2 x parallel.cp (" + std::to_string(2 * p.cp) + "): ring attention splits each sequence into 2 x cp chunks for load balance");
    }
  }
  if (p.pp <= s.model.num_layers) ValidatePipeline(p, s.model.num_layers, errors);
  bool moe = false;
  for (const auto& kind : s.model.kinds) moe = moe || kind.mlp.num_experts > 0;
  if (!moe && p.ep > 1) AddError(errors, "parallel.ep", "parallel.ep > 1 needs a mixture-of-experts model; this one is dense");
  if (!moe && p.moe_capacity_factor > 0) {
    AddError(errors, "parallel.moe_capacity_factor", "parallel.moe_capacity_factor needs a mixture-of-experts model; this one is dense");
  }
  // megatron/core/transformer/transformer_config.py __post_init__: padding to capacity needs a
  // capacity factor ("moe_expert_capacity_factor must be set to use moe_pad_expert_input_to_capacity").
  if (p.moe_pad_expert_input_to_capacity && p.moe_capacity_factor <= 0) {
    AddError(errors, "parallel.moe_pad_expert_input_to_capacity",
             "parallel.moe_pad_expert_input_to_capacity pads each expert to its capacity: it needs parallel.moe_capacity_factor > 0");
  }
  const int64_t per_stage = p.gpus / std::max<int64_t>(1, p.pp);
  if (p.ep > 1 || etp != p.tp) {
    // Megatron: the expert grid etp x ep x edp covers the ranks of one stage (parallel_state.py
    // initialize_model_parallel, expert_tensor_model_pipeline_parallel_size).
    if (per_stage % (etp * p.ep) != 0) {
      AddError(errors, "parallel.ep",
               "parallel.gpus / pp (" + std::to_string(per_stage) + ") must be a multiple of ep x etp (" + std::to_string(etp * p.ep) + ")");
    }
    if (p.tp > 1 && !p.sequence_parallel && s.framework.trainer == Trainer::kMegatron) {
      AddError(errors, "parallel.sequence_parallel", "Megatron runs MoE layers with tp > 1 only with sequence parallelism (parallel.sequence_parallel true)");
    }
  }
}

void ValidateTopologyForModel(const ParallelConfig& p, const ModelSpec& model, Issues* errors) {
  for (const auto& kind : model.kinds) {
    if (p.tp > 1 && kind.attention.num_heads % p.tp != 0) {
      AddError(errors, "parallel.tp",
               "parallel.tp (" + std::to_string(p.tp) + ") must divide the number of attention heads (" + std::to_string(kind.attention.num_heads) + ")");
      break;
    }
    if (p.ep > 1 && kind.mlp.num_experts != 0 && kind.mlp.num_experts % p.ep != 0) {
      AddError(errors, "parallel.ep",
               "parallel.ep (" + std::to_string(p.ep) + ") must divide the number of experts (" + std::to_string(kind.mlp.num_experts) + ")");
      break;
    }
  }
  if (p.pp > model.num_layers) {
    AddError(errors, "parallel.pp", "parallel.pp must be at most the number of layers (" + std::to_string(model.num_layers) + ")");
  }
}

Topology TopologyOf(const Scenario& s) {
  const ParallelConfig& p = s.parallel;
  Topology t;
  t.gpus = std::max<int64_t>(1, p.gpus);
  t.tp = std::max<int64_t>(1, p.tp);
  t.pp = std::max<int64_t>(1, p.pp);
  t.cp = std::max<int64_t>(1, p.cp);
  t.ep = std::max<int64_t>(1, p.ep);
  t.dp = DataParallelDegree(p);
  t.gpus_per_node = GpusPerNode(p);
  const bool inference = s.mode == Mode::kInference;
  if (inference && s.inference.engine == Engine::kTransformers && t.tp == 1) {
    // accelerate's device_map="auto": one process, the layers spread over every GPU of the job.
    t.layer_split = t.gpus;
    t.dp = 1;
  }
  // One process per GPU: torchrun / the DeepSpeed launcher (training), vLLM's tp workers, and
  // transformers' tensor parallelism (tp_plan="auto", launched with torchrun --nproc-per-node).
  // One process for all the GPUs: transformers' device_map="auto" and llama.cpp.
  const bool one_process = inference && (s.inference.engine == Engine::kLlamaCpp || t.layer_split > 1 ||
                                         (s.inference.engine == Engine::kTransformers && t.tp == 1));
  t.host_processes_per_node = one_process ? 1 : t.RanksPerNode();
  // accelerate's dispatch_model (big_modeling.py) places the layers and its hooks (hooks.py,
  // AlignDevicesHook) move each layer's inputs with send_to_device: no torch.distributed process
  // group, so no NCCL communicator. Everything else with more than one GPU communicates (llama.cpp
  // and vLLM replicas are kept as before: counted).
  t.communicator = t.gpus > 1 && t.layer_split == 1;
  if (!inference && t.pp > 1) {
    // One role per pipeline stage: the stages hold different layers (embedding first, output layer
    // and loss last) and different numbers of micro-batches in flight.
    for (int64_t i = 0; i < t.pp; ++i) t.roles.push_back(RankRole{"stage " + std::to_string(i), t.gpus / t.pp, i});
  } else {
    t.roles.push_back(RankRole{"all", t.gpus, 0});
  }
  return t;
}

}  // namespace vramplan
