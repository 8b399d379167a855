// Loads the built Embind modules under node (3.1.6's MODULARIZE build would try fetch() on a file
// path, so the .wasm bytes are passed in directly): the page's module (vramplan.mjs, the core op
// table) and the on-demand one with every op (vramplan-full.mjs: plan, import, export too).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// The same variables as the browser tests (tests/web/harness.mjs): scripts/test points VRAMPLAN_CLI
// at the sanitizer tree's CLI.
export const SITE = path.resolve(ROOT, process.env.VRAMPLAN_SITE || 'build-wasm/site');
export const CLI = path.resolve(ROOT, process.env.VRAMPLAN_CLI || 'build/bin/vramplan');

async function load(name) {
  const { default: create } = await import(pathToFileURL(path.join(SITE, `${name}.mjs`)).href);
  return create({ wasmBinary: fs.readFileSync(path.join(SITE, `${name}.wasm`)) });
}

export const loadModule = () => load('vramplan');
export const loadFullModule = () => load('vramplan-full');
