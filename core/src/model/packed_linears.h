// Decoder linears a quantized checkpoint stores packed into int32 words, with per-group scales and
// zero points beside them: what each such linear adds to, and takes from, the stored element count
// (ParamCounts::checkpoint_total). The tensor shapes, per linear of in x out features, bits b,
// group g (g = in when group_size is -1) and pack factor p = 32 / b:
//
//   GPTQ (auto_gptq nn_modules/qlinear/qlinear_cuda_old.py QuantLinear.__init__ @179776bd;
//   gptqmodel nn_modules/qlinear/__init__.py GPTQQuantLinear._register_gptq_buffers @00f3d5ef;
//   vLLM gptq.py GPTQLinearMethod.create_weights):
//     qweight int32 [in / 32 * b, out], qzeros int32 [ceil(in / g), out / 32 * b],
//     scales fp16 [ceil(in / g), out], g_idx int32 [in] (always, act-order or not)
//   AWQ, AutoAWQ's GEMM layout (awq/modules/linear/gemm.py WQLinear_GEMM.__init__ @030fe2a1, which
//   transformers' integrations/awq.py loads; vLLM awq.py AWQLinearMethod.create_weights):
//     qweight int32 [in, out / p], qzeros int32 [in / g, out / p], scales fp16 [in / g, out]
//   compressed-tensors pack-quantized (compressors/quantized_compressors/pack_quantized.py
//   PackedQuantizationCompressor.compress_module @179cba93):
//     weight_packed int32 [out, ceil(in / p)], weight_scale [out, ceil(in / g)] (1 column for the
//     channel strategy), weight_shape [2], weight_zero_point int32 [ceil(out / p), ceil(in / g)]
//     when asymmetric, weight_g_idx int32 [in] with actorder "group"
//
// A bias stays a 16-bit tensor of `out` elements in all three.
#pragma once

#include <cstdint>
#include <string>

#include "io/json_reader.h"
#include "vramplan/model_spec.h"

namespace vramplan {

// The layout quantization_config describes: quant_method "gptq" (bits 2, 3, 4 or 8; group_size;
// checkpoint_format / format "gptq" or "gptq_v2", pack_dtype int32), "awq" (bits / w_bit 4;
// group_size / q_group_size; version "gemm"), "compressed-tensors" with format "pack-quantized"
// (the first config group with weights: num_bits 4 or 8, type int, strategy group or channel,
// symmetric, actorder; every group targeting "Linear" and no "re:" entry in `ignore`). Anything
// else, and fields outside these, leave the layout kNone. `note` says, when not empty, what the
// config has that the layout does not read.
struct PackedLinearsReading {
  PackedLinears packed;
  std::string note;
};
PackedLinearsReading PackedLinearsFromConfig(const io::Json& quantization_config);

// Whether the checkpoint stores `l` packed: every decoder linear but the MoE router, Qwen2-MoE's
// shared-expert gate and the DSA indexer's weights_proj (the engines build those without the
// quantization method: vLLM ReplicatedLinear(..., quant_config=None)), and only linears whose
// features fill whole int32 words and groups (vLLM's create_weights refuses others).
bool StoredPacked(const LinearSpec& l, const PackedLinears& p);

// The tensors one copy of a packed linear stores, each with its element count and the bytes of one
// element (the shapes above; int32 4 B, the 16-bit scales and bias 2 B, weight_shape int64 8 B).
// The one description both the checkpoint's element count (PackedLinearElements, below) and the
// engines' weight bytes (inference/packed_linear_bytes.h) are derived from.
enum class PackedTensorRole : uint8_t {
  kWeight,      // qweight / weight_packed
  kZeros,       // qzeros / weight_zero_point
  kScales,      // scales / weight_scale
  kGIdx,        // g_idx / weight_g_idx
  kShape,       // compressed-tensors weight_shape
  kStoredBias,  // the zero 16-bit bias an exporter stores for a linear the model builds without one
};
struct PackedTensor {
  PackedTensorRole role = PackedTensorRole::kWeight;
  int64_t elements = 0;
  int64_t element_bytes = 0;
  int64_t Bytes() const { return elements * element_bytes; }
};
struct PackedTensors {
  PackedTensor tensor[6];
  int count = 0;
  const PackedTensor* begin() const { return tensor; }
  const PackedTensor* end() const { return tensor + count; }
};
// The tensors one copy of `l` stores; none when the layout is kNone. The bias of a linear that has
// one is the model's parameter and is not among them.
PackedTensors PackedLinearTensors(const LinearSpec& l, const PackedLinears& p);

// The elements one copy of `l` stores packed: the packed weight, and the rest (zero points, scales,
// g_idx, weight_shape, a stored zero bias) that the packing adds (PackedLinearTensors summed).
struct PackedElements {
  int64_t weight = 0;
  int64_t metadata = 0;
};
PackedElements PackedLinearElements(const LinearSpec& l, const PackedLinears& p);

}  // namespace vramplan
