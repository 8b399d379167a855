#include "planner/prepared.h"

#include <algorithm>
#include <cstring>


namespace vramplan {

uint64_t ModelFingerprint(const ModelSpec& m) {
  // FNV-1a (64-bit words) over the numbers that shape every term; names are left out (a renamed
  // copy is the same model).
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](int64_t v) {
    h ^= static_cast<uint64_t>(v);
    h *= 1099511628211ull;
  };
  mix(m.vocab_size), mix(m.hidden_size), mix(m.num_layers), mix(m.tied_embeddings), mix(m.position_embedding_rows);
  mix(m.extra_embedding_params);
  mix(m.final_norm.Params()), mix(m.lm_head_bias);
  for (char c : m.model_type) mix(c);
  mix(static_cast<int64_t>(m.layer_kind.size())), mix(static_cast<int64_t>(m.kinds.size()));
  for (size_t i = 0; i < m.layer_kind.size(); i += 8) {  // eight layer kinds per word
    uint64_t word = 0;
    std::memcpy(&word, m.layer_kind.data() + i, std::min<size_t>(8, m.layer_kind.size() - i));
    mix(static_cast<int64_t>(word));
  }
  for (const LayerKind& kind : m.kinds) {
    mix(kind.attention.num_heads), mix(kind.attention.num_kv_heads), mix(kind.attention.head_dim);
    mix(kind.mlp.intermediate), mix(kind.mlp.num_experts), mix(static_cast<int64_t>(kind.linears.size()));
    for (const LinearSpec& l : kind.linears) {
      mix(l.in_features), mix(l.out_features), mix(l.copies), mix(l.bias), mix(static_cast<int64_t>(l.slot));
    }
    for (const NormSpec& n : kind.norms) mix(n.Params());
    mix(kind.extra_attention_params), mix(kind.extra_router_params);
    const RecurrentGeometry& r = kind.recurrent;  // the recurrent state's size (inference)
    mix(static_cast<int64_t>(r.kind)), mix(r.ConvChannels()), mix(r.StateElements()), mix(r.conv_kernel);
  }
  for (char c : m.quantization_method) mix(c);
  const PackedLinears& packed = m.checkpoint.packed_linears;  // the packed formats' bytes follow it
  mix(static_cast<int64_t>(packed.layout)), mix(packed.bits), mix(packed.group_size), mix(packed.zero_point), mix(packed.g_idx);
  mix(packed.desc_act), mix(packed.sym), mix(packed.bias_stored);
  for (const std::string& u : m.unquantized_modules) {  // they change the quantized formats' bytes
    for (char c : u) mix(c);
    mix(-1);
  }
  return h;
}

const WeightBytes& Prepared::WeightBytesFor(const ModelSpec& model, WeightFormat format, int64_t tp, PackedLoader loader) const {
  for (const WeightEntry& e : weight_bytes_) {
    if (e.format == format && e.tp == tp && e.loader == loader) return e.bytes;
  }
  weight_bytes_.push_back(WeightEntry{format, tp, loader, ComputeWeightBytes(model, format, tp, loader)});
  return weight_bytes_.back().bytes;
}

namespace {

// The settings MakeTrainPlan reads (train/train_plan.cpp).
bool SamePlanInputs(const TrainConfig& a, const PrecisionModel& pa, const TrainConfig& b, const PrecisionModel& pb) {
  const LoraConfig &la = a.lora, &lb = b.lora;
  return a.method == b.method && pa.weight == pb.weight && pa.state == pb.state && la.rank == lb.rank &&
         la.all_linear == lb.all_linear && la.adapter_dtype == lb.adapter_dtype && la.use_dora == lb.use_dora &&
         la.targets == lb.targets && la.modules_to_save == lb.modules_to_save &&
         a.freeze.trainable_layers == b.freeze.trainable_layers && a.freeze.train_embeddings == b.freeze.train_embeddings &&
         a.freeze.train_lm_head == b.freeze.train_lm_head;
}

}  // namespace

std::shared_ptr<const TrainPlan> Prepared::TrainPlanFor(const ModelSpec& model, const TrainConfig& train, const PrecisionModel& prec) const {
  for (size_t i = 0; i < plans_.size(); ++i) {
    if (!SamePlanInputs(plans_[i].train, plans_[i].prec, train, prec)) continue;
    if (i > 0) std::rotate(plans_.begin(), plans_.begin() + static_cast<std::ptrdiff_t>(i), plans_.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    return plans_.front().plan;
  }
  if (plans_.size() == kTrainPlans) plans_.pop_back();
  plans_.push_front(PlanEntry{train, prec, std::make_shared<const TrainPlan>(MakeTrainPlan(model, train, prec))});
  return plans_.front().plan;
}

Prepared::Zero3Count Prepared::Zero3CountFor(const ModelSpec& model, const Zero3Knobs& knobs) const {
  for (const Zero3Entry& e : zero3_counts_) {
    const Zero3Knobs& k = e.knobs;
    if (k.prefetch_bucket == knobs.prefetch_bucket && k.persistence_threshold == knobs.persistence_threshold && k.max_live == knobs.max_live &&
        k.max_reuse_distance == knobs.max_reuse_distance) {
      return e.count;
    }
  }
  if (!zero3_modules_made_) {
    zero3_modules_ = Zero3ModulesOf(model);
    zero3_modules_made_ = true;
  }
  Zero3Count c;
  for (const Zero3Module& m : zero3_modules_) c.elements += m.Params();
  c.gathered = Zero3GatheredAtTurn(knobs, zero3_modules_);
  if (zero3_counts_.size() == kZero3Counts) zero3_counts_.pop_front();
  zero3_counts_.push_back(Zero3Entry{knobs, c});
  return c;
}

Prepared PrepareModel(const Scenario& scenario) {
  Prepared p;
  p.gpu_id = scenario.gpu.id;
  p.device = DeviceTraitsFor(scenario.gpu.id);
  p.sizes = MeasureModel(scenario.model);
  // A model beyond 2^62 parameters is refused by the pre-flight before its counts are read; int64
  // sums would not hold them.
  if (p.sizes.params < 4.6e18) p.params = CountParams(scenario.model);
  return p;
}

bool PreparedFor(const Prepared& prepared, const Scenario& scenario) {
  return prepared.gpu_id == scenario.gpu.id && prepared.model_fingerprint == ModelFingerprint(scenario.model);
}

}  // namespace vramplan
