// Computes the methods x sizes matrix off the main thread (its own instance of the WASM core), so
// typing stays smooth while dozens of estimates run. Messages: {id, jobs: [scenario]} ->
// {id, ms, cells: [{ok, total, fits, gpu} | {ok: false, errors}]}.
import { loadCore } from './core.js';

const ready = loadCore();
self.onmessage = async (e) => {
  const core = await ready;
  if (e.data.capacity) {
    // The inverse questions for the scenario on screen (what fits), off the main thread.
    const r = core.estimate(e.data.capacity);
    self.postMessage({ id: e.data.id, capacity: r.ok ? { training: r.training, inference: r.inference } : null });
    return;
  }
  const started = performance.now();
  const cells = e.data.jobs.map((s) => {
    const r = core.summary(s);
    return r.ok ? { ok: true, total: r.device_total_bytes, fits: r.fits, gpu: r.gpu } : { ok: false, errors: r.errors };
  });
  self.postMessage({ id: e.data.id, ms: performance.now() - started, cells });
};
