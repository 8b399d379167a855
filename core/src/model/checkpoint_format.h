// The format a quantized checkpoint stores its linears in, as its config.json's
// quantization_config says, named as an `inference.weights` value. Engines load a checkpoint in its
// own format: vLLM reads quantization_config and picks the matching method (vllm/config/model.py
// ModelConfig._verify_quantization, `quant_method`), transformers' from_pretrained picks the
// quantizer registered for quant_method (quantizers/auto.py AUTO_QUANTIZER_MAPPING). A scenario
// that does not set inference.weights is estimated in this format (io/scenario_json.cpp).
#pragma once

#include <string>

#include "io/json_reader.h"

namespace vramplan {

struct CheckpointFormat {
  std::string weights;      // an inference.weights name ("awq_4bit"); "" when no modelled format matches
  std::string description;  // for messages ("awq, 4-bit"); "" when the config names no quantization
};

// awq (bits / w_bit 4) -> awq_4bit; gptq (bits 4 / 8) -> gptq_4bit / gptq_8bit; fp8, fbgemm_fp8
// and modelopt FP8 -> fp8; mxfp4 -> mxfp4; bitsandbytes -> nf4 (load_in_4bit) / int8
// (load_in_8bit); compressed-tensors by its weight scheme: 8-bit float -> fp8, 8-bit int -> int8,
// 4-bit int (W4A16 pack-quantized) -> gptq_4bit. Anything else (NVFP4, 2- and 3-bit GPTQ, HQQ,
// ...) has a description and no format. BitNet's packed checkpoints are described by the model's
// own checkpoint layout (model/hf_config.cpp) and return nothing here.
CheckpointFormat CheckpointFormatFromConfig(const io::Json& config);

}  // namespace vramplan
