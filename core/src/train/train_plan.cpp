#include "train/train_plan.h"

#include <algorithm>
#include <string>

namespace vramplan {

bool IsLoraTarget(const LinearSpec& l, const LoraConfig& lora) {
  if (!l.lora_targetable) return false;
  // PEFT "all-linear": every nn.Linear except the output layer (peft/tuners/tuners_utils.py,
  // _maybe_include_all_linear_layers); routers are nn.Linear and are included.
  if (lora.all_linear) return true;
  for (const auto& t : lora.targets) {
    if (l.name == t) return true;
  }
  return false;
}

TrainPlan MakeTrainPlan(const ModelSpec& model, const TrainConfig& train, const PrecisionModel& prec) {
  TrainPlan plan;
  const int64_t L = model.num_layers;
  plan.layers.resize(static_cast<size_t>(L));
  const bool adapters = train.method == TrainMethod::kLora || train.method == TrainMethod::kQlora;
  plan.adapter_bytes_per_param = train.lora.adapter_dtype == AdapterDtype::kFp32 ? 4 : prec.weight;
  switch (train.method) {
    case TrainMethod::kFull:
      plan.embedding_trainable = plan.lm_head_trainable = plan.final_norm_trainable = true;
      break;
    case TrainMethod::kFreeze:
      plan.embedding_trainable = train.freeze.train_embeddings;
      plan.lm_head_trainable = train.freeze.train_lm_head || (model.tied_embeddings && train.freeze.train_embeddings);
      plan.final_norm_trainable = train.freeze.train_lm_head;
      break;
    case TrainMethod::kLora:
    case TrainMethod::kQlora:
      for (const auto& m : train.lora.modules_to_save) {
        if (m == "embed_tokens" || m == "wte") plan.embed_copy = true;
        if (m == "lm_head") plan.lm_head_copy = true;
      }
      plan.embedding_trainable = plan.embed_copy;
      plan.lm_head_trainable = plan.lm_head_copy;
      break;
  }
  // unsloth's Fast_RMS_Layernorm (unsloth/kernels/rms_layernorm.py, c069555): its backward returns
  // `dX, None, None, None`, no weight gradient, so the RMSNorm weights of a model patched with it get
  // neither a gradient nor optimizer states even when they require grad (measured: UL09-UL11 in
  // measured_cpu_unsloth_loss.json, full fine-tunes). Liger's RMSNorm does return one.
  const bool norm_weight_grads = !(train.kernels == LayerKernels::kUnsloth && model.norm_kind == NormKind::kRmsNorm);
  if (!norm_weight_grads) plan.final_norm_trainable = false;
  if (model.tied_embeddings && !plan.lm_head_copy && !plan.embed_copy && (plan.embedding_trainable || plan.lm_head_trainable)) {
    plan.embedding_trainable = plan.lm_head_trainable = true;  // one shared tensor
  }
  // Which linears of each layer kind carry adapters (matched once per kind, not per layer).
  std::vector<std::vector<char>> kind_targets(model.kinds.size());
  std::vector<char> kind_has_lora(model.kinds.size(), 0);
  for (size_t k = 0; k < model.kinds.size(); ++k) {
    for (const auto& l : model.kinds[k].linears) {
      const bool t = adapters && IsLoraTarget(l, train.lora);
      kind_targets[k].push_back(t ? 1 : 0);
      kind_has_lora[k] = static_cast<char>(kind_has_lora[k] || t);
    }
  }
  plan.trainable_tensors.reserve(static_cast<size_t>(L) * 12 + 8);
  bool upstream_trainable = plan.embedding_trainable;
  const int64_t first_frozen_free = L - train.freeze.trainable_layers;
  for (int64_t i = 0; i < L; ++i) {
    LayerPlan& lp = plan.layers[static_cast<size_t>(i)];
    lp.input_requires_grad = upstream_trainable;
    lp.weights_trainable = train.method == TrainMethod::kFull || (train.method == TrainMethod::kFreeze && i >= first_frozen_free);
    lp.lora = kind_has_lora[model.layer_kind[static_cast<size_t>(i)]] != 0;
    upstream_trainable = upstream_trainable || lp.weights_trainable || lp.lora;
  }

  // Trainable tensors in registration order: embed_tokens, layers (linears, then norms), norm, lm_head.
  const int64_t state_bytes = prec.state;
  auto add2 = [&plan, state_bytes](int64_t rows, int64_t cols, int64_t count = 1, int64_t dtype = 0) {
    if (rows * cols <= 0 || count <= 0) return;
    plan.trainable_tensors.push_back(TensorShape{rows, cols, count, dtype > 0 ? dtype : state_bytes});
    plan.trainable_params += rows * cols * count;
  };
  auto add = [&add2](int64_t n, int64_t count = 1) { add2(n, 1, count); };
  if (plan.embedding_trainable) {
    add2(model.vocab_size, model.hidden_size);
    if (model.position_embedding_rows > 0) add2(model.position_embedding_rows, model.hidden_size);
    if (model.extra_embedding_params > 0) add(model.extra_embedding_params);
  }
  size_t second_copy_begin = 0, second_copy_end = 0;  // the listed second copy of the current run
  int64_t run_length = 0, block_params = 0, block_lora = 0;
  for (int64_t i = 0; i < L; ++i) {
    const LayerPlan& lp = plan.layers[static_cast<size_t>(i)];
    const uint8_t kind_index = model.layer_kind[static_cast<size_t>(i)];
    const LayerKind& kind = model.kinds[kind_index];
    const bool same = i > 0 && model.layer_kind[static_cast<size_t>(i - 1)] == kind_index &&
                      plan.layers[static_cast<size_t>(i - 1)].weights_trainable == lp.weights_trainable &&
                      plan.layers[static_cast<size_t>(i - 1)].lora == lp.lora;
    run_length = same ? run_length + 1 : 1;
    if (run_length >= 3) {
      // Third and later identical layers: count them on the listed second copy.
      for (size_t t = second_copy_begin; t < second_copy_end; ++t) ++plan.trainable_tensors[t].repeat;
      plan.trainable_params += block_params;
      plan.lora_params += block_lora;
      continue;
    }
    const size_t begin = plan.trainable_tensors.size();
    const int64_t params_before = plan.trainable_params, lora_before = plan.lora_params;
    for (size_t j = 0; j < kind.linears.size(); ++j) {
      const LinearSpec& l = kind.linears[j];
      if (lp.weights_trainable) {
        add2(l.out_features, l.in_features, l.copies);
        if (l.bias) add(l.out_features, l.copies);
      } else if (kind_targets[kind_index][j]) {
        const int64_t ab = train.lora.adapter_dtype == AdapterDtype::kFp32 ? 4 : prec.state;
        add2(train.lora.rank, l.in_features, l.copies, ab);   // lora_A
        add2(l.out_features, train.lora.rank, l.copies, ab);  // lora_B
        plan.lora_params += l.copies * train.lora.rank * (l.in_features + l.out_features);
        if (train.lora.use_dora) {  // lora_magnitude_vector: one per output feature (peft/tuners/lora/dora.py)
          add2(l.out_features, 1, l.copies, ab);
          plan.lora_params += l.copies * l.out_features;
        }
      }
    }
    if (lp.weights_trainable) {
      for (const auto& n : kind.norms) {
        if (!n.has_weight || !norm_weight_grads) continue;
        add(n.dim);
        if (n.bias) add(n.dim);  // LayerNorm bias is its own tensor
      }
      add(kind.extra_attention_params);
      add(kind.extra_router_params);
    }
    block_params = plan.trainable_params - params_before;
    block_lora = plan.lora_params - lora_before;
    if (run_length == 2) {
      second_copy_begin = begin;
      second_copy_end = plan.trainable_tensors.size();
    }
  }
  if (plan.final_norm_trainable && model.final_norm.has_weight) {
    add(model.final_norm.dim);
    if (model.final_norm.bias) add(model.final_norm.dim);
  }
  if (plan.lm_head_trainable && (!model.tied_embeddings || plan.lm_head_copy)) {
    add2(model.vocab_size, model.hidden_size);
    if (model.lm_head_bias) add(model.vocab_size);
  }
  return plan;
}

int64_t LinearGradBytes(const LinearSpec& l, const LayerPlan& lp, const TrainConfig& train, const TrainPlan& plan, int64_t grad_bytes) {
  if (lp.weights_trainable) return grad_bytes * l.Params();
  if (lp.lora && IsLoraTarget(l, train.lora)) return plan.adapter_bytes_per_param * l.copies * train.lora.rank * (l.in_features + l.out_features);
  return 0;
}

}  // namespace vramplan
