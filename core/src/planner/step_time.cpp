// The step-time model of the planner's cost axis. Every rate and factor is documented with its
// source in docs/planner.md ("Cost model"); the constants below carry the same names.
#include "planner/step_time.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "parallel/topology.h"
#include "planner/rollout_time.h"
#include "train/preference.h"

namespace vramplan {
namespace {

// Share of the dense tensor peak a well-tuned training step achieves (model FLOPs utilization):
// Megatron-LM reports 41-52% on A100/H100 (Narayanan et al. 2021, Table 1; NVIDIA's Megatron
// performance table); we use one figure for every GPU, so it cancels in cost ratios on one GPU.
constexpr double kMatmulEfficiency = 0.45;
// fp32 without TF32 runs on the CUDA cores: A100 19.5 vs 312 TFLOPS bf16, H100 SXM 67 vs 989 (the
// datasheets): about 1/16 of the 16-bit tensor rate.
constexpr double kFp32Fraction = 1.0 / 16.0;
// Eager attention materializes the b x a x s x s scores and runs softmax/dropout as separate
// memory-bound kernels; FlashAttention-2 is 2-4x faster end to end on the attention itself (Dao
// 2023, Figs. 4-5). The attention core's FLOPs run at 1/3 of the matmul rate when eager.
constexpr double kEagerAttentionSlowdown = 3.0;
// Kernel launches per decoder layer per micro-batch (forward ~25, backward ~50 in a transformers
// Llama layer) at ~4 us each when the GPU outruns the CPU. The ~4 us: a CUDA launch measured at
// 4-6 us (pegainfer's launch-overhead study, xiaguan/cuda-kernel-launch-lab; NVIDIA's "Getting
// Started with CUDA Graphs" blog, 2019, the same order). The count: 75 is the lower side of
// tests/fixtures/planner/count_layer_ops.py, which counts 159 ATen compute ops for one
// transformers-style layer's forward + backward on CPU (torch 1.13: eager attention and CPU
// gradient bookkeeping, both fewer kernels on CUDA with SDPA); at >= 1k tokens per micro-batch the
// term is < 1% of a step either way (docs/planner.md, "Cost model").
constexpr double kLaunchSecondsPerLayer = 75 * 4e-6;
// Host links (per GPU): PCIe 3.0/4.0/5.0 x16 at ~12/25/50 GB/s achieved (the 16/32/64 GB/s raw
// per direction). NVLink per GPU per direction: V100 150, A100 300, H100/H200 450, B200 900 GB/s
// (NVIDIA datasheets); across nodes one 400 Gb/s NIC per GPU (~45 GB/s achieved; DGX H100 layout).
constexpr double kInterNodeBytesPerS = 45e9;
// One training process's share of host DRAM bandwidth for CPU Adam / CPU-resident layers: a
// dual-socket server has ~300-400 GB/s for 8 GPUs, a desktop ~60-80 GB/s.
constexpr double kHostMemoryBytesPerS = 40e9;
// One NVMe drive (PCIe 4.0 class), shared by the node's processes (ZeRO-Infinity paper: 3.2 GB/s
// per drive reads).
constexpr double kNvmeBytesPerS = 3e9;
// Activation offload (torchtune OffloadActivations with use_streams, DeepSpeed cpu_checkpointing):
// the saved activations go down to pinned host memory in the forward and come back in the
// backward on a side stream; the transfer is hidden under the compute up to half its time and
// the rest is exposed. Half lies between the two published bounds: the copies' whole window is the
// step (down during the forward, 1/3 of the compute; up during the backward, 2/3), reached only by
// perfect overlap (TransformerEngine's CPU-offloading docs: asynchronous, "minimal overhead" when
// the link is fast); with streams the overlap is far from perfect (pytorch/pytorch PR #174436:
// -34% throughput offloading every activation of a pipeline stage with streams), and without
// prefetch the GPU idles through the reloads (SageMaker model-parallel v2 docs, activation offloading).
constexpr double kOffloadHiddenShare = 0.5;
// Bytes a decoder layer saves per token for its backward in 16-bit: 34·h without the attention
// scores (Korthikanti et al. 2022, eq. 1 with FlashAttention / SDPA), plus 5·a·s with eager
// attention; with full checkpointing the layer input alone (2·h).
constexpr double kSavedBytesPerHidden = 34.0;

bool Has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

double NvlinkBytesPerS(const GpuEntry& g) {
  if (!Has(g.id, "sxm") && !Has(g.id, "gh200") && g.arch != "blackwell" && !Has(g.id, "mi3") && !Has(g.id, "mi2")) return 0;
  if (g.segment != "datacenter") return 0;
  if (g.arch == "volta") return 150e9;
  if (g.arch == "ampere") return 300e9;
  if (g.arch == "hopper") return 450e9;
  if (g.arch == "blackwell") return 900e9;
  if (Has(g.arch, "cdna")) return 300e9;  // AMD Infinity Fabric, MI250X-MI355X class
  return 0;
}

double PcieBytesPerS(const GpuEntry& g) {
  if (g.arch == "pascal" || g.arch == "volta" || g.arch == "turing") return 12e9;
  if (g.arch == "hopper" || g.arch == "blackwell" || Has(g.arch, "cdna3") || Has(g.arch, "cdna4")) return 50e9;
  return 25e9;
}

// Attention-core FLOPs per token in the forward pass (QK^T and AV, causal: half the square).
double AttentionFlopsPerToken(const ModelSpec& m, const std::vector<double>& counts, int64_t seq_len) {
  double flops = 0;
  for (size_t k = 0; k < m.kinds.size(); ++k) {
    if (counts[k] == 0) continue;
    const AttentionGeometry& a = m.kinds[k].attention;
    const double window = a.sliding_window > 0 ? std::min<double>(static_cast<double>(a.sliding_window), static_cast<double>(seq_len))
                                               : static_cast<double>(seq_len) / 2.0;
    flops += counts[k] * 2.0 * window * static_cast<double>(a.num_heads) * static_cast<double>(a.head_dim + a.v_head_dim);
  }
  return flops;
}

// Parameters a token's matmuls read (the embedding lookup is a gather; a tied output layer is a matmul).
double MatmulParamsPerToken(const ModelSpec& m, const ParamCounts& p) {
  double n = static_cast<double>(p.active_per_token > 0 ? p.active_per_token : p.total) - static_cast<double>(p.embedding);
  if (m.tied_embeddings) n += static_cast<double>(m.vocab_size) * static_cast<double>(m.hidden_size);
  return std::max(n, 1.0);
}

bool SixteenBitCompute(Precision p) { return p != Precision::kFp32; }

double GradBytes(const Scenario& s) {
  const Precision p = s.train.precision;
  return (p == Precision::kFp32 || p == Precision::kAmpBf16 || p == Precision::kAmpFp16) ? 4.0 : 2.0;
}

double WeightBytes(const Scenario& s) { return s.train.precision == Precision::kFp32 || s.train.precision == Precision::kAmpBf16 || s.train.precision == Precision::kAmpFp16 ? 4.0 : 2.0; }

// Bytes the optimizer step reads and writes per trainable parameter (weights, gradient, states).
double OptimizerBytesPerParam(const Scenario& s) {
  double state = 8.0;  // AdamW m and v in fp32
  switch (s.train.optimizer) {
    case Optimizer::kAdamW8bit:
    case Optimizer::kPagedAdamW8bit: state = 2.0; break;
    case Optimizer::kAdafactor: state = 0.5; break;  // factored second moment
    case Optimizer::kSgd: state = 0.0; break;
    case Optimizer::kSgdMomentum:
    case Optimizer::kLion: state = 4.0; break;
    default: break;
  }
  const bool master = s.train.precision == Precision::kMixedBf16 || s.train.precision == Precision::kMixedFp16;
  const double w = WeightBytes(s) + (master ? 4.0 : 0.0);
  return 2.0 * w + GradBytes(s) + 2.0 * state;
}

}  // namespace

std::vector<double> KindCounts(const ModelSpec& m) {
  std::vector<double> counts(m.kinds.size(), 0.0);
  for (uint8_t k : m.layer_kind) counts[k] += 1.0;
  return counts;
}

HardwareRates RatesFor(const GpuEntry* gpu) {
  HardwareRates r;
  double tflops = 989, hbm = 3350, pcie = 50e9, nvlink = 450e9;  // H100 SXM (a custom GPU)
  if (gpu != nullptr) {
    tflops = gpu->bf16_tflops > 0 ? gpu->bf16_tflops : gpu->fp16_tflops;
    // No throughput in the datasheet (A10G, Apple M4): A10's 125 TFLOPS per 600 GB/s.
    if (tflops <= 0) tflops = gpu->bandwidth_gb_s * (125.0 / 600.0);
    hbm = gpu->bandwidth_gb_s > 0 ? gpu->bandwidth_gb_s : 1000;
    pcie = PcieBytesPerS(*gpu);
    nvlink = NvlinkBytesPerS(*gpu);
  }
  r.matmul_flops_per_s = tflops * 1e12 * kMatmulEfficiency;
  r.fp32_flops_per_s = r.matmul_flops_per_s * kFp32Fraction;
  r.hbm_bytes_per_s = hbm * 1e9;
  r.host_link_bytes_per_s = pcie;
  r.intra_node_bytes_per_s = nvlink > 0 ? nvlink : pcie;
  r.inter_node_bytes_per_s = std::min(kInterNodeBytesPerS, r.intra_node_bytes_per_s);
  r.host_memory_bytes_per_s = kHostMemoryBytesPerS;
  r.nvme_bytes_per_s = kNvmeBytesPerS;
  return r;
}

StepTime TrainingStepTime(const Scenario& s, const ModelSpec& model, const ParamCounts& params, const HardwareRates& rates,
                          const std::vector<double>* kind_counts) {
  const TrainConfig& t = s.train;
  const ParallelConfig& p = s.parallel;
  const ModelSpec& m = model;
  const double tp = static_cast<double>(std::max<int64_t>(1, p.tp));
  const double pp = static_cast<double>(std::max<int64_t>(1, p.pp));
  const double cp = static_cast<double>(std::max<int64_t>(1, p.cp));
  const double dp = static_cast<double>(DataParallelDegree(p));
  const double layers = static_cast<double>(std::max<int64_t>(1, m.num_layers));
  const double micro_batches = static_cast<double>(std::max<int64_t>(1, t.grad_accum_steps));
  const double replica_tokens = static_cast<double>(t.micro_batch_size) * static_cast<double>(t.seq_len) * micro_batches;

  StepTime st;
  st.gpus = std::max<int64_t>(1, p.gpus);
  st.tokens = replica_tokens * dp;
  // Preference objectives forward two rows per sample (chosen and rejected); a reference model
  // forwards them again without a backward, whether in the step or, precomputed, once before
  // training (TRL DPOTrainer precompute_ref_log_probs: one pass over the train set in
  // get_train_dataloader). Per epoch the same FLOPs; over E epochs precomputing runs 1/E of them,
  // so pricing it as the per-step forward is exact for one epoch and an upper bound beyond (the
  // scenario has no epoch count).
  const double rows = static_cast<double>(RowsPerSample(t.objective));
  const bool reference = t.objective == Objective::kDpo || t.objective == Objective::kIpo || t.objective == Objective::kKto;

  // What the backward reaches: every layer, except under freeze (the last N layers and the head).
  const bool adapters = t.method == TrainMethod::kLora || t.method == TrainMethod::kQlora;
  double backprop_fraction = 1.0, weight_grad_fraction = adapters ? 0.0 : 1.0;
  if (t.method == TrainMethod::kFreeze) {
    backprop_fraction = std::min(1.0, static_cast<double>(t.freeze.trainable_layers) / layers);
    weight_grad_fraction = backprop_fraction;
  }
  const double matmul = 2.0 * MatmulParamsPerToken(m, params);
  std::vector<double> own_counts;
  if (kind_counts == nullptr) own_counts = KindCounts(m);
  const std::vector<double>& counts = kind_counts != nullptr ? *kind_counts : own_counts;
  const double attention = AttentionFlopsPerToken(m, counts, t.seq_len);
  const double attention_rate_divisor = t.attention == AttentionImpl::kEager ? kEagerAttentionSlowdown : 1.0;
  const double rate = SixteenBitCompute(t.precision) ? rates.matmul_flops_per_s : rates.fp32_flops_per_s;
  // Forward 2N, backward 2N for input gradients + 2N for weight gradients (Kaplan et al. 2020);
  // the attention core's backward is twice its forward (FlashAttention-2's kernels).
  const double forward = matmul + attention * attention_rate_divisor;
  const double backward = (matmul + 2.0 * attention * attention_rate_divisor) * backprop_fraction + matmul * weight_grad_fraction;
  const double gpu_share = rows * replica_tokens / (tp * pp * cp);
  st.compute_s = gpu_share * (forward + backward + (reference ? forward : 0.0)) / rate;
  if (t.gradient_checkpointing == Checkpointing::kFull) st.recompute_s = gpu_share * forward * backprop_fraction / rate;
  if (t.gradient_checkpointing == Checkpointing::kSelective) st.recompute_s = gpu_share * attention * attention_rate_divisor * backprop_fraction / rate;
  if (pp > 1) {
    const double vpp = static_cast<double>(std::max<int64_t>(1, p.vpp));
    st.pipeline_bubble_s = (st.compute_s + st.recompute_s) * (pp - 1.0) / (vpp * micro_batches);  // Narayanan et al. 2021, eq. 1
  }
  st.launch_s = micro_batches * (layers / pp) * kLaunchSecondsPerLayer;

  // QLoRA: each matmul of the frozen base dequantizes its weight (read the packed bits, write and
  // read back 16-bit): per pass ~4.5 B per base parameter of HBM traffic (bitsandbytes
  // dequantize_4bit + the 16-bit matmul); passes: forward, backward, and the recompute.
  if (t.method == TrainMethod::kQlora) {
    const double passes = 2.0 + (t.gradient_checkpointing == Checkpointing::kFull ? 1.0 : 0.0);
    const double base = (static_cast<double>(params.total) - static_cast<double>(params.embedding)) / (tp * pp);
    st.dequant_s = micro_batches * passes * base * (0.125 * t.qlora_bits + 4.0) / rates.hbm_bytes_per_s;
  }

  // Trainable parameters this GPU updates, and where its states live.
  double trainable = adapters ? 0.01 * static_cast<double>(params.total) : static_cast<double>(params.total) * weight_grad_fraction;
  if (adapters) {
    // LoRA: r x (in + out) per adapted linear; 1% of the model is the order of all-linear r = 16
    // on a 7-8B model (40M of 8B: 0.5%), used for its (small) optimizer and communication time.
    trainable = 0.005 * static_cast<double>(params.total) * std::max(1.0, static_cast<double>(t.lora.rank) / 16.0);
  }
  const double local = trainable / (tp * pp);
  const bool sharded_states = p.zero >= 1 || p.fsdp;
  const double state_share = sharded_states ? local / (dp * cp) : local;
  if (p.offload_optimizer == Offload::kNone) {
    st.optimizer_s = state_share * OptimizerBytesPerParam(s) / rates.hbm_bytes_per_s;
  } else {
    // ZeRO-Offload: gradients down and updated 16-bit weights up over PCIe, CPU Adam at host DRAM
    // bandwidth (Ren et al. 2021); NVMe adds the states' read and write (ZeRO-Infinity).
    const double pcie = state_share * (GradBytes(s) + 2.0) / rates.host_link_bytes_per_s;
    const double cpu = state_share * (4.0 * 3 + 4.0 + 4.0 * 3 + 2.0) / rates.host_memory_bytes_per_s;
    double nvme = 0;
    if (p.offload_optimizer == Offload::kNvme) {
      const double node_processes = static_cast<double>(std::min<int64_t>(p.gpus, GpusPerNode(p)));
      nvme = 2.0 * state_share * 12.0 * node_processes / rates.nvme_bytes_per_s;
    }
    st.offload_s += pcie + cpu + nvme;
  }
  if (t.activation_offload) {
    // Down in the forward, up in the backward, for the layers the backward reaches.
    double per_token = 0;
    const double h = static_cast<double>(m.hidden_size);
    for (size_t k = 0; k < m.kinds.size(); ++k) {
      const AttentionGeometry& a = m.kinds[k].attention;
      if (t.gradient_checkpointing == Checkpointing::kFull) {
        per_token += counts[k] * 2.0 * h;
      } else {
        per_token += counts[k] * kSavedBytesPerHidden * h;
        if (t.attention == AttentionImpl::kEager) per_token += counts[k] * 5.0 * static_cast<double>(a.num_heads) * static_cast<double>(t.seq_len);
      }
    }
    const double bytes = gpu_share * per_token * backprop_fraction;
    const double transfer = 2.0 * bytes / rates.host_link_bytes_per_s;
    st.offload_s += std::max(0.0, transfer - kOffloadHiddenShare * st.compute_s);
  }
  if (p.offload_params != Offload::kNone) {
    // ZeRO-3 offload_param: every micro-batch fetches each layer's shard from the host for the
    // forward and again for the backward.
    const double shard = static_cast<double>(params.total) / (tp * pp * dp * cp);
    double seconds = micro_batches * 2.0 * shard * 2.0 / rates.host_link_bytes_per_s;
    if (p.offload_params == Offload::kNvme) seconds += micro_batches * 2.0 * shard * 2.0 * static_cast<double>(std::min<int64_t>(p.gpus, GpusPerNode(p))) / rates.nvme_bytes_per_s;
    st.offload_s += seconds;
  }

  // Communication. Links: inside a node while the group fits one, else the NIC.
  const double node_gpus = static_cast<double>(GpusPerNode(p));
  const double dp_link = (dp * cp * tp * pp > node_gpus) ? rates.inter_node_bytes_per_s : rates.intra_node_bytes_per_s;
  double exposed = 0;
  const double group = dp * cp;
  if (group > 1) {
    const double ring = (group - 1.0) / group;
    if (p.zero >= 3 || p.fsdp) {
      // ZeRO-3 / FSDP: all-gather the weights for the forward and the backward, reduce-scatter the
      // gradients, every micro-batch: 1.5x DDP's volume (Rajbhandari et al. 2020, section 7),
      // prefetched under the compute.
      const double full_local = static_cast<double>(params.total) / (tp * pp);
      const double volume = micro_batches * (2.0 * full_local * 2.0 + local * GradBytes(s)) * ring;
      exposed += std::max(0.0, volume / dp_link - (st.compute_s + st.recompute_s));
    } else {
      // DDP / ZeRO-1/2: one all-reduce (reduce-scatter + all-gather) of the gradients per step,
      // bucketed under the last micro-batch's backward: buckets (25 MB, DDP's bucket_cap_mb) are
      // reduced as their gradients are ready (Li et al. 2020, "PyTorch Distributed", VLDB, section
      // 3.2.3), so the window is the backward, 2/3 of the micro-batch's compute (4N of 6N FLOPs),
      // less the last bucket, reduced after the backward ends: half the micro-batch's compute.
      const double volume = 2.0 * local * GradBytes(s) * ring;
      exposed += std::max(0.0, volume / dp_link - st.compute_s / micro_batches * 0.5);
    }
  }
  if (tp > 1) {
    // Megatron: two all-reduces (or all-gather + reduce-scatter with SP) per layer in the forward,
    // two in the backward, on the critical path (Shoeybi et al. 2019); a third pair when recomputing.
    const double per_layer = 2.0 * (tp - 1.0) / tp * static_cast<double>(t.micro_batch_size) * (static_cast<double>(t.seq_len) / cp) * static_cast<double>(m.hidden_size) * 2.0;
    const double count = 4.0 + (t.gradient_checkpointing == Checkpointing::kFull ? 2.0 : 0.0);
    exposed += micro_batches * (layers / pp) * count * per_layer / rates.intra_node_bytes_per_s;
  }
  if (p.ep > 1) {
    // Expert parallelism: dispatch and combine all-to-alls, forward and backward, of the routed
    // tokens (top-k copies of each hidden state).
    double top_k = 0, moe_layers = 0;
    for (size_t k = 0; k < m.kinds.size(); ++k) {
      if (m.kinds[k].mlp.num_experts > 0 && counts[k] > 0) {
        moe_layers += counts[k];
        top_k = static_cast<double>(m.kinds[k].mlp.experts_per_token);
      }
    }
    const double ep = static_cast<double>(p.ep);
    const double per_layer = (ep - 1.0) / ep * static_cast<double>(t.micro_batch_size) * (static_cast<double>(t.seq_len) / cp) * top_k * static_cast<double>(m.hidden_size) * 2.0;
    exposed += micro_batches * (moe_layers / pp) * 4.0 * per_layer / dp_link;
  }
  st.communication_s = exposed;
  // Online RL: the rollout and the no-grad log-prob passes run before the step (a vLLM server's
  // GPUs join the job's GPU-seconds).
  const RolloutTime rollout = RolloutStepTime(s, model, params, rates);
  st.rollout_s = rollout.seconds;
  st.gpus += rollout.extra_gpus;
  st.total_s = st.compute_s + st.recompute_s + st.pipeline_bubble_s + st.launch_s + st.dequant_s + st.optimizer_s + st.communication_s + st.offload_s +
               st.rollout_s;
  return st;
}

StepTime ServingTime(const Scenario& s, const ModelSpec& model, const ParamCounts& params, int64_t weight_bytes,
                     int64_t kv_bytes_per_token, int64_t requests, const HardwareRates& rates) {
  const InferenceConfig& inf = s.inference;
  StepTime st;
  const int64_t gpus = std::max<int64_t>(1, s.parallel.gpus);
  st.gpus = gpus;
  const double batch = static_cast<double>(std::max<int64_t>(1, requests));
  const double at_once = std::clamp(static_cast<double>(inf.batch_size), 1.0, batch);
  const double waves = std::ceil(batch / at_once);
  const double prompt = static_cast<double>(inf.prompt_len);
  const double generated = static_cast<double>(std::max<int64_t>(1, inf.new_tokens));
  st.tokens = batch * generated;
  const double per_gpu_split = static_cast<double>(gpus);

  // Prefill: compute-bound, 2 FLOPs per active parameter per prompt token.
  const double active = static_cast<double>(params.active_per_token > 0 ? params.active_per_token : params.total);
  st.compute_s = waves * at_once * prompt * 2.0 * active / per_gpu_split / rates.matmul_flops_per_s;
  // Decode: memory-bound: every step reads the weights and the batch's K/V (mean context:
  // the prompt plus half the generated tokens).
  double weights_on_gpu = static_cast<double>(weight_bytes);
  double weights_on_host = 0;
  if (inf.engine == Engine::kLlamaCpp && inf.n_gpu_layers >= 0 && inf.n_gpu_layers < model.num_layers) {
    const double share = static_cast<double>(inf.n_gpu_layers) / static_cast<double>(std::max<int64_t>(1, model.num_layers));
    weights_on_host = weights_on_gpu * (1.0 - share);
    weights_on_gpu *= share;
  }
  const double kv = at_once * (prompt + generated / 2.0) * static_cast<double>(kv_bytes_per_token) / per_gpu_split;
  double step = (weights_on_gpu + kv) / rates.hbm_bytes_per_s;
  st.offload_s = waves * generated * weights_on_host / rates.host_memory_bytes_per_s;
  // Launch-bound decode without CUDA graphs: published eager/graph ratios of a decode step are
  // 1.14x (vllm-project/vllm PR #1440, Llama-2-7B, batch 1) to 1.44x (facebookresearch/metaseq
  // PR #270, 175B on 8 A100s); 1.3x is between them.
  if (inf.engine == Engine::kVllm && !inf.cuda_graphs) step *= 1.3;
  st.launch_s = waves * generated * (step - (weights_on_gpu + kv) / rates.hbm_bytes_per_s);
  st.compute_s += waves * generated * (weights_on_gpu + kv) / rates.hbm_bytes_per_s;
  if (gpus > 1 && inf.engine != Engine::kLlamaCpp) {
    // Tensor parallel: two all-reduces per layer per decode step of the batch's hidden states.
    const double bytes = 2.0 * at_once * static_cast<double>(model.hidden_size) * 2.0 * static_cast<double>(model.num_layers);
    st.communication_s = waves * generated * bytes * 2.0 * (per_gpu_split - 1.0) / per_gpu_split / rates.intra_node_bytes_per_s;
  }
  st.total_s = st.compute_s + st.launch_s + st.communication_s + st.offload_s;
  return st;
}

}  // namespace vramplan
