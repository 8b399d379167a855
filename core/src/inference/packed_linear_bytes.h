// The bytes an inference engine holds for one GPTQ / AWQ / compressed-tensors pack-quantized linear
// whose layout the model's quantization_config describes (model/packed_linears.h). Both engines
// start from the checkpoint's tensors (PackedLinearTensors, the same description the checkpoint's
// element count uses) and keep what their load path leaves resident:
//
//  * transformers (kModules): the QuantLinear / WQLinear_GEMM buffers, i.e. every stored tensor,
//    but a stored zero bias: optimum's GPTQQuantizer._replace_by_quant_layers (gptq/quantizer.py
//    @05418739) and transformers' replace_with_awq_linear (integrations/awq.py @027f76a8) build
//    the module with `bias = layer.bias is not None`, so the checkpoint's extra bias is an
//    unexpected key and is not loaded.
//  * vLLM (kVllm), after process_weights_after_loading:
//    - GPTQ, 4 or 8 bits, sym true, group -1 / 32 / 64 / 128 (GPTQMarlinConfig
//      .is_gptq_marlin_compatible, gptq_marlin.py @00161ce0; MARLIN_SUPPORTED_GROUP_SIZES): the
//      gptq_marlin path. MarlinLinearKernel.process_weights_after_loading
//      (kernels/linear/mixed_precision/marlin.py @055e47c2) repacks qweight (gptq_marlin_repack,
//      same int32 count) and permutes scales (same count), replaces qzeros by an empty tensor
//      (zero_points=False) and g_idx by an empty tensor unless desc_act, when it keeps the sorted
//      g_idx and adds g_idx_sort_indices, int32 [in]. desc_act with group -1 reads as false
//      (GPTQMarlinConfig.__init__). Routed experts (GPTQMarlinMoEMethod, same file) keep their
//      w13_qzeros / w2_qzeros, allocated in the 16-bit params_dtype: the qzeros count at 2 B.
//    - other GPTQ (asym, other groups): gptq.py GPTQLinearMethod (@e5dd90be) keeps qweight,
//      qzeros and scales; process_weights_after_loading empties g_idx unless desc_act.
//    - AWQ: awq_marlin.py AWQMarlinLinearMethod.process_weights_after_loading repacks qweight,
//      permutes scales and converts qzeros to Marlin's zero points, each the same int32 / 16-bit
//      count, and leaves g_idx empty; awq.py keeps the three tensors as loaded.
//    - compressed-tensors WNA16 (compressed_tensors_wNa16.py @519b90d4): weight_packed,
//      weight_scale, weight_shape (int64 [2]) and, asymmetric, weight_zero_point stay; with
//      actorder group the sorted weight_g_idx stays and g_idx_sort_indices, int32 [in], is added.
//    - a stored zero bias is skipped by the model's load_weights ("Skip loading extra bias for
//      GPTQ models", e.g. models/llama.py).
//    Row-parallel linears repeat their scales (and GPTQ's kept qzeros) whole on every rank with
//    act-order or one group over all inputs (marlin_utils.py marlin_repeat_scales_on_all_ranks;
//    gptq.py create_weights, scale_and_zero_input_dim None): those bytes are not divided by tp.
//    Not modelled: Marlin's per-device workspace (a few KiB), GPUs without Marlin (compute
//    capability below 7.5, ROCm: gptq.py then keeps qzeros), the fused-MoE fallbacks
//    (MoeWNA16 when Marlin does not support the layer) and the MoE methods' act-order w2 scales
//    held whole (load_full_w2); AWQ and compressed-tensors experts are counted with these
//    per-linear rules.
#pragma once

#include <cstdint>
#include <string>

#include "vramplan/model_spec.h"
#include "vramplan/scenario.h"

namespace vramplan {

enum class PackedLoader : uint8_t { kModules, kVllm };
PackedLoader PackedLoaderFor(Engine engine);

// Whether the config's layout is the one `format` loads: GPTQ at its bits (gptq_4bit / gptq_8bit),
// AWQ (awq_4bit), compressed-tensors pack-quantized 4-bit (gptq_4bit) or 8-bit (gptq_8bit or
// int8, the format model/checkpoint_format.cpp names it).
bool LayoutServesFormat(const PackedLinears& p, WeightFormat format);

// vLLM's choice for a GPTQ layout: the gptq_marlin kernel (above).
bool VllmGptqMarlin(const PackedLinears& p);

// One copy of `l` (without the model's own bias): bytes split by what tensor parallelism divides
// and what every rank holds whole.
struct PackedResidentBytes {
  int64_t sharded = 0;
  int64_t replicated = 0;  // row-parallel scales / zeros vLLM repeats on every rank (tp > 1)
};
PackedResidentBytes PackedLinearResidentBytes(const LinearSpec& l, const PackedLinears& p, PackedLoader loader, int64_t tp);

// For the weights' explanation: the layout and what the engine keeps ("GPTQ 4-bit, group 128,
// desc_act false, sym true; vLLM gptq_marlin keeps qweight + scales").
std::string PackedResidencyText(const PackedLinears& p, PackedLoader loader);

}  // namespace vramplan
