// Result -> JSON (schema v1) and the normalized scenario echo, written with the streaming writer
// (this runs on every estimate, so it must cost less than the estimate).
#include "io/result_json.h"

#include "io/enum_names.h"
#include "io/json_reader.h"
#include "io/json_writer.h"
#include "parallel/topology.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace {

using io::JsonWriter;

void WriteIssues(JsonWriter& w, const Issues& issues) {
  w.BeginArray();
  for (const auto& i : issues) {
    w.BeginObject().Field("code", i.code).Field("field_path", i.field_path).Field("message", i.message).EndObject();
  }
  w.EndArray();
}

void WriteTerms(JsonWriter& w, const std::vector<Term>& terms) {
  w.BeginObject();
  for (const auto& t : terms) w.Key(t.key).Int(t.bytes);
  w.EndObject();
}

void WritePhasePeaks(JsonWriter& w, const PhasePeaks& p) {
  w.Key("phase_peaks").BeginObject().Field("load", p.load).Field("forward", p.forward).Field("backward", p.backward)
      .Field("optimizer_step", p.optimizer_step).EndObject();
}

void WriteTimeline(JsonWriter& w, const std::vector<TimelinePoint>& timeline) {
  w.BeginArray();
  for (const auto& p : timeline) {
    w.BeginObject().Field("phase", p.phase).Field("step", p.step).Field("allocated_bytes", p.allocated_bytes).EndObject();
  }
  w.EndArray();
}

void WriteExplain(JsonWriter& w, const std::vector<Term>& terms) {
  w.BeginObject();
  for (const auto& t : terms) {
    if (!t.explain.empty()) w.Key(t.key).String(t.explain);
  }
  w.EndObject();
}

void WriteScenario(JsonWriter& w, const Scenario& s) {
  w.BeginObject();
  w.Field("schema", s.schema);
  if (!s.model_id.empty()) w.Field("model", s.model_id);
  else w.Key("model").Raw(s.inline_config_json);
  w.Key("mode").String(io::NameOf(s.mode, io::kModeNames));
  const TrainConfig& t = s.train;
  w.Key("train").BeginObject();
  w.Key("method").String(io::NameOf(t.method, io::kMethodNames));
  w.Key("precision").String(io::NameOf(t.precision, io::kPrecisionNames));
  w.Field("autocast", t.autocast);
  w.Key("optimizer").String(io::NameOf(t.optimizer, io::kOptimizerNames));
  if (t.optimizer_impl) w.Key("optimizer_impl").String(io::NameOf(*t.optimizer_impl, io::kOptimizerImplNames));
  w.Field("micro_batch_size", t.micro_batch_size).Field("seq_len", t.seq_len).Field("grad_accum_steps", t.grad_accum_steps);
  if (t.gradient_checkpointing == Checkpointing::kSelective) w.Key("gradient_checkpointing").String("selective");
  else w.Key("gradient_checkpointing").Bool(t.gradient_checkpointing == Checkpointing::kFull);
  w.Key("attention").String(io::NameOf(t.attention, io::kAttentionNames));
  w.Key("loss").String(io::NameOf(t.loss, io::kLossNames));
  w.Key("lora").BeginObject().Field("rank", t.lora.rank).Field("alpha", t.lora.alpha);
  if (t.lora.all_linear) w.Key("targets").String("all-linear");
  else w.Field("targets", t.lora.targets);
  w.Field("modules_to_save", t.lora.modules_to_save).Field("dropout", t.lora.dropout);
  w.Key("adapter_dtype").String(io::NameOf(t.lora.adapter_dtype, io::kAdapterDtypeNames));
  w.Field("use_dora", t.lora.use_dora).EndObject();
  w.Field("qlora_bits", t.qlora_bits).Field("qlora_double_quant", t.qlora_double_quant);
  w.Key("qlora_backend").String(io::NameOf(t.qlora_backend, io::kQloraBackendNames));
  w.Field("qlora_group_size", t.qlora_group_size);
  w.Key("freeze").BeginObject().Field("trainable_layers", t.freeze.trainable_layers)
      .Field("train_embeddings", t.freeze.train_embeddings).Field("train_lm_head", t.freeze.train_lm_head).EndObject();
  w.EndObject();
  const InferenceConfig& i = s.inference;
  w.Key("inference").BeginObject();
  w.Field("batch_size", i.batch_size).Field("prompt_len", i.prompt_len).Field("new_tokens", i.new_tokens);
  w.Key("weights").String(io::NameOf(i.weights, io::kWeightFormatNames));
  w.Key("kv_cache").String(io::NameOf(i.kv_cache, io::kKvDtypeNames));
  w.Key("attention").String(io::NameOf(i.attention, io::kAttentionNames));
  w.Key("engine").String(io::NameOf(i.engine, io::kEngineNames));
  w.Key("logits").String(io::NameOf(i.logits, io::kLogitsNames));
  w.Field("gpu_memory_utilization", i.gpu_memory_utilization).Field("max_model_len", i.max_model_len)
      .Field("max_num_batched_tokens", i.max_num_batched_tokens).Field("max_num_seqs", i.max_num_seqs)
      .Field("block_size", i.block_size).Field("cuda_graphs", i.cuda_graphs).Field("n_ctx", i.n_ctx)
      .Field("n_batch", i.n_batch).Field("n_ubatch", i.n_ubatch).Field("n_gpu_layers", i.n_gpu_layers)
      .Field("flash_attn", i.flash_attn);
  w.EndObject();
  const ParallelConfig& p = s.parallel;
  w.Key("parallel").BeginObject().Field("gpus", p.gpus).Field("gpus_per_node", GpusPerNode(p)).Field("tp", p.tp).Field("pp", p.pp).Field("cp", p.cp)
      .Field("ep", p.ep).Field("zero", p.zero).Field("fsdp", p.fsdp);
  w.Key("offload_optimizer").String(io::NameOf(p.offload_optimizer, io::kOffloadNames));
  w.Key("offload_params").String(io::NameOf(p.offload_params, io::kOffloadNames));
  w.Field("sequence_parallel", p.sequence_parallel);
  if (p.reduce_bucket_size) w.Field("reduce_bucket_size", *p.reduce_bucket_size);
  if (p.overlap_comm) w.Field("overlap_comm", *p.overlap_comm);
  if (p.contiguous_gradients) w.Field("contiguous_gradients", *p.contiguous_gradients);
  w.EndObject();
  if (s.gpu.id == "custom") w.Key("gpu").BeginObject().Field("name", s.gpu.name).Field("memory_bytes", s.gpu.memory_bytes).EndObject();
  else w.Field("gpu", s.gpu.id);
  const FrameworkConfig& f = s.framework;
  w.Key("framework").BeginObject();
  w.Key("preset").String(io::NameOf(f.preset, io::kFrameworkPresetNames));
  w.Key("device").String(io::NameOf(f.device, io::kDeviceNames));
  w.Field("rmsnorm_saves_squared_input", f.rmsnorm_saves_squared_input).Field("loss_shift_logits_copy", f.loss_shift_logits_copy)
      .Field("adamw_foreach_denom_copy", f.adamw_foreach_denom_copy)
      .Field("loss_upcast_logits", f.loss_upcast_logits).Field("keep_outputs", f.keep_outputs).Field("use_cache", f.use_cache).Field("attention_mask", f.attention_mask)
      .Field("batch_on_device", f.batch_on_device).Field("cuda_lazy_loading", f.cuda_lazy_loading)
      .Field("variable_shapes", f.variable_shapes).Field("expandable_segments", f.expandable_segments)
      .Field("cpu_onednn_bf16_buffers", f.cpu_onednn_bf16_buffers)
      .Field("cpu_kv_alive_at_scores", f.cpu_kv_alive_at_scores);
  w.Key("model_load").String(io::NameOf(f.model_load, io::kModelLoadNames));
  w.EndObject();
  w.EndObject();
}

void WriteModelSummary(JsonWriter& w, const ModelSpec& m) {
  int64_t sliding = 0, moe = 0;
  for (uint8_t k : m.layer_kind) {
    if (m.kinds[k].attention.sliding_window > 0) ++sliding;
    if (m.kinds[k].mlp.num_experts > 0) ++moe;
  }
  static const LayerKind kEmpty;
  const LayerKind& last = m.kinds.empty() ? kEmpty : m.kinds[m.layer_kind.back()];
  w.BeginObject().Field("name", m.display_name).Field("model_type", m.model_type).Field("architecture", m.architecture)
      .Field("vocab_size", m.vocab_size).Field("hidden_size", m.hidden_size).Field("num_layers", m.num_layers)
      .Field("num_heads", last.attention.num_heads).Field("num_kv_heads", last.attention.num_kv_heads)
      .Field("head_dim", last.attention.head_dim).Field("intermediate_size", last.mlp.intermediate)
      .Field("num_experts", last.mlp.num_experts).Field("experts_per_token", last.mlp.experts_per_token)
      .Field("moe_layers", moe).Field("sliding_window_layers", sliding).Field("mla", last.attention.mla)
      .Field("tied_embeddings", m.tied_embeddings).Field("max_position_embeddings", m.max_position_embeddings)
      .Field("notes", m.notes).EndObject();
}

void WriteParams(JsonWriter& w, const ParamCounts& c, const int64_t* trainable) {
  w.BeginObject().Field("total", c.total).Field("active_per_token", c.active_per_token);
  if (trainable != nullptr) w.Field("trainable", *trainable);
  w.Key("by_module").BeginObject().Field("embedding", c.embedding).Field("attention", c.attention).Field("mlp", c.mlp)
      .Field("experts", c.experts).Field("shared_experts", c.shared_experts).Field("router", c.router)
      .Field("norms", c.norms).Field("lm_head", c.lm_head).EndObject();
  w.EndObject();
}

}  // namespace

const std::vector<std::string>& BreakdownKeys() {
  static const std::vector<std::string> keys = {"weights",         "gradients", "optimizer_states", "activations",
                                                "logits_and_loss", "kv_cache",  "temporary",        "cuda_context",
                                                "allocator_overhead"};
  return keys;
}

std::string ModelSummaryJson(const ModelSpec& m) {
  JsonWriter w;
  WriteModelSummary(w, m);
  return w.Take();
}

std::string ParamsJson(const ParamCounts& c) {
  JsonWriter w;
  WriteParams(w, c, nullptr);
  return w.Take();
}

std::string ResultToJson(const Scenario& scenario, const Result& r) {
  JsonWriter w;
  w.BeginObject();
  w.Field("ok", true).Field("schema", r.schema).Field("version", VersionString());
  w.Key("scenario");
  WriteScenario(w, scenario);
  w.Key("model");
  WriteModelSummary(w, scenario.model);
  w.Key("params");
  WriteParams(w, r.params, &r.trainable_params);
  const GpuResult& g = r.gpu;
  w.Key("gpu").BeginObject().Field("id", g.id).Field("name", g.name).Field("capacity_bytes", g.capacity_bytes)
      .Field("peak_allocated_bytes", g.peak_allocated_bytes).Field("reserved_bytes", g.reserved_bytes)
      .Field("device_total_bytes", g.device_total_bytes).Field("headroom_bytes", g.headroom_bytes).Field("fits", g.fits);
  w.Key("breakdown");
  WriteTerms(w, g.breakdown);
  WritePhasePeaks(w, g.phase_peaks);
  w.Field("saved_activation_bytes", g.saved_activation_bytes).Field("gradient_bytes", g.gradient_bytes)
      .Field("optimizer_state_bytes", g.optimizer_state_bytes).Field("paged_bytes", g.paged_bytes)
      .Field("load_reserved_bytes", g.load_reserved_bytes).Field("load_explain", g.load_explain).EndObject();
  w.Key("cpu").BeginObject().Field("bytes", r.cpu.bytes).Key("breakdown");
  WriteTerms(w, r.cpu.breakdown);
  w.Field("node_processes", r.cpu.node_processes).Field("node_bytes", r.cpu.node_bytes);
  w.EndObject();
  w.Key("explain");
  WriteExplain(w, g.breakdown);
  w.Key("cpu_explain");
  WriteExplain(w, r.cpu.breakdown);
  w.Field("peak_phase", r.peak_phase).Field("peak_at", r.peak_at);
  w.Key("timeline");
  WriteTimeline(w, r.timeline);
  w.Key("ranks").BeginArray();
  for (const RankResult& k : r.ranks) {
    w.BeginObject().Field("role", k.role).Field("count", k.count).Key("breakdown");
    WriteTerms(w, k.breakdown);
    w.Field("peak_allocated_bytes", k.peak_allocated_bytes).Field("reserved_bytes", k.reserved_bytes)
        .Field("device_total_bytes", k.device_total_bytes).Field("host_bytes", k.host_bytes);
    WritePhasePeaks(w, k.phase_peaks);
    w.Key("timeline");
    WriteTimeline(w, k.timeline);
    w.EndObject();
  }
  w.EndArray();
  if (r.inference.present) {
    const InferenceCapacity& c = r.inference;
    w.Key("inference").BeginObject().Field("kv_bytes_per_token", c.kv_bytes_per_token)
        .Field("kv_token_capacity", c.kv_token_capacity).Field("max_concurrency", c.max_concurrency)
        .Field("max_model_len_fits", c.max_model_len_fits).Field("max_context_fits", c.max_context_fits)
        .Field("max_batch_fits", c.max_batch_fits).Field("smallest_format_fits", c.smallest_format_fits)
        .Field("min_gpus", c.min_gpus).EndObject();
  }
  if (r.training.present) {
    w.Key("training").BeginObject().Field("max_micro_batch_fits", r.training.max_micro_batch_fits)
        .Field("max_seq_len_fits", r.training.max_seq_len_fits).EndObject();
  }
  w.Key("warnings");
  WriteIssues(w, r.warnings);
  w.EndObject();
  return w.Take();
}

std::string ErrorsToJson(const Issues& errors) {
  JsonWriter w;
  w.BeginObject().Field("ok", false).Field("schema", kSchemaVersion).Key("errors");
  WriteIssues(w, errors);
  w.EndObject();
  return w.Take();
}

}  // namespace vramplan
