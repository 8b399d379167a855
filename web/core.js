// Loads the WASM core once (shared by the app and the embed widget) and wraps its string API in
// JSON. The module and its .wasm are resolved relative to this file, so the widget works from any
// page that loads embed.js from the site directory.
import { scenarioJson } from './state.js';

let pending;
let schemaCache;

export function loadCore() {
  pending ??= import('./vramplan.mjs').then((m) => m.default()).then((raw) => ({
    raw,
    estimate: (scenario) => JSON.parse(raw.estimate(scenarioJson(scenario))),
    // Everything but the inverse searches (max batch / sequence / context): for redraws as you type.
    fast: (scenario) => JSON.parse(raw.estimateFast(scenarioJson(scenario))),
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
