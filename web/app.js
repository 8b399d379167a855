// The calculator page: builds the form from the core's schema, recomputes every input change in
// the WASM core, renders the result, keeps the scenario in the URL, and drives the matrix.
// Every number shown comes from the core; this file only formats and draws.
import { loadCore } from './core.js';
import { DEFAULT_MODEL, FIELDS, GROUPS, OPTION_LABELS, schemaNode, getPath, setPath } from './fields.js';
import { encodeScenario, decodeScenario, dropPath, scenarioJson } from './state.js';
import { GIB, gib, gibNumber, exactBytes, int, count, percent, termLabel, orderedTerms, el } from './format.js';
import { stackedBar, timelineChart } from './charts.js';
import { DEFAULT_HUB, parseHubBase } from './hub.js';
import { CONFIG_MAX_BYTES, LimitError, clip, readTextCapped, tooLargeMessage, utf8Length } from './limits.js';

const $ = (id) => document.getElementById(id);
const clone = (x) => structuredClone(x);
// The user's choices, copied for editing. An inline config (choices.model as an object) is never
// modified once accepted, so it is shared, not copied: copying it on every keystroke would cost
// time in proportion to its size.
function cloneChoices(c) {
  if (!c || typeof c.model !== 'object' || c.model === null) return clone(c);
  const copy = clone({ ...c, model: null });
  copy.model = c.model;
  return copy;
}
const sameChoices = (a, b) => a.model === b.model && JSON.stringify({ ...a, model: null }) === JSON.stringify({ ...b, model: null });
const internalError = (e) => ({ ok: false, errors: [{ code: 'internal', field_path: '', message: `the estimator failed: ${clip(e?.message ?? e)}` }] });

const app = {
  core: null, schema: null, presets: [], gpus: [], presetById: new Map(),
  choices: null,    // what the user chose (sparse scenario): sent to the core, kept in the URL
  scenario: null,   // the normalized scenario of the shown result (what the core echoed)
  result: null,
  page: {},         // non-scenario URL keys (hub, ladder, embed)
  defaults: new Map(),
  groupOpen: false, // an input gesture in progress: first input pushes history, the rest replace
  urlChain: Promise.resolve(),
};

// Test/debug hook: read-only views of the current state and timings.
const hook = {
  ready: false, lastRenderMs: null, firstEstimateMs: null, lastMatrixMs: null, renders: 0,
  get scenario() { return app.scenario && clone(app.scenario); },
  get choices() { return app.choices && clone(app.choices); },
  get result() { return app.result && clone(app.result); },
  settled: () => app.urlChain,
};
window.__vramplan = hook;
const t0 = performance.now();

// ---------------------------------------------------------------- core calls

// Redraws use the fast call; the inverse questions (what fits) arrive from the worker afterwards.
function estimate(scenario) {
  try {
    const r = app.core.fast(scenario);
    if (!r || typeof r !== 'object' || (r.ok !== true && !Array.isArray(r.errors))) throw new Error('the core returned no result');
    return r;
  } catch (e) {
    return internalError(e);
  }
}

// ---------------------------------------------------------------- apply a scenario

// Computes a candidate (sparse) scenario; on success shows it and records it in the URL. The
// choices stay sparse so that defaults which depend on other fields (framework.preset, the model)
// are re-derived by the core exactly as they will be when the link is opened.
// history: 'push' | 'replace' | 'none'. Returns the result (ok or not).
function compute(candidate, { history = 'push', started = performance.now() } = {}) {
  const r = estimate(candidate);
  if (!r.ok) { showFieldErrors(r.errors); return r; }
  showFieldErrors([]);
  // Keep the previous "what fits" answers on screen until the worker sends the new ones.
  const prev = app.result;
  if (prev && prev.scenario?.mode === r.scenario.mode) {
    r.training ??= prev.training;
    r.inference ??= prev.inference;
  }
  try {
    render(r);
  } catch (e) {
    // A result the page cannot draw (a core bug): say so, keep the previous scenario.
    const bad = internalError(e);
    try { if (app.result) render(app.result); } catch { /* the error below is shown either way */ }
    showFieldErrors(bad.errors);
    return bad;
  }
  app.choices = candidate;
  app.scenario = r.scenario;
  app.result = r;
  syncForm();
  hook.lastRenderMs = performance.now() - started;
  hook.renders++;
  if (history !== 'none') writeUrl(history);
  scheduleMatrix();
  scheduleCapacity(candidate);
  return r;
}

let capacitySeq = 0;
function scheduleCapacity(candidate) {
  const id = ++capacitySeq;
  const apply = (capacity) => {
    if (id !== capacitySeq || !capacity || !app.result) return;
    Object.assign(app.result, capacity);
    renderInference(app.result);
  };
  const w = matrixWorker();
  if (!w) {
    setTimeout(() => { try { const r = app.core.estimate(candidate); apply(r?.ok ? { training: r.training, inference: r.inference } : null); } catch { /* the fast estimate on screen stays */ } }, 0);
    return;
  }
  w.addEventListener('message', function onMsg(e) {
    if (e.data.id !== -id) return;
    w.removeEventListener('message', onMsg);
    apply(e.data.capacity);
  });
  w.postMessage({ id: -id, capacity: scenarioJson(candidate) }); // a string: cheaper to send than the object
}

function writeUrl(mode) {
  const scenario = app.choices;
  const extra = { hub: app.page.hub, ladder: app.page.ladder, embed: app.page.embed };
  if (!scenario) return;
  app.urlChain = app.urlChain.then(async () => {
    const query = await encodeScenario(scenario, null, extra);
    const url = `${location.pathname}?${query}`;
    if (url === `${location.pathname}${location.search}`) return;
    if (mode === 'push') history.pushState(null, '', url);
    else history.replaceState(null, '', url);
  }).catch((e) => console.warn('url update failed', e));
}

// Loads the scenario in the URL. Problems (unknown keys, bad values the core rejects) are named in
// a visible notice and the offending values dropped, so that a bad link still shows an estimate.
async function restoreFromUrl() {
  const decoded = await decodeScenario(location.search, app.schema);
  let { scenario } = decoded;
  const { page, problems } = decoded;
  const notes = [...problems];
  const hub = parseHubBase(page.hub);
  if (!hub.ok) {
    notes.push({ field_path: 'hub', message: `"${clip(page.hub, 100)}" is ${hub.message}; using ${DEFAULT_HUB}` });
    delete page.hub;
  }
  app.page = page;
  if (scenario.model === undefined) scenario.model = DEFAULT_MODEL;
  let r = estimate(scenario);
  for (let tries = 0; !r.ok && tries < 30; tries++) {
    let changed = false;
    for (const e of r.errors) {
      notes.push({ field_path: e.field_path, message: `${e.message} (ignored)` });
      if ((e.field_path || '').startsWith('model')) { changed = scenario.model !== DEFAULT_MODEL || changed; scenario.model = DEFAULT_MODEL; }
      else changed = dropPath(scenario, e.field_path) || changed;
    }
    if (!changed) break;
    r = estimate(scenario);
  }
  if (!r.ok) {
    notes.push({ field_path: '', message: 'the link could not be read; showing the default scenario' });
    scenario = { model: DEFAULT_MODEL };
  }
  showNotice(notes.length ? 'This link has problems; the rest of it was loaded:' : '', notes);
  compute(scenario, { history: 'none' });
}

// ---------------------------------------------------------------- notices and errors

// One issue as a list item: the field path as code, the message as text (both cut to a readable
// length: a hostile link can make either megabytes long).
function issueItem(it) {
  const path = it.field_path ? clip(it.field_path) : '';
  return el('li', {}, path ? el('code', { text: path }) : null, path ? ': ' : null, clip(it.message ?? '', 1000));
}

function showNotice(title, items = []) {
  const box = $('notice');
  box.replaceChildren();
  if (!title) { box.hidden = true; return; }
  box.append(el('p', { text: title }));
  const ul = el('ul');
  for (const it of items) ul.append(issueItem(it));
  box.append(ul, el('button', { type: 'button', class: 'link', text: 'Dismiss' }));
  box.lastChild.addEventListener('click', () => { box.hidden = true; });
  box.hidden = false;
}

function controlFor(fieldPath) {
  if (!fieldPath || fieldPath.length > 200) return null;
  if (fieldPath.startsWith('gpu')) return fieldPath === 'gpu' ? $('gpu') : $('gpu-mem');
  let p = fieldPath.replace(/\[\d+\]/g, '');
  while (p) {
    const c = document.querySelector(`[data-path="${CSS.escape(p)}"]`);
    if (c) return c;
    p = p.includes('.') ? p.slice(0, p.lastIndexOf('.')) : '';
  }
  return null;
}

function showFieldErrors(errors) {
  for (const c of document.querySelectorAll('[aria-invalid="true"]')) c.removeAttribute('aria-invalid');
  for (const m of document.querySelectorAll('.field-error')) m.remove();
  const box = $('field-errors');
  box.replaceChildren();
  box.hidden = errors.length === 0;
  $('results').classList.toggle('stale', errors.length > 0);
  if (!errors.length) return;
  box.append(el('p', { text: 'Not recomputed — fix this input (the numbers below are for the previous scenario):' }));
  const ul = el('ul');
  for (const e of errors) {
    ul.append(issueItem(e));
    const c = controlFor(e.field_path);
    if (c) {
      c.setAttribute('aria-invalid', 'true');
      c.closest('.field')?.append(el('div', { class: 'field-error', text: clip(e.message ?? '', 1000) }));
    }
  }
  box.append(ul);
}

// ---------------------------------------------------------------- the form

function fieldId(path) { return `f-${path.replace(/\./g, '-')}`; }

function optionLabel(path, value) { return OPTION_LABELS[path]?.[String(value)] ?? String(value).replace(/_/g, ' '); }

function buildControl(f, node) {
  const id = fieldId(f.path);
  const describedBy = `${id}-help`;
  let control;
  let kind;
  const isCheckpointing = node.oneOf?.some((a) => a.type === 'boolean') && node.oneOf?.some((a) => a.const !== undefined);
  const isTargets = node.oneOf?.some((a) => a.type === 'array');
  if (isCheckpointing) {
    kind = 'bool-or-const';
    control = el('select', { id });
    for (const v of [false, true, ...node.oneOf.filter((a) => a.const !== undefined).map((a) => a.const)]) control.append(el('option', { value: String(v), text: optionLabel(f.path, v) }));
  } else if (isTargets) {
    kind = 'list-or-const';
    control = el('input', { id, type: 'text', autocomplete: 'off', spellcheck: 'false', placeholder: 'all-linear or q_proj,v_proj' });
  } else if (node.type === 'array' && node.items?.enum) {
    kind = 'enum-set';
    control = el('div', { id, class: 'checks', role: 'group', 'aria-labelledby': `${id}-label` });
    for (const v of node.items.enum) {
      const cb = el('input', { type: 'checkbox', id: `${id}-${v}`, value: v, 'data-path': f.path, 'aria-describedby': describedBy });
      control.append(el('label', { class: 'check', for: `${id}-${v}` }, cb, ` ${v}`));
    }
  } else if (node.enum || (node.type === 'integer' && OPTION_LABELS[f.path])) {
    kind = 'enum';
    control = el('select', { id });
    if (f.auto) control.append(el('option', { value: '', text: f.auto }));
    const values = node.enum ?? Object.keys(OPTION_LABELS[f.path]).map(Number);
    for (const v of values) control.append(el('option', { value: String(v), text: optionLabel(f.path, v) }));
  } else if (node.type === 'boolean' && f.auto) {
    kind = 'bool-auto';  // optional switch whose default depends on other fields
    control = el('select', { id });
    for (const [value, text] of [['', f.auto], ['true', 'on'], ['false', 'off']]) control.append(el('option', { value, text }));
  } else if (node.type === 'boolean') {
    kind = 'bool';
    control = el('input', { id, type: 'checkbox' });
  } else if (node.type === 'integer' || node.type === 'number') {
    kind = 'number';
    control = el('input', {
      id, type: 'number', inputmode: node.type === 'integer' ? 'numeric' : 'decimal',
      min: node.minimum, max: node.maximum, step: f.step ?? (node.type === 'integer' ? 1 : 'any'), placeholder: f.placeholder,
      list: f.list ? `${id}-list` : undefined,
    });
  } else {
    kind = 'text';
    control = el('input', { id, type: 'text' });
  }
  if (kind !== 'enum-set') {
    control.dataset.path = f.path;
    control.setAttribute('aria-describedby', describedBy);
  }
  control.dataset.kind = kind;
  return control;
}

function buildForm() {
  const host = $('groups');
  const gpuGroup = $('g-gpu');
  for (const g of GROUPS) {
    const fields = FIELDS.filter((f) => f.group === g.id && schemaNode(app.schema, f.path));
    if (!fields.length) continue;
    const fs = el('fieldset', { class: 'group', id: `g-${g.id}` }, el('legend', { text: g.title }));
    let body = fs;
    if (g.collapsed) {
      body = el('details', { class: 'sub' }, el('summary', { text: 'Show' }));
      fs.append(body);
    }
    const grid = el('div', { class: 'grid2' });
    body.append(grid);
    for (const f of fields) {
      const node = schemaNode(app.schema, f.path);
      const control = buildControl(f, node);
      const id = fieldId(f.path);
      const wrap = el('div', { class: `field${control.dataset.kind === 'bool' ? ' field-check' : ''}`, 'data-field': f.path });
      const label = el('label', { for: control.dataset.kind === 'enum-set' ? undefined : id, id: `${id}-label`, text: f.label });
      if (control.dataset.kind === 'bool') wrap.append(el('div', { class: 'check' }, control, label));
      else wrap.append(label, control);
      if (f.list) {
        const dl = el('datalist', { id: `${id}-list` });
        for (const v of f.list) dl.append(el('option', { value: v }));
        wrap.append(dl);
      }
      wrap.append(el('small', { class: 'help', id: `${id}-help`, text: f.help }));
      grid.append(wrap);
    }
    if (g.id === 'engine' || g.id === 'framework') host.after(fs); // after the GPU group
    else host.append(fs);
  }
  // Order: model, task..parallel, GPU, engine, framework.
  const engine = $('g-engine');
  const framework = $('g-framework');
  if (engine) gpuGroup.after(engine);
  if (framework) (engine ?? gpuGroup).after(framework);

  const form = $('inputs');
  form.addEventListener('submit', (e) => e.preventDefault());
  form.addEventListener('input', onInput);
  form.addEventListener('change', onChange);
}

function readControl(c) {
  const kind = c.dataset.kind;
  const node = schemaNode(app.schema, c.dataset.path);
  switch (kind) {
    case 'bool': return c.checked;
    case 'bool-or-const': return c.value === 'true' ? true : c.value === 'false' ? false : c.value;
    case 'bool-auto': return c.value === '' ? undefined : c.value === 'true';
    case 'list-or-const': {
      const t = c.value.trim();
      return t === 'all-linear' ? t : t.split(',').map((s) => s.trim()).filter(Boolean);
    }
    case 'enum': {
      if (c.value === '') return undefined;
      const values = node.enum ?? Object.keys(OPTION_LABELS[c.dataset.path]).map(Number);
      return values.find((v) => String(v) === c.value) ?? c.value;
    }
    case 'number': {
      if (c.value.trim() === '') return c.validity.badInput ? c.value : null;
      return Number(c.value);
    }
    default: return c.value;
  }
}

// Candidate scenario with the changed control applied.
function candidateFrom(target) {
  const s = cloneChoices(app.choices);
  if (target.closest('#g-gpu')) {
    if ($('gpu').value === 'custom') {
      const gibs = Number($('gpu-mem').value);
      s.gpu = { name: $('gpu-name').value || 'Custom GPU', memory_bytes: Number.isFinite(gibs) && gibs > 0 ? Math.round(gibs * GIB) : 0 };
    } else s.gpu = $('gpu').value;
    return s;
  }
  const path = target.dataset.path;
  if (!path) return null;
  if (target.closest('.checks')) {
    setPath(s, path, [...target.closest('.checks').querySelectorAll('input:checked')].map((x) => x.value));
    return s;
  }
  const value = readControl(target);
  if (value === null) return null; // empty number box while typing
  setPath(s, path, value);
  return s;
}

function onInput(e) {
  const started = performance.now();
  const target = e.target;
  if (!target.closest('#groups, #g-gpu, #g-engine, #g-framework')) return;
  if (target.id === 'gpu' && target.value === 'custom') { $('gpu-custom').hidden = false; prefillCustomGpu(); }
  const cand = candidateFrom(target);
  if (!cand || sameChoices(cand, app.choices)) return;
  const r = compute(cand, { history: app.groupOpen ? 'replace' : 'push', started });
  if (r.ok) app.groupOpen = true;
}

function onChange(e) {
  onInput(e);
  app.groupOpen = false;
}

function prefillCustomGpu() {
  if (!$('gpu-mem').value) $('gpu-mem').value = gibNumber(app.result?.gpu?.capacity_bytes ?? 24 * GIB);
  if (!$('gpu-name').value) $('gpu-name').value = 'Custom GPU';
}

// Shows the normalized scenario in the controls (never touching the control being edited).
function syncForm() {
  const s = app.scenario;
  const active = document.activeElement;
  for (const c of document.querySelectorAll('#inputs [data-path]')) {
    const v = getPath(s, c.dataset.path);
    if (c.type === 'checkbox' && c.closest('.checks')) { c.checked = Array.isArray(v) && v.includes(c.value); continue; }
    if (c === active && c.dataset.kind !== 'bool' && c.tagName !== 'SELECT') continue;
    switch (c.dataset.kind) {
      case 'bool': c.checked = !!v; break;
      case 'list-or-const': c.value = Array.isArray(v) ? v.join(',') : (v ?? ''); break;
      case 'number': if (c.value === '' || Number(c.value) !== v) c.value = v ?? ''; break;
      case 'bool-auto': c.value = v === undefined ? '' : String(v); break;
      default: c.value = v === undefined ? '' : String(v);
    }
  }
  for (const f of FIELDS) {
    const wrap = document.querySelector(`[data-field="${CSS.escape(f.path)}"]`);
    if (wrap) wrap.hidden = f.show ? !f.show(s) : false;
  }
  for (const g of GROUPS) {
    const fs = $(`g-${g.id}`);
    if (fs) fs.hidden = (g.show && !g.show(s)) || ![...fs.querySelectorAll('[data-field]')].some((w) => !w.hidden);
  }
  // GPU
  const custom = typeof s.gpu === 'object';
  if (active !== $('gpu-name') && active !== $('gpu-mem')) {
    $('gpu').value = custom ? 'custom' : s.gpu;
    if (custom) { $('gpu-name').value = s.gpu.name ?? ''; $('gpu-mem').value = gibNumber(s.gpu.memory_bytes); }
  }
  $('gpu-custom').hidden = !custom && $('gpu').value !== 'custom';
  // Model
  const sel = $('preset');
  if (typeof s.model === 'string' && app.presetById.has(s.model)) sel.value = s.model;
  else sel.selectedIndex = -1;
}

// ---------------------------------------------------------------- model inputs

function presetText(p) { return `${p.display_name} ${p.id} ${p.family} ${p.ladder ?? ''} ${p.size_label} ${p.model_type}`.toLowerCase(); }

function fillPresets(query = '') {
  const tokens = query.toLowerCase().split(/\s+/).filter(Boolean);
  const sel = $('preset');
  sel.replaceChildren();
  const groups = new Map();
  let n = 0;
  for (const p of app.presets) {
    const text = presetText(p);
    if (!tokens.every((t) => text.includes(t))) continue;
    if (!groups.has(p.family)) groups.set(p.family, el('optgroup', { label: p.family }));
    groups.get(p.family).append(el('option', { value: p.id, text: p.display_name, title: p.id }));
    n++;
  }
  sel.append(...groups.values());
  if (!n) sel.append(el('option', { disabled: true, value: '', text: 'No preset matches — try the Hub or paste a config.json' }));
  if (app.scenario && typeof app.scenario.model === 'string') sel.value = app.scenario.model;
}

function useModel(model) {
  const s = cloneChoices(app.choices);
  s.model = model;
  return compute(s, { history: 'push' });
}

// ---------------------------------------------------------------- inline configs

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

// core.parseHfConfig in the worker, so that checking a config never blocks the page. Resolves
// with the core's answer, or an internal error if the worker fails; never hangs.
const pendingParses = new Map();
let parseSeq = 0;
function parseOffThread(text) {
  const w = matrixWorker();
  if (!w) return Promise.resolve().then(() => { try { return app.core.parseHfConfig(text); } catch (e) { return internalError(e); } });
  const id = `parse-${++parseSeq}`;
  return new Promise((resolve) => {
    pendingParses.set(id, resolve);
    w.postMessage({ id, parse: text });
  });
}
function onParseAnswer(e) {
  const resolve = pendingParses.get(e.data?.id);
  if (!resolve) return;
  pendingParses.delete(e.data.id);
  resolve(e.data.parsed ?? e.data.failed ?? internalError('no answer from the worker'));
}
function failPendingParses(reason) {
  for (const resolve of pendingParses.values()) resolve(internalError(reason));
  pendingParses.clear();
}

// Checks a config.json text (size, then the core in the worker), then uses it as the model.
// Only the newest call shows its outcome. Resolves to true when the config is in use.
let configSeq = 0;
async function useConfigText(text, statusEl, source) {
  const seq = ++configSeq;
  const bytes = utf8Length(text);
  if (bytes > CONFIG_MAX_BYTES) return refuseTooLarge(statusEl, source, bytes);
  showConfigStatus(statusEl, null, `${source}: checking…`);
  const parsed = await parseOffThread(text);
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

// The Hub base from the link (validated when the link was read; see hub.js).
export function hubBase() {
  const hub = parseHubBase(app.page.hub);
  return hub.ok ? hub.base : DEFAULT_HUB;
}

async function loadFromHub() {
  const status = $('hub-status');
  const id = $('hub-id').value.trim();
  status.classList.remove('bad', 'good');
  if (id.length > 200 || !/^[A-Za-z0-9][\w.-]*(\/[\w.-]+)?$/.test(id) || id.includes('..')) {
    status.classList.add('bad');
    status.textContent = 'Enter a model id like "Qwen/Qwen2.5-7B" (letters, digits, "-", "_", "." and one "/").';
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
      status.classList.add('bad');
      status.textContent = navigator.onLine === false
        ? 'You are offline: the Hub cannot be reached. Paste the config.json instead.'
        : `Could not reach the Hub (${new URL(url).origin}): network error or blocked. Paste the config.json instead.`;
      return;
    }
    if (res.status === 401 || res.status === 403) {
      status.classList.add('bad');
      status.textContent = `${id} is gated or private (HTTP ${res.status}): the Hub only serves it after you accept its license while logged in. Download its config.json on huggingface.co and paste it below.`;
      return;
    }
    if (res.status === 404) {
      status.classList.add('bad');
      status.textContent = `${id} was not found on the Hub (HTTP 404): check the spelling, or the repository has no config.json.`;
      return;
    }
    if (!res.ok) {
      status.classList.add('bad');
      status.textContent = `The Hub answered HTTP ${res.status} for ${id}; try again later or paste the config.json.`;
      return;
    }
    const declared = Number(res.headers.get('content-length'));
    if (declared > CONFIG_MAX_BYTES) { res.body?.cancel().catch(() => {}); refuseTooLarge(status, `Hub ${id}`, declared); return; }
    let text;
    try { text = res.body ? await readTextCapped(res.body) : ''; } catch (e) {
      if (e instanceof LimitError) { refuseTooLarge(status, `Hub ${id}`, CONFIG_MAX_BYTES, { atLeast: true }); return; }
      status.classList.add('bad');
      status.textContent = `The download of ${id} from the Hub broke off; try again or paste the config.json.`;
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

function wireModelInputs() {
  $('preset-search').addEventListener('input', (e) => fillPresets(e.target.value));
  $('preset-search').addEventListener('keydown', (e) => {
    if (e.key === 'ArrowDown' || e.key === 'Enter') {
      e.preventDefault();
      const sel = $('preset');
      const first = sel.querySelector('option:not([disabled])');
      if (!first) return;
      if (e.key === 'Enter' && first) { useModel(first.value); sel.value = first.value; }
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
}

function fillGpus() {
  const sel = $('gpu');
  const groups = new Map();
  for (const g of app.gpus) {
    const seg = g.segment || 'other';
    if (!groups.has(seg)) groups.set(seg, el('optgroup', { label: seg }));
    groups.get(seg).append(el('option', { value: g.id, text: g.name, title: exactBytes(g.usable_memory_bytes ?? g.memory_bytes) }));
  }
  sel.append(...groups.values(), el('option', { value: 'custom', text: 'Custom…' }));
}

// ---------------------------------------------------------------- rendering

function chartWidth(id) { return Math.floor($(id).clientWidth || 600); }

function render(r) {
  renderVerdict(r);
  renderModelInfo(r);
  renderBreakdown(r);
  $('bar').replaceChildren(stackedBar(r.gpu, chartWidth('bar')));
  renderTimeline(r);
  renderInference(r);
  renderCpu(r);
  renderWarnings(r);
}

function renderVerdict(r) {
  const g = r.gpu;
  const s = r.scenario;
  const gpus = s.parallel?.gpus ?? 1;
  const v = $('verdict');
  v.className = `verdict ${g.fits ? 'fits' : 'nofit'}`;
  const per = gpus > 1 ? ` per GPU (× ${gpus} GPUs)` : '';
  v.replaceChildren(
    el('div', { class: 'badge', text: g.fits ? 'Fits' : 'Does not fit' }),
    el('div', { class: 'big', title: exactBytes(g.device_total_bytes) },
      el('strong', { text: gib(g.device_total_bytes) }), `${per} of ${gib(g.capacity_bytes)} on `, el('span', { text: g.name })),
    el('div', { class: 'sub-verdict', title: exactBytes(Math.abs(g.headroom_bytes)) },
      g.fits ? `${gib(g.headroom_bytes)} headroom` : `${gib(-g.headroom_bytes)} short — try a memory saver, a smaller method or more GPUs`),
  );
  // Narrow screens: a small fixed summary, so the answer stays visible while editing.
  $('mini').className = `mini ${g.fits ? 'fits' : 'nofit'}`;
  $('mini').replaceChildren(el('strong', { text: g.fits ? 'Fits' : 'Does not fit' }), ` ${gib(g.device_total_bytes)} / ${gib(g.capacity_bytes)}`, el('span', { class: 'muted', text: ' · details ↓' }));
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
  const box = $('model-info');
  const inline = typeof r.scenario.model !== 'string';
  box.replaceChildren(
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
  const body = $('breakdown').tBodies[0];
  const rows = [];
  for (const [key, bytes] of orderedTerms(g.breakdown)) {
    const formula = r.explain?.[key] ?? '';
    const tr = el('tr', { class: bytes > 0 ? '' : 'zero' },
      el('th', { scope: 'row' }, el('span', { class: `swatch t-${key}`, 'aria-hidden': 'true' }), termLabel(key)),
      el('td', { class: 'num', title: exactBytes(bytes), text: gibNumber(bytes) }),
      el('td', { class: 'num', text: percent(bytes, g.device_total_bytes) }),
      el('td', { class: 'formula' }, formula ? el('details', {}, el('summary', { text: 'formula', title: formula }), el('code', { text: formula })) : el('span', { class: 'muted', text: '—' })));
    rows.push(tr);
  }
  if (!rows.length) rows.push(el('tr', {}, el('td', { colspan: 4, class: 'muted', text: 'The core returned no breakdown for this scenario.' })));
  body.replaceChildren(...rows);
  const foot = $('breakdown').tFoot;
  const line = (label, bytes, note) => el('tr', {},
    el('th', { scope: 'row', text: label }), el('td', { class: 'num', title: exactBytes(bytes), text: gibNumber(bytes) }),
    el('td', { class: 'num', text: percent(bytes, g.device_total_bytes) }), el('td', { class: 'muted small', text: note }));
  const loadLines = g.load_reserved_bytes > 0
    ? [line('Model load', g.phase_peaks.load, `peak allocated while the weights load; ${gibNumber(g.load_reserved_bytes)} GiB reserved then, kept for training`)]
    : [];
  foot.replaceChildren(
    ...loadLines,
    line('Peak allocated', g.peak_allocated_bytes, 'torch.cuda.max_memory_allocated()'),
    line('Reserved', g.reserved_bytes, 'torch.cuda.max_memory_reserved()'),
    line('Device total', g.device_total_bytes, 'what nvidia-smi shows'),
  );
}

function renderTimeline(r) {
  const box = $('timeline');
  if (!r.timeline?.length) { box.replaceChildren(el('p', { class: 'muted', text: 'The core returned no timeline for this scenario.' })); return; }
  box.replaceChildren(timelineChart(r.timeline, chartWidth('timeline'), { capacity: r.gpu.capacity_bytes }));
}

function dl(pairs) {
  const d = el('dl', { class: 'kv' });
  for (const [k, v, title] of pairs) d.append(el('dt', { text: k }), el('dd', { text: v, title }));
  return d;
}

function renderInference(r) {
  const box = $('inference-box');
  const i = r.inference;
  const t = r.training;
  box.hidden = !i && !t;
  if (t && !i) {
    const s = r.scenario.train;
    box.replaceChildren(el('h2', { class: 'h3', text: 'What fits on this GPU' }), dl([
      [`Largest micro-batch at ${int(s.seq_len)} tokens`, t.max_micro_batch_fits ? int(t.max_micro_batch_fits) : 'none fits'],
      [`Longest sequence at micro-batch ${int(s.micro_batch_size)}`, t.max_seq_len_fits ? `${int(t.max_seq_len_fits)} tokens` : 'none fits'],
    ]));
    return;
  }
  if (!i) return;
  box.replaceChildren(el('h2', { class: 'h3', text: 'Serving capacity' }), dl([
    ['KV cache per token', i.kv_bytes_per_token != null ? `${int(i.kv_bytes_per_token)} B` : '—'],
    // vLLM's pre-allocated pool only: other engines grow the cache with the requests.
    ...(r.scenario.inference.engine === 'vllm' ? [
      ['KV tokens that fit', i.kv_token_capacity != null ? int(i.kv_token_capacity) : '—'],
      ['Max concurrency at max length', i.max_concurrency != null ? int(i.max_concurrency) : '—'],
    ] : []),
    ['Longest context that fits', i.max_context_fits != null ? `${int(i.max_context_fits)} tokens` : '—'],
    ['Largest batch that fits', i.max_batch_fits != null ? int(i.max_batch_fits) : '—'],
    ['Smallest weight format that fits', i.smallest_format_fits || 'none'],
    ['GPUs needed (tensor parallel)', i.min_gpus != null ? int(i.min_gpus) : '—'],
  ]));
}

function renderCpu(r) {
  const box = $('cpu-box');
  box.hidden = !(r.cpu?.bytes > 0);
  if (box.hidden) return;
  const rows = orderedTerms(r.cpu.breakdown).map(([k, b]) => [termLabel(k), gib(b), [exactBytes(b), r.cpu_explain?.[k]].filter(Boolean).join(' — ')]);
  // Host RAM per rank and per node: each process on a host holds its own share (an 8-GPU node
  // offloading needs 8x what one rank offloads).
  const n = r.cpu.node_processes ?? 1;
  if (n > 1) rows.push(['Per node', gib(r.cpu.node_bytes), `${exactBytes(r.cpu.node_bytes)} — ${n} processes on the node, each holding the above (${n}x one rank)`]);
  box.replaceChildren(el('h2', { class: 'h3', text: n > 1 ? `Host RAM: ${gib(r.cpu.bytes)} per GPU, ${gib(r.cpu.node_bytes)} per node` : `Host RAM: ${gib(r.cpu.bytes)}` }), dl(rows));
  box.firstChild.title = exactBytes(r.cpu.bytes);
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

// ---------------------------------------------------------------- matrix

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

function matrixRows(s) {
  if (s.mode !== 'inference') return TRAIN_ROWS;
  const allowed = schemaNode(app.schema, 'inference.weights')?.enum ?? [];
  return INFER_FORMATS.filter((f) => allowed.includes(f)).map((f) => ({ label: FORMAT_LABELS[f] ?? f, set: { 'inference.weights': f } }));
}

function rowMatches(row, s) { return Object.entries(row.set).every(([p, v]) => getPath(s, p) === v); }

function fillLadders() {
  const ladders = [...new Set(app.presets.map((p) => p.ladder).filter(Boolean))].sort((a, b) => a.localeCompare(b));
  $('ladder').replaceChildren(...ladders.map((l) => el('option', { value: l, text: l })));
  $('ladder').addEventListener('change', (e) => { app.page.ladder = e.target.value; buildMatrix(); writeUrl('replace'); });
}

function currentLadder() {
  const ladders = [...$('ladder').options].map((o) => o.value);
  if (app.page.ladder && ladders.includes(app.page.ladder)) return app.page.ladder;
  const own = typeof app.scenario.model === 'string' ? app.presetById.get(app.scenario.model)?.ladder : null;
  return own || (ladders.includes('Llama 3.x') ? 'Llama 3.x' : ladders[0]);
}

let matrixTimer = 0;
function scheduleMatrix() {
  if (matrixTimer) return;
  matrixTimer = requestAnimationFrame(() => setTimeout(() => { matrixTimer = 0; buildMatrix(); }, 0));
}

// The matrix runs in a worker (matrix-worker.js) with its own core; if workers are unavailable it
// runs here. Only the newest request is drawn.
let worker = null;
let workerFailed = false;
let matrixSeq = 0;
function matrixWorker() {
  if (!worker && !workerFailed) {
    try {
      worker = new Worker(new URL('./matrix-worker.js', import.meta.url), { type: 'module' });
      worker.addEventListener('message', onParseAnswer);
      worker.onerror = () => { workerFailed = true; worker = null; failPendingParses('the worker stopped'); buildMatrix(); };
    } catch { workerFailed = true; }
  }
  return worker;
}

function buildMatrix() {
  const started = performance.now();
  const s = app.scenario;
  const choices = app.choices;
  const ladder = currentLadder();
  $('ladder').value = ladder;
  const cols = app.presets.filter((p) => p.ladder === ladder).sort((a, b) => a.params - b.params);
  const rows = matrixRows(s);
  const jobs = [];
  for (const row of rows) {
    for (const p of cols) {
      const cand = clone({ ...choices, model: p.id });
      for (const [path, v] of Object.entries(row.set)) setPath(cand, path, v);
      jobs.push(cand);
    }
  }
  const id = ++matrixSeq;
  const draw = (cells, computeMs) => {
    if (id !== matrixSeq) return; // a newer request is on its way
    drawMatrix({ s, rows, cols, jobs, cells });
    hook.lastMatrixMs = performance.now() - started;
    hook.lastMatrixComputeMs = computeMs;
    hook.lastMatrixCells = cells.length;
    $('matrix-timing').textContent = `${cells.length} estimates in ${computeMs.toFixed(0)} ms${worker ? ' (in a worker)' : ''}`;
  };
  const w = matrixWorker();
  if (w) {
    w.addEventListener('message', function onMsg(e) {
      if (e.data.id !== id) return;
      w.removeEventListener('message', onMsg);
      if (e.data.failed) { $('matrix-timing').textContent = clip(e.data.failed.errors[0].message); return; }
      draw(e.data.cells, e.data.ms);
    });
    w.postMessage({ id, jobs });
  } else {
    const t = performance.now();
    const cells = jobs.map((j) => {
      const r = estimate(j);
      return r.ok ? { ok: true, total: r.gpu.device_total_bytes, fits: r.gpu.fits, gpu: r.gpu.name } : { ok: false, errors: r.errors };
    });
    draw(cells, performance.now() - t);
  }
}

function drawMatrix({ s, rows, cols, jobs, cells }) {
  const table = $('matrix');
  const sizes = cols.map((p) => p.size_label);
  const head = el('tr', {}, el('th', { scope: 'col', text: s.mode === 'inference' ? 'Weights' : 'Method' }));
  for (const p of cols) {
    // Several models of one size in a ladder (Llama 3 / 3.1 / 3.3 70B): name them.
    const dup = sizes.filter((x) => x === p.size_label).length > 1;
    head.append(el('th', { scope: 'col', title: `${p.display_name} — ${p.id}`, text: dup ? p.display_name.replace(/^(.*?)\s+(\S+)$/, '$2 ($1)') : p.size_label }));
  }
  const body = el('tbody');
  let k = 0;
  for (const row of rows) {
    const tr = el('tr', {}, el('th', { scope: 'row', text: row.label }));
    for (const p of cols) {
      const cell = cells[k];
      const cand = jobs[k++];
      const td = el('td');
      if (!cell.ok) {
        td.append(el('span', { class: 'muted', title: cell.errors.map((e) => `${e.field_path}: ${e.message}`).join('\n'), text: '—' }));
      } else {
        const current = s.model === p.id && rowMatches(row, s);
        const b = el('button', {
          type: 'button', class: `cell ${cell.fits ? 'fits' : 'nofit'}${current ? ' current' : ''}`,
          title: `${p.display_name}, ${row.label}: ${gib(cell.total)} per GPU (${exactBytes(cell.total)}) — ${cell.fits ? 'fits' : 'does not fit'} on ${cell.gpu}`,
          'aria-label': `${p.display_name}, ${row.label}: ${gib(cell.total)}, ${cell.fits ? 'fits' : 'does not fit'}`,
          'data-model': p.id, 'data-row': row.label, text: gibNumber(cell.total),
        });
        if (current) b.setAttribute('aria-current', 'true');
        b.addEventListener('click', () => { compute(cand, { history: 'push' }); $('results').scrollIntoView?.({ block: 'start', behavior: 'smooth' }); });
        td.append(b);
      }
      tr.append(td);
    }
    body.append(tr);
  }
  table.replaceChildren(el('thead', {}, head), body);
}

// ---------------------------------------------------------------- copy link, resize, start

function wireCopy() {
  $('copy-link').addEventListener('click', async () => {
    await app.urlChain;
    const status = $('copy-status');
    try {
      await navigator.clipboard.writeText(location.href);
      status.textContent = 'Link copied';
    } catch {
      const input = el('input', { type: 'text', readonly: true, value: location.href, 'aria-label': 'Link to this scenario' });
      status.replaceChildren(input);
      input.select();
    }
    setTimeout(() => { status.textContent = ''; }, 4000);
  });
}

function wireResize() {
  let w = 0;
  let frame = 0;
  new ResizeObserver(() => {
    const nw = $('results').clientWidth;
    if (nw === w || !app.result) return;
    w = nw;
    cancelAnimationFrame(frame);
    frame = requestAnimationFrame(() => {
      $('bar').replaceChildren(stackedBar(app.result.gpu, chartWidth('bar')));
      renderTimeline(app.result);
    });
  }).observe($('results'));
}

async function start() {
  try {
    app.core = await loadCore();
  } catch (e) {
    $('loading').textContent = `The estimator could not be loaded (${e?.message ?? e}). This page needs WebAssembly and JavaScript modules.`;
    $('loading').classList.add('bad');
    return;
  }
  app.schema = app.core.schema();
  app.presets = app.core.presets();
  app.gpus = app.core.gpus();
  for (const p of app.presets) app.presetById.set(p.id, p);
  $('version').textContent = app.core.version();
  buildForm();
  fillGpus();
  fillLadders();
  wireModelInputs();
  wireCopy();
  $('loading').hidden = true;
  $('app').hidden = false;
  await restoreFromUrl();
  fillPresets();
  if (app.page.embed === '1') document.body.classList.add('embed');
  $('matrix-section').hidden = app.page.embed === '1';
  wireResize();
  window.addEventListener('popstate', () => { app.groupOpen = false; restoreFromUrl(); });
  hook.firstEstimateMs = performance.now() - t0;
  hook.ready = true;
  document.documentElement.dataset.ready = '1';
}

start();
