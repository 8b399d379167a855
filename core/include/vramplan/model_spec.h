// ModelSpec: the architecture of a decoder-only LLM, resolved from a Hugging Face config.json.
// It lists every weight-bearing module with HF's own module name (for LoRA target matching) and
// its slot (what it computes), so that parameter counting, LoRA, quantization, freezing and the
// activation simulation all walk the same structure. Layers are stored as a few distinct
// LayerKinds plus a per-layer index (a 61-layer DeepSeek-V3 has 2 kinds, a 62-layer Gemma 3
// has 2): estimates stay O(kinds), not O(layers).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vramplan {

// How a config.json of a model_type without a dedicated reader is read (scenario "model_reading"):
// kExact refuses one with structural keys the generic readers do not understand (linear attention,
// state-space layers, vision towers, MTP...), kApproximate reads it anyway and lists them.
enum class ModelReading { kExact, kApproximate };

// Which bucket of the parameter breakdown a module belongs to.
enum class ModuleRole { kEmbedding, kAttention, kMlp, kExperts, kSharedExperts, kRouter, kNorm, kLmHead };

enum class NormKind { kRmsNorm, kLayerNorm };
enum class MlpKind { kGated, kPlain };  // gated: act(gate(x)) * up(x) -> down; plain: fc_out(act(fc_in(x)))
// kGeluNew: transformers' NewGELUActivation, written in Python ops (gelu_new, gelu_fast), which
// saves four T x I tensors for backward instead of F.gelu's one.
enum class ActivationFn { kSilu, kGelu, kGeluTanh, kGeluNew, kRelu };

// What a linear computes inside its block. Set by the family builder (core/src/model/families/),
// never guessed from the HF module name or the shape: a name means different things in different
// families (Qwen1's dense "w2" feeds the activation, Mixtral's expert "w2" is the down projection;
// GPT-2 calls both its attention output and its MLP output "c_proj"), and a shape stops telling
// them apart as soon as tensor parallelism shards it.
enum class LinearSlot : uint8_t {
  kUnset,  // never left by a builder (a test walks every preset)
  // attention
  kQ, kK, kV,
  kQkv,  // fused q/k/v: Phi-3 qkv_proj, GPT-2/Qwen1 c_attn, GPT-NeoX/Falcon query_key_value
  kO,    // output projection: o_proj, dense, GPT-2/Qwen1 attention c_proj
  // multi-head latent attention (DeepSeek-V2/V3): low-rank q and kv, then per-head up-projections
  kMlaQA, kMlaQB, kMlaKvA, kMlaKvB,
  // dense MLP (a plain MLP's input projection, fc1 / c_fc / dense_h_to_4h, is kUp)
  kGate, kUp, kGateUp, kDown,
  kRouter,  // MoE router logits (Mixtral/Qwen-MoE/DeepSeek "gate", gpt-oss "router")
  // routed experts
  kExpertGate, kExpertUp, kExpertGateUp, kExpertDown,
  // shared experts (Qwen2-MoE, DeepSeek), and Qwen2-MoE's sigmoid gate on the shared output
  kSharedExpertGate, kSharedExpertUp, kSharedExpertDown, kSharedExpertScale,
  // recurrent token mixers (Gated DeltaNet, Mamba): the projections into the mixer (in_proj,
  // in_proj_qkvz / in_proj_ba, Mamba-1 x_proj / dt_proj) and its output projection (out_proj)
  kMixerIn, kMixerOut,
  // DeepSeek sparse attention's indexer (DeepSeek-V3.2 inference/model.py Indexer, GLM-5):
  // wq_b (q_lora_rank -> index heads x index_head_dim) and wk (h -> index_head_dim), and
  // weights_proj (h -> index heads), which the FP8 checkpoints keep in bf16.
  kIndexerQk, kIndexerWeights,
  // DeepSeek-V4's grouped output projection o_a_proj (heads x head_dim -> o_groups x o_lora_rank,
  // block-diagonal over o_groups), which feeds the output projection o_b_proj (kO).
  kOGrouped,
};

// How tensor parallelism splits a module (Megatron-LM's and vLLM's linear layer classes):
// kColumn splits the output features (ColumnParallelLinear, QKVParallelLinear), kRow the input
// features (RowParallelLinear), kReplicated keeps a full copy per rank (vLLM ReplicatedLinear:
// routers, MLA's low-rank q_a/kv_a), kExpert places whole experts (FusedMoE), kVocab splits by
// vocabulary rows (VocabParallelEmbedding, ParallelLMHead): the token embedding and lm_head, which
// ModelSpec describes by vocab_size x hidden_size rather than as LayerKind linears.
enum class ParallelStyle : uint8_t { kUnset, kColumn, kRow, kReplicated, kExpert, kVocab };

// A linear layer (nn.Linear or GPT-2's Conv1D). `copies` > 1 for routed experts stored per expert.
struct LinearSpec {
  std::string_view name;  // HF module name ("q_proj", "c_attn", "w1"): what users name in train.lora.targets
  int64_t in_features = 0;
  int64_t out_features = 0;
  bool bias = false;
  int64_t copies = 1;  // number of experts holding this linear (1 for dense modules)
  ModuleRole role = ModuleRole::kAttention;
  bool lora_targetable = true;  // false for fused expert tensors that are not nn.Linear (gpt-oss)
  LinearSlot slot = LinearSlot::kUnset;
  ParallelStyle parallel = ParallelStyle::kUnset;
  int64_t Params() const { return copies * (in_features * out_features + (bias ? out_features : 0)); }
};

// The attention block's output projection (its gradient order, rotary cache and GGUF category);
// a recurrent mixer's out_proj plays the same part in its block.
inline bool IsAttentionOutput(LinearSlot s) { return s == LinearSlot::kO || s == LinearSlot::kMixerOut; }

// The MLP's, an expert's or a shared expert's last linear.
inline bool IsDownProjection(LinearSlot s) {
  return s == LinearSlot::kDown || s == LinearSlot::kExpertDown || s == LinearSlot::kSharedExpertDown;
}

// The second stage of multi-head latent attention (reads the normalized low-rank q / kv).
inline bool IsMlaSecondStage(LinearSlot s) { return s == LinearSlot::kMlaQB || s == LinearSlot::kMlaKvB; }
// DeepSeek sparse attention's lightning indexer (wq_b, wk, weights_proj): transformers runs it under
// @torch.no_grad (DeepseekV32Indexer / GlmMoeDsaIndexer.forward), so in training its matmuls save
// nothing. Its weights still count as trainable: they require grad, and ZeRO's and FSDP's flat
// buffers hold gradients and optimizer states for them (a plain torch optimizer, or FSDP2's
// per-parameter one, would create none: states start at a parameter's first gradient).
inline bool IsNoGradIndexer(LinearSlot s) { return s == LinearSlot::kIndexerQk || s == LinearSlot::kIndexerWeights; }

// What a norm normalizes, set by the builder: the same HF name sits in different places
// (post_attention_layernorm is Llama's pre-MLP norm but Gemma 2's norm on the attention output).
enum class NormSlot : uint8_t {
  kUnset,
  kPreAttention,   // input_layernorm, ln_1, Falcon ln_attn
  kPreMlp,         // Llama post_attention_layernorm, Gemma pre_feedforward_layernorm, ln_2, Falcon ln_mlp
  kPostAttention,  // on the attention output before the residual add (Gemma 2/3, OLMo 2)
  kPostMlp,        // on the MLP output before the residual add (Gemma 2/3, OLMo 2)
  kQPerHead, kKPerHead,  // RMSNorm(head_dim) on each q / k head (Qwen3, Gemma 3, Phi qk_layernorm)
  kQ, kK,                // RMSNorm over all q / k heads together (OLMo 2)
  kMlaQA, kMlaKvA,       // on MLA's low-rank q / kv (q_a_layernorm, kv_a_layernorm)
  kIndexerK,             // LayerNorm on the sparse-attention indexer's key (indexer.k_norm)
  kAttentionSub,         // RMSNorm on the attention output before o_proj (BitNet attn_sub_norm)
  kMlpSub,               // RMSNorm on act(gate) * up before down_proj (BitNet ffn_sub_norm)
  kFinal,                // after the last layer
};

struct NormSpec {
  std::string_view name;
  int64_t dim = 0;
  bool bias = false;        // LayerNorm with bias
  bool has_weight = true;   // OLMo-1 uses parameter-free LayerNorm
  NormSlot slot = NormSlot::kUnset;
  int64_t Params() const { return has_weight ? dim * (bias ? 2 : 1) : 0; }
};

struct AttentionGeometry {
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;        // q/k head dim (for MLA: qk_nope + qk_rope)
  int64_t v_head_dim = 0;      // value head dim (== head_dim except MLA)
  int64_t sliding_window = 0;  // 0 = full attention on this layer
  // Chunked local attention (Llama 4's RoPE layers: create_chunked_causal_mask): the query sees only
  // its own chunk of `sliding_window` (= attention_chunk_size) tokens. transformers' caches and
  // llama.cpp (LLAMA_SWA_TYPE_CHUNKED) hold it like a window; vLLM pages it as
  // ChunkedLocalAttentionSpec (inference/vllm_kv_groups.h).
  bool chunked = false;
  // No rotary embedding on this layer (Llama 4's and SmolLM3's NoPE layers): q and k go from their
  // projections to the attention unrotated (train/activations.cpp).
  bool no_rope = false;
  // Multi-head latent attention (DeepSeek-V2/V3): the KV cache holds kv_lora_rank + qk_rope_head_dim.
  bool mla = false;
  int64_t kv_lora_rank = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t q_lora_rank = 0;
  // DeepSeek sparse attention (DeepSeek-V3.2, GLM-5): the layer's lightning indexer keeps one key of
  // index_head_dim per token (a single head shared by its index_n_heads query heads) beside the MLA
  // latent, and attention reads the index_topk best-scoring tokens (0: no indexer).
  int64_t index_head_dim = 0;
  int64_t index_n_heads = 0;
  int64_t index_topk = 0;
  // GLM-5.2's IndexCache (config `indexer_types` "shared"): the layer attends sparsely with the top-k
  // of the last "full" layer before it and builds no indexer of its own (no weights, no indexer key
  // cache, no scoring); index_* above still describe the model's sparse attention.
  bool index_shared = false;
  // The layer reads the K/V of an earlier layer and caches none of its own (Gemma 4's last
  // num_kv_shared_layers layers: modeling_gemma4.py Gemma4TextAttention.is_kv_shared_layer).
  bool kv_shared = false;
  // Cross-attention to vision states (Llama 3.2 Vision's cross_attention_layers): its K/V come
  // from the image tokens, once per image, not per text token; the text KV cache leaves it out.
  bool cross_attention = false;
  // A learned sink logit per head joins the softmax (gpt-oss `sinks`, MiMo-V2-Flash's
  // attention_sink_bias): transformers trains such layers only with its eager core, which
  // concatenates the sinks to the scores (modeling_gpt_oss.py eager_attention_forward;
  // GptOssPreTrainedModel._supports_sdpa = False), and the saved tensors follow that core
  // (train/activations.cpp).
  bool sinks = false;
};

// The token mixer of a layer besides (or instead of) softmax attention. kNone: attention only, the
// default and every pure-attention family. The others keep a fixed-size state per sequence
// instead of per-token K/V (docs/inference.md "Recurrent state"):
//   kGatedDeltaNet (Qwen3-Next, Qwen3.5; transformers modeling_qwen3_next.py Qwen3NextGatedDeltaNet):
//     conv state over q, k and v (2 x k_heads x k_head_dim + v_heads x v_head_dim channels) and a
//     v_heads x k_head_dim x v_head_dim recurrent state;
//   kMamba2 (Nemotron-H, Granite 4.0, Falcon-H1; modeling_nemotron_h.py NemotronHMamba2Mixer):
//     conv state over inner + 2 x groups x state_size channels and a heads x head_dim x state_size
//     SSM state;
//   kMamba1 (Jamba; modeling_jamba.py JambaMambaMixer): conv state over `inner` channels and an
//     inner x state_size SSM state;
//   kShortConv (LFM2; modeling_lfm2.py Lfm2ShortConv): a gated depthwise conv1d of conv_kernel
//     (conv_L_cache) taps over `inner` (conv_dim = hidden_size) channels; a conv state only, no SSM
//     state;
//   kKimiDelta (Kimi Linear's Kimi Delta Attention; vLLM model_executor/layers/kda.py
//     KimiDeltaAttention): Gated DeltaNet with one forget gate per key channel; q, k and v have
//     num_heads x head_dim channels each (num_k_heads = num_heads, k_head_dim = head_dim) and three
//     short convs; a heads x head_dim x head_dim recurrent state, float32 in every engine.
//   kLightning (MiniMax-Text-01, MiniMax-M1; modeling_minimax.py MiniMaxLightningAttention): no
//     conv; a num_heads x head_dim x head_dim K^T V state (the decayed sum over past tokens),
//     computed block by block (block_size tokens) in training and prefill.
enum class MixerKind : uint8_t { kNone, kGatedDeltaNet, kMamba2, kMamba1, kShortConv, kKimiDelta, kLightning };

struct RecurrentGeometry {
  MixerKind kind = MixerKind::kNone;
  int64_t num_heads = 0;     // GDN value heads; Mamba-2 heads (0 for Mamba-1)
  int64_t num_k_heads = 0;   // GDN query/key heads
  int64_t head_dim = 0;      // GDN value head dim; Mamba-2 head dim
  int64_t k_head_dim = 0;    // GDN query/key head dim
  int64_t inner = 0;         // Mamba intermediate width (heads x head_dim for Mamba-2); GDN value width; short-conv channels
  int64_t groups = 0;        // Mamba-2 n_groups (B and C are shared within a group)
  int64_t state_size = 0;    // Mamba d_state
  int64_t conv_kernel = 0;   // causal conv1d width
  int64_t dt_rank = 0;       // Mamba-1 time-step rank
  int64_t block_size = 0;    // Lightning attention's intra/inter block length (MiniMaxConfig block_size)
  // Channels of the causal conv1d (its state keeps conv_kernel - 1 of them per sequence).
  int64_t ConvChannels() const {
    switch (kind) {
      case MixerKind::kGatedDeltaNet:
      case MixerKind::kKimiDelta: return 2 * num_k_heads * k_head_dim + num_heads * head_dim;
      case MixerKind::kMamba2: return inner + 2 * groups * state_size;
      case MixerKind::kMamba1: return inner;
      case MixerKind::kShortConv: return inner;
      case MixerKind::kLightning: return 0;  // no conv
      case MixerKind::kNone: break;
    }
    return 0;
  }
  // Elements of the recurrent (SSM / delta-rule) state of one sequence.
  int64_t StateElements() const {
    switch (kind) {
      case MixerKind::kGatedDeltaNet:
      case MixerKind::kKimiDelta: return num_heads * k_head_dim * head_dim;
      case MixerKind::kMamba2: return num_heads * head_dim * state_size;
      case MixerKind::kMamba1: return inner * state_size;
      case MixerKind::kShortConv: return 0;  // the conv state is all it keeps
      case MixerKind::kLightning: return num_heads * head_dim * head_dim;
      case MixerKind::kNone: break;
    }
    return 0;
  }
};

struct MlpGeometry {
  MlpKind kind = MlpKind::kGated;
  ActivationFn activation = ActivationFn::kSilu;
  int64_t intermediate = 0;  // dense MLP width, or per-expert width for MoE
  // MoE (num_experts == 0 means dense)
  int64_t num_experts = 0;
  int64_t experts_per_token = 0;
  int64_t shared_intermediate = 0;  // total width of the shared expert(s), 0 if none
  // Router slots beyond the routed experts that hold no weights (LongCat-Flash's zero_expert_num
  // identity experts): the router scores num_experts + zero_experts slots.
  int64_t zero_experts = 0;
  int64_t RouterSlots() const { return num_experts + zero_experts; }
  // The top-k routing weights are renormalised to sum to 1 (`routing_weights /= sum`): always in
  // Mixtral; Qwen2-MoE / Qwen3-MoE only with config.norm_topk_prob (default False).
  bool norm_topk_prob = true;
  // The experts run as transformers' per-expert nn.Linear loop whose saved tensors were measured on
  // CPU (Mixtral, Qwen2-MoE, Qwen3-MoE: measured_cpu_moe.json, measured_cpu_qwen_moe.json); set by
  // those readers. Other MoE blocks (fused expert tensors, DeepSeek, gpt-oss, GLM) follow the same
  // rules unmeasured, and the estimate says so.
  bool measured_expert_loop = false;
};

struct LayerKind {
  std::vector<LinearSpec> linears;
  std::vector<NormSpec> norms;
  // gpt-oss attention sinks (one per head); a recurrent mixer's weights that are not linears
  // (conv1d weight and bias, A_log, D, dt_bias, its gated RMSNorm, Mamba-1's dt/B/C norms).
  int64_t extra_attention_params = 0;
  int64_t extra_router_params = 0;     // DeepSeek-V3 e_score_correction_bias
  AttentionGeometry attention;  // num_heads == 0: the layer has no softmax attention
  RecurrentGeometry recurrent;  // kind kNone unless the layer has a linear-attention / SSM mixer
  MlpGeometry mlp;              // intermediate == 0 and no experts: the layer has no MLP (Nemotron-H)
  bool parallel_residual = false;  // attention and MLP read the same input (Phi-2, GPT-NeoX, Falcon)
};

// Decoder linears stored packed into int32 words with per-group scales (model/packed_linears.h):
// GPTQ (auto_gptq / optimum / gptqmodel QuantLinear), AutoAWQ's GEMM layout, compressed-tensors
// pack-quantized. kNone: the linears are stored as their weights.
enum class PackedLinearLayout : uint8_t { kNone, kGptq, kAwq, kCompressedTensors };

struct PackedLinears {
  PackedLinearLayout layout = PackedLinearLayout::kNone;
  int64_t bits = 0;
  int64_t group_size = 0;    // <= 0: one group over all input features (group_size -1, channel strategy)
  bool zero_point = false;   // compressed-tensors asymmetric: a packed weight_zero_point
  bool g_idx = false;        // compressed-tensors actorder "group": weight_g_idx
  // A 16-bit bias stored for every packed linear, zeros where the model has none (an exporter's
  // QuantLinear built with bias=True; a checkpoint fact, config.json does not say it).
  bool bias_stored = false;
  // GPTQ's desc_act and sym (quantization_config): the checkpoint stores the same tensors either
  // way; vLLM keeps g_idx only with desc_act and picks its Marlin kernel (which drops qzeros) only
  // for sym true (inference/packed_linear_bytes.h).
  bool desc_act = false;
  bool sym = false;
};

// What the Hub checkpoint stores that the framework does not hold as the model's parameters:
// multi-token-prediction layers (transformers skips them when loading), quantization scale
// tensors, and a separate lm_head copy of tied embeddings. It makes ParamCounts::checkpoint_total
// equal the Hub's safetensors metadata total (every stored element).
struct CheckpointLayout {
  // Multi-token-prediction layers (num_nextn_predict_layers; DeepSeek-V3 / GLM-4.5 layout): each
  // is one decoder layer of kind `mtp_kind` plus enorm, hnorm, eh_proj (2h -> h) and
  // shared_head.norm; `mtp_stores_embeddings`: it also stores its own embed_tokens and
  // shared_head.head (vocab x h each), as DeepSeek-V3 and GLM-4.5 do and GLM-4.6 does not.
  int64_t mtp_layers = 0;
  uint8_t mtp_kind = 0;
  bool mtp_stores_embeddings = false;
  // Parameters each MTP layer stores beyond the V3 layout's (DeepSeek-V4's MTPBlock: its own
  // hc_head_fn / hc_head_base / hc_head_scale).
  int64_t mtp_extra_params = 0;
  // The MTP layer's e_proj and h_proj (h x h each) store FP8 block scales (DeepSeek-V4), unlike
  // DeepSeek-V3's bf16 eh_proj.
  bool mtp_eh_scaled = false;
  // vLLM builds the MTP layer's 2h -> h projection as a ColumnParallelLinear under the model's
  // quantization (Qwen3-Next / Qwen3.5 `mtp.fc`, qwen3_next_mtp.py), not as DeepSeek-V3's and
  // GLM-4.5's plain nn.Linear `eh_proj` (16-bit, whole on every rank).
  bool mtp_fc_column_parallel = false;
  // vLLM drafts with these MTP layers in a way not modelled here (MiMo-V2-Flash's three
  // sliding-window blocks, vllm/model_executor/models/mimo_v2_flash_mtp.py): inference.speculative
  // "mtp" is refused for the model.
  bool mtp_draft_unmodelled = false;
  // FP8 block-quantized checkpoints (quantization_config.weight_block_size, DeepSeek-V3 layout):
  // every decoder linear except the router and eh_proj stores an fp32 weight_scale_inv of
  // ceil(out / rows) x ceil(in / cols).
  int64_t fp8_block_rows = 0;
  int64_t fp8_block_cols = 0;
  // The attention output projections (o_proj, MTP layers' included) are stored in bf16 with no
  // block scale (Xiaomi's MiMo-V2-Flash FP8 checkpoint).
  bool fp8_o_proj_16bit = false;
  // MXFP4 experts (gpt-oss): the Hub counts the packed blocks as the weights they encode plus one
  // uint8 scale per 32 values.
  bool mxfp4_experts = false;
  // FP4 experts packed two values per stored element (DeepSeek-V4's config.json "expert_dtype":
  // "fp4", inference/model.py Linear: weight [out, in // 2] float4_e2m1fn_x2, scale [out, in // 32]
  // float8_e8m0fnu): the Hub counts half the expert weights plus one scale per 32 values, and no
  // FP8 block scales on them.
  bool fp4_packed_experts = false;
  // BitNet b1.58 packed checkpoints (quantization_config quant_method "bitnet", offline: transformers
  // integrations/bitnet.py BitLinear / AutoBitLinear): every decoder linear stores its ternary weight
  // four values per uint8 element ([out / 4, in]) and one weight_scale element.
  bool ternary_packed_linears = false;
  // GPTQ / AWQ / compressed-tensors pack-quantized decoder linears (quantization_config).
  PackedLinears packed_linears;
  // Tied embeddings stored twice: the checkpoint also has lm_head.weight (Qwen3-0.6B / 1.7B).
  bool tied_lm_head_stored = false;
  // A multimodal checkpoint's vision tower and projector (read from vision_config).
  int64_t vision_params = 0;
  int64_t projector_params = 0;
  // A multimodal checkpoint's audio tower (audio_config; Gemma 4 E2B / E4B, Gemma 3n); its projector counts
  // in projector_params.
  int64_t audio_params = 0;
  // Weights the checkpoint stores but the framework skips when loading: Gemma 4's KV-shared layers
  // keep k_proj / v_proj / k_norm in the checkpoint, which transformers lists in
  // _keys_to_ignore_on_load_unexpected (modeling_gemma4.py Gemma4TextModel).
  int64_t unloaded_params = 0;
};

// The shape of a vision-language wrapper's vision tower (vision_config) and its processor
// defaults, for the memory terms of image inputs (model/image_tokens.h, train/vision_memory.h,
// inference/vllm_multimodal.h). kind kNone: no tower is modelled (text-only models, and wrappers
// whose tower is not counted).
enum class VisionKind : uint8_t { kNone, kQwen2Vl, kQwen25Vl, kQwen3Vl, kGemma3, kLlava, kLlavaNext, kPixtral, kLlama4, kMllama, kGemma4, kSiglip, kIdefics3, kInternVl, kGlm4v, kGemma3n, kLlavaOnevision, kLfm2Vl, kAyaVision, kKimiVl };

struct VisionShape {
  VisionKind kind = VisionKind::kNone;
  int64_t hidden = 0;        // the tower's hidden size
  int64_t layers = 0;        // encoder layers (mllama: local + global)
  int64_t intermediate = 0;  // MLP width
  int64_t heads = 0;         // attention heads
  bool gated_mlp = false;    // SwiGLU gate/up/down (Qwen2.5-VL, Pixtral, Gemma 4) vs fc1/fc2 with GELU
  bool rms_norm = false;     // RMSNorm (Qwen2.5-VL, Pixtral, Gemma 4) vs LayerNorm
  int64_t patch = 0;         // spatial patch size (pixels)
  int64_t temporal_patch = 1;
  int64_t merge = 1;         // spatial_merge_size (Qwen, Pixtral): m x m patches make one LLM token
  int64_t image_size = 0;    // fixed-resolution towers: the side each image (tile) is resized to
  int64_t max_tiles = 1;     // mllama max_num_tiles; Llama 4 / InternVL max_patches; LLaVA-NeXT's largest grid
  int64_t tokens_per_image = 0;  // fixed token count (Gemma 3 mm_tokens_per_image; Gemma 4 / 3n soft tokens)
  int64_t window_size = 0;       // Qwen2.5-VL window attention (pixels); 0: every layer global
  int64_t full_attention_layers = 0;  // of `layers`, how many attend over the whole image (Qwen2.5-VL)
  int64_t output_hidden = 0;     // what the projector hands the decoder per LLM token (text hidden)
  int64_t output_dim = 0;        // the tower's output per token before the projector (mllama 7680)
  // LFM2-VL's processor settings (config.json, Lfm2VlImageProcessor): min_tiles, min_image_tokens
  // (max_image_tokens is tokens_per_image), use_thumbnail and max_pixels_tolerance (0: no splitting).
  int64_t min_tiles = 1;
  int64_t min_tokens = 0;
  bool thumbnail = false;
  double split_tolerance = 0;
  // Kimi-VL's KimiVLImageProcessor in_token_limit: the most 14-pixel patches an image keeps before
  // the 2 x 2 merge (larger images are scaled down to it).
  int64_t patch_limit = 0;
};

// Terms an estimate counts approximately for this architecture; each non-empty text becomes an
// `approximate` warning on the estimates it concerns (inference KV cache, training activations).
struct ModelApproximations {
  std::string kv_cache;
  std::string training;
};

struct ModelSpec {
  std::string model_type;      // as in config.json ("llama", "qwen3_moe", ...)
  std::string architecture;    // config "architectures"[0] if present
  std::string display_name;
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t num_layers = 0;
  int64_t max_position_embeddings = 0;
  // The longest sequence the model is made for (model/context_limit.h: vLLM's derived
  // max_model_len, rope scaling included); 0 when the config names no length.
  int64_t context_limit = 0;
  std::string context_limit_source;  // how it was derived ("max_position_embeddings 131,072")
  int64_t position_embedding_rows = 0;  // learned absolute positions (GPT-2 wpe), 0 for RoPE
  // Embedding elements beyond vocab_size x hidden_size (the embedding bucket): Llama 3.2 Vision's
  // 8 extra embed_tokens rows the lm_head does not have (modeling_mllama.py MllamaTextModel), Gemma
  // 4's per-layer embeddings (embed_tokens_per_layer, per_layer_model_projection and its norm).
  int64_t extra_embedding_params = 0;
  bool tied_embeddings = false;
  bool lm_head_bias = false;  // Phi-2
  NormKind norm_kind = NormKind::kRmsNorm;
  NormSpec final_norm;
  double rope_fraction = 1.0;  // partial rotary factor
  // Training-time dropout probabilities from the config (GPT-2 family defaults to 0.1; most
  // current LLMs to 0). Each active dropout saves a 1-byte mask per element for backward.
  double attention_dropout = 0.0;  // on the attention probabilities
  double hidden_dropout = 0.0;     // on the attention and MLP outputs
  double embedding_dropout = 0.0;
  // Eager-attention details that differ by family (transformers modeling code):
  bool softmax_fp32 = true;         // softmax(..., dtype=float32) (Llama family) vs in the scores dtype (GPT-2)
  bool scale_is_tensor = false;     // scores / torch.full([], sqrt(d)) in the scores dtype (GPT-2) vs a python float
  bool legacy_logits_upcast = true; // transformers <= 4.45 called logits.float() before the loss (not GPT-2)
  bool loss_upcasts_logits = true;  // false: the model's own (remote) code runs the loss on the logits as they are (Qwen1)
  int64_t legacy_buffer_bytes_per_layer = 0;  // transformers <= 4.45 GPT-2: causal-mask `bias` buffer (bool)
  std::vector<LayerKind> kinds;
  std::vector<uint8_t> layer_kind;  // size num_layers: index into kinds
  std::vector<std::string> notes;   // facts worth telling the user (e.g. MTP layer not counted)
  // Modules a quantized checkpoint keeps in 16-bit (config.json quantization_config:
  // modules_to_not_convert, ignored_layers, or ignore without "re:" patterns): HF module names or
  // prefixes, "*" matching any run ("model.layers.*.self_attn"). model/unquantized_modules.h.
  std::vector<std::string> unquantized_modules;
  std::string quantization_method;  // quantization_config.quant_method ("fbgemm_fp8", "mxfp4", ...)
  // The stored format as an inference.weights name ("awq_4bit"; "" when unquantized or when no
  // modelled format matches) and its description ("awq, 4-bit"; "" when unquantized).
  // model/checkpoint_format.h.
  std::string checkpoint_weights;
  std::string checkpoint_quantization;
  // What the checkpoint stores beyond the modules above (ParamCounts::checkpoint_total).
  CheckpointLayout checkpoint;
  ModelApproximations approximations;
  // A vision-language wrapper's vision tower shape (kind kNone: none modelled).
  VisionShape vision;
};

// Exact parameter counts (each tied tensor counted once), by breakdown bucket.
struct ParamCounts {
  int64_t embedding = 0;  // token (+ position) embeddings
  int64_t attention = 0;
  int64_t mlp = 0;
  int64_t experts = 0;         // routed experts
  int64_t shared_experts = 0;
  int64_t router = 0;
  int64_t norms = 0;
  int64_t lm_head = 0;  // 0 when tied
  int64_t total = 0;
  int64_t active_per_token = 0;  // MoE: parameters touched per token (top-k experts)
  // In the checkpoint only (CheckpointLayout), not in `total`:
  int64_t mtp = 0;                  // multi-token-prediction layers
  int64_t vision = 0;               // vision tower
  int64_t projector = 0;            // multimodal projector(s)
  int64_t audio = 0;                // audio tower
  int64_t unloaded = 0;             // stored weights the framework skips when loading
  int64_t quantization_scales = 0;  // FP8 block scales, MXFP4 scales, GPTQ / AWQ qzeros, scales, g_idx
  int64_t fp4_packing_saved = 0;    // expert elements two-per-element FP4 packing leaves out of the checkpoint
  int64_t ternary_packing_saved = 0;  // linear elements BitNet's four-per-element packing leaves out of the checkpoint
  int64_t int32_packing_saved = 0;  // linear elements GPTQ / AWQ / pack-quantized int32 packing leaves out of the checkpoint
  int64_t tied_lm_head_copy = 0;    // lm_head stored although tied
  // Every stored element, as the Hub's safetensors metadata counts it.
  int64_t checkpoint_total = 0;
};

ParamCounts CountParams(const ModelSpec& spec);

// Per-layer parameter count of one kind (all linears, norms and extras).
int64_t LayerKindParams(const LayerKind& kind);

}  // namespace vramplan
