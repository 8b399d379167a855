// bitsandbytes 4-bit weights under FSDP and ZeRO-3: the quantization state stays whole on every rank.
//
// A Params4bit keeps its packed 4-bit data as the parameter's data and its QuantState (absmax per
// 64-weight block, with double quantization the uint8 absmax plus the fp32 absmax per 256 blocks and
// the 256-entry code; the NF4 code) as a Python attribute, also registered on its Linear4bit
// (`module.quant_state`). FSDP1 flattens and shards only the parameters' data: with
// `use_orig_params: false` (PEFT's examples/sft/configs/fsdp_config_qlora.yaml at 6008f272a) the
// module's weight becomes a view of the flat parameter and loses the attribute, which
// bitsandbytes restores from the module before every forward
// (bitsandbytes/nn/modules.py fix_4bit_weight_quant_state_from_module, 0.43: "the quant state got
// lost when the parameter got converted. This happens for example for fsdp ... we can recover the
// state here"). So each rank holds every layer's QuantState on the GPU, where the weight was
// quantized: not divided by the FSDP ranks, not gathered, and not moved by FSDP's CPU offload
// (which moves the flat parameter only).
//
// DeepSpeed ZeRO-3 does the same: zero.Init / `_partition_param`
// (deepspeed/runtime/zero/partition_parameters.py) replaces `param.data` with an empty tensor and
// keeps the rank's partition in `param.ds_tensor`; the Params4bit object and its quant_state
// attribute stay as they were, whole on every rank (PEFT's run_peft_qlora_deepspeed_stage3.sh).
//
// train/weights.h WeightMemory::quant_state_bytes counts it (model/quantized_layouts.h Nf4Bytes less
// the packed data); RankView::unsharded_weight_bytes keeps it whole on the rank.
#pragma once

#include "parallel/data_parallel.h"
#include "vramplan/scenario.h"

namespace vramplan {

// The weight bytes FSDP / ZeRO-3 leave whole on each rank: bitsandbytes' 4-bit QuantState (0 otherwise).
inline int64_t FsdpUnshardedWeightBytes(const DataParallel& dp, const TrainConfig& train, int64_t quant_state_bytes) {
  const bool bnb4 = train.method == TrainMethod::kQlora && train.qlora_backend == QloraBackend::kBitsandbytes && train.qlora_bits == 4;
  return dp.shard_params && dp.dp > 1 && bnb4 ? quant_state_bytes : 0;
}

}  // namespace vramplan
