#include "train/weights.h"

#include <algorithm>

#include "format.h"
#include "model/quantized_layouts.h"

namespace vramplan {
namespace {

int64_t QuantizedBytes(int64_t in, int64_t out, int bits, bool double_quant) {
  const int64_t n = in * out;
  switch (bits) {
    case 8: return Int8RowwiseBytes(in, out);
    case 2: return n / 4 + 4 * ((n + 63) / 64);  // 2-bit, group 64, 16-bit scale + zero (HQQ-style)
    default: return Nf4Bytes(n, double_quant);
  }
}

// auto-gptq's QuantLinear keeps a shift table `wf` (int32) as a plain attribute, not a buffer, and
// moves it to the weights' device at its first forward (torch path): 32/bits entries for 2/4/8 bits,
// a 3x12 table for 3 bits (auto_gptq/nn_modules/qlinear/qlinear_cuda_old.py, QuantLinear.__init__
// and forward, AutoGPTQ 0.7). Measured: 28 x 32 B on the 4-bit rows of measured_cpu_gptq.json.
int64_t GptqShiftTableBytes(int bits) { return 4 * (bits == 3 ? 36 : 32 / std::max(1, bits)); }

// "4.50": bits per weight with two decimals, for the explain string.
std::string BitsPerWeight(int64_t bytes, int64_t weights) {
  return Hundredths(static_cast<uint64_t>(bytes * 800 / std::max<int64_t>(1, weights)));
}

}  // namespace

bool IsQuantizedBase(const LinearSpec& l, const TrainConfig& train, ModelLoad load) {
  if (train.method != TrainMethod::kQlora || !l.lora_targetable) return false;  // only nn.Linear modules are replaced
  return load != ModelLoad::kTorchtune01 || IsLoraTarget(l, train.lora);
}

WeightMemory ComputeWeightMemory(const ModelSpec& model, const TrainConfig& train, const TrainPlan& plan,
                                 const PrecisionModel& prec, bool legacy, ModelLoad load, const ParamCounts* params,
                                 bool explain) {
  WeightMemory w;
  const ParamCounts counts = params != nullptr ? *params : CountParams(model);
  const bool qlora = train.method == TrainMethod::kQlora;
  int64_t dense_params = counts.total;
  int64_t quant_bytes = 0;
  int64_t shift_tables = 0;  // GPTQ QuantLinear.wf
  if (qlora) {
    int64_t uses[256] = {0};
    for (uint8_t k : model.layer_kind) ++uses[k];
    for (size_t k = 0; k < model.kinds.size(); ++k) {
      if (uses[k] == 0) continue;
      for (const auto& l : model.kinds[k].linears) {
        if (!IsQuantizedBase(l, train, load)) continue;
        const int64_t n = l.in_features * l.out_features * l.copies * uses[k];
        dense_params -= n;
        w.quantized_linear_params += n;
        quant_bytes += uses[k] * l.copies *
                       (train.qlora_backend == QloraBackend::kGptq      ? GroupQuantBytes(l.in_features, l.out_features, train.qlora_bits, train.qlora_group_size, /*g_idx=*/true)
                        : train.qlora_backend == QloraBackend::kTorchao ? TorchaoNf4Bytes(l.in_features * l.out_features)
                                                                        : QuantizedBytes(l.in_features, l.out_features, train.qlora_bits, train.qlora_double_quant));
        if (train.qlora_backend == QloraBackend::kGptq) shift_tables += uses[k] * l.copies * GptqShiftTableBytes(train.qlora_bits);
        if (train.qlora_backend == QloraBackend::kBitsandbytes && train.qlora_bits == 4) {
          const int64_t n1 = l.in_features * l.out_features;
          w.quant_state_bytes += uses[k] * l.copies * (Nf4Bytes(n1, train.qlora_double_quant) - (n1 + 1) / 2);
        }
      }
    }
  }
  const int64_t vh = model.vocab_size * model.hidden_size;
  const int64_t copies = (plan.embed_copy ? vh : 0) + (plan.lm_head_copy ? vh : 0);
  const int64_t adapters = plan.lora_params * plan.adapter_bytes_per_param;
  // RoPE inv_freq buffer (fp32, rotary_dim / 2), one per model in transformers >= 4.45.
  const int64_t rot_dim = model.kinds.empty() ? 0 : static_cast<int64_t>(model.kinds[0].attention.head_dim * model.rope_fraction);
  const int64_t buffers = model.position_embedding_rows > 0 ? 0 : prec.weight * (rot_dim / 2);  // cast with the model
  // transformers <= 4.45 GPT-2 registers a bool causal-mask buffer and a scalar per attention layer.
  const int64_t legacy_buffers = legacy ? model.num_layers * (model.legacy_buffer_bytes_per_layer + prec.weight) : 0;
  w.bytes = dense_params * prec.weight + quant_bytes + shift_tables + copies * prec.weight + adapters + buffers +
            (model.legacy_buffer_bytes_per_layer > 0 ? legacy_buffers : 0);
  if (!explain) return w;
  w.explain = WithCommas(dense_params) + " params x " + std::to_string(prec.weight) + " B";
  if (qlora) {
    w.explain += " + " + WithCommas(w.quantized_linear_params) + " quantized linear params in " +
                 (train.qlora_backend == QloraBackend::kGptq
                      ? "GPTQ " + std::to_string(train.qlora_bits) + "-bit, group " + std::to_string(train.qlora_group_size) +
                            " (~" + BitsPerWeight(quant_bytes, w.quantized_linear_params) + " bits/weight)"
                  : train.qlora_backend == QloraBackend::kTorchao ? "torchao NF4Tensor (~" + BitsPerWeight(quant_bytes, w.quantized_linear_params) + " bits/weight)"
                  : train.qlora_bits == 4 ? std::string(train.qlora_double_quant ? "NF4 + double quant" : "NF4") +
                                              " (~" + BitsPerWeight(quant_bytes, w.quantized_linear_params) + " bits/weight)"
                                        : std::to_string(train.qlora_bits) + "-bit") +
                 " = " + Gib(quant_bytes);
  }
  if (shift_tables > 0) w.explain += " + QuantLinear.wf shift tables " + WithCommas(shift_tables) + " B";
  if (adapters > 0) w.explain += " + LoRA " + WithCommas(plan.lora_params) + " params x " + std::to_string(plan.adapter_bytes_per_param) + " B";
  if (copies > 0) w.explain += " + modules_to_save copies " + WithCommas(copies) + " x " + std::to_string(prec.weight) + " B";
  if (buffers > 0) w.explain += " + RoPE inv_freq " + std::to_string(buffers) + " B";
  w.explain += " = " + BytesExplained(w.bytes);
  return w;
}

}  // namespace vramplan
