// Stored bytes of one quantized linear weight (in x out, n = in·out elements) in the layouts that
// both training (QLoRA's frozen base) and inference load. Biases are not included.
#pragma once

#include <cstdint>

namespace vramplan {

// bitsandbytes Params4bit NF4 (blocksize 64): packed 4-bit + absmax (uint8 with double
// quantization: fp32 absmax per 256 blocks + offset + 256-entry code; fp32 per block without)
// + the 16-entry NF4 code (bitsandbytes/functional.py quantize_4bit).
int64_t Nf4Bytes(int64_t n, bool double_quant);

// torchao NF4Tensor (torchao/dtypes/nf4tensor.py, to_nf4: block 64, scaler block 256), torchtune's
// QLoRA base: packed 4-bit + int8 double-quantized scalers per block + the bf16 per-scaler-block
// quantization factor, which double_quantize_scalers returns as quantization_factor[:, 0], a view
// of a materialized (n/64/256, 256) tensor, so its storage is one bf16 per block (n/32 B) + the
// bf16 scaler mean + the 16-entry bf16 NF4 table.
int64_t TorchaoNf4Bytes(int64_t n);

// bitsandbytes LLM.int8 (Int8Params): int8 CB + one fp32 row scale (SCB) per output row.
int64_t Int8RowwiseBytes(int64_t in, int64_t out);

// A GPTQ / AWQ checkpoint's QuantLinear buffers (auto_gptq/nn_modules/qlinear, optimum, AutoAWQ):
// qweight packs `bits` per weight into int32, qzeros packs one zero per group and column, scales
// are fp16 per group and column; GPTQ adds an int32 g_idx per input feature. group_size <= 0 means
// one group.
int64_t GroupQuantBytes(int64_t in, int64_t out, int bits, int group_size, bool g_idx);

// OCP microscaling FP4 (MXFP4) as gpt-oss stores its experts (transformers
// integrations/mxfp4.py, *_blocks and *_scales): per 32 weights 16 bytes of packed e2m1 pairs and
// one e8m0 scale byte. n must be a multiple of 32 (the shapes are, by the block layout).
int64_t Mxfp4Bytes(int64_t n);

}  // namespace vramplan
