// Computes off the main thread (its own instance of the WASM core), so typing stays smooth while
// dozens of estimates run. The page sends the .wasm bytes it already downloaded as the first
// message, so the worker never fetches the 600 KB module a second time. Messages:
//   {init: ArrayBuffer}     -> (no answer) the core is created from these bytes
//   {id, jobs: [scenario]}  -> {id, ms, cells: [{ok, total, fits, gpu, verdict, kv} | {ok: false, errors}]}
//   {id, parse: text}       -> {id, parsed: core.parseHfConfig(text)} (a pasted/fetched config.json)
//   {id, plan: request}     -> {id, ms, planned} (plans.js): the plan op of full-core.js, loaded on demand
// A core call that throws answers {ok: false, errors: [{code: 'internal', ...}]}, and a core that
// cannot be created answers {id, failed}: every message gets its answer, so the page never waits
// forever.
import { loadCore } from './core.js';

const internal = (e) => ({ ok: false, errors: [{ code: 'internal', field_path: '', message: `the estimator failed: ${String(e?.message ?? e).slice(0, 200)}` }] });
const guarded = (f) => { try { return f(); } catch (e) { return internal(e); } };

let init;
const ready = new Promise((resolve) => { init = resolve; }).then((bytes) => loadCore({ wasmBinary: bytes }));
ready.catch(() => {}); // reported to the page in the answer to its next message

self.onmessage = async (e) => {
  if (e.data.init !== undefined) { init(e.data.init); return; }
  let core;
  try { core = await ready; } catch (err) {
    self.postMessage({ id: e.data.id, failed: internal(err) });
    return;
  }
  if (e.data.parse !== undefined) {
    self.postMessage({ id: e.data.id, parsed: guarded(() => core.parseHfConfig(e.data.parse)) });
    return;
  }
  const started = performance.now();
  if (e.data.plan !== undefined) {
    self.postMessage({ id: e.data.id, ...await (await import('./full-core.js')).plan(e.data.plan) });
    return;
  }
  const cells = e.data.jobs.map((s) => {
    const r = guarded(() => core.summary(s));
    return r.ok ? { ok: true, total: r.device_total_bytes, fits: r.fits, gpu: r.gpu, verdict: r.verdict, kv: r.kv_token_capacity } : { ok: false, errors: r.errors };
  });
  self.postMessage({ id: e.data.id, ms: performance.now() - started, cells });
};
