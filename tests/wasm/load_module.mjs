// Loads the built Embind module under node (3.1.6's MODULARIZE build would try fetch() on a file
// path, so the .wasm bytes are passed in directly).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// The same variables as the browser tests (tests/web/harness.mjs): scripts/test points VRAMPLAN_CLI
// at the sanitizer tree's CLI.
export const SITE = path.resolve(ROOT, process.env.VRAMPLAN_SITE || 'build-wasm/site');
export const CLI = path.resolve(ROOT, process.env.VRAMPLAN_CLI || 'build/bin/vramplan');

export async function loadModule() {
  const { default: createVramplan } = await import(pathToFileURL(path.join(SITE, 'vramplan.mjs')).href);
  return createVramplan({ wasmBinary: fs.readFileSync(path.join(SITE, 'vramplan.wasm')) });
}
