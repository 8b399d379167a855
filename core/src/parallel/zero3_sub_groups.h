// DeepSpeed ZeRO-3 runs the optimizer step one sub-group at a time (deepspeed/runtime/zero/stage3.py,
// DeepSpeedZeroOptimizer_Stage3.step: `for sub_group_id, group in enumerate(self.fp16_groups)`
// prepare, step, release). _create_fp16_sub_groups cuts each parameter group greedily, in
// parameter order, by the rank's partition sizes (param.partition_numel(), ceil(numel / dp)): a
// sub-group closes as soon as it reaches sub_group_size elements (DeepSpeedZeroConfig default 1e9,
// deepspeed/runtime/zero/config.py). _prepare_fp32_grad_for_sub_group makes the fp32 gradient of
// that sub-group only (`self.flatten(self.averaged_gradients[i]).to(fp32)`: the 16-bit flat copy
// and its fp32 conversion exist together for a moment) and _release_sub_group drops it
// (`fp32_partitioned_groups_flat[i].grad = None`) before the next sub-group is prepared. So the
// step's temporaries are those of the largest sub-group, not of the rank's whole partition.
// (ZeRO-1/2 convert each parameter group's whole partition: stage_1_and_2.py step.)
#pragma once

#include <cstdint>
#include <vector>

#include "train/train_plan.h"

namespace vramplan {

// DeepSpeedZeroConfig.sub_group_size's default (deepspeed/runtime/zero/config.py: pp_int(1e9)).
inline constexpr int64_t kDeepSpeedSubGroupSize = 1'000'000'000;

// The largest ZeRO-3 sub-group's elements on one of `dp` ranks, for the trainable tensors in
// registration order (TensorShape::count identical tensors in a row; `repeat` > 1 marks the listed
// second copy of a run of identical layers, which stands for `repeat` layers in a row). The
// Trainer's two parameter groups (with and without weight decay) are walked as one list: the
// second holds biases and norms, too small to move a boundary by more than their own size.
int64_t Zero3LargestSubGroupElements(const std::vector<TensorShape>& trainable, int64_t dp, int64_t sub_group_size = kDeepSpeedSubGroupSize);

}  // namespace vramplan
