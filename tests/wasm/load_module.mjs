// Loads the built Embind module under node (3.1.6's MODULARIZE build would try fetch() on a file
// path, so the .wasm bytes are passed in directly).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const SITE = path.join(ROOT, 'build-wasm/site');
export const CLI = path.join(ROOT, 'build/bin/vramplan');

export async function loadModule() {
  const { default: createVramplan } = await import(pathToFileURL(path.join(SITE, 'vramplan.mjs')).href);
  return createVramplan({ wasmBinary: fs.readFileSync(path.join(SITE, 'vramplan.wasm')) });
}
