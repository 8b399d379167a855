// Result -> JSON (schema v1) and the normalized scenario echo.
#include "io/enum_names.h"
#include "io/json_reader.h"
#include "io/result_json.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace {

using io::Json;

Json IssuesToJson(const Issues& issues) {
  Json out = Json::array();
  for (const auto& i : issues) out.push_back({{"code", i.code}, {"field_path", i.field_path}, {"message", i.message}});
  return out;
}

Json TermsToJson(const std::vector<Term>& terms, Json* explain) {
  Json out = Json::object();
  for (const auto& t : terms) {
    out[t.key] = t.bytes;
    if (explain != nullptr && !t.explain.empty()) (*explain)[t.key] = t.explain;
  }
  return out;
}

}  // namespace

const std::vector<std::string>& BreakdownKeys() {
  static const std::vector<std::string> keys = {"weights",         "gradients", "optimizer_states", "activations",
                                                "logits_and_loss", "kv_cache",  "temporary",        "cuda_context",
                                                "allocator_overhead"};
  return keys;
}

Json ScenarioToJsonValue(const Scenario& s) {
  Json j;
  j["schema"] = s.schema;
  if (!s.model_id.empty()) {
    j["model"] = s.model_id;
  } else {
    j["model"] = Json::parse(s.inline_config_json, nullptr, false);
  }
  j["mode"] = io::NameOf(s.mode, io::kModeNames);
  const TrainConfig& t = s.train;
  Json lora = {{"rank", t.lora.rank},
               {"alpha", t.lora.alpha},
               {"modules_to_save", t.lora.modules_to_save},
               {"dropout", t.lora.dropout},
               {"adapter_dtype", io::NameOf(t.lora.adapter_dtype, io::kAdapterDtypeNames)}};
  if (t.lora.all_linear) lora["targets"] = "all-linear";
  else lora["targets"] = t.lora.targets;
  Json train = {{"method", io::NameOf(t.method, io::kMethodNames)},
                {"precision", io::NameOf(t.precision, io::kPrecisionNames)},
                {"optimizer", io::NameOf(t.optimizer, io::kOptimizerNames)},
                {"micro_batch_size", t.micro_batch_size},
                {"seq_len", t.seq_len},
                {"grad_accum_steps", t.grad_accum_steps},
                {"attention", io::NameOf(t.attention, io::kAttentionNames)},
                {"loss", io::NameOf(t.loss, io::kLossNames)},
                {"lora", lora},
                {"qlora_bits", t.qlora_bits},
                {"qlora_double_quant", t.qlora_double_quant},
                {"freeze",
                 {{"trainable_layers", t.freeze.trainable_layers},
                  {"train_embeddings", t.freeze.train_embeddings},
                  {"train_lm_head", t.freeze.train_lm_head}}}};
  if (t.optimizer_impl) train["optimizer_impl"] = io::NameOf(*t.optimizer_impl, io::kOptimizerImplNames);
  if (t.gradient_checkpointing == Checkpointing::kSelective) train["gradient_checkpointing"] = "selective";
  else train["gradient_checkpointing"] = t.gradient_checkpointing == Checkpointing::kFull;
  j["train"] = train;
  const InferenceConfig& i = s.inference;
  j["inference"] = {{"batch_size", i.batch_size},
                    {"prompt_len", i.prompt_len},
                    {"new_tokens", i.new_tokens},
                    {"weights", io::NameOf(i.weights, io::kWeightFormatNames)},
                    {"kv_cache", io::NameOf(i.kv_cache, io::kKvDtypeNames)},
                    {"attention", io::NameOf(i.attention, io::kAttentionNames)},
                    {"engine", io::NameOf(i.engine, io::kEngineNames)},
                    {"logits", io::NameOf(i.logits, io::kLogitsNames)},
                    {"gpu_memory_utilization", i.gpu_memory_utilization},
                    {"max_model_len", i.max_model_len},
                    {"max_num_batched_tokens", i.max_num_batched_tokens},
                    {"max_num_seqs", i.max_num_seqs},
                    {"block_size", i.block_size},
                    {"cuda_graphs", i.cuda_graphs},
                    {"n_ctx", i.n_ctx},
                    {"n_batch", i.n_batch},
                    {"n_ubatch", i.n_ubatch},
                    {"n_gpu_layers", i.n_gpu_layers},
                    {"flash_attn", i.flash_attn}};
  const ParallelConfig& p = s.parallel;
  j["parallel"] = {{"gpus", p.gpus},
                   {"tp", p.tp},
                   {"pp", p.pp},
                   {"cp", p.cp},
                   {"ep", p.ep},
                   {"zero", p.zero},
                   {"fsdp", p.fsdp},
                   {"offload_optimizer", io::NameOf(p.offload_optimizer, io::kOffloadNames)},
                   {"offload_params", io::NameOf(p.offload_params, io::kOffloadNames)},
                   {"sequence_parallel", p.sequence_parallel}};
  if (s.gpu.id == "custom") j["gpu"] = {{"name", s.gpu.name}, {"memory_bytes", s.gpu.memory_bytes}};
  else j["gpu"] = s.gpu.id;
  const FrameworkConfig& f = s.framework;
  j["framework"] = {{"preset", io::NameOf(f.preset, io::kFrameworkPresetNames)},
                    {"device", io::NameOf(f.device, io::kDeviceNames)},
                    {"rmsnorm_saves_squared_input", f.rmsnorm_saves_squared_input},
                    {"loss_shift_logits_copy", f.loss_shift_logits_copy},
                    {"keep_outputs", f.keep_outputs},
                    {"use_cache", f.use_cache},
                    {"attention_mask", f.attention_mask},
                    {"batch_on_device", f.batch_on_device},
                    {"cuda_lazy_loading", f.cuda_lazy_loading}};
  return j;
}

Json ModelSummaryJson(const ModelSpec& m) {
  Json layers = Json::array();
  int64_t sliding = 0, moe = 0;
  for (uint8_t k : m.layer_kind) {
    if (m.kinds[k].attention.sliding_window > 0) ++sliding;
    if (m.kinds[k].mlp.num_experts > 0) ++moe;
  }
  const LayerKind& first = m.kinds.empty() ? LayerKind{} : m.kinds[m.layer_kind.back()];
  return {{"name", m.display_name},
          {"model_type", m.model_type},
          {"architecture", m.architecture},
          {"vocab_size", m.vocab_size},
          {"hidden_size", m.hidden_size},
          {"num_layers", m.num_layers},
          {"num_heads", first.attention.num_heads},
          {"num_kv_heads", first.attention.num_kv_heads},
          {"head_dim", first.attention.head_dim},
          {"intermediate_size", first.mlp.intermediate},
          {"num_experts", first.mlp.num_experts},
          {"experts_per_token", first.mlp.experts_per_token},
          {"moe_layers", moe},
          {"sliding_window_layers", sliding},
          {"mla", first.attention.mla},
          {"tied_embeddings", m.tied_embeddings},
          {"max_position_embeddings", m.max_position_embeddings},
          {"notes", m.notes}};
}

Json ParamsJson(const ParamCounts& c) {
  return {{"total", c.total},
          {"active_per_token", c.active_per_token},
          {"by_module",
           {{"embedding", c.embedding},
            {"attention", c.attention},
            {"mlp", c.mlp},
            {"experts", c.experts},
            {"shared_experts", c.shared_experts},
            {"router", c.router},
            {"norms", c.norms},
            {"lm_head", c.lm_head}}}};
}

std::string ResultToJson(const Scenario& scenario, const Result& r) {
  Json j;
  j["ok"] = true;
  j["schema"] = r.schema;
  j["version"] = VersionString();
  j["scenario"] = ScenarioToJsonValue(scenario);
  j["model"] = ModelSummaryJson(scenario.model);
  Json params = ParamsJson(r.params);
  params["trainable"] = r.trainable_params;
  j["params"] = params;
  Json explain = Json::object();
  const GpuResult& g = r.gpu;
  j["gpu"] = {{"id", g.id},
              {"name", g.name},
              {"capacity_bytes", g.capacity_bytes},
              {"peak_allocated_bytes", g.peak_allocated_bytes},
              {"reserved_bytes", g.reserved_bytes},
              {"device_total_bytes", g.device_total_bytes},
              {"headroom_bytes", g.headroom_bytes},
              {"fits", g.fits},
              {"breakdown", TermsToJson(g.breakdown, &explain)},
              {"phase_peaks", {{"forward", g.phase_peaks.forward}, {"backward", g.phase_peaks.backward}, {"optimizer_step", g.phase_peaks.optimizer_step}}},
              {"saved_activation_bytes", g.saved_activation_bytes},
              {"gradient_bytes", g.gradient_bytes},
              {"optimizer_state_bytes", g.optimizer_state_bytes},
              {"paged_bytes", g.paged_bytes}};
  Json cpu_explain = Json::object();
  j["cpu"] = {{"bytes", r.cpu.bytes}, {"breakdown", TermsToJson(r.cpu.breakdown, &cpu_explain)}};
  j["explain"] = explain;
  j["cpu_explain"] = cpu_explain;
  j["peak_phase"] = r.peak_phase;
  j["peak_at"] = r.peak_at;
  Json timeline = Json::array();
  for (const auto& p : r.timeline) timeline.push_back({{"phase", p.phase}, {"step", p.step}, {"allocated_bytes", p.allocated_bytes}});
  j["timeline"] = timeline;
  if (r.inference.present) {
    const InferenceCapacity& c = r.inference;
    j["inference"] = {{"kv_bytes_per_token", c.kv_bytes_per_token},
                      {"kv_token_capacity", c.kv_token_capacity},
                      {"max_concurrency", c.max_concurrency},
                      {"max_model_len_fits", c.max_model_len_fits},
                      {"max_context_fits", c.max_context_fits},
                      {"max_batch_fits", c.max_batch_fits},
                      {"smallest_format_fits", c.smallest_format_fits},
                      {"min_gpus", c.min_gpus}};
  }
  j["warnings"] = IssuesToJson(r.warnings);
  return io::Dump(j);
}

std::string ErrorsToJson(const Issues& errors) {
  Json j;
  j["ok"] = false;
  j["schema"] = kSchemaVersion;
  j["errors"] = IssuesToJson(errors);
  return io::Dump(j);
}

}  // namespace vramplan
