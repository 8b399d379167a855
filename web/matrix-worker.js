// Computes off the main thread (its own instance of the WASM core), so typing stays smooth while
// dozens of estimates run. Messages:
//   {id, jobs: [scenario]}  -> {id, ms, cells: [{ok, total, fits, gpu} | {ok: false, errors}]}
//   {id, capacity: scenario} -> {id, capacity: {training, inference} | null}
//   {id, parse: text}       -> {id, parsed: core.parseHfConfig(text)} (a pasted/fetched config.json)
// A core call that throws answers {ok: false, errors: [{code: 'internal', ...}]}: every message
// gets its answer, so the page never waits forever.
import { loadCore } from './core.js';

const internal = (e) => ({ ok: false, errors: [{ code: 'internal', field_path: '', message: `the estimator failed: ${String(e?.message ?? e).slice(0, 200)}` }] });
const guarded = (f) => { try { return f(); } catch (e) { return internal(e); } };

const ready = loadCore();
self.onmessage = async (e) => {
  let core;
  try { core = await ready; } catch (err) {
    self.postMessage({ id: e.data.id, failed: internal(err) });
    return;
  }
  if (e.data.parse !== undefined) {
    self.postMessage({ id: e.data.id, parsed: guarded(() => core.parseHfConfig(e.data.parse)) });
    return;
  }
  if (e.data.capacity) {
    // The inverse questions for the scenario on screen (what fits), off the main thread.
    const r = guarded(() => core.estimate(e.data.capacity));
    self.postMessage({ id: e.data.id, capacity: r.ok ? { training: r.training, inference: r.inference } : null });
    return;
  }
  const started = performance.now();
  const cells = e.data.jobs.map((s) => {
    const r = guarded(() => core.summary(s));
    return r.ok ? { ok: true, total: r.device_total_bytes, fits: r.fits, gpu: r.gpu } : { ok: false, errors: r.errors };
  });
  self.postMessage({ id: e.data.id, ms: performance.now() - started, cells });
};
