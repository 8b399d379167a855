// The model picker (presets; Hub and config.json via model-import.js, loaded on first use) and
// the GPU picker beside it.
// They read the store's scenario to show the current choice and hand every new choice to
// commit(candidate); they never change the store themselves.
import { GIB, gibNumber, exactBytes, el } from './format.js';
import { CONFIG_MAX_BYTES, clip, utf8Length } from './limits.js';
import { cloneChoices } from './form.js';
import { refuseTooLarge } from './notices.js';

const $ = (id) => document.getElementById(id);

function presetText(p) { return `${p.display_name} ${p.id} ${p.family} ${p.ladder ?? ''} ${p.size_label} ${p.model_type}`.toLowerCase(); }

// commit(candidate) -> the core's answer; parse(text): parseHfConfig in the worker; hub(): ?hub=.
export function createModelPicker({ presets, gpus, presetById, store, commit, parse, hub }) {
  const useModel = (model) => {
    const s = cloneChoices(store.get().choices);
    s.model = model;
    return commit(s, { history: 'push' });
  };

  function fillPresets(query = '') {
    const tokens = query.toLowerCase().split(/\s+/).filter(Boolean);
    const sel = $('preset');
    sel.replaceChildren();
    const groups = new Map();
    let n = 0;
    for (const p of presets) {
      const text = presetText(p);
      if (!tokens.every((t) => text.includes(t))) continue;
      if (!groups.has(p.family)) groups.set(p.family, el('optgroup', { label: p.family }));
      groups.get(p.family).append(el('option', { value: p.id, text: p.display_name, title: p.id }));
      n++;
    }
    sel.append(...groups.values());
    if (!n) sel.append(el('option', { disabled: true, value: '', text: 'No preset matches — try the Hub or paste a config.json' }));
    const s = store.get().scenario;
    if (s && typeof s.model === 'string') sel.value = s.model;
  }

  // The Hub / config.json code, imported the first time it is needed. A handler marks the status
  // line busy at once, so that nobody reads the previous outcome while the module loads.
  let importer = null;
  const later = (statusEl, act) => {
    statusEl.dataset.state = 'busy';
    importer ??= import('./model-import.js').then((m) => m.createModelImport({ useModel, parse, hub }));
    return importer.then(act);
  };
  // A file (chosen or dropped) over the size limit is refused at once, before anything loads.
  const useFile = (file) => {
    if (file.size > CONFIG_MAX_BYTES) { refuseTooLarge($('cfg-status'), clip(file.name || 'file', 100), file.size); return; }
    later($('cfg-status'), (m) => m.useConfigFile(file, $('cfg-status')));
  };
  for (const box of ['hub-box', 'cfg-box']) {
    $(box).addEventListener('toggle', () => { importer ??= import('./model-import.js').then((m) => m.createModelImport({ useModel, parse, hub })); });
  }

  // Pasting into the text box: a paste over the size limit is refused before the browser inserts
  // it (inserting and laying out megabytes of text would itself block the page).
  function onConfigPaste(e) {
    const text = e.clipboardData?.getData('text/plain') ?? '';
    if (text.length <= CONFIG_MAX_BYTES && utf8Length(text) <= CONFIG_MAX_BYTES) return;
    e.preventDefault();
    refuseTooLarge($('cfg-status'), 'Pasted text', utf8Length(text));
  }

  // ---- wiring
  $('preset-search').addEventListener('input', (e) => fillPresets(e.target.value));
  $('preset-search').addEventListener('keydown', (e) => {
    if (e.key === 'ArrowDown' || e.key === 'Enter') {
      e.preventDefault();
      const sel = $('preset');
      const first = sel.querySelector('option:not([disabled])');
      if (!first) return;
      if (e.key === 'Enter') { useModel(first.value); sel.value = first.value; }
      sel.focus();
    }
  });
  $('preset').addEventListener('change', (e) => { if (e.target.value) useModel(e.target.value); });
  const fromHub = () => later($('hub-status'), (m) => m.loadFromHub());
  $('hub-load').addEventListener('click', fromHub);
  $('hub-id').addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); fromHub(); } });
  $('cfg-text').addEventListener('paste', onConfigPaste);
  $('cfg-use').addEventListener('click', () => later($('cfg-status'), (m) => m.useConfigText($('cfg-text').value, $('cfg-status'), 'Pasted config')));
  $('cfg-file').addEventListener('change', (e) => {
    const file = e.target.files?.[0];
    if (file) useFile(file);
  });
  const drop = $('g-model');
  drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('dragging'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('dragging'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('dragging');
    $('cfg-box').open = true;
    const file = e.dataTransfer?.files?.[0];
    if (file) { useFile(file); return; }
    const text = e.dataTransfer?.getData('text/plain');
    if (!text) return;
    if (utf8Length(text) > CONFIG_MAX_BYTES) { refuseTooLarge($('cfg-status'), 'Dropped text', utf8Length(text)); return; }
    $('cfg-text').value = text;
    later($('cfg-status'), (m) => m.useConfigText(text, $('cfg-status'), 'Dropped config'));
  });

  // ---- GPU picker
  {
    const sel = $('gpu');
    const groups = new Map();
    for (const g of gpus) {
      const seg = g.segment || 'other';
      if (!groups.has(seg)) groups.set(seg, el('optgroup', { label: seg }));
      groups.get(seg).append(el('option', { value: g.id, text: g.name, title: exactBytes(g.usable_memory_bytes ?? g.memory_bytes) }));
    }
    sel.append(...groups.values(), el('option', { value: 'custom', text: 'Custom…' }));
  }

  return {
    fillPresets,
    // The candidate scenario for an edit of the GPU controls (null for any other control).
    gpuCandidate(choices, target) {
      if (!target.closest('#g-gpu')) return null;
      if (target.id === 'gpu' && target.value === 'custom') {
        $('gpu-custom').hidden = false;
        if (!$('gpu-mem').value) $('gpu-mem').value = gibNumber(store.get().result?.gpu?.capacity_bytes ?? 24 * GIB);
        if (!$('gpu-name').value) $('gpu-name').value = 'Custom GPU';
      }
      const s = cloneChoices(choices);
      if ($('gpu').value === 'custom') {
        const gibs = Number($('gpu-mem').value);
        s.gpu = { name: $('gpu-name').value || 'Custom GPU', memory_bytes: Number.isFinite(gibs) && gibs > 0 ? Math.round(gibs * GIB) : 0 };
      } else s.gpu = $('gpu').value;
      return s;
    },
    // Shows the scenario's model and GPU.
    sync(s) {
      const active = document.activeElement;
      const custom = typeof s.gpu === 'object';
      if (active !== $('gpu-name') && active !== $('gpu-mem')) {
        $('gpu').value = custom ? 'custom' : s.gpu;
        if (custom) { $('gpu-name').value = s.gpu.name ?? ''; $('gpu-mem').value = gibNumber(s.gpu.memory_bytes); }
      }
      $('gpu-custom').hidden = !custom && $('gpu').value !== 'custom';
      const sel = $('preset');
      if (typeof s.model === 'string' && presetById.has(s.model)) sel.value = s.model;
      else sel.selectedIndex = -1;
    },
  };
}
