#include "inference/recurrent_state.h"

#include <algorithm>

#include "format.h"
#include "units.h"
#include "util/checked_math.h"

namespace vramplan {

namespace {

struct LayerState {
  int64_t conv = 0, ssm = 0;
};

LayerState OneLayer(const RecurrentGeometry& r, Engine engine, int64_t tp, int64_t dt) {
  using checked::Mul;
  LayerState out;
  if (engine == Engine::kLlamaCpp) {  // F32 r_l / s_l rows, no tensor parallelism
    out.conv = Mul(r.conv_kernel - 1, r.ConvChannels(), 4);
    out.ssm = Mul(r.StateElements(), 4);
    return out;
  }
  if (engine == Engine::kTransformers) {
    out.conv = Mul(r.conv_kernel, r.ConvChannels(), dt);
    out.ssm = Mul(r.StateElements(), r.kind == MixerKind::kGatedDeltaNet || r.kind == MixerKind::kKimiDelta ? 4 : dt);
    return out;
  }
  // vLLM: channels and heads split over tp.
  int64_t channels = r.ConvChannels(), state = r.StateElements();
  if (r.kind == MixerKind::kMamba2) {
    const int64_t groups = r.groups % tp == 0 ? r.groups : r.groups + (tp - r.groups);
    channels = r.inner + 2 * groups * r.state_size;
  }
  out.conv = Mul(r.conv_kernel - 1, CeilDiv(channels, tp), dt);
  if (r.kind == MixerKind::kLightning) {
    // MambaStateShapeCalculator.linear_attention_state_shape: (num_heads // tp, head_dim,
    // head_dim), no conv state; linear_attention_state_dtype: the model dtype.
    out.conv = 0;
    out.ssm = Mul(r.num_heads / tp, r.head_dim, r.head_dim, dt);
    return out;
  }
  // MambaStateDtypeCalculator.kda_state_dtype: the conv states in the model dtype, KDA's recurrent
  // state always float32.
  out.ssm = Mul(CeilDiv(state, tp), r.kind == MixerKind::kKimiDelta ? 4 : dt);
  return out;
}

}  // namespace

int64_t RecurrentLayerBytes(const RecurrentGeometry& r, Engine engine, int64_t tp, int64_t dtype_bytes) {
  if (r.kind == MixerKind::kNone) return 0;
  const LayerState one = OneLayer(r, engine, std::max<int64_t>(tp, 1), dtype_bytes);
  return one.conv + one.ssm;
}

RecurrentState RecurrentStateOf(const ModelSpec& m, Engine engine, int64_t tp, int64_t dtype_bytes) {
  tp = std::max<int64_t>(tp, 1);
  RecurrentState st;
  for (uint8_t idx : m.layer_kind) {
    const RecurrentGeometry& r = m.kinds[idx].recurrent;
    if (r.kind == MixerKind::kNone) continue;
    const LayerState one = OneLayer(r, engine, tp, dtype_bytes);
    ++st.layers;
    st.conv_bytes = checked::Add(st.conv_bytes, one.conv);
    st.ssm_bytes = checked::Add(st.ssm_bytes, one.ssm);
    st.largest_layer_bytes = std::max(st.largest_layer_bytes, one.conv + one.ssm);
  }
  // transformers' Lfm2HybridConvCache.__init__ allocates a (batch, hidden_size, conv_L_cache) conv
  // state for every layer, the attention layers' unused: counted with the conv state.
  if (engine == Engine::kTransformers) {
    const RecurrentGeometry* short_conv = nullptr;
    int64_t others = 0;
    for (uint8_t idx : m.layer_kind) {
      const RecurrentGeometry& r = m.kinds[idx].recurrent;
      if (r.kind == MixerKind::kShortConv) short_conv = &r;
      else ++others;
    }
    if (short_conv != nullptr) {
      st.conv_bytes = checked::Add(st.conv_bytes, checked::Mul(others, OneLayer(*short_conv, engine, tp, dtype_bytes).conv));
    }
  }
  return st;
}

std::string RecurrentStateExplain(const RecurrentState& st) {
  if (st.layers == 0) return "";
  return WithCommas(st.layers) + " recurrent layers: conv state " + WithCommas(st.conv_bytes) + " B + SSM state " +
         WithCommas(st.ssm_bytes) + " B = " + BytesExplained(st.BytesPerSequence()) + " per sequence";
}

}  // namespace vramplan
