// Shared setup for the browser tests: a static server for the built site (plus a stub of the
// Hugging Face Hub on the same origin, under /hub-stub/, so the page's CSP needs no exception),
// headless Chromium through playwright-core, and the native CLI for reference numbers.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { createStaticServer, staticHandler } from '../../scripts/static_server.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const SITE = path.resolve(ROOT, process.env.VRAMPLAN_SITE || 'build-wasm/site');
export const CLI = path.resolve(ROOT, process.env.VRAMPLAN_CLI || 'build/bin/vramplan');
const CHROMIUM = process.env.VRAMPLAN_CHROMIUM || '/usr/bin/chromium';

// Stub Hub: /hub-stub/<org>/<name>/resolve/main/config.json
//   ok/tiny-llama -> 200 with a small Llama config; gated/* -> 401; forbidden/* -> 403; else 404.
export const TINY_LLAMA = {
  architectures: ['LlamaForCausalLM'], model_type: 'llama', hidden_size: 512, intermediate_size: 1376,
  num_hidden_layers: 4, num_attention_heads: 8, num_key_value_heads: 4, vocab_size: 32000,
  max_position_embeddings: 2048, rms_norm_eps: 1e-5, tie_word_embeddings: false, torch_dtype: 'bfloat16',
};
export const hubRequests = [];

function hubStub(req, res) {
  const m = /^\/hub-stub\/([^/]+\/[^/]+)\/resolve\/main\/config\.json$/.exec(new URL(req.url, 'http://x').pathname);
  hubRequests.push(req.url);
  if (!m) { res.writeHead(404).end('not found'); return; }
  const id = decodeURIComponent(m[1]);
  if (id === 'ok/tiny-llama') { res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(TINY_LLAMA)); return; }
  if (id.startsWith('gated/')) { res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"Access to model is restricted"}'); return; }
  if (id.startsWith('forbidden/')) { res.writeHead(403).end('forbidden'); return; }
  if (id.startsWith('broken/')) { res.writeHead(200, { 'content-type': 'application/json' }).end('{"model_type": "llama", "hidden_size": '); return; }
  if (id.startsWith('drop/')) { req.socket.destroy(); return; }
  res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Repository not found"}');
}

export async function startServer() {
  if (!fs.existsSync(path.join(SITE, 'vramplan.wasm'))) throw new Error(`no built site in ${SITE} (set VRAMPLAN_SITE)`);
  const statics = createStaticServer(SITE);
  const listener = staticHandler(SITE);
  statics.removeAllListeners('request');
  statics.on('request', (req, res) => (req.url.startsWith('/hub-stub/') ? hubStub(req, res) : listener(req, res)));
  await new Promise((resolve) => statics.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${statics.address().port}`;
  return { base, close: () => new Promise((r) => { statics.closeAllConnections?.(); statics.close(r); }) };
}

export async function startBrowser() {
  // chromium.launch() gives every run a fresh temporary profile (--user-data-dir) of its own.
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run'],
  });
  return {
    browser,
    close: () => browser.close(),
  };
}

// A page that records console errors, page errors and dialogs (all must stay empty).
export async function openPage(browser, url, { viewport = { width: 1280, height: 900 }, colorScheme = 'light' } = {}) {
  const context = await browser.newContext({ viewport, colorScheme });
  const page = await context.newPage();
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console.error: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('dialog', async (d) => { problems.push(`dialog: ${d.message()}`); await d.dismiss(); });
  if (url) await gotoReady(page, url);
  return { page, context, problems };
}

export async function gotoReady(page, url) {
  await page.goto(url);
  await page.waitForFunction(() => window.__vramplan?.ready === true, null, { timeout: 20000 });
}

// Waits until the URL reflects the shown scenario.
export const settled = (page) => page.evaluate(() => window.__vramplan.settled());

export function cli(scenario) {
  const out = execFileSync(CLI, ['estimate', '-'], { input: JSON.stringify(scenario), encoding: 'utf8' });
  return JSON.parse(out);
}

export const pageScenario = (page) => page.evaluate(() => window.__vramplan.scenario);
export const pageResult = (page) => page.evaluate(() => window.__vramplan.result);
