// The calculator page, wiring only: the core (compute.js), the store (store.js) and the views.
// One edit = one candidate scenario = one estimate = one store update; the views redraw from it.
import { startCompute, internalError } from './compute.js';
import { needsFullReader } from './core.js';
import { createStore, EMPTY_STATE } from './store.js';
import { createForm, sameChoices } from './form.js';
import { createModelPicker } from './model-picker.js';
import { renderResults } from './results.js';
import { createChartsView } from './charts.js';
import { createMatrix } from './matrix.js';
import { createUrlSync, readLink } from './url.js';
import { showNotice } from './notices.js';

const $ = (id) => document.getElementById(id);
const t0 = performance.now();

const store = createStore();
const url = createUrlSync();

// Test/debug hook: read-only copies of the store and timings (docs/web.md).
const hook = {
  ready: false, lastRenderMs: null, firstEstimateMs: null, lastMatrixMs: null, lastPlanMs: null, renders: 0, estimates: 0,
  get scenario() { return structuredClone(store.get().scenario); },
  get choices() { return structuredClone(store.get().choices); },
  get result() { return structuredClone(store.get().result); },
  settled: () => url.settled(),
};
window.__vramplan = hook;

// The core's answer r for candidate choices into the store (errors only, if r is not ok) and the
// URL. history: 'push' | 'replace' | 'none'; started: the input event's timeStamp.
function apply(candidate, r, { history = 'push', started = performance.now() } = {}) {
  if (!r.ok) { store.set({ errors: r.errors }); return r; }
  const previous = store.get();
  try {
    store.set({ choices: candidate, scenario: r.scenario, result: r, errors: EMPTY_STATE.errors });
  } catch (e) {
    // A result the page cannot draw (a core bug): say so, keep the previous scenario.
    const bad = internalError(e);
    try { store.set({ ...previous, errors: bad.errors }); } catch { /* the errors are shown either way */ }
    return bad;
  }
  hook.lastRenderMs = performance.now() - started;
  hook.renders++;
  if (history !== 'none') url.write(candidate, store.get().page, history);
  return r;
}

let compute;
// The candidate waiting for vramplan-full (a family the page's module does not read), if any.
let awaitingFull = null;
// One estimate for one candidate (the only place the page asks the core for the shown result).
function estimate(candidate) {
  hook.estimates++;
  return compute.estimate(candidate);
}
// commit's answer for a family read on demand is the core's `reader_on_demand` error, shown while
// vramplan-full loads; the candidate is then committed again if no other edit came in between
// (docs/web.md, "Readers on demand").
function commit(candidate, opts) {
  const r = apply(candidate, estimate(candidate), opts);
  if (!needsFullReader(r)) { awaitingFull = null; return r; }
  awaitingFull = candidate;
  compute.loadFull().then(
    () => { if (awaitingFull === candidate) { awaitingFull = null; commit(candidate, { ...opts, history: 'replace' }); } },
    (e) => { if (awaitingFull === candidate) store.set({ errors: internalError(`vramplan-full could not be loaded (${e?.message ?? e})`).errors }); },
  );
  return r;
}
// The estimate of a link's scenario, vramplan-full attached first when its family needs it.
async function estimateLoaded(candidate) {
  const r = estimate(candidate);
  if (!needsFullReader(r)) return r;
  try { await compute.loadFull(); } catch (e) { return internalError(`vramplan-full could not be loaded (${e?.message ?? e})`); }
  return estimate(candidate);
}

async function restore() {
  const link = await readLink(location.search, compute.core.schema(), estimateLoaded);
  store.set({ page: Object.freeze(link.page) });
  showNotice($('notice'), link.notes.length ? 'This link has problems; the rest of it was loaded:' : '', link.notes);
  apply(link.choices, link.result, { history: 'none' });
}

function wireCopy() {
  $('copy-link').addEventListener('click', async () => {
    await url.settled();
    const status = $('copy-status');
    try {
      await navigator.clipboard.writeText(location.href);
      status.textContent = 'Link copied';
    } catch {
      const input = document.createElement('input');
      Object.assign(input, { type: 'text', readOnly: true, value: location.href });
      input.setAttribute('aria-label', 'Link to this scenario');
      status.replaceChildren(input);
      input.select();
    }
    setTimeout(() => { status.textContent = ''; }, 4000);
  });
}

async function start() {
  try {
    compute = await startCompute();
  } catch (e) {
    $('loading').textContent = `The estimator could not be loaded (${e?.message ?? e}). This page needs WebAssembly and JavaScript modules.`;
    $('loading').classList.add('bad');
    return;
  }
  const { core } = compute;
  // Test/benchmark hook: one planner call in the worker, {planned, ms} (docs/web.md).
  window.__vramplanPlan = (request) => compute.plan(request);
  const schema = core.schema();
  const presets = core.presets();
  const presetById = new Map(presets.map((p) => [p.id, p]));
  $('version').textContent = core.version();

  const form = createForm({ schema });
  const picker = createModelPicker({
    presets, gpus: core.gpus(), presetById, store, commit, parse: compute.parse, hub: () => store.get().page.hub,
  });
  const charts = createChartsView(() => store.get().result);
  const matrix = createMatrix({
    schema, presets, presetById, store, commit, hook, summaries: compute.summaries, inWorker: () => compute.inWorker,
    ladder: {
      get: () => store.get().page.ladder,
      set: (ladder) => { const { choices, page } = store.set({ page: Object.freeze({ ...store.get().page, ladder }) }); url.write(choices, page, 'replace'); },
    },
  });

  // The Plans panel (plans.js, loaded the first time a result needs it): a job that does not fit,
  // or fits with less than 5% headroom.
  let plans = null;
  const needsPlans = (r) => r && r.scenario && (!r.gpu.fits || r.gpu.headroom_bytes < 0.05 * r.gpu.capacity_bytes);
  store.subscribe(async (s, prev) => {
    if (s.result === prev.result || !s.result) return;
    if (!needsPlans(s.result)) { if (plans) (await plans).hide(); return; }
    plans ??= import('./plans.js').then((m) => m.createPlans({ store, commit, plan: (req) => compute.plan(req), hook }));
    (await plans).update();
  });

  // The views, each redrawn from the store when its part of the state changed.
  store.subscribe((s, prev) => { if (s.result !== prev.result && s.result) renderResults(s.result); });
  store.subscribe((s, prev) => { if (s.result !== prev.result && s.result) charts.render(s.result); });
  store.subscribe((s, prev) => { if (s.scenario !== prev.scenario && s.scenario) { form.sync(s.scenario); picker.sync(s.scenario); } });
  store.subscribe((s, prev) => { if (s.errors !== prev.errors) form.showErrors(s.errors); });
  store.subscribe((s, prev) => { if (s.choices !== prev.choices && s.choices) matrix.schedule(); });

  // The first input of a gesture pushes a history entry, the next ones replace it; change ends it.
  let gestureOpen = false;
  const onInput = (e) => {
    const { choices } = store.get();
    const cand = picker.gpuCandidate(choices, e.target) ?? form.candidate(choices, e.target);
    if (!cand) return;
    if (sameChoices(cand, choices)) {
      // back to the shown scenario after a rejected edit
      if (store.get().errors.length) { store.set({ errors: EMPTY_STATE.errors }); form.sync(store.get().scenario); }
      return;
    }
    const r = commit(cand, { history: gestureOpen ? 'replace' : 'push', started: e.timeStamp });
    if (r.ok) gestureOpen = true;
  };
  const inputs = $('inputs');
  inputs.addEventListener('submit', (e) => e.preventDefault());
  inputs.addEventListener('input', onInput);
  inputs.addEventListener('change', (e) => { onInput(e); gestureOpen = false; });
  wireCopy();
  // Launch configs (web/launch-config.js): loaded the first time the box is opened.
  $('launch-box').addEventListener('toggle', () => import('./launch-config.js').then((m) => m.createLaunchConfig({ root: $('launch-box'), store, commit })), { once: true });
  $('launch-config').hidden = false;

  $('loading').hidden = true;
  $('app').hidden = false;
  await restore();
  picker.fillPresets();
  const embed = store.get().page.embed === '1';
  if (embed) document.body.classList.add('embed');
  $('matrix-section').hidden = embed;
  window.addEventListener('popstate', () => { gestureOpen = false; restore(); });
  hook.firstEstimateMs = performance.now() - t0;
  hook.ready = true;
  document.documentElement.dataset.ready = '1';
}

start();
