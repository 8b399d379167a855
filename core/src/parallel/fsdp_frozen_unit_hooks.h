// FSDP1's reshard-only hook on a frozen unit keeps each checkpointed layer's recomputed input and
// its gradient alive until the end of the backward (parallel.fsdp_frozen_unit_hooks).
//
// FSDP1 reshards a unit whose FlatParameter does not require grad from a multi-grad hook on the
// unit's input activations: _pre_forward -> _register_post_backward_reshard_only_hook
// (torch/distributed/fsdp/_runtime_utils.py, PyTorch 2.1-2.4), which returns under no_grad and
// once `flat_param._post_backward_hook_state` exists, and otherwise calls
// register_multi_grad_hook(inp_tensors, ...) on the args that require grad. PEFT's
// fsdp_auto_wrap_policy (peft/utils/other.py), applied by the HF Trainer to PEFT LoRA models
// (Trainer._fsdp_qlora_plugin_updates) and by TRL, puts the LoRA matrices in units of their own, so
// every decoder layer's unit is frozen. Under HF's reentrant checkpointing
// (PreTrainedModel.gradient_checkpointing_enable: use_reentrant=True when no kwargs are given,
// transformers 4.35 and on) the unit's first forward runs under no_grad and its first forward with
// grad is the recompute in CheckpointFunction.backward (torch/utils/checkpoint.py), on
// detach_variable(inputs): leaves sharing the saved input's storage, whose .grad is the gradient
// the checkpoint returns. register_multi_grad_hook (torch/autograd/graph.py) keeps
// `grad_fns` -- for a leaf its AccumulateGrad node, which holds the leaf -- in the closure of the
// hook it stores on the leaf: the leaf, its storage and its .grad live until the handle is removed
// in _finalize_params, from the root's post-backward final callback at the end of the backward.
// FSDP2 (torchtitan; torchtune since 0.3) has no such hook; DeepSpeed neither.
//
// Measured on the CPU with the hook emulated (tests/fixtures/training/measure_fsdp_hooks.py,
// measured_cpu_fsdp_hooks.json): the backward peak moves to layer 0 and rises by (L - 2) input
// gradients plus the LoRA gradients produced meanwhile; the optimizer step is unchanged.
#pragma once

#include "vramplan/scenario.h"

namespace vramplan {

// Where the mechanism can exist: the HF stack's FSDP (FSDP1) on a LoRA / QLoRA model with full
// checkpointing kept on the GPU.
inline bool FsdpFrozenUnitHooksApply(const Scenario& s) {
  return s.mode == Mode::kTrain && s.parallel.fsdp && s.framework.trainer == Trainer::kHf &&
         (s.train.method == TrainMethod::kLora || s.train.method == TrainMethod::kQlora) &&
         s.train.gradient_checkpointing == Checkpointing::kFull && !s.train.activation_offload;
}

// parallel.fsdp_frozen_unit_hooks, its default resolved: on wherever it applies.
inline bool FsdpFrozenUnitHooks(const Scenario& s) {
  return FsdpFrozenUnitHooksApply(s) && s.parallel.fsdp_frozen_unit_hooks.value_or(true);
}

}  // namespace vramplan
