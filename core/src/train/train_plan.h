// Which tensors train and which activations need gradients, per layer, for each method:
//   full    every parameter trains.
//   freeze  the last N decoder layers train (LLaMA-Factory finetuning_type=freeze), optionally the
//           embeddings / lm_head; layers before the first trainable one run without grad.
//   lora    base weights frozen, PEFT adapters A (r x in) and B (out x r) on the target linears;
//           modules_to_save adds full trainable copies of embed_tokens / lm_head.
//   qlora   lora on a 4-bit (NF4 + double quant), 8-bit (LLM.int8) or 2-bit quantized base.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "train/precision.h"
#include "vramplan/model_spec.h"
#include "vramplan/scenario.h"

namespace vramplan {

struct LayerPlan {
  bool input_requires_grad = false;  // the hidden state entering the layer needs a gradient
  bool weights_trainable = false;    // full-weight training of this layer's parameters
  bool lora = false;                 // adapters on the targeted linears of this layer
};

// A trainable tensor's 2-D shape (cols = 1 for vectors): Adafactor factors by it.
struct TensorShape {
  int64_t rows = 0;
  int64_t cols = 1;
  int64_t count = 1;  // identical tensors in a row (routed experts)
  int64_t dtype_bytes = 4;  // the parameter's element size (optimizer states follow it)
  // How many times this entry stands for in the totals. A run of identical layers is listed twice
  // (so that every adjacent pair of tensors still appears, for the single-tensor optimizer's peak)
  // and the second copy carries the rest of the run: O(kinds), not O(layers).
  int64_t repeat = 1;
  int64_t Total() const { return Elements() * count * repeat; }
  int64_t Elements() const { return rows * cols; }
};

struct TrainPlan {
  std::vector<LayerPlan> layers;  // one per decoder layer
  bool embedding_trainable = false;
  bool lm_head_trainable = false;    // separate lm_head weight trains (or tied embedding trains)
  bool final_norm_trainable = false;
  bool embed_copy = false;           // modules_to_save: a trainable copy of embed_tokens
  bool lm_head_copy = false;         // modules_to_save: a trainable copy of lm_head
  int64_t adapter_bytes_per_param = 4;
  int64_t trainable_params = 0;
  int64_t lora_params = 0;
  // Trainable tensors in registration order (model.parameters()), element counts: drives the
  // single-tensor optimizer's temporaries and the per-tensor `step` states.
  std::vector<TensorShape> trainable_tensors;
};

bool IsLoraTarget(const LinearSpec& l, const LoraConfig& lora);

// The gradient bytes one linear produces under `lp`: its weights at `grad_bytes` each when they
// train, its adapters (A and B, at the plan's adapter dtype) when LoRA targets it, else none.
int64_t LinearGradBytes(const LinearSpec& l, const LayerPlan& lp, const TrainConfig& train, const TrainPlan& plan, int64_t grad_bytes);

TrainPlan MakeTrainPlan(const ModelSpec& model, const TrainConfig& train, const PrecisionModel& prec);

}  // namespace vramplan
