// The matrix view: methods (or weight formats) x the sizes of one family, core.summary in the
// worker, newest request drawn; a click loads the cell.
import { schemaNode, getPath, setPath } from './fields.js';
import { gib, gibNumber, exactBytes, int, el } from './format.js';
import { clip } from './limits.js';
import { createSequence } from './store.js';

const $ = (id) => document.getElementById(id);

const TRAIN_ROWS = [
  { label: 'Full (AMP)', set: { 'train.method': 'full', 'train.precision': 'amp_bf16' } },
  { label: 'Full (16-bit)', set: { 'train.method': 'full', 'train.precision': 'bf16' } },
  { label: 'Freeze', set: { 'train.method': 'freeze' } },
  { label: 'LoRA', set: { 'train.method': 'lora' } },
  { label: 'QLoRA 8-bit', set: { 'train.method': 'qlora', 'train.qlora_bits': 8 } },
  { label: 'QLoRA 4-bit', set: { 'train.method': 'qlora', 'train.qlora_bits': 4 } },
  { label: 'QLoRA 2-bit', set: { 'train.method': 'qlora', 'train.qlora_bits': 2 } },
];
const INFER_FORMATS = ['bf16', 'fp8', 'int8', 'awq_4bit', 'gguf_q8_0', 'gguf_q4_k_m', 'gguf_q2_k'];
const FORMAT_LABELS = { awq_4bit: 'AWQ 4-bit', gguf_q8_0: 'GGUF Q8_0', gguf_q4_k_m: 'GGUF Q4_K_M', gguf_q2_k: 'GGUF Q2_K' };

// Formats each engine runs (docs/web.md, "Verdict badge and matrix").
const ENGINE_RUNS = {
  transformers: (f) => !f.startsWith('gguf_'),
  llama_cpp: (f) => f === 'bf16' || f.startsWith('gguf_'),
  vllm: () => true,
};
const cellKey = (c) => (c.ok ? `${c.total}|${c.kv}|${c.verdict}` : `err|${c.errors?.[0]?.message}`);

const rowMatches = (row, s) => Object.entries(row.set).every(([p, v]) => getPath(s, p) === v);

// summaries(jobs) -> {cells, ms} | {failed}; ladder: {get, set} of the ?ladder= key.
export function createMatrix({ schema, presets, presetById, store, summaries, commit, ladder, hook, inWorker }) {
  const select = $('ladder');
  const ladders = [...new Set(presets.map((p) => p.ladder).filter(Boolean))].sort((a, b) => a.localeCompare(b));
  select.replaceChildren(...ladders.map((l) => el('option', { value: l, text: l })));

  function matrixRows(s) {
    if (s.mode !== 'inference') return TRAIN_ROWS;
    const allowed = schemaNode(schema, 'inference.weights')?.enum ?? [];
    const runs = ENGINE_RUNS[s.inference?.engine] ?? ENGINE_RUNS.vllm;
    return INFER_FORMATS.filter((f) => allowed.includes(f) && runs(f)).map((f) => ({ label: FORMAT_LABELS[f] ?? f, set: { 'inference.weights': f } }));
  }

  function currentLadder(s) {
    const chosen = ladder.get();
    if (chosen && ladders.includes(chosen)) return chosen;
    const own = typeof s.model === 'string' ? presetById.get(s.model)?.ladder : null;
    return own || (ladders.includes('Llama 3.x') ? 'Llama 3.x' : ladders[0]);
  }

  const sequence = createSequence();
  async function build() {
    const started = performance.now();
    const { scenario: s, choices } = store.get();
    if (!s) return;
    const name = currentLadder(s);
    select.value = name;
    const cols = presets.filter((p) => p.ladder === name).sort((a, b) => a.params - b.params);
    const rows = matrixRows(s);
    const jobs = [];
    for (const row of rows) {
      for (const p of cols) {
        const cand = structuredClone({ ...choices, model: p.id });
        for (const [path, v] of Object.entries(row.set)) setPath(cand, path, v);
        jobs.push(cand);
      }
    }
    const stamp = sequence.take();
    const answer = await summaries(jobs);
    if (!sequence.current(stamp)) return; // a newer request is on its way
    if (answer.failed) { $('matrix-timing').textContent = clip(answer.failed.errors[0].message); return; }
    draw({ s, rows, cols, jobs, cells: answer.cells });
    hook.lastMatrixMs = performance.now() - started;
    hook.lastMatrixComputeMs = answer.ms;
    hook.lastMatrixCells = answer.cells.length;
    $('matrix-timing').textContent = `${answer.cells.length} estimates in ${answer.ms.toFixed(0)} ms${inWorker() ? ' (in a worker)' : ''}`;
  }

  function draw({ s, rows, cols: all, jobs, cells }) {
    // Models with the same answer in every cell share a column.
    const at = (r, c) => r * all.length + c;
    const groups = new Map();
    all.forEach((p, c) => {
      const key = rows.map((_, r) => cellKey(cells[at(r, c)])).join('/');
      if (!groups.has(key)) groups.set(key, { first: c, models: [] });
      groups.get(key).models.push(p);
    });
    const shown = [...groups.values()];
    const cols = shown.map((g) => all[g.first]);
    const vllm = s.mode === 'inference' && s.inference?.engine === 'vllm';
    const sizes = cols.map((p) => p.size_label);
    const head = el('tr', {}, el('th', { scope: 'col', text: s.mode === 'inference' ? 'Weights' : 'Method' }));
    shown.forEach((g, i) => {
      const p = cols[i];
      // Several models of one size in a ladder (Llama 3 / 3.1 / 3.3 70B): name them.
      const dup = sizes.filter((x) => x === p.size_label).length > 1;
      const title = g.models.length > 1 ? `${g.models.map((m) => m.display_name).join(', ')}: the same estimates` : `${p.display_name} — ${p.id}`;
      head.append(el('th', { scope: 'col', title, text: dup ? p.display_name.replace(/^(.*?)\s+(\S+)$/, '$2 ($1)') : p.size_label }));
    });
    const body = el('tbody');
    for (const [r, row] of rows.entries()) {
      const tr = el('tr', {}, el('th', { scope: 'row', text: row.label }));
      for (const [i, p] of cols.entries()) {
        const k = at(r, shown[i].first);
        const cell = cells[k];
        const cand = jobs[k];
        const td = el('td');
        if (!cell.ok) {
          td.append(el('span', { class: 'muted', title: cell.errors.map((e) => `${e.field_path}: ${e.message}`).join('\n'), text: '—' }));
        } else {
          const current = shown[i].models.some((m) => m.id === s.model) && rowMatches(row, s);
          const fits = cell.verdict ? cell.verdict !== 'does_not_fit' : cell.fits;
          const what = vllm ? `${int(cell.kv)} KV tokens` : gib(cell.total);
          const b = el('button', {
            type: 'button', class: `cell ${fits ? 'fits' : 'nofit'}${current ? ' current' : ''}`,
            title: `${p.display_name}, ${row.label}: ${what}${vllm ? ` in ${gib(cell.total)}` : ''} per GPU (${exactBytes(cell.total)}) — ${fits ? 'fits' : 'does not fit'} on ${cell.gpu}`,
            'aria-label': `${p.display_name}, ${row.label}: ${what}, ${fits ? 'fits' : 'does not fit'}`,
            'data-model': p.id, 'data-row': row.label, text: vllm ? (cell.kv >= 1e6 ? `${(cell.kv / 1e6).toFixed(1)}M` : `${Math.round(cell.kv / 1e3)}k`) : gibNumber(cell.total),
          });
          if (current) b.setAttribute('aria-current', 'true');
          b.addEventListener('click', () => { commit(cand, { history: 'push' }); $('results').scrollIntoView?.({ block: 'start', behavior: 'smooth' }); });
          td.append(b);
        }
        tr.append(td);
      }
      body.append(tr);
    }
    $('matrix').replaceChildren(el('thead', {}, head), body);
  }

  // After the frame that shows the estimate; edits within one frame make one request.
  let timer = 0;
  function schedule() {
    if (timer) return;
    timer = requestAnimationFrame(() => setTimeout(() => { timer = 0; build(); }, 0));
  }
  select.addEventListener('change', () => { ladder.set(select.value); build(); });
  return { schedule, build };
}
