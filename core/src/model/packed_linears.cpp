#include "model/packed_linears.h"

#include <algorithm>
#include <cctype>

namespace vramplan {
namespace {

using io::Json;
using P = PackedLinearLayout;

std::string Lower(const Json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string() || it->get_ref<const std::string&>().size() > 64) return "";
  std::string s = it->get<std::string>();
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The first of `keys` present as an integer; `fallback` when none is.
int64_t Int(const Json& obj, std::initializer_list<const char*> keys, int64_t fallback) {
  for (const char* key : keys) {
    auto it = obj.find(key);
    if (it != obj.end() && it->is_number_integer()) return it->get<int64_t>();
  }
  return fallback;
}

bool Present(const Json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && !it->is_null() && !(it->is_boolean() && !it->get<bool>()) && !(it->is_object() && it->empty()) &&
         !(it->is_array() && it->empty());
}

// A boolean written true (absent, null or anything else: false; vLLM's GPTQ-Marlin check reads a
// missing sym as "not convertible", gptq_marlin.py is_gptq_marlin_compatible).
bool Flag(const Json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_boolean() && it->get<bool>();
}

// A group size as the configs write it: -1 (or 0) for one group over all input features.
int64_t Group(int64_t g) { return g > 0 && g <= (int64_t{1} << 20) ? g : 0; }

PackedLinearsReading Gptq(const Json& qc) {
  PackedLinearsReading r;
  const int64_t bits = Int(qc, {"bits"}, 0);
  // auto_gptq / gptqmodel write checkpoint_format (gptqmodel also `format`); "marlin" and "bitblas"
  // store other tensors. gptqmodel's pack_dtype widens or narrows the words.
  for (const char* key : {"checkpoint_format", "format"}) {
    const std::string f = Lower(qc, key);
    if (!f.empty() && f != "gptq" && f != "gptq_v2") return r;
  }
  const std::string pack = Lower(qc, "pack_dtype");
  if (!pack.empty() && pack != "int32" && pack != "torch.int32") return r;
  if (bits != 2 && bits != 3 && bits != 4 && bits != 8) return r;
  r.packed = {P::kGptq, bits, Group(Int(qc, {"group_size"}, 128))};
  r.packed.desc_act = Flag(qc, "desc_act");
  r.packed.sym = Flag(qc, "sym");
  // gptqmodel's per-module overrides (regular expressions), optimum's module list and a quantized
  // lm_head change which linears are packed.
  if (Present(qc, "dynamic") || Present(qc, "modules_in_block_to_quantize") || Present(qc, "lm_head")) {
    r.note = "quantization_config lists per-module overrides (dynamic, modules_in_block_to_quantize or lm_head) that "
             "params.checkpoint_total does not read: it counts every decoder linear packed at the config's bits and group size";
  }
  return r;
}

PackedLinearsReading Awq(const Json& qc) {
  PackedLinearsReading r;
  const std::string version = Lower(qc, "version");
  if (!version.empty() && version != "gemm") return r;  // GEMV, GEMV_fast, exllama, marlin: other shapes
  if (Int(qc, {"bits", "w_bit"}, 0) != 4) return r;
  r.packed = {P::kAwq, 4, Group(Int(qc, {"group_size", "q_group_size"}, 128))};
  return r;
}

PackedLinearsReading CompressedTensors(const Json& qc) {
  PackedLinearsReading r;
  auto groups = qc.find("config_groups");
  if (groups == qc.end() || !groups->is_object()) return r;
  auto ignore = qc.find("ignore");
  if (ignore != qc.end() && ignore->is_array()) {
    for (const Json& e : *ignore) {
      if (e.is_string() && e.get_ref<const std::string&>().rfind("re:", 0) == 0) return r;
    }
  }
  const Json* weights = nullptr;
  std::string format = Lower(qc, "format");
  for (const Json& g : *groups) {
    if (!g.is_object()) return r;
    auto targets = g.find("targets");
    if (targets == g.end() || *targets != Json::array({"Linear"})) return r;
    auto w = g.find("weights");
    if (weights == nullptr && w != g.end() && w->is_object()) {
      weights = &*w;
      if (!Lower(g, "format").empty()) format = Lower(g, "format");
    }
  }
  if (weights == nullptr || format != "pack-quantized") return r;
  const int64_t bits = Int(*weights, {"num_bits"}, 0);
  const std::string type = Lower(*weights, "type"), strategy = Lower(*weights, "strategy"), actorder = Lower(*weights, "actorder");
  if ((bits != 4 && bits != 8) || (!type.empty() && type != "int") || (strategy != "group" && strategy != "channel")) return r;
  auto sym = weights->find("symmetric");
  auto act = weights->find("actorder");
  r.packed = {P::kCompressedTensors, bits, strategy == "group" ? Group(Int(*weights, {"group_size"}, 0)) : 0};
  r.packed.zero_point = sym != weights->end() && sym->is_boolean() && !sym->get<bool>();
  // compressed-tensors reads actorder true as "group" (QuantizationArgs.validate_actorder).
  r.packed.g_idx = actorder == "group" || (act != weights->end() && act->is_boolean() && act->get<bool>());
  return r;
}

}  // namespace

PackedLinearsReading PackedLinearsFromConfig(const Json& qc) {
  if (!qc.is_object()) return {};
  const std::string method = Lower(qc, "quant_method");
  if (method == "gptq") return Gptq(qc);
  if (method == "awq") return Awq(qc);
  if (method == "compressed-tensors") return CompressedTensors(qc);
  return {};
}

bool StoredPacked(const LinearSpec& l, const PackedLinears& p) {
  if (p.layout == P::kNone || p.bits <= 0) return false;
  if (l.slot == LinearSlot::kRouter || l.slot == LinearSlot::kSharedExpertScale || l.slot == LinearSlot::kIndexerWeights) return false;
  // Whole int32 words along both packed dimensions (3 bits: 32 values per three words).
  const bool words = (l.in_features * p.bits) % 32 == 0 && (l.out_features * p.bits) % 32 == 0;
  const bool group_fits = p.group_size <= 0 || l.in_features % p.group_size == 0;
  return l.in_features > 0 && words && group_fits;
}

PackedTensors PackedLinearTensors(const LinearSpec& l, const PackedLinears& p) {
  PackedTensors t;
  if (p.layout == P::kNone || p.bits <= 0) return t;
  const int64_t in = l.in_features, out = l.out_features, bits = p.bits, pack = 32 / p.bits;
  const int64_t group = p.group_size > 0 ? p.group_size : in;
  const int64_t groups = (in + group - 1) / group;
  auto add = [&t](PackedTensorRole role, int64_t elements, int64_t element_bytes) {
    t.tensor[t.count++] = PackedTensor{role, elements, element_bytes};
  };
  using R = PackedTensorRole;
  switch (p.layout) {
    case P::kGptq:
      add(R::kWeight, in / 32 * bits * out, 4);
      add(R::kZeros, groups * (out / 32 * bits), 4);
      add(R::kScales, groups * out, 2);
      add(R::kGIdx, in, 4);
      break;
    case P::kAwq:
      add(R::kWeight, in * (out / pack), 4);
      add(R::kZeros, (in / group) * (out / pack), 4);
      add(R::kScales, (in / group) * out, 2);
      break;
    case P::kCompressedTensors:
      // weight_scale in the model's 16-bit dtype; weight_shape int64 (pack_quantized.py
      // compress_weight: torch.tensor(weight.shape), the default integer dtype).
      add(R::kWeight, out * ((in + pack - 1) / pack), 4);
      add(R::kScales, out * groups, 2);
      add(R::kShape, 2, 8);
      if (p.zero_point) add(R::kZeros, (out + pack - 1) / pack * groups, 4);
      if (p.g_idx) add(R::kGIdx, in, 4);
      break;
    case P::kNone: return t;
  }
  if (p.bias_stored && !l.bias) add(R::kStoredBias, out, 2);
  return t;
}

PackedElements PackedLinearElements(const LinearSpec& l, const PackedLinears& p) {
  PackedElements e;
  for (const PackedTensor& t : PackedLinearTensors(l, p)) (t.role == PackedTensorRole::kWeight ? e.weight : e.metadata) += t.elements;
  return e;
}

}  // namespace vramplan
