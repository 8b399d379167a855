// The results view: verdict, model facts, breakdown, "what fits", host RAM, warnings. Formatting
// only: every number is the core's.
import { gib, gibNumber, exactBytes, int, count, percent, termLabel, orderedTerms, el, verdictBadge, bandText } from './format.js';

const $ = (id) => document.getElementById(id);

// The totals at the foot of the breakdown, named as each engine's own tools name them.
const TOTAL_NOTES = {
  pytorch: {
    allocated: 'torch.cuda.max_memory_allocated()',
    reserved: 'torch.cuda.max_memory_reserved()',
  },
  vllm: {
    allocated: 'what the vLLM worker allocates: weights, the KV cache pool (from gpu_memory_utilization), activations at its profiled peak',
    reserved: 'held by PyTorch\'s caching allocator inside the vLLM worker',
  },
  llama_cpp: {
    allocated: 'llama.cpp\'s CUDA buffers: model, KV cache (n_ctx) and compute buffer, as its load log lists them',
    reserved: 'the same buffers: llama.cpp allocates them up front (no caching allocator)',
  },
};
export function totalNotes(scenario) {
  const engine = scenario?.mode === 'inference' ? scenario.inference?.engine : null;
  return TOTAL_NOTES[engine] ?? TOTAL_NOTES.pytorch;
}

function dl(pairs) {
  const d = el('dl', { class: 'kv' });
  for (const [k, v, title] of pairs) d.append(el('dt', { text: k }), el('dd', { text: v, title }));
  return d;
}

// What ended a "longest that fits" answer (max_context_bound / max_seq_len_bound).
const BOUND = { model_context: ' (the model\'s context limit)', memory: ' (memory)', input_limit: ' (input range)' };
const tokensUpTo = (n, bound) => (n ? `${int(n)} tokens${BOUND[bound] ?? ''}` : 'none fits');

function renderVerdict(r) {
  const g = r.gpu;
  const s = r.scenario;
  const gpus = s.parallel?.gpus ?? 1;
  const v = $('verdict');
  const badge = verdictBadge(r);
  v.className = `verdict ${badge.cls}`;
  const per = gpus > 1 ? ` per GPU (× ${gpus} GPUs)` : '';
  v.replaceChildren(
    el('div', { class: 'badge', text: badge.text }),
    el('div', { class: 'big', title: exactBytes(g.device_total_bytes) },
      el('strong', { text: gib(g.device_total_bytes) }), `${per} of ${gib(g.capacity_bytes)} on `, el('span', { text: g.name })),
    el('div', { class: 'sub-verdict', title: exactBytes(Math.abs(g.headroom_bytes)) },
      g.fits ? `${gib(g.headroom_bytes)} headroom` : `${gib(-g.headroom_bytes)} short — the plans below make it fit`),
  );
  // The band straddles the capacity (docs/frameworks.md, "The band"); the badge stays the expected verdict.
  if (g.band?.verdict === 'tight') v.append(el('div', { class: 'tight-note', text: `Tight: the range (${bandText(g.band)}) straddles the ${gib(g.capacity_bytes)} capacity` }));
  // Narrow screens: a small fixed summary, so the answer stays visible while editing.
  $('mini').className = `mini ${badge.cls}`;
  $('mini').replaceChildren(el('strong', { text: badge.text }), ` ${gib(g.device_total_bytes)} / ${gib(g.capacity_bytes)}`, el('span', { class: 'muted', text: ' · details ↓' }));
  const facts = el('div', { class: 'facts' });
  const add = (k, val, title) => facts.append(el('span', { title }, el('span', { class: 'k', text: k }), ' ', el('span', { text: val })));
  add('params', count(r.params.total), int(r.params.total));
  if (s.mode !== 'inference') add('trainable', count(r.params.trainable ?? 0), int(r.params.trainable ?? 0));
  if (r.params.active_per_token && r.params.active_per_token !== r.params.total) add('active/token', count(r.params.active_per_token), int(r.params.active_per_token));
  if (r.peak_phase) add('peak in', [r.peak_phase, r.peak_at].filter(Boolean).join(' · ').replace(/_/g, ' '));
  if (g.paged_bytes > 0) add('paged (unified memory)', gib(g.paged_bytes), exactBytes(g.paged_bytes));
  v.append(facts);
}

function renderModelInfo(r) {
  const m = r.model;
  const inline = typeof r.scenario.model !== 'string';
  $('model-info').replaceChildren(
    el('div', {}, el('strong', { text: m.name || m.model_type || 'model' }), inline ? el('span', { class: 'tag', text: 'inline config' }) : el('span', { class: 'muted', text: ` ${r.scenario.model}` })),
    el('div', { class: 'muted small', text: [
      m.model_type, `${count(r.params.total)} params`, `${m.num_layers} layers`, `hidden ${m.hidden_size}`,
      `${m.num_heads} heads / ${m.num_kv_heads} KV`, m.num_experts ? `${m.num_experts} experts (${m.experts_per_token} active)` : '',
      `vocab ${int(m.vocab_size)}`,
    ].filter(Boolean).join(' · ') }),
  );
}

function renderBreakdown(r) {
  const g = r.gpu;
  const rows = [];
  for (const [key, bytes] of orderedTerms(g.breakdown)) {
    const formula = r.explain?.[key] ?? '';
    rows.push(el('tr', { class: bytes > 0 ? '' : 'zero' },
      el('th', { scope: 'row' }, el('span', { class: `swatch t-${key}`, 'aria-hidden': 'true' }), termLabel(key)),
      el('td', { class: 'num', title: exactBytes(bytes), text: gibNumber(bytes) }),
      el('td', { class: 'num', text: percent(bytes, g.device_total_bytes) }),
      el('td', { class: 'formula' }, formula ? el('details', {}, el('summary', { text: 'formula', title: formula }), el('code', { text: formula })) : el('span', { class: 'muted', text: '—' }))));
  }
  if (!rows.length) rows.push(el('tr', {}, el('td', { colspan: 4, class: 'muted', text: 'The core returned no breakdown for this scenario.' })));
  $('breakdown').tBodies[0].replaceChildren(...rows);
  const line = (label, bytes, note) => el('tr', {},
    el('th', { scope: 'row', text: label }), el('td', { class: 'num', title: exactBytes(bytes), text: gibNumber(bytes) }),
    el('td', { class: 'num', text: percent(bytes, g.device_total_bytes) }), el('td', { class: 'muted small', text: note }));
  const loadLines = g.load_reserved_bytes > 0
    ? [line('Model load', g.phase_peaks.load, `peak allocated while the weights load; ${gibNumber(g.load_reserved_bytes)} GiB reserved then, kept for training`)]
    : [];
  // GRPO / PPO: the generation and no-grad log-prob phases, and which model runs at the peak.
  const rlLines = r.rollout
    ? [line('Rollout phase', g.phase_peaks.rollout ?? 0, `${r.rollout.engine} (${r.rollout.mode}) generating ${r.rollout.rollout_sequences} completions`),
      line('Log-prob phase', g.phase_peaks.logprob ?? 0, `no-grad passes; the ${r.peak_model} model runs at the peak`)]
    : [];
  const notes = totalNotes(r.scenario);
  $('breakdown').tFoot.replaceChildren(
    ...loadLines,
    ...rlLines,
    line('Peak allocated', g.peak_allocated_bytes, notes.allocated),
    line('Reserved', g.reserved_bytes, notes.reserved),
    line('Device total', g.device_total_bytes, 'what nvidia-smi shows'),
  );
}

// "What fits": training's largest micro-batch and sequence, and the GPUs needed as data parallelism grows.
function renderCapacity(r) {
  const box = $('inference-box');
  const i = r.inference;
  const t = r.training;
  box.hidden = !i && !t;
  if (t && !i) {
    const s = r.scenario.train;
    const rows = [
      [`Largest micro-batch at ${int(s.seq_len)} tokens`, t.max_micro_batch_fits ? int(t.max_micro_batch_fits) : 'none fits'],
      [`Longest sequence at micro-batch ${int(s.micro_batch_size)}`, tokensUpTo(t.max_seq_len_fits, t.max_seq_len_bound)],
    ];
    if (typeof t.min_gpus === 'number') rows.push(['GPUs needed (this parallel set-up)', t.min_gpus > 0 ? int(t.min_gpus) : '—']);
    // The core answers for ZeRO-3 too when the scenario's own sharding cannot fit (training.md section 8).
    if (t.min_gpus === 0 && t.min_gpus_zero3 > 0) rows.push(['GPUs needed with ZeRO-3', int(t.min_gpus_zero3)]);
    box.replaceChildren(el('h2', { class: 'h3', text: 'What fits on this GPU' }), dl(rows));
    return;
  }
  if (!i) return;
  box.replaceChildren(el('h2', { class: 'h3', text: 'Serving capacity' }), dl([
    ['KV cache per token', i.kv_bytes_per_token != null ? `${int(i.kv_bytes_per_token)} B` : '—'],
    // vLLM's pre-allocated pool only: other engines grow the cache with the requests.
    ...(r.scenario.inference.engine === 'vllm' ? [
      ['KV cache pool, all requests together', i.kv_token_capacity != null ? `${int(i.kv_token_capacity)} tokens` : '—'],
      ['Max concurrency at max length', i.max_concurrency != null ? int(i.max_concurrency) : '—'],
    ] : []),
    ['Longest context that fits', i.max_context_fits != null ? tokensUpTo(i.max_context_fits, i.max_context_bound) : '—'],
    ['Largest batch that fits', i.max_batch_fits != null ? int(i.max_batch_fits) : '—'],
    // The format with the most stored bytes (the least quantized) that fits (docs/inference.md).
    ['Highest-precision weight format that fits', (i.highest_precision_format_fits ?? i.smallest_format_fits) || 'none'],
    ['GPUs needed (tensor parallel)', i.min_gpus != null ? int(i.min_gpus) : '—'],
  ]));
}

let latest; // for ranks.js

// Host RAM on the fullest node (core: cpu.node_bytes = cpu.bytes x cpu.node_processes, the
// processes one host runs; docs/schema.md, "Ranks"). null when the result has none.
export function hostPerNode(r) {
  const c = r.cpu ?? {};
  const ok = (x) => typeof x === 'number' && Number.isFinite(x);
  if (!ok(c.node_bytes) || !ok(c.node_processes)) return null;
  return { bytes: c.node_bytes, processes: c.node_processes };
}

function renderCpu(r) {
  const box = $('cpu-box');
  box.hidden = !(r.cpu?.bytes > 0);
  if (box.hidden) return;
  const rows = orderedTerms(r.cpu.breakdown).map(([k, b]) => [termLabel(k), gib(b), [exactBytes(b), r.cpu_explain?.[k]].filter(Boolean).join(' — ')]);
  const node = hostPerNode(r);
  const title = el('h2', { class: 'h3', text: `Host RAM per GPU: ${gib(r.cpu.bytes)}`, title: exactBytes(r.cpu.bytes) });
  const parts = [title];
  if (node && node.processes > 1) {
    parts.push(el('p', { class: 'node-ram', title: exactBytes(node.bytes) },
      el('strong', { text: `Host RAM per node: ${gib(node.bytes)}` }),
      ` (${int(node.processes)} GPU processes per node, each with the host RAM above)`));
  } else if ((r.scenario.parallel?.gpus ?? 1) > 1) {
    parts.push(el('p', { class: 'muted small', text: 'Each GPU\'s process needs this much; a node needs it once per GPU it holds.' }));
  }
  box.replaceChildren(...parts, dl(rows));
}

function renderWarnings(r) {
  const box = $('warnings');
  const w = r.warnings ?? [];
  box.hidden = !w.length;
  if (!w.length) return;
  const ul = el('ul');
  for (const x of w) ul.append(el('li', {}, x.field_path ? el('code', { text: x.field_path }) : null, x.field_path ? ': ' : null, x.message));
  box.replaceChildren(el('h2', { class: 'h3', text: 'Warnings' }), ul);
}

export function renderResults(r) {
  renderVerdict(r);
  renderModelInfo(r);
  renderBreakdown(r);
  // several rank roles (pipeline stages): ranks.js, loaded on first use
  $('ranks-box').hidden = true;
  latest = r;
  if (r.ranks?.length > 1) import('./ranks.js').then((m) => m.renderRanks($('ranks-box'), latest));
  renderCapacity(r);
  renderCpu(r);
  renderWarnings(r);
}
