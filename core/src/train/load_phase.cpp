#include "train/load_phase.h"

#include <algorithm>
#include <vector>

#include "format.h"
#include "gpu/caching_allocator.h"
#include "gpu/device_overhead.h"
#include "train/weights.h"

namespace vramplan {
namespace {

constexpr int64_t kMiB = 1024 * 1024;
constexpr int64_t kBf16 = 2;

using Handle = CachingAllocatorReplay::Handle;

// The tensors an NF4Tensor keeps: nf4 table, scaler mean, quantization factor storage, int8
// scalers, packed data (model/quantized_layouts.h TorchaoNf4Bytes).
struct Nf4Handles {
  Handle parts[5] = {-1, -1, -1, -1, -1};
};

// torchao v0.1 NF4Tensor.from_tensor on an n-element bf16 tensor already on the GPU (the caller
// holds it), allocation by allocation (torchao/dtypes/nf4tensor.py at tag v0.1).
Nf4Handles ToNf4V01(CachingAllocatorReplay& a, int64_t n) {
  const int64_t nb = n / 64, nsb = nb / 256;
  Nf4Handles kept;
  kept.parts[0] = a.Malloc(16 * kBf16);  // nf4 lookup table
  // double_quantize_scalers: get_block_absmax (abs, max values + indices), minus the mean,
  // absmax of the scaler blocks, 256 / (2 * expanded absmax) (materialized: nb elements),
  // scaler_blocks * factor -> round -> clamp -> int8.
  Handle abs = a.Malloc(kBf16 * n), values = a.Malloc(kBf16 * nb), indices = a.Malloc(8 * nb);
  a.Free(abs);
  a.Free(indices);
  kept.parts[1] = a.Malloc(kBf16);  // scaler mean
  Handle centered = a.Malloc(kBf16 * nb);
  a.Free(values);
  Handle abs2 = a.Malloc(kBf16 * nb), absmax2 = a.Malloc(kBf16 * nsb), indices2 = a.Malloc(8 * nsb);
  a.Free(abs2);
  a.Free(indices2);
  Handle twice = a.Malloc(kBf16 * nb);
  kept.parts[2] = a.Malloc(kBf16 * nb);  // quantization factor, kept as a [:, 0] view of all nb
  a.Free(twice);
  Handle scaled_scalers = a.Malloc(kBf16 * nb);
  Handle rounded = a.Malloc(kBf16 * nb);
  a.Free(scaled_scalers);
  Handle clamped = a.Malloc(kBf16 * nb);
  a.Free(rounded);
  kept.parts[3] = a.Malloc(nb);  // int8 scalers
  a.Free(clamped);
  a.Free(centered);
  a.Free(absmax2);
  // convert_to_norm_float_weight: block absmax again, scaled blocks, the 16-wide difference and
  // its abs (32 B/element each), min -> int64 indices, packing two indices per byte.
  abs = a.Malloc(kBf16 * n), values = a.Malloc(kBf16 * nb), indices = a.Malloc(8 * nb);
  a.Free(abs);
  a.Free(indices);
  Handle scaled = a.Malloc(kBf16 * n);
  Handle diff = a.Malloc(16 * kBf16 * n), diff_abs = a.Malloc(16 * kBf16 * n);
  a.Free(diff);
  Handle min_values = a.Malloc(kBf16 * n), nearest = a.Malloc(8 * n);
  a.Free(min_values);
  a.Free(diff_abs);
  Handle shifted = a.Malloc(4 * n), packed = a.Malloc(4 * n);
  a.Free(shifted);
  kept.parts[4] = a.Malloc(n / 2);  // packed uint8 data
  a.Free(packed);
  a.Free(nearest);
  a.Free(scaled);
  a.Free(values);
  return kept;
}

// NF4Tensor.get_original_weight (torchtune 0.1's clone = to_nf4(get_original_weight())): returns
// the bf16 weight (2n B); its int64 indices, halves and scaled halves are freed on return.
Handle GetOriginalWeight(CachingAllocatorReplay& a, int64_t n) {
  const int64_t nb = n / 64;
  Handle t = a.Malloc(n / 2), first = a.Malloc(4 * n);
  a.Free(t);
  t = a.Malloc(n / 2);
  Handle second = a.Malloc(4 * n);
  a.Free(t);
  Handle deq_first = a.Malloc(n), deq_second = a.Malloc(n);
  Handle quotient = a.Malloc(kBf16 * nb), scalers = a.Malloc(kBf16 * nb);
  a.Free(quotient);
  Handle repeated = a.Malloc(n), scaled_first = a.Malloc(n);
  a.Free(repeated);
  repeated = a.Malloc(n);
  Handle scaled_second = a.Malloc(n);
  a.Free(repeated);
  Handle stacked = a.Malloc(2 * n);
  for (Handle h : {first, second, deq_first, deq_second, scalers, scaled_first, scaled_second}) a.Free(h);
  return stacked;
}

void FreeNf4(CachingAllocatorReplay& a, const Nf4Handles& h) {
  for (Handle p : h.parts) a.Free(p);
}

// One decoder layer's tensors as torchtune 0.1 builds them, in construction order.
struct LayerTensors {
  std::vector<Handle> plain;       // bf16 weights, adapters, norms, RoPE buffers
  std::vector<Nf4Handles> nf4;     // NF4 base weights
  std::vector<int64_t> nf4_elems;  // ... their element counts, for the reload
};

LayerTensors BuildLayer(CachingAllocatorReplay& a, const Scenario& sc, const LayerKind& kind, const TrainPlan& plan,
                        const PrecisionModel& prec, bool clone) {
  const TrainConfig& train = sc.train;
  const ModelSpec& model = sc.model;
  const bool lora = train.method == TrainMethod::kLora || train.method == TrainMethod::kQlora;
  LayerTensors t;
  bool rope_done = false;
  for (const LinearSpec& l : kind.linears) {  // dense decoders only (ReplaysTorchtune01): one copy each
    const int64_t n = l.in_features * l.out_features;
    if (IsQuantizedBase(l, train, sc.framework.model_load)) {
      // LoRALinear(quantize_base=True): nn.Linear in bf16, then to_nf4 (construction); clone:
      // dequantize + re-quantize.
      Handle src = clone ? GetOriginalWeight(a, n) : a.Malloc(kBf16 * n);
      t.nf4.push_back(ToNf4V01(a, n));
      t.nf4_elems.push_back(n);
      a.Free(src);
    } else {
      t.plain.push_back(a.Malloc(prec.weight * n));
    }
    if (l.bias) t.plain.push_back(a.Malloc(prec.weight * l.out_features));
    if (lora && IsLoraTarget(l, train.lora)) {
      t.plain.push_back(a.Malloc(plan.adapter_bytes_per_param * train.lora.rank * l.in_features));
      t.plain.push_back(a.Malloc(plan.adapter_bytes_per_param * train.lora.rank * l.out_features));
    }
    if (!rope_done && l.slot == LinearSlot::kO) {  // attention layers only (not a recurrent mixer)
      // RotaryPositionalEmbeddings(head_dim, max_seq_len) per attention module: fp32 theta and
      // cos/sin cache (max_seq_len, head_dim/2, 2); building it goes through fp32 positions,
      // angles, cos and sin (torchtune/modules/position_embeddings.py).
      const int64_t half = kind.attention.head_dim / 2, positions = std::max<int64_t>(1, model.max_position_embeddings);
      t.plain.push_back(a.Malloc(4 * half));
      if (clone) {
        t.plain.push_back(a.Malloc(8 * positions * half));
      } else {
        Handle seq = a.Malloc(4 * positions), angles = a.Malloc(4 * positions * half);
        Handle cos = a.Malloc(4 * positions * half), sin = a.Malloc(4 * positions * half);
        t.plain.push_back(a.Malloc(8 * positions * half));
        for (Handle h : {cos, sin, angles, seq}) a.Free(h);
      }
      rope_done = true;
    }
  }
  for (const NormSpec& n : kind.norms) {
    if (n.Params() > 0) t.plain.push_back(a.Malloc(prec.weight * n.Params()));
  }
  return t;
}

LoadPhase ReplayTorchtune01(const Scenario& sc, const TrainPlan& plan, const PrecisionModel& prec) {
  const ModelSpec& model = sc.model;
  CachingAllocatorReplay a;
  const int64_t vh = model.vocab_size * model.hidden_size;
  // lora_llama2(): the prototype layer, tok_embeddings, output, the final norm, then
  // TransformerDecoder deep-copies the prototype once per layer.
  LayerTensors proto = BuildLayer(a, sc, model.kinds[model.layer_kind.front()], plan, prec, /*clone=*/false);
  a.Malloc(prec.weight * vh);
  if (!model.tied_embeddings) a.Malloc(prec.weight * vh);
  if (model.final_norm.Params() > 0) a.Malloc(prec.weight * model.final_norm.Params());
  std::vector<LayerTensors> layers;
  layers.reserve(model.layer_kind.size());
  for (uint8_t k : model.layer_kind) layers.push_back(BuildLayer(a, sc, model.kinds[k], plan, prec, /*clone=*/true));
  for (Handle h : proto.plain) a.Free(h);
  for (const Nf4Handles& h : proto.nf4) FreeNf4(a, h);
  // load_state_dict: bf16 tensors copy in place; an NF4 weight's copy_ moves the checkpoint tensor
  // to the GPU, quantizes it and swaps the NF4Tensor's attributes (the old ones are freed).
  for (LayerTensors& layer : layers) {
    for (size_t i = 0; i < layer.nf4.size(); ++i) {
      Handle incoming = a.Malloc(kBf16 * layer.nf4_elems[i]);
      Nf4Handles fresh = ToNf4V01(a, layer.nf4_elems[i]);
      a.Free(incoming);
      FreeNf4(a, layer.nf4[i]);
      layer.nf4[i] = fresh;
    }
  }
  LoadPhase p;
  p.peak_allocated_bytes = a.peak_allocated_bytes();
  p.reserved_bytes = a.reserved_bytes();
  p.replayed = true;
  p.explain = "torchtune 0.1 model init replayed through the caching allocator (" + std::to_string(a.segments()) +
              " segments): peak allocated " + Gib(p.peak_allocated_bytes) + ", reserved " + Gib(p.reserved_bytes) +
              (sc.train.method == TrainMethod::kQlora ? " (torchao 0.1 quantizes whole tensors: 68 B/element at its peak)" : "");
  return p;
}

// The largest per-tensor transient of a direct load next to the weights already placed.
int64_t DirectTransientBytes(const Scenario& sc) {
  const TrainConfig& train = sc.train;
  if (train.method != TrainMethod::kQlora || train.qlora_backend == QloraBackend::kGptq) return 0;  // GPTQ loads packed
  int64_t largest = 0;
  for (const LayerKind& kind : sc.model.kinds) {
    for (const LinearSpec& l : kind.linears) {
      if (IsQuantizedBase(l, train, sc.framework.model_load)) largest = std::max(largest, l.in_features * l.out_features);
    }
  }
  // bitsandbytes Params4bit._quantize / Int8Params.cuda quantize from a 16-bit copy on the device;
  // torchao >= 0.2 to_nf4: the bf16 input, the scaled blocks, the uint8 indices and one 1M-element
  // chunk of the 16-wide difference and its abs (CHUNK_SIZE, torchao/dtypes/nf4tensor.py).
  return train.qlora_backend == QloraBackend::kTorchao ? 5 * largest + 64 * kMiB : 2 * largest;
}

// Everything the replay reads (not the batch or sequence): one estimate's inverse searches and a
// planner's variants re-run the same load many times, so the prepared model keeps the last replay.
std::string ReplayKey(const Scenario& sc, const TrainPlan& plan, const PrecisionModel& prec) {
  const ModelSpec& m = sc.model;
  const TrainConfig& t = sc.train;
  std::string key;
  auto add = [&key](int64_t v) { key += std::to_string(v) + ','; };
  add(m.vocab_size), add(m.hidden_size), add(m.tied_embeddings), add(m.final_norm.Params()), add(m.max_position_embeddings);
  for (uint8_t k : m.layer_kind) add(k);
  key += '|';
  for (const LayerKind& kind : m.kinds) {
    add(kind.attention.head_dim);
    for (const LinearSpec& l : kind.linears) {
      key += l.name;
      add(l.in_features), add(l.out_features), add(l.copies), add(l.bias), add(static_cast<int>(l.role)), add(l.lora_targetable);
      add(static_cast<int>(l.slot));
      add(IsQuantizedBase(l, t, sc.framework.model_load)), add(IsLoraTarget(l, t.lora));
    }
    for (const NormSpec& n : kind.norms) add(n.Params());
    key += '|';
  }
  add(static_cast<int>(t.method)), add(t.lora.rank), add(plan.adapter_bytes_per_param), add(prec.weight);
  return key;
}

bool ReplaysTorchtune01(const Scenario& sc) {
  const ParallelConfig& p = sc.parallel;
  if (sc.framework.model_load != ModelLoad::kTorchtune01 || sc.framework.device != Device::kCuda || sc.model.kinds.empty() ||
      p.gpus > 1 || p.zero != 0 || p.fsdp) {
    return false;
  }
  // torchtune 0.1 built dense decoders only (Llama 2/3, Mistral, Gemma): no routed experts.
  for (const LayerKind& kind : sc.model.kinds) {
    for (const LinearSpec& l : kind.linears) {
      if (l.copies > 1) return false;
    }
  }
  return true;
}

}  // namespace

LoadPhase ComputeLoadPhase(const Scenario& sc, const TrainPlan& plan, const PrecisionModel& prec, int64_t weights_bytes, bool explain,
                           LoadReplayCache* replay_cache) {
  if (ReplaysTorchtune01(sc)) {
    if (replay_cache == nullptr) return ReplayTorchtune01(sc, plan, prec);
    std::string key = ReplayKey(sc, plan, prec);
    if (key != replay_cache->key) {
      replay_cache->phase = ReplayTorchtune01(sc, plan, prec);
      replay_cache->key = std::move(key);
    }
    return replay_cache->phase;
  }
  LoadPhase p;
  const int64_t transient = DirectTransientBytes(sc);
  p.peak_allocated_bytes = weights_bytes + transient;
  p.reserved_bytes = p.peak_allocated_bytes + AllocatorOverheadBytes(sc, weights_bytes, transient);
  if (explain) {
    p.explain = "direct load: weights " + Gib(weights_bytes) +
                (transient > 0 ? " + the largest quantization transient " + Gib(transient) : std::string()) +
                " = " + Gib(p.peak_allocated_bytes);
  }
  return p;
}

}  // namespace vramplan
