// Result -> JSON (schema v1) and the normalized scenario echo, written with the streaming writer
// (this runs on every estimate, so it must cost less than the estimate).
#include "io/result_json.h"

#include "io/json_writer.h"
#include "scenario/fields.h"
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
      .Field("optimizer_step", p.optimizer_step).Field("reference", p.reference);
  if (p.rollout > 0 || p.logprob > 0) w.Field("rollout", p.rollout).Field("logprob", p.logprob);  // GRPO / PPO only
  w.EndObject();
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

// The normalized scenario, every field from the field table (scenario/fields.h) in echo order:
// defaults filled, optional fields only when set.
void WriteFields(JsonWriter& w, const fields::Field* object, const Scenario& s) {
  using fields::Slot;
  using fields::Type;
  // The slots only locate members; nothing is written through them here.
  Scenario& at = const_cast<Scenario&>(s);
  w.BeginObject();
  for (const fields::Field* f : fields::EchoChildren(object)) {
    const std::string_view key = f->key();
    switch (f->type) {
      case Type::kObject:
        w.Key(key);
        WriteFields(w, f, s);
        continue;
      case Type::kModel:
        if (!s.model_id.empty()) w.Field(key, s.model_id);
        else w.Key(key).Raw(s.inline_config_json);
        continue;
      case Type::kGpu:
        if (s.gpu.id == "custom") {
          w.Key(key);
          WriteFields(w, f, s);
        } else {
          w.Field(key, s.gpu.id);
        }
        continue;
      case Type::kListOrConst:
        if (s.train.lora.all_linear) w.Key(key).String(f->values[0]);
        else w.Field(key, s.train.lora.targets);
        continue;
      default: break;
    }
    if (f->resolved != nullptr) {  // a default computed from other fields: the value used
      w.Field(key, f->resolved(s));
      continue;
    }
    const Slot slot = f->slot(at);
    switch (slot.kind) {
      case Slot::Kind::kInt64: w.Field(key, *static_cast<const int64_t*>(slot.p)); break;
      case Slot::Kind::kInt: w.Field(key, *static_cast<const int*>(slot.p)); break;
      case Slot::Kind::kDouble: w.Field(key, *static_cast<const double*>(slot.p)); break;
      case Slot::Kind::kBool: w.Field(key, *static_cast<const bool*>(slot.p)); break;
      case Slot::Kind::kString: w.Field(key, *static_cast<const std::string*>(slot.p)); break;
      case Slot::Kind::kStringList: w.Field(key, *static_cast<const std::vector<std::string>*>(slot.p)); break;
      case Slot::Kind::kIntList: {
        const auto& items = *static_cast<const std::vector<int64_t>*>(slot.p);
        if (items.empty()) break;  // unset: the default (an even split)
        w.Key(key).BeginArray();
        for (int64_t v : items) w.Int(v);
        w.EndArray();
        break;
      }
      case Slot::Kind::kOptInt64:
        if (const auto& o = *static_cast<const std::optional<int64_t>*>(slot.p)) w.Field(key, *o);
        break;
      case Slot::Kind::kOptBool:
        if (const auto& o = *static_cast<const std::optional<bool>*>(slot.p)) w.Field(key, *o);
        break;
      case Slot::Kind::kEnum:
      case Slot::Kind::kOptEnum: {
        const int code = slot.get_enum(slot.p);
        if (code < 0) break;  // an unset optional
        const char* name = f->NameOf(code);
        const std::string_view n = name == nullptr ? "?" : name;
        // kBoolOrEnum: true and false are written as booleans.
        if (f->type == Type::kBoolOrEnum && (n == "true" || n == "false")) w.Key(key).Bool(n == "true");
        else w.Key(key).String(n);
        break;
      }
      case Slot::Kind::kNone: break;
    }
  }
  w.EndObject();
}

void WriteScenario(JsonWriter& w, const Scenario& s) { WriteFields(w, nullptr, s); }

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
      .Field("context_limit", m.context_limit).Field("context_limit_source", m.context_limit_source)
      .Field("notes", m.notes).EndObject();
}

void WriteParams(JsonWriter& w, const ParamCounts& c, const int64_t* trainable) {
  w.BeginObject().Field("total", c.total).Field("checkpoint_total", c.checkpoint_total).Field("active_per_token", c.active_per_token);
  if (trainable != nullptr) w.Field("trainable", *trainable);
  // The first eight sum to `total` (what the framework holds); the last seven are stored in the
  // checkpoint only, and all of them sum to `checkpoint_total`.
  w.Key("by_module").BeginObject().Field("embedding", c.embedding).Field("attention", c.attention).Field("mlp", c.mlp)
      .Field("experts", c.experts).Field("shared_experts", c.shared_experts).Field("router", c.router)
      .Field("norms", c.norms).Field("lm_head", c.lm_head).Field("mtp", c.mtp).Field("vision", c.vision)
      .Field("projector", c.projector).Field("quantization_scales", c.quantization_scales)
      .Field("tied_lm_head_copy", c.tied_lm_head_copy).Field("audio", c.audio).Field("unloaded", c.unloaded).EndObject();
  // FP4 experts stored two values per element (DeepSeek-V4), BitNet's four ternary values per
  // element, GPTQ / AWQ / pack-quantized linears' 32 / bits values per int32: checkpoint_total is
  // the by_module sum less these elements. Written only when present.
  if (c.fp4_packing_saved != 0) w.Field("fp4_packing_saved", c.fp4_packing_saved);
  if (c.ternary_packing_saved != 0) w.Field("ternary_packing_saved", c.ternary_packing_saved);
  if (c.int32_packing_saved != 0) w.Field("int32_packing_saved", c.int32_packing_saved);
  w.EndObject();
}

}  // namespace

const std::vector<std::string>& BreakdownKeys() {
  static const std::vector<std::string> keys = {"weights",         "gradients", "optimizer_states", "activations",
                                                "logits_and_loss", "kv_cache",  "temporary",        "cuda_context",
                                                "allocator_overhead", "comm_buffers"};
  return keys;
}

std::string ModelSummaryJson(const ModelSpec& m) {
  JsonWriter w;
  WriteModelSummary(w, m);
  return w.Take();
}

std::string ScenarioToJson(const Scenario& s) {
  JsonWriter w;
  WriteScenario(w, s);
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
      .Field("load_reserved_bytes", g.load_reserved_bytes).Field("load_explain", g.load_explain).Key("models");
  WriteTerms(w, g.models);
  w.Key("band").BeginObject().Field("low_bytes", g.band.low_bytes).Field("expected_bytes", g.band.expected_bytes)
      .Field("high_bytes", g.band.high_bytes).Field("verdict", g.band.verdict).Field("basis", g.band.basis).EndObject();
  w.EndObject();
  w.Key("cpu").BeginObject().Field("bytes", r.cpu.bytes).Key("breakdown");
  WriteTerms(w, r.cpu.breakdown);
  w.Field("node_processes", r.cpu.node_processes).Field("node_bytes", r.cpu.node_bytes);
  w.EndObject();
  w.Key("explain");
  WriteExplain(w, g.breakdown);
  w.Key("cpu_explain");
  WriteExplain(w, r.cpu.breakdown);
  w.Field("peak_phase", r.peak_phase).Field("peak_at", r.peak_at).Field("peak_model", r.peak_model).Field("verdict", r.verdict);
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
        .Field("concurrent_sequences", c.concurrent_sequences)
        .Field("max_model_len_fits", c.max_model_len_fits).Field("max_context_fits", c.max_context_fits)
        .Field("max_context_bound", c.max_context_bound).Field("max_batch_fits", c.max_batch_fits)
        .Field("highest_precision_format_fits", c.smallest_format_fits)
        .Field("smallest_format_fits", c.smallest_format_fits)  // the older, misleading name, kept for callers
        .Field("min_gpus", c.min_gpus);
    if (c.recurrent_layers > 0) {  // hybrid models only: attention-only results keep their shape
      w.Field("state_bytes_per_sequence", c.state_bytes_per_sequence).Field("recurrent_layers", c.recurrent_layers);
    }
    w.EndObject();
  }
  if (r.training.present) {
    w.Key("training").BeginObject().Field("max_micro_batch_fits", r.training.max_micro_batch_fits)
        .Field("max_seq_len_fits", r.training.max_seq_len_fits).Field("max_seq_len_bound", r.training.max_seq_len_bound)
        .Field("min_gpus", r.training.min_gpus)
        .Field("min_gpus_zero3", r.training.min_gpus_zero3).Field("batches", r.training.batches)
        .Field("typical_seq_len", r.training.typical_seq_len)
        .Field("typical_peak_allocated_bytes", r.training.typical_peak_allocated_bytes)
        .Field("typical_device_total_bytes", r.training.typical_device_total_bytes).EndObject();
  }
  if (r.rollout.present) {  // GRPO / PPO only
    const RolloutResult& o = r.rollout;
    w.Key("rollout").BeginObject().Field("engine", o.engine).Field("mode", o.mode).Field("server_gpus", o.server_gpus)
        .Field("engine_bytes", o.engine_bytes).Field("asleep_bytes", o.asleep_bytes).Field("host_bytes", o.host_bytes)
        .Field("rollout_sequences", o.rollout_sequences).Field("kv_token_capacity", o.kv_token_capacity)
        .Field("concurrent_sequences", o.concurrent_sequences).EndObject();
  }
  if (r.vision.present) {  // vision-language models only: text-only results keep their shape
    const VisionResult& v = r.vision;
    w.Key("vision").BeginObject().Field("tokens_per_image", v.tokens_per_image).Field("patches_per_image", v.patches_per_image)
        .Field("image_tokens", v.image_tokens).Field("llm_tokens", v.llm_tokens).Field("tower_params", v.tower_params)
        .Field("tower_weight_bytes", v.tower_weight_bytes).Field("tower_trainable_params", v.tower_trainable_params)
        .Field("tower_activation_bytes", v.tower_activation_bytes).Field("profile_items", v.profile_items)
        .Field("profile_tokens_per_item", v.profile_tokens_per_item).Field("profile_bytes", v.profile_bytes);
    // Towers that take video, Llama 3.2 Vision's cross-attention K/V and llama.cpp's projector
    // add their keys only where they apply (the other results keep their shape).
    if (v.takes_video) {
      w.Field("tokens_per_video", v.tokens_per_video).Field("patches_per_video", v.patches_per_video).Field("video_tokens", v.video_tokens);
    }
    if (!v.profile_modality.empty()) w.Field("profile_modality", v.profile_modality);
    if (v.cross_attention_kv_bytes > 0) w.Field("cross_attention_kv_bytes", v.cross_attention_kv_bytes);
    if (v.mmproj_compute_bytes > 0) w.Field("mmproj_compute_bytes", v.mmproj_compute_bytes);
    w.EndObject();
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
