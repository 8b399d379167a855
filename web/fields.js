// Form metadata: which scenario fields the calculator shows, grouped the way users think, with a
// label and a one-line note on what the option does to memory (every field has one: the page's
// module is built without the schema's descriptions, core/src/scenario/fields.cpp). Types, allowed
// values and ranges are NOT repeated here: they come from the core's JSON Schema (core.schema()) at
// run time.

// The model a scenario gets when it names none (the calculator and the embed widget alike).
export const DEFAULT_MODEL = 'meta-llama/Llama-3.1-8B';

const train = (s) => s.mode !== 'inference';
const infer = (s) => s.mode === 'inference';
const adapters = (s) => train(s) && (s.train?.method === 'lora' || s.train?.method === 'qlora');
const rl = (s) => train(s) && ['grpo', 'ppo'].includes(s.train?.objective);
const vllm = (s) => infer(s) && s.inference?.engine === 'vllm';
const over1 = (key) => (s) => train(s) && s.parallel?.[key] > 1;
const llamacpp = (s) => infer(s) && s.inference?.engine === 'llama_cpp';

export const GROUPS = [
  { id: 'task', title: 'Task & method' },
  { id: 'batch', title: 'Batch & sequence' },
  { id: 'precision', title: 'Precision & optimizer' },
  { id: 'savers', title: 'Memory savers' },
  { id: 'parallel', title: 'Parallelism' },
  { id: 'engine', title: 'Serving engine', show: infer },
  { id: 'framework', title: 'Framework details', collapsed: true },
];

// Option labels shown instead of raw enum values (the raw value stays in the URL and the JSON).
export const OPTION_LABELS = {
  'train.qlora_backend': { bitsandbytes: 'bitsandbytes (NF4 / int8)', gptq: 'GPTQ checkpoint', torchao: 'torchao NF4 (torchtune)' },
  'framework.model_load': { direct: 'direct (each weight once)', torchtune_0_1: 'torchtune 0.1 (layer deep-copies, torchao 0.1)' },
  'train.method': { full: 'Full fine-tuning', freeze: 'Freeze (train last layers)', lora: 'LoRA', qlora: 'QLoRA' },
  'train.precision': {
    fp32: 'fp32', fp16: 'fp16 (pure)', bf16: 'bf16 (pure 16-bit)', amp_fp16: 'AMP fp16 (fp32 master)',
    amp_bf16: 'AMP bf16 (fp32 master)', mixed_fp16: 'mixed fp16 (16-bit + fp32 copy)', mixed_bf16: 'mixed bf16 (16-bit + fp32 copy)',
  },
  'train.optimizer': {
    adamw: 'AdamW', adamw_8bit: 'AdamW 8-bit', paged_adamw_8bit: 'Paged AdamW 8-bit', adafactor: 'Adafactor',
    sgd: 'SGD', sgd_momentum: 'SGD + momentum', lion: 'Lion',
  },
  'train.gradient_checkpointing': { false: 'off', true: 'full', selective: 'selective' },
  'train.objective': { sft: 'SFT (supervised)', dpo: 'DPO', ipo: 'IPO', orpo: 'ORPO', simpo: 'SimPO', kto: 'KTO', grpo: 'GRPO', ppo: 'PPO' },
  'train.rollout.vllm_mode': { colocate: 'colocate (training GPUs)', server: 'server (own GPUs)' },
  'train.qlora_bits': { 2: '2-bit', 4: '4-bit (NF4)', 8: '8-bit (LLM.int8)' },
  'train.kernels': { pytorch: 'PyTorch (transformers + PEFT)', unsloth: 'unsloth', liger: 'Liger' },
  'parallel.zero': { 0: 'off', 1: 'ZeRO-1 (optimizer)', 2: 'ZeRO-2 (+ gradients)', 3: 'ZeRO-3 (+ weights)' },
  'mode': { train: 'Training / fine-tuning', inference: 'Inference / serving' },
};

export const FIELDS = [
  // Task & method
  { path: 'mode', group: 'task', label: 'Task', help: 'Training keeps gradients, optimizer states and activations; inference keeps weights and the KV cache.' },
  { path: 'train.method', group: 'task', show: train, label: 'Method', help: 'Full trains every weight (gradients + optimizer states for all); Freeze, LoRA and QLoRA train a small part.' },
  { path: 'train.objective', group: 'task', show: train, label: 'Objective', help: 'DPO/IPO/ORPO/SimPO forward chosen and rejected rows together (2x the batch); DPO/IPO/KTO also run a reference model: a frozen copy for full fine-tuning, the base with adapters disabled for LoRA.' },
  { path: 'train.precompute_ref_log_probs', group: 'task', show: (s) => train(s) && ['dpo', 'ipo', 'kto'].includes(s.train?.objective), label: 'Precomputed reference log-probs', help: 'TRL precompute_ref_log_probs: no reference model in memory during training.' },
  { path: 'train.rollout.num_generations', group: 'task', show: (s) => train(s) && s.train?.objective === 'grpo', label: 'Generations per prompt', help: 'TRL num_generations; micro-batch counts completions.' },
  { path: 'train.rollout.max_completion_length', group: 'task', show: rl, label: 'Completion tokens', help: 'Generated tokens per completion (part of the sequence length).' },
  { path: 'train.rollout.beta', group: 'task', show: (s) => train(s) && s.train?.objective === 'grpo', label: 'KL beta', help: '0 loads no reference model.' },
  { path: 'train.rollout.use_vllm', group: 'task', show: rl, label: 'vLLM rollout', help: 'Off: transformers generate() on the policy.' },
  { path: 'train.rollout.vllm_mode', group: 'task', show: (s) => rl(s) && s.train?.rollout?.use_vllm, label: 'vLLM mode', help: 'Colocate shares the training GPU; server runs on GPUs of its own.' },
  { path: 'train.rollout.vllm_gpu_memory_utilization', group: 'task', show: (s) => rl(s) && s.train?.rollout?.use_vllm, label: 'vLLM memory share', help: 'The share of the GPU vLLM claims.' },
  { path: 'train.rollout.vllm_sleep_level', group: 'task', show: (s) => rl(s) && s.train?.rollout?.use_vllm, label: 'vLLM sleep level', help: '0 awake; 1 weights to host RAM, KV freed; 2 both freed while training.' },
  { path: 'train.qlora_bits', group: 'task', show: (s) => train(s) && s.train?.method === 'qlora', label: 'QLoRA base bits', help: 'Bits per frozen base weight: 4-bit needs about a quarter of bf16.' },
  { path: 'train.qlora_backend', group: 'task', show: (s) => train(s) && s.train?.method === 'qlora', label: 'Quantized base', help: 'bitsandbytes NF4/LLM.int8, a GPTQ checkpoint (auto-gptq saves each dequantized fp16 weight for backward), or torchao NF4 as torchtune uses it (4-bit only).' },
  { path: 'train.qlora_group_size', group: 'task', show: (s) => train(s) && s.train?.method === 'qlora' && s.train?.qlora_backend === 'gptq', label: 'GPTQ group size', help: 'One fp16 scale and a packed zero per group of input features.' },
  { path: 'train.qlora_double_quant', group: 'task', show: (s) => train(s) && s.train?.method === 'qlora' && s.train?.qlora_backend !== 'gptq' && s.train?.qlora_backend !== 'torchao', label: 'Double quantization', help: 'Quantizes the quantization constants too: saves ~0.4 bit per weight.' },
  { path: 'train.lora.use_dora', group: 'task', show: adapters, label: 'DoRA', help: 'Adds a magnitude per output feature; each adapted linear keeps its base and LoRA outputs for backward.' },
  { path: 'train.lora.rank', group: 'task', show: adapters, label: 'LoRA rank', help: 'Adapter size: trainable params, their gradients and optimizer states grow linearly with rank.' },
  { path: 'train.lora.alpha', group: 'task', show: adapters, label: 'LoRA alpha', help: 'Scaling only: no effect on memory.' },
  { path: 'train.lora.targets', group: 'task', show: adapters, label: 'LoRA targets', help: '"all-linear" or comma-separated module names; more targets, more adapter params and saved inputs.' },
  { path: 'train.lora.modules_to_save', group: 'task', show: adapters, label: 'Fully trained modules', help: 'Full trainable copies (e.g. when adding tokens): large gradients and optimizer states.' },
  { path: 'train.lora.dropout', group: 'task', show: adapters, label: 'LoRA dropout', help: 'Above 0 saves a dropout mask and a dropped copy of each adapter input.' },
  { path: 'train.lora.adapter_dtype', group: 'task', show: adapters, label: 'Adapter dtype', help: 'fp32 adapters (PEFT default) cost 4 B per adapter param; "base" uses the base dtype.' },
  { path: 'train.freeze.trainable_layers', group: 'task', show: (s) => train(s) && s.train?.method === 'freeze', label: 'Trainable layers', help: 'The last N decoder layers train; each adds gradients and optimizer states.' },
  { path: 'train.freeze.train_embeddings', group: 'task', show: (s) => train(s) && s.train?.method === 'freeze', label: 'Train embeddings', help: 'Adds gradients and optimizer states for the embedding matrix.' },
  { path: 'train.freeze.train_lm_head', group: 'task', show: (s) => train(s) && s.train?.method === 'freeze', label: 'Train LM head', help: 'Adds gradients and optimizer states for the output projection.' },

  // Batch & sequence
  { path: 'train.micro_batch_size', group: 'batch', show: train, label: 'Micro-batch size', help: 'Samples per forward pass: activations and logits grow linearly.' },
  { path: 'train.seq_len', group: 'batch', show: train, label: 'Sequence length', help: 'Tokens per sample: activations grow linearly (quadratically with eager attention).', list: [512, 1024, 2048, 4096, 8192, 16384, 32768] },
  { path: 'train.images_per_sample', group: 'batch', show: train, label: 'Images per sample', help: 'Vision-language models: each image adds its tokens to the sequence (seq_len counts text).' },
  { path: 'train.grad_accum_steps', group: 'batch', show: train, label: 'Gradient accumulation', help: 'Larger effective batch at no extra activation memory.' },
  { path: 'inference.batch_size', group: 'batch', show: infer, label: 'Concurrent sequences', help: 'KV cache and activations grow linearly with the batch.' },
  { path: 'inference.prompt_len', group: 'batch', show: infer, label: 'Prompt tokens', help: 'Prefill activations and KV cache grow with the prompt.', list: [512, 1024, 2048, 4096, 8192, 32768, 131072] },
  { path: 'inference.images_per_request', group: 'batch', show: infer, label: 'Images per request', help: 'Vision-language models: each image adds its tokens to the prompt.' },
  { path: 'inference.new_tokens', group: 'batch', show: infer, label: 'New tokens', help: 'Generated tokens extend the KV cache.' },
  { path: 'inference.logits', group: 'batch', show: infer, label: 'Logits kept', help: '"all" materializes vocab-sized logits for every prompt token.' },

  // Precision & optimizer
  { path: 'train.precision', group: 'precision', show: train, label: 'Precision', help: 'AMP keeps fp32 weights (4 B/param) and casts to 16-bit on the fly; pure 16-bit keeps 2 B/param.' },
  { path: 'train.autocast', group: 'precision', show: (s) => s.mode !== 'inference' && /^(bf16|fp16|mixed_)/.test(s.train?.precision ?? 'bf16'), label: 'Autocast on 16-bit weights', help: 'HF Trainer bf16=True on a bf16 model: fp32 adapters run in 16-bit, the loss in fp32.' },
  { path: 'train.optimizer', group: 'precision', show: train, label: 'Optimizer', help: 'AdamW keeps 2 states per trainable param in its dtype: 4 B with pure bf16/fp16 (the default), 8 B with fp32 or AMP, 12 B with mixed (8 B + a 4 B fp32 master copy); fp32 LoRA adapters (the default) 8 B. 8-bit AdamW ~2 B; SGD none.' },
  { path: 'train.optimizer_impl', group: 'precision', show: train, label: 'Optimizer implementation', help: 'foreach needs a temporary copy of the grads during the step; fused and for_loop do not.', auto: 'auto (PyTorch default)' },
  { path: 'inference.weights', group: 'precision', show: infer, label: 'Weight format', help: 'Bytes per weight: bf16 2 B, int8/fp8 1 B, 4-bit ~0.5 B plus scales.' },
  { path: 'inference.kv_cache', group: 'precision', show: infer, label: 'KV cache dtype', help: 'fp8/int8 halve the KV cache compared with 16-bit; auto follows the weights.' },

  // Memory savers
  { path: 'train.gradient_checkpointing', group: 'savers', show: train, label: 'Gradient checkpointing', help: 'Keeps only layer inputs and recomputes the rest in backward: activations shrink by ~an order of magnitude.' },
  { path: 'train.attention', group: 'savers', show: train, label: 'Attention kernel', help: 'eager materializes seq x seq scores; sdpa/flash do not.' },
  { path: 'train.loss', group: 'savers', show: train, label: 'Loss implementation', help: 'chunked / fused linear cross-entropy avoid full fp32 logits for the whole batch.' },
  { path: 'train.kernels', group: 'savers', show: train, label: 'Layer kernels', help: 'unsloth / Liger autograd Functions: each RMSNorm keeps its input instead of an fp32 copy, the MLP its gate and up outputs.' },
  { path: 'inference.attention', group: 'savers', show: infer, label: 'Attention kernel', help: 'eager materializes prompt x prompt scores during prefill.' },

  // Parallelism
  { path: 'parallel.gpus', group: 'parallel', label: 'GPUs', help: 'Total GPUs; memory is shown per GPU.' },
  { path: 'parallel.gpus_per_node', group: 'parallel', show: (s) => (s.parallel?.gpus ?? 1) > 1, label: 'GPUs per node', help: 'GPUs sharing one host: host RAM per node is one rank\'s times the processes on the node.', placeholder: 'min(GPUs, 8)' },
  { path: 'framework.trainer', group: 'parallel', show: train, label: 'Training framework', help: 'hf: transformers under HF Trainer / accelerate / TRL; megatron: fp32 main-grad buffer, distributed optimizer, fused vocab-parallel loss; torchtitan: its op-level checkpointing.' },
  { path: 'parallel.tp', group: 'parallel', label: 'Tensor parallel', help: 'Splits each layer\'s weights across GPUs.' },
  { path: 'parallel.pp', group: 'parallel', label: 'Pipeline parallel', help: 'Splits layers across GPUs; the first stage holds more in-flight activations.' },
  { path: 'parallel.vpp', group: 'parallel', show: over1('pp'), label: 'Virtual pipeline stages', help: 'Model chunks per pipeline rank (interleaved 1F1B): smaller bubble, more micro-batches in flight.' },
  { path: 'parallel.pp_schedule', group: 'parallel', show: over1('pp'), label: 'Pipeline schedule', help: 'Sets how many micro-batches each stage holds: 1F1B keeps up to pp - i on stage i.', auto: 'auto' },
  { path: 'parallel.pp_layers', group: 'parallel', show: over1('pp'), label: 'Layers per stage', help: 'Uneven splits, first stage to last (with virtual stages: every chunk in Megatron\'s order). Empty = even split.', placeholder: '9,8,8,7' },
  { path: 'parallel.cp', group: 'parallel', label: 'Context parallel', help: 'Splits the sequence: activations per GPU shrink.' },
  { path: 'parallel.cp_kind', group: 'parallel', show: over1('cp'), label: 'Context-parallel kind', help: 'ring passes K/V around the ring (exchange buffers); ulysses exchanges heads all-to-all.' },
  { path: 'parallel.ep', group: 'parallel', label: 'Expert parallel', help: 'Splits MoE experts across GPUs.' },
  { path: 'parallel.etp', group: 'parallel', show: over1('ep'), label: 'Expert tensor parallel', help: 'Splits each expert\'s width across GPUs; experts shard over etp x ep.', placeholder: '= tp' },
  { path: 'parallel.zero', group: 'parallel', show: train, label: 'DeepSpeed ZeRO', help: 'Shards optimizer states (1), + gradients (2), + weights (3) across data-parallel GPUs.' },
  { path: 'parallel.fsdp', group: 'parallel', show: train, label: 'FSDP full shard', help: 'Like ZeRO-3: weights, gradients and states are sharded.' },
  { path: 'parallel.fsdp_frozen_unit_hooks', group: 'parallel', show: (s) => train(s) && s.parallel?.fsdp && /lora/.test(s.train?.method ?? ''), label: 'FSDP1 frozen-unit hooks', help: 'FSDP1 + PEFT + reentrant checkpointing keeps each layer\'s recomputed input and its gradient until the backward ends. Off for FSDP2 or use_reentrant: false.', auto: 'auto (on with trainer hf + full checkpointing)' },
  { path: 'parallel.offload_optimizer', group: 'parallel', show: train, label: 'Offload optimizer', help: 'Moves optimizer states to CPU RAM or NVMe.' },
  { path: 'parallel.offload_params', group: 'parallel', show: train, label: 'Offload parameters', help: 'Moves weights to CPU RAM or NVMe (ZeRO-3).' },
  { path: 'parallel.reduce_bucket_size', group: 'parallel', show: (s) => train(s) && s.parallel?.zero > 0, label: 'ZeRO reduce bucket (elements)', help: 'DeepSpeed gradient buckets: ZeRO-1/2 hold one (two with overlap_comm) during backward, ZeRO-3 one all along.', placeholder: '500000000 (DeepSpeed default)' },
  { path: 'parallel.overlap_comm', group: 'parallel', show: (s) => train(s) && s.parallel?.zero > 0, label: 'ZeRO overlap_comm', help: 'Doubles the ZeRO-1/2 gradient buckets (double buffering).', auto: 'auto (on for ZeRO-3 only)' },
  { path: 'framework.grad_reduce_in_fp32', group: 'parallel', show: (s) => train(s) && s.framework?.trainer === 'megatron', label: 'Reduce gradients in fp32', help: 'An fp32 main-grad buffer of 4 B per parameter (Megatron forces it with bf16).', auto: 'auto' },
  { path: 'parallel.sequence_parallel', group: 'parallel', show: train, label: 'Sequence parallel', help: 'With TP: shards norm/dropout activations along the sequence.' },

  // Serving engine
  { path: 'inference.engine', group: 'engine', show: infer, label: 'Engine', help: 'vLLM pre-allocates a KV pool from gpu_memory_utilization; llama.cpp allocates n_ctx up front.' },
  { path: 'inference.gpu_memory_utilization', group: 'engine', show: vllm, label: 'GPU memory utilization', help: 'vLLM claims this share of the GPU; the rest after weights becomes KV cache.', step: 0.01 },
  { path: 'inference.max_model_len', group: 'engine', show: vllm, label: 'Max model length', help: '0 = prompt + new tokens.' },
  { path: 'inference.max_num_batched_tokens', group: 'engine', show: vllm, label: 'Max batched tokens', help: 'Prefill chunk size: bounds activation memory. 0 = vLLM default.' },
  { path: 'inference.max_num_seqs', group: 'engine', show: vllm, label: 'Max sequences', help: 'Bounds the sampler\'s temporary buffers.' },
  { path: 'inference.block_size', group: 'engine', show: vllm, label: 'KV block size', help: 'Tokens per paged-KV block.' },
  { path: 'inference.cuda_graphs', group: 'engine', show: vllm, label: 'CUDA graphs', help: 'Captured graphs reserve extra memory.' },
  { path: 'inference.vllm_version', group: 'engine', show: vllm, label: 'vLLM version', help: '0.21+ counts CUDA graphs inside gpu_memory_utilization, 0.8-0.20 on top of it; 0.6-0.10_v0 is the V0 engine.' },
  { path: 'inference.speculative.method', group: 'engine', show: vllm, label: 'Speculative decoding', help: 'mtp: vLLM loads the checkpoint\'s MTP layers as the drafter (their weights, a KV page per draft layer).' },
  { path: 'inference.speculative.num_speculative_tokens', group: 'engine', show: (s) => vllm(s) && s.inference?.speculative?.method === 'mtp', label: 'Draft tokens', help: 'num_speculative_tokens: lookahead slots per request.' },
  { path: 'inference.n_ctx', group: 'engine', show: llamacpp, label: 'n_ctx', help: 'Context allocated up front (KV cache). 0 = prompt + new tokens.' },
  { path: 'inference.n_batch', group: 'engine', show: llamacpp, label: 'n_batch', help: 'Logical batch for prompt processing.' },
  { path: 'inference.n_ubatch', group: 'engine', show: llamacpp, label: 'n_ubatch', help: 'Physical batch: sizes the compute buffer.' },
  { path: 'inference.n_gpu_layers', group: 'engine', show: llamacpp, label: 'GPU layers', help: 'Layers offloaded to the GPU (-1 = all); the rest stay in host RAM.' },
  { path: 'inference.flash_attn', group: 'engine', show: llamacpp, label: 'Flash attention', help: 'Smaller attention compute buffer.' },

  // Framework details
  { path: 'framework.preset', group: 'framework', label: 'Framework versions', help: 'Older PyTorch/transformers keep extra tensors alive.' },
  { path: 'framework.device', group: 'framework', label: 'Device', help: 'cpu: no CUDA context, everything in host RAM.' },
  { path: 'framework.adamw_foreach_denom_copy', group: 'framework', show: train, label: 'foreach AdamW denom copy', help: 'PyTorch <= 2.0: the foreach step holds two copies of the parameters\' size instead of one.' },
  { path: 'framework.rmsnorm_saves_squared_input', group: 'framework', show: train, label: 'RMSNorm saves squared input', help: 'PyTorch <= 2.1: one extra saved tensor per norm.' },
  { path: 'framework.loss_shift_logits_copy', group: 'framework', show: train, label: 'Loss copies shifted logits', help: 'transformers <= 4.45: one extra logits copy.' },
  { path: 'framework.loss_function_shift_copy', group: 'framework', show: train, label: 'ForCausalLMLoss copies shifted logits', help: 'transformers 4.46-4.48: the loss copies the shifted fp32 logits (batch > 1).' },
  { path: 'framework.keep_outputs', group: 'framework', show: train, label: 'Keep model outputs', help: 'Holding the output object keeps fp32 logits alive through backward.' },
  { path: 'framework.use_cache', group: 'framework', show: train, label: 'use_cache in training', help: 'The model also returns a KV cache.' },
  { path: 'framework.attention_mask', group: 'framework', label: 'Attention mask', help: 'A 2-D mask expands to batch x 1 x seq x seq.' },
  { path: 'framework.loss_upcast_logits', group: 'framework', show: train, label: 'Loss upcasts logits', help: 'HF upcasts logits to fp32 for the loss; some remote-code models do not.' },
  { path: 'framework.batch_on_device', group: 'framework', label: 'Batch on device', help: 'input_ids/labels/mask (int64) live on the GPU.' },
  { path: 'framework.cuda_lazy_loading', group: 'framework', label: 'CUDA lazy loading', help: 'CUDA >= 11.7 loads kernels on demand: ~0.5 GiB context instead of ~1.3 GiB.' },
  { path: 'framework.variable_shapes', group: 'framework', label: 'Varying batch lengths', help: 'Dynamic padding: the caching allocator keeps more memory reserved.' },
  { path: 'framework.expandable_segments', group: 'framework', label: 'Expandable segments', help: 'PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: almost no fragmentation.' },
  { path: 'framework.model_load', group: 'framework', show: train, label: 'Model load', help: 'How the weights reach the GPU. torchtune 0.1 quantized whole tensors while deep-copying layers: the segments it reserved stay reserved for training.' },
];

// The schema node for a dotted path ("train.lora.rank").
export function schemaNode(schema, path) {
  let node = schema;
  for (const key of path.split('.')) {
    node = node?.properties?.[key];
    if (!node) return null;
  }
  return node;
}

export function getPath(obj, path) {
  let o = obj;
  for (const k of path.split('.')) { if (o == null || typeof o !== 'object') return undefined; o = o[k]; }
  return o;
}

export function setPath(obj, path, value) {
  const keys = path.split('.');
  let o = obj;
  for (const k of keys.slice(0, -1)) {
    if (o[k] == null || typeof o[k] !== 'object' || Array.isArray(o[k])) o[k] = {};
    o = o[k];
  }
  if (value === undefined) delete o[keys.at(-1)];
  else o[keys.at(-1)] = value;
  return obj;
}
