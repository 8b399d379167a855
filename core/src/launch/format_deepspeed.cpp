// A DeepSpeed config on its own (ds_config.json): deepspeed/runtime/config.py (DeepSpeed v0.16).
// It holds the batch sizes, precision, ZeRO stage and offload; the model, the method and
// checkpointing live in the training script, so the import notes them as defaults.
#include "io/message_text.h"
#include "launch/deepspeed_config.h"
#include "launch/formats.h"
#include "launch/model_match.h"
#include "launch/text_documents.h"

namespace vramplan::launch {

void ImportDeepSpeed(std::string_view text, ImportContext* ctx) {
  std::vector<io::Json> docs;
  if (!ParseJsonDocuments(text, &docs, &ctx->errors)) return;
  if (docs.empty() || !docs[0].is_object()) {
    ctx->Error("", "a DeepSpeed config is one JSON object", "invalid_config");
    return;
  }
  ctx->TakeExtras(&docs[0]);
  DeepSpeedFlags flags;
  ReadDeepSpeed(docs[0], "", ctx, &flags);
  ctx->Set("mode", "train");
  if (flags.micro_batch) ctx->Read("train_micro_batch_size_per_gpu", "train.micro_batch_size", *flags.micro_batch);
  if (flags.grad_accum) ctx->Read("gradient_accumulation_steps", "train.grad_accum_steps", *flags.grad_accum);
  if (flags.train_batch && flags.micro_batch) {
    const int64_t per_gpu = *flags.micro_batch * flags.grad_accum.value_or(1);
    if (*flags.train_batch % per_gpu == 0) ctx->Read("train_batch_size", "parallel.gpus", *flags.train_batch / per_gpu);
    else ctx->Error("train_batch_size", "must be train_micro_batch_size_per_gpu x gradient_accumulation_steps x the number of GPUs (DeepSpeed checks it)");
  }
  ctx->Default("train.grad_accum_steps", 1, "DeepSpeed's default gradient_accumulation_steps");
  DeepSpeedPrecision(flags.bf16.value_or(false), flags.fp16.value_or(false), "bf16/fp16", ctx);
  ctx->Default("train.method", "full", "a DeepSpeed config does not say; full fine-tuning assumed");
  ctx->Default("train.gradient_checkpointing", false, "a DeepSpeed config does not say; the model's own default (off) assumed");
  ctx->Default("train.optimizer", "adamw", "no \"optimizer\": the script's optimizer, AdamW assumed");
  NoModel(ctx, "a DeepSpeed config");
}

ExportText ExportDeepSpeed(const Scenario& s) {
  ExportText out;
  out.text = DeepSpeedConfigFor(s, true).dump(2) + "\n";
  return out;
}

}  // namespace vramplan::launch
