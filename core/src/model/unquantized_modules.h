// The modules a quantized checkpoint keeps in 16-bit, as its config.json lists them, and the test
// of one linear against that list. Meta's FP8 Llama 3.1 405B (fbgemm_fp8) keeps every attention
// projection and the first and last layers' MLPs in bf16 (Llama 3 paper, section 6.2, "FP8
// quantization"); gpt-oss keeps attention, router, embeddings and lm_head in bf16.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/json_reader.h"
#include "vramplan/model_spec.h"
#include "vramplan/scenario.h"

namespace vramplan {

// quantization_config.modules_to_not_convert (transformers' quantizers: fbgemm_fp8, fp8, mxfp4,
// bitsandbytes), .ignored_layers (vLLM's Fp8Config) and .ignore (compressed-tensors; "re:"
// regular expressions are left out). At most 4,096 entries of at most 200 characters.
std::vector<std::string> UnquantizedModulesFromConfig(const io::Json& config);

// quantization_config.quant_method, "" when absent.
std::string QuantizationMethodFromConfig(const io::Json& config);

// Whether the checkpoint's list describes `format`: the list belongs to the checkpoint's own
// quantization (gpt-oss's MXFP4 list says nothing about an fp8 re-quantization). fp8 for
// fp8 / fbgemm_fp8, mxfp4, gptq_4bit / gptq_8bit for gptq, awq_4bit for awq, int8 / nf4 for
// bitsandbytes; any quantized format for compressed-tensors or a config without a method.
bool ListDescribesFormat(const std::string& quant_method, WeightFormat format);

// The HF module path of a decoder-layer linear, Llama-style: model.layers.<i>.self_attn.<name>
// (attention), model.layers.<i>.mlp.<name> (MLP and router), .mlp.experts.<name>,
// .mlp.shared_experts.<name>. Families that name their blocks otherwise (Mixtral's
// block_sparse_moe, GPT-2's attn) match only entries that name the linear itself.
std::string LinearModulePath(int64_t layer, const LinearSpec& linear);

// transformers' rule (quantizers/quantizers_utils.py should_convert_module and the older
// `key in ".".join(current_key_name)` test): an entry keeps a module in 16-bit when it occurs in
// the module's path; an entry with "*" when it matches the path or one of its dotted prefixes,
// "*" standing for any run of characters.
bool KeptUnquantized(const std::vector<std::string>& entries, const std::string& module_path);

}  // namespace vramplan
