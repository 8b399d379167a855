// Loads the WASM core once (shared by the app and the embed widget) and wraps its string API in
// JSON. The module and its .wasm are resolved relative to this file, so the widget works from any
// page that loads embed.js from the site directory. A caller that already holds the .wasm bytes
// (the page, which shares them with its worker; the worker, which receives them) passes them as
// wasmBinary, and the module then downloads nothing. This module answers the estimate ops; the
// planner and the launch configs are in vramplan-full (full-core.js, loaded on demand).
import { scenarioJson } from './state.js';

let pending;
let schemaCache;

// The page's module links only the readers of the presets' families (docs/web.md, "Readers on
// demand"): a config of another family answers this code, and vramplan-full reads it.
export const needsFullReader = (r) => r?.ok === false && Array.isArray(r.errors) && r.errors.some((e) => e?.code === 'reader_on_demand');

export const WASM_URL = new URL('./vramplan.wasm', import.meta.url);

// The .wasm file's bytes (one download).
export async function fetchWasmBytes() {
  const res = await fetch(WASM_URL, { credentials: 'same-origin' });
  if (!res.ok) throw new Error(`${WASM_URL.pathname}: HTTP ${res.status}`);
  return res.arrayBuffer();
}

// wasmBinary: the .wasm bytes (ArrayBuffer), or undefined to let the module fetch them. Only the
// first call's argument counts: the core is created once per page or worker.
export function loadCore({ wasmBinary } = {}) {
  pending ??= import('./vramplan.mjs').then((m) => m.default(wasmBinary ? { wasmBinary } : {})).then((raw) => {
    // Every call goes through the core's op table (call(op, json) -> one JSON envelope), as the
    // CLI's `vramplan call OP` does (docs/api.md). Once vramplan-full is attached (useFull), a call
    // that this module answers `reader_on_demand` (a family it does not link) is asked of it instead.
    let full = null;
    const call = (op, text) => {
      const r = JSON.parse(raw.call(op, text));
      return full && needsFullReader(r) ? JSON.parse(full.call(op, text)) : r;
    };
    const payload = (op, key) => {
      const r = call(op, '');
      if (!r.ok) throw new Error(`${op}: ${r.errors?.[0]?.message ?? 'failed'}`);
      return r[key];
    };
    return {
      raw,
      estimate: (scenario) => call('estimate', scenarioJson(scenario)),
      // Totals only (no formulas, timeline labels or inverse searches): for the matrix.
      summary: (scenario) => call('summary', scenarioJson(scenario)),
      presets: () => payload('presets', 'presets'),
      gpus: () => payload('gpus', 'gpus'),
      parseHfConfig: (text) => call('parse_config', text),
      // Constant for a build: parsed once, shared read-only by every caller.
      schema: () => (schemaCache ??= payload('schema', 'schema')),
      version: () => payload('version', 'version'),
      // Attaches vramplan-full (full-core.js) for the families read on demand, from wasmBinary when
      // another realm already has its bytes; resolves with the bytes.
      useFull: async (wasmBinary) => {
        const loaded = await (await import('./full-core.js')).loadFullCore({ wasmBinary });
        full ??= loaded.raw;
        return loaded.bytes;
      },
      get hasFull() { return full !== null; },
    };
  });
  return pending;
}
