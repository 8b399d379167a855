// The model picker and the GPU picker (side by side at the top of the form): preset search, the
// Hugging Face Hub, a pasted/dropped/chosen config.json, and the GPU catalogue or a custom GPU.
// They read the store's scenario to show the current choice and hand every new choice to
// commit(candidate); they never change the store themselves.
import { GIB, gibNumber, exactBytes, count, el } from './format.js';
import { DEFAULT_HUB, parseHubBase } from './hub.js';
import { CONFIG_MAX_BYTES, LimitError, clip, readTextCapped, tooLargeMessage, utf8Length } from './limits.js';
import { cloneChoices } from './form.js';
import { issueItem } from './notices.js';

const $ = (id) => document.getElementById(id);

function presetText(p) { return `${p.display_name} ${p.id} ${p.family} ${p.ladder ?? ''} ${p.size_label} ${p.model_type}`.toLowerCase(); }

function showConfigStatus(statusEl, kind, text, items = []) {
  statusEl.classList.remove('bad', 'good');
  if (kind) statusEl.classList.add(kind);
  statusEl.dataset.state = kind || 'busy';
  statusEl.replaceChildren(el('span', { text }));
  if (items.length) {
    const ul = el('ul');
    for (const it of items) ul.append(issueItem(it));
    statusEl.append(ul);
  }
}

function refuseTooLarge(statusEl, source, bytes, { atLeast = false } = {}) {
  showConfigStatus(statusEl, 'bad', `${clip(source, 100)}: not read, ${tooLargeMessage(bytes, { atLeast })}.`);
  return false;
}

// presets, gpus: the core's lists. store: the page's store (read only). commit(candidate) applies
// a scenario and returns the core's answer. parse(text): core.parseHfConfig off the main thread.
// hub(): the ?hub= value of the link.
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

  // Checks a config.json text (size, then the core in the worker), then uses it as the model.
  // Only the newest call shows its outcome. Resolves to true when the config is in use.
  let configSeq = 0;
  async function useConfigText(text, statusEl, source) {
    const seq = ++configSeq;
    const bytes = utf8Length(text);
    if (bytes > CONFIG_MAX_BYTES) return refuseTooLarge(statusEl, source, bytes);
    showConfigStatus(statusEl, null, `${source}: checking…`);
    const parsed = await parse(text);
    if (seq !== configSeq) return false;
    if (!parsed?.ok) {
      showConfigStatus(statusEl, 'bad', `${source}: this config.json was not accepted:`, parsed?.errors ?? []);
      return false;
    }
    let config;
    try { config = JSON.parse(text); } catch { config = null; }
    if (!config || typeof config !== 'object' || Array.isArray(config)) {
      showConfigStatus(statusEl, 'bad', `${source}: this config.json was not accepted: it is not a JSON object.`);
      return false;
    }
    const r = useModel(config);
    if (!r.ok) {
      showConfigStatus(statusEl, 'bad', `${source}: this config.json was not accepted:`, r.errors ?? []);
      return false;
    }
    showConfigStatus(statusEl, 'good', `${source}: loaded ${clip(parsed.model?.name || 'model', 100)} (${count(parsed.params?.total ?? 0)} parameters).`);
    for (const w of parsed.warnings ?? []) statusEl.append(el('div', { class: 'warn-line', text: clip(`${w.field_path ? `${w.field_path}: ` : ''}${w.message}`, 1000) }));
    return true;
  }

  // A file (chosen or dropped): its size is checked before a byte of it is read.
  async function useConfigFile(file, statusEl) {
    const name = clip(file.name || 'file', 100);
    if (file.size > CONFIG_MAX_BYTES) return refuseTooLarge(statusEl, name, file.size);
    let text;
    try { text = await readTextCapped(file.stream()); } catch (e) {
      if (e instanceof LimitError) return refuseTooLarge(statusEl, name, CONFIG_MAX_BYTES, { atLeast: true });
      showConfigStatus(statusEl, 'bad', `${name}: could not be read (${clip(e?.message ?? e)}).`);
      return false;
    }
    $('cfg-text').value = text;
    return useConfigText(text, statusEl, name);
  }

  function hubBase() {
    const h = parseHubBase(hub());
    return h.ok ? h.base : DEFAULT_HUB;
  }

  async function loadFromHub() {
    const status = $('hub-status');
    const id = $('hub-id').value.trim();
    status.classList.remove('bad', 'good');
    const bad = (text) => { status.classList.add('bad'); status.textContent = text; };
    if (id.length > 200 || !/^[A-Za-z0-9][\w.-]*(\/[\w.-]+)?$/.test(id) || id.includes('..')) {
      bad('Enter a model id like "Qwen/Qwen2.5-7B" (letters, digits, "-", "_", "." and one "/").');
      return;
    }
    const url = `${hubBase()}/${id}/resolve/main/config.json`;
    status.textContent = `Loading ${id} from the Hub…`;
    $('hub-load').disabled = true;
    try {
      let res;
      try {
        res = await fetch(url, { credentials: 'omit', cache: 'no-cache', redirect: 'follow' });
      } catch {
        bad(navigator.onLine === false
          ? 'You are offline: the Hub cannot be reached. Paste the config.json instead.'
          : `Could not reach the Hub (${new URL(url).origin}): network error or blocked. Paste the config.json instead.`);
        return;
      }
      if (res.status === 401 || res.status === 403) {
        bad(`${id} is gated or private (HTTP ${res.status}): the Hub only serves it after you accept its license while logged in. Download its config.json on huggingface.co and paste it below.`);
        return;
      }
      if (res.status === 404) { bad(`${id} was not found on the Hub (HTTP 404): check the spelling, or the repository has no config.json.`); return; }
      if (!res.ok) { bad(`The Hub answered HTTP ${res.status} for ${id}; try again later or paste the config.json.`); return; }
      const declared = Number(res.headers.get('content-length'));
      if (declared > CONFIG_MAX_BYTES) { res.body?.cancel().catch(() => {}); refuseTooLarge(status, `Hub ${id}`, declared); return; }
      let text;
      try { text = res.body ? await readTextCapped(res.body) : ''; } catch (e) {
        if (e instanceof LimitError) { refuseTooLarge(status, `Hub ${id}`, CONFIG_MAX_BYTES, { atLeast: true }); return; }
        bad(`The download of ${id} from the Hub broke off; try again or paste the config.json.`);
        return;
      }
      $('cfg-text').value = text;
      await useConfigText(text, status, `Hub ${id}`);
    } finally {
      $('hub-load').disabled = false;
    }
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
  $('hub-load').addEventListener('click', loadFromHub);
  $('hub-id').addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); loadFromHub(); } });
  $('cfg-text').addEventListener('paste', onConfigPaste);
  $('cfg-use').addEventListener('click', () => useConfigText($('cfg-text').value, $('cfg-status'), 'Pasted config'));
  $('cfg-file').addEventListener('change', (e) => {
    const file = e.target.files?.[0];
    if (file) useConfigFile(file, $('cfg-status'));
  });
  const drop = $('g-model');
  drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('dragging'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('dragging'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('dragging');
    $('cfg-box').open = true;
    const file = e.dataTransfer?.files?.[0];
    if (file) { useConfigFile(file, $('cfg-status')); return; }
    const text = e.dataTransfer?.getData('text/plain');
    if (!text) return;
    if (utf8Length(text) > CONFIG_MAX_BYTES) { refuseTooLarge($('cfg-status'), 'Dropped text', utf8Length(text)); return; }
    $('cfg-text').value = text;
    useConfigText(text, $('cfg-status'), 'Dropped config');
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
