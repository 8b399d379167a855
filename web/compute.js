// The page's access to the core: the .wasm is downloaded once, instantiated here for the estimate
// on screen (the full result, "what fits" included) and its bytes handed to the worker
// (matrix-worker.js) for the matrix and config checks.
import { loadCore, fetchWasmBytes, needsFullReader } from './core.js';
import { clip } from './limits.js';

export const internalError = (e) => ({ ok: false, errors: [{ code: 'internal', field_path: '', message: `the estimator failed: ${clip(e?.message ?? e)}` }] });

export async function startCompute() {
  const bytes = await fetchWasmBytes();
  let worker = null;
  try {
    worker = new Worker(new URL('./matrix-worker.js', import.meta.url), { type: 'module' });
    worker.postMessage({ init: bytes });
  } catch { worker = null; }
  let core;
  try { core = await loadCore({ wasmBinary: bytes }); } catch (e) { worker?.terminate(); throw e; }

  const pending = new Map(); // id -> resolve
  let seq = 0;
  const failAll = (reason) => {
    for (const resolve of pending.values()) resolve({ failed: internalError(reason) });
    pending.clear();
  };
  if (worker) {
    worker.addEventListener('message', (e) => {
      const resolve = pending.get(e.data?.id);
      if (!resolve) return;
      pending.delete(e.data.id);
      resolve(e.data);
    });
    worker.addEventListener('error', () => { worker = null; failAll('the worker stopped'); });
  }
  const ask = (message) => new Promise((resolve) => {
    const id = ++seq;
    pending.set(id, resolve);
    worker.postMessage({ id, ...message });
  });

  // The core's answer for a (sparse) scenario, never a throw: a core failure becomes an error value.
  function estimate(scenario) {
    try {
      const r = core.estimate(scenario);
      if (!r || typeof r !== 'object' || (r.ok !== true && !Array.isArray(r.errors))) throw new Error('the core returned no result');
      return r;
    } catch (e) {
      return internalError(e);
    }
  }

  const summaryCell = (s) => {
    let r;
    try { r = core.summary(s); } catch (e) { r = internalError(e); }
    return r.ok ? { ok: true, total: r.device_total_bytes, fits: r.fits, gpu: r.gpu, verdict: r.verdict, kv: r.kv_token_capacity } : { ok: false, errors: r.errors };
  };

  return {
    core,
    estimate,
    get inWorker() { return worker !== null; },
    // Matrix totals: resolves {cells, ms} or {failed}. In the worker when there is one.
    async summaries(jobs) {
      if (!worker) {
        const t = performance.now();
        let cells = jobs.map(summaryCell);
        if (!core.hasFull && cells.some((c) => needsFullReader(c))) {
          try { await core.useFull(); cells = jobs.map(summaryCell); } catch (e) { return { failed: internalError(e) }; }
        }
        return { cells, ms: performance.now() - t };
      }
      return ask({ jobs });
    },
    // The planner off the main thread: resolves {planned, ms} (never hangs).
    async plan(request) {
      if (!worker) return (await import('./full-core.js')).plan(request);
      const a = await ask({ plan: request });
      return a.planned ? a : { planned: a.failed ?? internalError('no answer from the worker') };
    },
    // core.parseHfConfig off the main thread: resolves with the core's answer (never hangs).
    // A config of a family the page's module does not read is read by vramplan-full, which is then
    // attached here too, so that the estimates that follow find it (docs/web.md, "Readers on demand").
    async parse(text) {
      if (!worker) {
        try {
          let r = core.parseHfConfig(text);
          if (needsFullReader(r)) { await core.useFull(); r = core.parseHfConfig(text); }
          return r;
        } catch (e) { return internalError(e); }
      }
      const a = await ask({ parse: text });
      if (a.full) { try { await core.useFull(a.full); } catch (e) { return internalError(e); } }
      return a.parsed ?? a.failed ?? internalError('no answer from the worker');
    },
    // Attaches vramplan-full for the families read on demand (resolves when it can answer).
    // Its bytes go to the worker, which then needs no download of its own for the matrix.
    loadFull: async () => {
      const had = core.hasFull;
      const bytes = await core.useFull();
      if (!had) worker?.postMessage({ full: bytes });
    },
  };
}
