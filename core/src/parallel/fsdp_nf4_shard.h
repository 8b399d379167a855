// torchao NF4Tensor weights sharded by FSDP keep their quantization factors compact.
//
// On one GPU a torchao NF4Tensor stores its per-scaler-block quantization factor as
// `quantization_factor[:, 0]`, a view of a materialized (n/64/256, 256) bf16 tensor, so the storage
// holds one bf16 per 64-element block (model/quantized_layouts.h TorchaoNf4Bytes).
// FSDP does not keep that storage: torchtune's `load_from_full_model_state_dict`
// (torchtune/training/_distributed.py, 30b8519e8, 2024-09) quantizes each full weight with `to_nf4`,
// takes this rank's `torch.chunk` and builds the shard with `full_tensor.new_zeros(chunk.size())`
// + `copy_(chunk)`, "replicating logic from `_fsdp_param.py` `_init_sharded_param`" (FSDP2's own
// sharding does the same). torchao's `nf4_new_zeros` (pytorch/ao torchao/dtypes/nf4tensor.py,
// 38cb64cc) allocates every inner tensor afresh with `inner_tensor.size(0) // ratio` elements: for
// `quantization_factor` that is the view's n/64/256 elements, not the storage's n/64. The full
// tensor is then freed, so each rank's shard (and the units FSDP all-gathers from the shards'
// inner tensors, NF4Tensor.fsdp_pre_all_gather) holds 2 B per 16,384 weights instead of 2 B per 64.
#pragma once

#include <cstdint>

namespace vramplan {

// Bytes the sharded layout saves over TorchaoNf4Bytes for `quantized_params` weights (whole
// scaler blocks: to_nf4 requires n/64 to be a multiple of the scaler block, 256).
inline int64_t TorchaoNf4ShardedSavedBytes(int64_t quantized_params) {
  const int64_t blocks = quantized_params / 64;
  return 2 * blocks - 2 * (blocks / 256);
}

}  // namespace vramplan
