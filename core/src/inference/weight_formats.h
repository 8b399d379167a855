// Bytes actually stored per weight tensor for every inference weight format, and which modules
// each format leaves unquantized. Every count is an exact integer (no bits-per-weight averages):
//  * fp32/fp16/bf16: numel x 4/2/2.
//  * fp8: 1 B per linear weight + fp32 scales (per tensor; DeepSeek-V3 checkpoints use 128x128
//    blocks: weight_scale_inv, see deepseek-ai/DeepSeek-V3 config quantization_config
//    weight_block_size [128,128]); embeddings, lm_head, norms and routers stay 16-bit.
//  * bitsandbytes LLM.int8 (bitsandbytes/nn/modules.py Int8Params, functional.int8_vectorwise_quant):
//    int8 weight + fp32 SCB per output row. transformers keeps lm_head unquantized
//    (integrations/bitsandbytes.py get_keys_to_not_convert).
//  * bitsandbytes NF4 (functional.py quantize_4bit, blocksize 64, compress_statistics=True):
//    packed 4-bit numel/2 B + one uint8 absmax per 64-block + fp32 absmax per 256 of those + the
//    256-entry fp32 code of the nested blockwise quantization + the 16-entry NF4 code.
//  * GPTQ 4-bit (AutoGPTQ qlinear: qweight int32 [in/8, out], qzeros int32 [in/g, out/8],
//    scales fp16 [in/g, out], g_idx int32 [in] (always registered), bias fp16). With a GPTQ / AWQ /
//    pack-quantized quantization_config the bits, group, zeros, g_idx and stored biases are the
//    checkpoint's, kept as the engine keeps them (inference/packed_linear_bytes.h); without one,
//    g = 128 and the explanation says it was assumed.
//  * GPTQ 8-bit: the same QuantLinear buffers at bits = 8 (qweight int32 [in/4, out], qzeros int32
//    [in/g, out/4]); Qwen publishes -GPTQ-Int8 checkpoints (group 128, desc_act false).
//  * MXFP4 (gpt-oss's checkpoint, transformers integrations/mxfp4.py): routed experts only, as
//    *_blocks uint8 [.., out, in/32, 16] (two fp4 e2m1 per byte) + *_scales uint8 [.., out, in/32]
//    (one e8m0 exponent per 32 weights): 17 B per 32 weights; biases, attention, router,
//    embeddings and lm_head stay bf16 (quantization_config.modules_to_not_convert).
//  * AWQ 4-bit GEMM (AutoAWQ awq/modules/linear/gemm.py WQLinear_GEMM: qweight int32 [in, out/8],
//    qzeros int32 [in/g, out/8], scales fp16 [in/g, out], bias fp16); no g_idx.
//  * GGUF: ggml block structs (ggml/src/ggml-common.h, block_q4_K etc.) and the per-tensor type mix
//    of llama.cpp's quantization recipes (src/llama-quant.cpp, llama_tensor_get_type_impl).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "inference/packed_linear_bytes.h"
#include "vramplan/model_spec.h"
#include "vramplan/scenario.h"

namespace vramplan {

// ggml tensor types used by the recipes we model (names as ggml_type_name prints them).
enum class GgmlType {
  kF32, kF16, kBF16, kQ8_0, kQ4_0, kQ4_1, kQ5_0, kQ5_1, kQ2_K, kQ3_K, kQ4_K, kQ5_K, kQ6_K,
  kIq2_Xxs, kIq2_S, kIq3_Xxs, kIq3_S, kIq4_Nl, kIq4_Xs
};

struct GgmlTypeInfo {
  const char* name;
  int64_t block_elems;  // elements per block (1 for float types)
  int64_t block_bytes;  // bytes per block (sizeof(block_xxx) in ggml-common.h)
};

const GgmlTypeInfo& GgmlInfo(GgmlType type);

// Bytes of a row-major ggml tensor with `rows` rows of `cols` elements (ne[0] = cols): rows x
// cols/block x block_bytes (ggml_row_size). Requires cols % block == 0.
int64_t GgmlTensorBytes(GgmlType type, int64_t rows, int64_t cols);

// The ggml type llama.cpp's quantizer picks for a 2-D weight (ne[0] = in_features) when a model is
// quantized to `format` (llama_tensor_get_type_impl + tensor_type_fallback for shapes whose row
// length is not a multiple of the block). Categories follow tensor_get_category.
enum class GgufCategory { kTokenEmbd, kOutput, kAttnQ, kAttnK, kAttnV, kAttnQkv, kAttnKvB, kAttnOutput, kFfnUp, kFfnGate, kFfnDown, kOther };
struct GgufRecipeContext {
  int64_t n_gqa = 1;         // n_head / n_head_kv
  int64_t n_expert = 0;      // routed experts (0 = dense)
  bool is_70b = false;       // llama.cpp LLM_TYPE_70B (80 decoder layers)
  bool tied_embeddings = false;
  bool falcon = false;
};
GgmlType GgufTensorType(WeightFormat format, GgufCategory category, int64_t i_tensor, int64_t n_tensors,
                        int64_t in_features, const GgufRecipeContext& ctx);

bool IsGguf(WeightFormat format);
bool IsQuantized(WeightFormat format);  // anything below 16 bits per linear weight
std::string WeightFormatName(WeightFormat format);
// Compute/activation dtype bytes for the format (fp32 -> 4, everything else runs in 16-bit).
int64_t ComputeDtypeBytes(WeightFormat format);

// Stored bytes of one model in one format, split the way engines place them.
struct WeightBytes {
  int64_t total_bytes = 0;
  int64_t token_embedding_bytes = 0;  // input embedding (+ learned positions)
  int64_t output_bytes = 0;           // lm_head / output.weight (0 when tied and the engine shares it)
  int64_t final_norm_bytes = 0;
  std::vector<int64_t> layer_bytes;   // bytes of decoder layer i
  int64_t all_layers_bytes = 0;       // sum of layer_bytes
  int64_t quantized_params = 0;    // parameters stored in the quantized format
  int64_t unquantized_params = 0;  // parameters kept in 16/32-bit
  std::string explain;             // formula with the numbers plugged in
};

// tp shards linears, embeddings and lm_head (Megatron-style, as vLLM does); norms are replicated.
// `llama_cpp_tied_output`: GGUF files store tied embeddings once (token_embd doubles as output).
// When the model's quantization_config describes the packed layout `format` loads
// (LayoutServesFormat), its linears are the checkpoint's tensors as `loader` keeps them
// (inference/packed_linear_bytes.h); otherwise GPTQ / AWQ assume group 128 and say so in `explain`.
// Pure; a prepared model (planner/prepared.h) keeps the pairs an estimate asks for.
WeightBytes ComputeWeightBytes(const ModelSpec& spec, WeightFormat format, int64_t tp = 1,
                               PackedLoader loader = PackedLoader::kModules);

}  // namespace vramplan
