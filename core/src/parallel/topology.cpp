#include "parallel/topology.h"

#include <algorithm>
#include <string>

namespace vramplan {
namespace {

void AddError(Issues* errors, const std::string& field, std::string message) {
  errors->push_back(Issue{"invalid_value", field, std::move(message)});
}

}  // namespace

int64_t GpusPerNode(const ParallelConfig& p) {
  return p.gpus_per_node > 0 ? p.gpus_per_node : std::min(std::max<int64_t>(1, p.gpus), kDefaultGpusPerNode);
}

void ValidateTopology(const ParallelConfig& p, Issues* errors) {
  const int64_t model_parallel = p.tp * p.pp * p.cp;
  if (model_parallel < 1 || p.gpus % model_parallel != 0) {
    AddError(errors, "parallel.gpus",
             "parallel.gpus (" + std::to_string(p.gpus) + ") must be a multiple of tp x pp x cp (" + std::to_string(model_parallel) + ")");
  }
  if (p.fsdp && p.zero > 0) AddError(errors, "parallel.fsdp", "choose either parallel.fsdp or parallel.zero, not both");
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
  t.dp = std::max<int64_t>(1, t.gpus / (t.tp * t.pp * t.cp));
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
  t.roles.push_back(RankRole{"all", t.gpus, 0});
  return t;
}

}  // namespace vramplan
