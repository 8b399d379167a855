// Launch configs on the page: an Import box (paste a vLLM / llama.cpp command line, a
// LLaMA-Factory, axolotl, torchtune or accelerate YAML, a DeepSpeed or HF trainer JSON; the format
// is detected, the scenario applied, every key's note listed) and an Export menu (the shown
// scenario as one of those configs, with a copy button). Both are the core's import / export ops
// (docs/planner.md, "Formats and their keys"), answered by the full module (full-core.js), which
// this box downloads when it is first opened; the text is only ever shown as text.
import { loadFullCore } from './full-core.js';

export const LAUNCH_FORMATS = [
  ['vllm', 'vLLM (vllm serve)'], ['llama_cpp', 'llama.cpp (llama-server)'], ['llamafactory', 'LLaMA-Factory YAML'],
  ['axolotl', 'axolotl YAML'], ['deepspeed', 'DeepSpeed JSON'], ['hf', 'HF / TRL trainer JSON'],
  ['accelerate', 'accelerate config'], ['torchtune', 'torchtune config'],
];
const SERVING = new Set(['vllm', 'llama_cpp']);
const MAX_LISTED_NOTES = 60;

function el(tag, props = {}, children = []) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'text') node.textContent = v;
    else if (k in node) node[k] = v;
    else node.setAttribute(k, v);
  }
  node.append(...children);
  return node;
}

// The notes worth reading (everything but plain "read"), as list items; the rest counted.
function renderNotes(box, notes, lead) {
  const shown = notes.filter((n) => n.status !== 'read');
  const read = notes.length - shown.length;
  const items = shown.slice(0, MAX_LISTED_NOTES).map((n) => el('li', { text: `${n.status}: ${n.key ? `${n.key}: ` : ''}${n.message}` }));
  const more = shown.length > MAX_LISTED_NOTES ? [el('li', { text: `… and ${shown.length - MAX_LISTED_NOTES} more` })] : [];
  box.replaceChildren(el('span', { text: `${lead} ${read} key${read === 1 ? '' : 's'} read.` }), el('ul', {}, [...items, ...more]));
}

function renderErrors(box, errors) {
  box.classList.add('bad');
  box.replaceChildren(el('ul', {}, (errors ?? []).slice(0, 20).map((e) => el('li', { text: `${e.field_path ? `${e.field_path}: ` : ''}${e.message}` }))));
}

// root: the <details> it fills (index.html #launch-box, loaded when first opened); store / commit:
// app.js's. The controls appear once the full module is there, so every click is answered at once.
export async function createLaunchConfig({ root, store, commit }) {
  const loading = el('div', { className: 'help', role: 'status', text: 'Loading the import and export…' });
  root.append(loading);
  let full;
  try { full = await loadFullCore(); } catch (e) {
    loading.classList.add('bad');
    loading.textContent = `The import and export could not be loaded: ${e?.message ?? e}`;
    return;
  }
  loading.remove();
  const call = (op, request) => {
    try { return full.call(op, request); } catch (e) {
      return { ok: false, errors: [{ field_path: '', message: `the ${op} failed: ${e?.message ?? e}` }] };
    }
  };
  const text = el('textarea', { id: 'launch-text', rows: 6, spellcheck: false, placeholder: 'vllm serve Qwen/Qwen2.5-7B --max-model-len 8192   or a LLaMA-Factory / axolotl / torchtune YAML, a DeepSpeed JSON …' });
  text.setAttribute('aria-label', 'Launch config to import');
  const importButton = el('button', { type: 'button', id: 'launch-import', text: 'Import' });
  const importStatus = el('div', { id: 'launch-import-status', className: 'help', role: 'status' });
  const select = el('select', { id: 'launch-to' }, LAUNCH_FORMATS.map(([value, label]) => el('option', { value, text: label })));
  select.setAttribute('aria-label', 'Export format');
  const exportButton = el('button', { type: 'button', id: 'launch-export', text: 'Export' });
  const copyButton = el('button', { type: 'button', id: 'launch-copy', text: 'Copy', disabled: true });
  const out = el('textarea', { id: 'launch-out', rows: 10, readOnly: true, spellcheck: false });
  out.setAttribute('aria-label', 'Exported config');
  const exportStatus = el('div', { id: 'launch-export-status', className: 'help', role: 'status' });

  importButton.addEventListener('click', () => {
    importStatus.classList.remove('bad');
    const r = call('import', { format: 'auto', text: text.value });
    if (!r.ok) { renderErrors(importStatus, r.errors); return; }
    const scenario = r.scenario;
    const lead = [`Read as ${r.format}.`];
    if (!r.complete) {
      scenario.model = store.get().choices?.model ?? store.get().scenario?.model;
      lead.push('The config names no model the presets know: the model on the page is kept.');
    }
    const applied = commit(scenario);
    if (!applied.ok) { renderErrors(importStatus, applied.errors); return; }
    renderNotes(importStatus, r.notes, lead.join(' '));
  });

  exportButton.addEventListener('click', () => {
    exportStatus.classList.remove('bad');
    const { scenario } = store.get();
    const r = call('export', { to: select.value, scenario });
    if (!r.ok) { renderErrors(exportStatus, r.errors); out.value = ''; copyButton.disabled = true; return; }
    out.value = r.text;
    copyButton.disabled = false;
    renderNotes(exportStatus, r.notes, SERVING.has(select.value) ? 'A serving command.' : 'A training config.');
  });

  copyButton.addEventListener('click', async () => {
    try { await navigator.clipboard.writeText(out.value); exportStatus.firstChild.textContent = 'Copied.'; } catch {
      out.select();
    }
  });

  // The export menu offers the formats of the shown mode first.
  store.subscribe((s, prev) => {
    if (s.scenario?.mode === prev.scenario?.mode || !s.scenario) return;
    const serving = s.scenario.mode === 'inference';
    if (SERVING.has(select.value) !== serving) select.value = serving ? 'vllm' : 'llamafactory';
  });
  if (store.get().scenario?.mode !== 'inference') select.value = 'llamafactory';

  root.append(
    el('div', { className: 'field' }, [text, el('div', { className: 'row' }, [importButton]), importStatus]),
    el('div', { className: 'field' }, [el('div', { className: 'row' }, [select, exportButton, copyButton]), out, exportStatus]),
  );
}
