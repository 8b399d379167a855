// The full core, loaded on demand: vramplan-full.mjs + .wasm, the module with every op of the
// core's table (docs/api.md), for what the page needs only sometimes: the launch configs' import
// and export (launch-config.js, when the box is first opened) and the planner (matrix-worker.js,
// the first time the Plans panel asks), and the model families the page's module does not read
// (core.js, useFull). The page's own module (vramplan.wasm, core.js) answers the estimate ops
// only, so the first download carries neither. Fetched once per page or worker, or created from
// bytes another realm already fetched (wasmBinary; only the first call's argument counts).
let pending;

export const FULL_WASM_URL = new URL('./vramplan-full.wasm', import.meta.url);

export function loadFullCore({ wasmBinary } = {}) {
  pending ??= (async () => {
    let bytes = wasmBinary;
    if (!bytes) {
      const res = await fetch(FULL_WASM_URL, { credentials: 'same-origin' });
      if (!res.ok) throw new Error(`${FULL_WASM_URL.pathname}: HTTP ${res.status}`);
      bytes = await res.arrayBuffer();
    }
    const raw = await (await import('./vramplan-full.mjs')).default({ wasmBinary: bytes });
    // call(op, request object) -> the op's envelope, parsed; bytes: for another realm.
    return { raw, bytes, call: (op, request) => JSON.parse(raw.call(op, JSON.stringify(request))) };
  })();
  return pending;
}

// The plan op for the Plans panel (in the worker, or here without one): resolves {planned, ms}, ms
// the search alone (not the module's first download); never throws.
export async function plan(request) {
  let planned;
  let t = performance.now();
  try {
    const full = await loadFullCore();
    t = performance.now();
    planned = full.call('plan', request);
  } catch (e) {
    planned = { ok: false, errors: [{ code: 'internal', field_path: '', message: `the planner failed: ${String(e?.message ?? e).slice(0, 200)}` }] };
  }
  return { planned, ms: performance.now() - t };
}
