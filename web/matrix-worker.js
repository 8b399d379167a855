// Computes off the main thread (its own instance of the WASM core), so typing stays smooth while
// dozens of estimates run. The page sends the .wasm bytes it already downloaded as the first
// message, so the worker never fetches the 600 KB module a second time. Messages:
//   {init: ArrayBuffer}     -> (no answer) the core is created from these bytes
//   {full: ArrayBuffer}     -> (no answer) vramplan-full's bytes, fetched by the page: used if needed
//   {id, jobs: [scenario]}  -> {id, ms, cells: [{ok, total, fits, gpu, verdict, kv} | {ok: false, errors}]}
//   {id, parse: text}       -> {id, parsed: core.parseHfConfig(text), full} (a pasted/fetched config.json;
//                              full: vramplan-full's bytes when it read it, which the page then attaches too)
//   {id, plan: request}     -> {id, ms, planned} (plans.js): the plan op of full-core.js, loaded on demand
// A core call that throws answers {ok: false, errors: [{code: 'internal', ...}]}, and a core that
// cannot be created answers {id, failed}: every message gets its answer, so the page never waits
// forever.
import { loadCore, needsFullReader } from './core.js';

const internal = (e) => ({ ok: false, errors: [{ code: 'internal', field_path: '', message: `the estimator failed: ${String(e?.message ?? e).slice(0, 200)}` }] });
const guarded = (f) => { try { return f(); } catch (e) { return internal(e); } };
// A family the page's module does not read: attach vramplan-full once and ask again
// (docs/web.md, "Readers on demand"). full: its bytes when it was needed.
async function answered(core, f) {
  const r = guarded(f);
  if (!needsFullReader(r)) return { r, full: false };
  let bytes;
  try { bytes = await core.useFull(fullBytes); } catch (e) { return { r: internal(e) }; }
  return { r: guarded(f), full: bytes };
}

let init;
let fullBytes; // vramplan-full's bytes from the page, if it fetched them first
const ready = new Promise((resolve) => { init = resolve; }).then((bytes) => loadCore({ wasmBinary: bytes }));
ready.catch(() => {}); // reported to the page in the answer to its next message

self.onmessage = async (e) => {
  if (e.data.init !== undefined) { init(e.data.init); return; }
  if (e.data.full !== undefined) { fullBytes = e.data.full; return; }
  let core;
  try { core = await ready; } catch (err) {
    self.postMessage({ id: e.data.id, failed: internal(err) });
    return;
  }
  if (e.data.parse !== undefined) {
    const { r, full } = await answered(core, () => core.parseHfConfig(e.data.parse));
    self.postMessage({ id: e.data.id, parsed: r, full });
    return;
  }
  const started = performance.now();
  if (e.data.plan !== undefined) {
    self.postMessage({ id: e.data.id, ...await (await import('./full-core.js')).plan(e.data.plan) });
    return;
  }
  const cells = [];
  for (const s of e.data.jobs) {
    const { r } = await answered(core, () => core.summary(s));
    cells.push(r.ok ? { ok: true, total: r.device_total_bytes, fits: r.fits, gpu: r.gpu, verdict: r.verdict, kv: r.kv_token_capacity } : { ok: false, errors: r.errors });
  }
  self.postMessage({ id: e.data.id, ms: performance.now() - started, cells });
};
