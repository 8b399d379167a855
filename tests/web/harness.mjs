// Shared setup for the browser tests: a static server for the built site, headless Chromium
// through playwright-core, a stub of the Hugging Face Hub (Playwright routes on the allowed Hub
// origins, so the page keeps its production CSP and Hub allow-list and nothing leaves the machine),
// and the native CLI for reference numbers.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { createStaticServer } from '../../scripts/static_server.mjs';
import { HUB_ORIGINS } from '../../web/hub.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const SITE = path.resolve(ROOT, process.env.VRAMPLAN_SITE || 'build-wasm/site');
export const CLI = path.resolve(ROOT, process.env.VRAMPLAN_CLI || 'build/bin/vramplan');
const CHROMIUM = process.env.VRAMPLAN_CHROMIUM || '/usr/bin/chromium';

// Stub Hub: <origin>/<org>/<name>/resolve/main/config.json
//   ok/tiny-llama -> 200 with a small Llama config; gated/* -> 401; forbidden/* -> 403;
//   broken/* -> 200 with truncated JSON; big/* -> 200 with a body over the page's size limit;
//   drop/* -> connection reset; else 404.
export const TINY_LLAMA = {
  architectures: ['LlamaForCausalLM'], model_type: 'llama', hidden_size: 512, intermediate_size: 1376,
  num_hidden_layers: 4, num_attention_heads: 8, num_key_value_heads: 4, vocab_size: 32000,
  max_position_embeddings: 2048, rms_norm_eps: 1e-5, tie_word_embeddings: false, torch_dtype: 'bfloat16',
};
export const hubRequests = []; // every URL the stub answered
export const hubStub = { offline: false }; // true: the stub fails every request as a network error

function hubAnswer(pathname) {
  const m = /^\/([^/]+\/[^/]+)\/resolve\/main\/config\.json$/.exec(pathname);
  const json = (status, body) => ({ status, contentType: 'application/json', body });
  if (!m) return json(404, '{"error":"not found"}');
  const id = decodeURIComponent(m[1]);
  if (id === 'ok/tiny-llama') return json(200, JSON.stringify(TINY_LLAMA));
  if (id.startsWith('gated/')) return json(401, '{"error":"Access to model is restricted"}');
  if (id.startsWith('forbidden/')) return { status: 403, contentType: 'text/plain', body: 'forbidden' };
  if (id.startsWith('broken/')) return json(200, '{"model_type": "llama", "hidden_size": ');
  if (id.startsWith('big/')) return json(200, JSON.stringify({ ...TINY_LLAMA, padding: 'x'.repeat(1024 * 1024) }));
  if (id.startsWith('drop/')) return 'drop';
  return json(404, '{"error":"Repository not found"}');
}

// Answers every request to the allowed Hub origins from the stub (CORS headers as the Hub sends).
export async function routeHub(context, origins = HUB_ORIGINS) {
  for (const origin of origins) {
    await context.route(`${origin}/**`, (route) => {
      const url = new URL(route.request().url());
      if (hubStub.offline) return route.abort('internetdisconnected');
      hubRequests.push(url.href);
      const a = hubAnswer(url.pathname);
      if (a === 'drop') return route.abort('connectionreset');
      return route.fulfill({ status: a.status, contentType: a.contentType, body: a.body, headers: { 'access-control-allow-origin': '*' } });
    });
  }
}

export async function startServer() {
  if (!fs.existsSync(path.join(SITE, 'vramplan.wasm'))) throw new Error(`no built site in ${SITE} (set VRAMPLAN_SITE)`);
  const statics = createStaticServer(SITE);
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

// The outcome of a config check (pasted, dropped, chosen or fetched): the page checks configs in
// a worker, so the status says "checking…" (data-state="busy") until the core has answered.
export async function configOutcome(page, selector = '#cfg-status') {
  await page.waitForFunction((sel) => document.querySelector(sel).dataset.state !== 'busy', selector, { timeout: 10000 });
  return page.locator(selector).textContent();
}
