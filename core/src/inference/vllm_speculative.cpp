#include "inference/vllm_speculative.h"

#include "format.h"
#include "inference/weight_formats.h"
#include "io/json_reader.h"
#include "units.h"
#include "util/checked_math.h"

namespace vramplan {

using checked::Add;
using checked::Mul;

namespace {

// `m` reduced to `layers` copies of its MTP layer kind: no embeddings, head or final norm (the
// drafter shares the target's embedding and head; its own norms are counted by the caller).
ModelSpec DraftDecoderSpec(const ModelSpec& m, int64_t layers) {
  ModelSpec d = m;
  d.layer_kind.assign(static_cast<size_t>(layers), m.checkpoint.mtp_kind);
  d.num_layers = layers;
  d.vocab_size = 0;
  d.position_embedding_rows = 0;
  d.extra_embedding_params = 0;
  d.lm_head_bias = false;
  d.final_norm = NormSpec{};
  return d;
}

}  // namespace

bool VllmMtpOn(const Scenario& s) {
  return s.mode == Mode::kInference && s.inference.engine == Engine::kVllm && s.inference.speculative.method == SpeculativeMethod::kMtp;
}

VllmMtpDraft VllmMtpDraftOf(const Scenario& s, int64_t tp) {
  const ModelSpec& m = s.model;
  const WeightFormat f = s.inference.weights;
  VllmMtpDraft d;
  d.layers = m.checkpoint.mtp_layers;
  d.lookahead_tokens = s.inference.speculative.num_speculative_tokens;
  if (d.layers <= 0 || m.checkpoint.mtp_kind >= m.kinds.size()) return d;
  const int64_t h = m.hidden_size;
  d.decoder_bytes = ComputeWeightBytes(DraftDecoderSpec(m, d.layers), f, tp, PackedLoader::kVllm).all_layers_bytes;
  // The norms' bytes as ComputeWeightBytes stores 1-D tensors (fp32 and GGUF: 4 B, else 2 B).
  const int64_t scalar = f == WeightFormat::kFp32 || IsGguf(f) ? 4 : 2;
  d.norm_bytes = Mul(d.layers, 3, h, scalar);
  std::string proj;
  if (m.checkpoint.mtp_fc_column_parallel) {
    // Qwen3-Next / Qwen3.5: fc = ColumnParallelLinear(2h, h, bias=False, quant_config): in the
    // weight format, split over tp like the target's column-parallel linears.
    ModelSpec p = DraftDecoderSpec(m, d.layers);
    LayerKind fc;
    LinearSpec l;
    l.name = "fc";
    l.in_features = 2 * h;
    l.out_features = h;
    l.parallel = ParallelStyle::kColumn;
    fc.linears.push_back(l);
    p.kinds = {fc};
    p.layer_kind.assign(static_cast<size_t>(d.layers), 0);
    d.projection_bytes = ComputeWeightBytes(p, f, tp, PackedLoader::kVllm).all_layers_bytes;
    proj = "fc (2h -> h, column-parallel, " + WeightFormatName(f) + ")";
  } else {
    // DeepSeek-V3 / GLM: eh_proj = nn.Linear(2h, h, bias=False): the model dtype, whole on every rank.
    d.projection_bytes = Mul(d.layers, 2 * h, h, ComputeDtypeBytes(f));
    proj = "eh_proj (2h -> h, nn.Linear in the model dtype, not sharded)";
  }
  d.explain = WithCommas(d.layers) + " MTP layer(s) (vLLM --speculative-config method mtp): decoder layer " + Gib(d.decoder_bytes) + " + " +
              proj + " " + BytesExplained(d.projection_bytes) + " + 3 norms x " + WithCommas(h) + " x " + std::to_string(scalar) + " B" +
              "; embed_tokens and lm_head shared with the target";
  return d;
}

ModelSpec WithDraftLayers(const ModelSpec& m, int64_t layers) {
  ModelSpec served = m;
  served.layer_kind.insert(served.layer_kind.end(), static_cast<size_t>(layers), m.checkpoint.mtp_kind);
  return served;
}

void CheckSpeculative(const Scenario& s, Issues* errors) {
  const InferenceConfig& inf = s.inference;
  if (s.mode != Mode::kInference || inf.speculative.method != SpeculativeMethod::kMtp) return;
  const std::string path = "inference.speculative.method";
  if (inf.engine != Engine::kVllm) {
    io::AddError(errors, "unsupported_combination", path,
                 "inference.speculative.method \"mtp\" is vLLM's --speculative-config: it needs inference.engine \"vllm\" "
                 "(the transformers and llama.cpp engines are estimated without speculative decoding); use \"none\"");
    return;
  }
  if (inf.vllm_version == VllmVersion::kV0Engine) {
    io::AddError(errors, "unsupported_combination", path,
                 "inference.speculative.method \"mtp\" is modelled for vLLM's V1 engine: inference.vllm_version \"0.21+\" or \"0.8-0.20\"");
    return;
  }
  const CheckpointLayout& ck = s.model.checkpoint;
  if (ck.mtp_layers <= 0) {
    io::AddError(errors, "unsupported_combination", path,
                 "inference.speculative.method \"mtp\" drafts with the checkpoint's multi-token-prediction layers; this model has none "
                 "(num_nextn_predict_layers / mtp_num_hidden_layers is 0 or absent): use \"none\"");
    return;
  }
  if (ck.mtp_draft_unmodelled) {
    io::AddError(errors, "unsupported_combination", path,
                 "inference.speculative.method \"mtp\" is not modelled for this model's multi-token-prediction blocks (MiMo-V2-Flash's "
                 "three sliding-window MTP blocks, which vLLM drafts with in mimo_v2_flash_mtp.py): use \"none\"");
    return;
  }
  if (ck.mtp_extra_params > 0 || ck.mtp_eh_scaled) {
    io::AddError(errors, "unsupported_combination", path,
                 "inference.speculative.method \"mtp\" is modelled for the DeepSeek-V3 / GLM-4.5 / Qwen3-Next MTP layouts; this model's MTP "
                 "layer (DeepSeek-V4's hyper-connection head, LongCat-Flash's own sublayer) is not: use \"none\"");
    return;
  }
  const int64_t n = ck.mtp_layers, k = inf.speculative.num_speculative_tokens;
  if (k > n && k % n != 0) {
    io::AddError(errors, "out_of_range", "inference.speculative.num_speculative_tokens",
                 "inference.speculative.num_speculative_tokens above the model's " + std::to_string(n) +
                     " MTP layers must be a multiple of it (vLLM: \"num_speculative_tokens must be divisible by n_predict\")");
  }
}

}  // namespace vramplan
