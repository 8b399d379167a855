// Loads the WASM core once (shared by the app and the embed widget) and wraps its string API in
// JSON. The module and its .wasm are resolved relative to this file, so the widget works from any
// page that loads embed.js from the site directory. A caller that already holds the .wasm bytes
// (the page, which shares them with its worker; the worker, which receives them) passes them as
// wasmBinary, and the module then downloads nothing.
import { scenarioJson } from './state.js';

let pending;
let schemaCache;

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
  pending ??= import('./vramplan.mjs').then((m) => m.default(wasmBinary ? { wasmBinary } : {})).then((raw) => ({
    raw,
    estimate: (scenario) => JSON.parse(raw.estimate(scenarioJson(scenario))),
    // Totals only (no formulas, timeline labels or inverse searches): for the matrix.
    summary: (scenario) => JSON.parse(raw.estimateSummary(scenarioJson(scenario))),
    presets: () => JSON.parse(raw.listPresets()),
    gpus: () => JSON.parse(raw.listGpus()),
    parseHfConfig: (text) => JSON.parse(raw.parseHfConfig(text)),
    // Constant for a build: parsed once, shared read-only by every caller.
    schema: () => (schemaCache ??= JSON.parse(raw.schema())),
    version: () => raw.version(),
  }));
  return pending;
}
