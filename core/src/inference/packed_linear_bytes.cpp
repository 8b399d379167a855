// Engine-resident bytes of packed linears. Sources are cited in packed_linear_bytes.h.
#include "inference/packed_linear_bytes.h"

#include "model/packed_linears.h"

namespace vramplan {
namespace {

using P = PackedLinearLayout;
using R = PackedTensorRole;

// vLLM's act-order: GPTQ desc_act and compressed-tensors actorder "group", both read as false with
// one group over all inputs (GPTQMarlinConfig.__init__; CompressedTensorsWNA16.__init__).
bool VllmActOrder(const PackedLinears& p) {
  if (p.group_size <= 0) return false;
  return p.layout == P::kGptq ? p.desc_act : p.layout == P::kCompressedTensors && p.g_idx;
}

std::string GroupText(const PackedLinears& p) {
  return p.group_size > 0 ? "group " + std::to_string(p.group_size) : "one group per output channel";
}

}  // namespace

PackedLoader PackedLoaderFor(Engine engine) { return engine == Engine::kVllm ? PackedLoader::kVllm : PackedLoader::kModules; }

bool LayoutServesFormat(const PackedLinears& p, WeightFormat f) {
  using W = WeightFormat;
  switch (p.layout) {
    case P::kGptq: return (f == W::kGptq4 && p.bits == 4) || (f == W::kGptq8 && p.bits == 8);
    case P::kAwq: return f == W::kAwq4 && p.bits == 4;
    case P::kCompressedTensors: return (f == W::kGptq4 && p.bits == 4) || ((f == W::kGptq8 || f == W::kInt8) && p.bits == 8);
    case P::kNone: return false;
  }
  return false;
}

bool VllmGptqMarlin(const PackedLinears& p) {
  return p.layout == P::kGptq && p.sym && (p.bits == 4 || p.bits == 8) &&
         (p.group_size <= 0 || p.group_size == 32 || p.group_size == 64 || p.group_size == 128);
}

PackedResidentBytes PackedLinearResidentBytes(const LinearSpec& l, const PackedLinears& p, PackedLoader loader, int64_t tp) {
  PackedResidentBytes r;
  const bool vllm = loader == PackedLoader::kVllm;
  const bool marlin = VllmGptqMarlin(p);
  // GPTQ's exllama path keeps g_idx with desc_act as written; the Marlin paths read act-order above.
  const bool act = p.layout == P::kGptq && !marlin ? p.desc_act : VllmActOrder(p);
  const bool repeat = vllm && tp > 1 && l.parallel == ParallelStyle::kRow && (act || p.group_size <= 0);
  for (const PackedTensor& t : PackedLinearTensors(l, p)) {
    int64_t bytes = t.Bytes();
    bool whole = false;  // held whole on every rank
    switch (t.role) {
      case R::kStoredBias: bytes = 0; break;  // neither engine builds a bias the model lacks
      case R::kWeight: break;
      case R::kScales: whole = repeat; break;
      case R::kZeros:
        // zero_points=False: a dense linear's qzeros become an empty tensor. GPTQMarlinMoEMethod
        // allocates the experts' w13_qzeros / w2_qzeros in the 16-bit params_dtype and
        // process_weights_after_loading leaves them: the same count at 2 B.
        if (vllm && marlin) bytes = l.role == ModuleRole::kExperts ? t.elements * 2 : 0;
        whole = repeat;
        break;
      case R::kGIdx:
        if (vllm) bytes = act ? bytes * (p.layout == P::kGptq && !marlin ? 1 : 2) : 0;  // + g_idx_sort_indices on Marlin
        break;
      case R::kShape: whole = vllm; break;  // weight_shape: int64 [2] on every rank
    }
    (whole ? r.replicated : r.sharded) += bytes;
  }
  return r;
}

std::string PackedResidencyText(const PackedLinears& p, PackedLoader loader) {
  std::string s;
  switch (p.layout) {
    case P::kGptq:
      s = "GPTQ " + std::to_string(p.bits) + "-bit, " + GroupText(p) + ", desc_act " + (p.desc_act ? "true" : "false") + ", sym " +
          (p.sym ? "true" : "false");
      break;
    case P::kAwq: s = "AWQ 4-bit GEMM, " + GroupText(p); break;
    case P::kCompressedTensors:
      s = "compressed-tensors pack-quantized " + std::to_string(p.bits) + "-bit, " + GroupText(p) + (p.zero_point ? ", asymmetric" : "") +
          (p.g_idx ? ", actorder group" : "");
      break;
    case P::kNone: return "";
  }
  s += " from quantization_config; ";
  if (loader == PackedLoader::kModules) return s + "the QuantLinear buffers as stored" + (p.bias_stored ? ", the stored zero biases not loaded" : "");
  const bool act = VllmActOrder(p);
  switch (p.layout) {
    case P::kGptq:
      if (VllmGptqMarlin(p)) s += std::string("vLLM gptq_marlin keeps qweight + scales") + (act ? " + g_idx + g_idx_sort_indices" : "");
      else s += std::string("vLLM gptq keeps qweight + qzeros + scales") + (p.desc_act ? " + g_idx" : "");
      break;
    case P::kAwq: s += "vLLM keeps qweight + qzeros + scales"; break;
    case P::kCompressedTensors:
      s += std::string("vLLM keeps weight_packed + weight_scale + weight_shape") + (p.zero_point ? " + weight_zero_point" : "") +
           (act ? " + weight_g_idx + g_idx_sort_indices" : "");
      break;
    case P::kNone: break;
  }
  return s;
}

}  // namespace vramplan
