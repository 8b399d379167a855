// Readers on demand (docs/web.md): the page's module reads the presets' families; a pasted config
// of another family (BLOOM here) is read by vramplan-full, loaded once, and the page, its links,
// the matrix and the widget all answer for it as the CLI does.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startServer, startBrowser, openPage, configOutcome, pageScenario, pageResult, settled, cli, ROOT } from './harness.mjs';

let server; let chrome;
before(async () => { server = await startServer(); chrome = await startBrowser(); });
after(async () => { await chrome?.close(); await server?.close(); });

const rows = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests/fixtures/param_counts.json'), 'utf8')).models;
const bloom = rows.find((r) => r.config.model_type === 'bloom');

test('a pasted config of a family read on demand: vramplan-full loads once and answers as the CLI', async () => {
  const { page, problems, context } = await openPage(chrome.browser, null);
  const wasm = [];
  context.on('request', (r) => { const p = new URL(r.url()).pathname; if (p.endsWith('.wasm')) wasm.push(p); });
  await page.goto(`${server.base}/`);
  await page.waitForFunction(() => window.__vramplan?.ready === true, null, { timeout: 20000 });
  await page.locator('#cfg-box summary').click();
  await page.fill('#cfg-text', JSON.stringify(bloom.config));
  const clicked = Date.now();
  await page.click('#cfg-use');
  assert.match(await configOutcome(page), /loaded/);
  await page.waitForFunction(() => window.__vramplan.scenario?.model?.model_type === 'bloom', null, { timeout: 10000 });
  // The first config of a family read on demand pays vramplan-full's download (local server here)
  // and compilation, in the worker and then on the page (docs/web.md, "Readers on demand").
  console.log(`# first BLOOM config, click to estimate (vramplan-full loaded on demand): ${Date.now() - clicked} ms`);
  const r = await pageResult(page);
  assert.equal(r.params.total, bloom.params, 'the exact count of the full reader');
  const scenario = await pageScenario(page);
  assert.equal(r.gpu.device_total_bytes, cli(scenario).gpu.device_total_bytes);
  // Edits after it are estimated by vramplan-full too, without another download.
  await page.fill('#f-train-seq_len', '1024');
  await page.waitForFunction(() => window.__vramplan.scenario.train.seq_len === 1024 && window.__vramplan.result.scenario.train.seq_len === 1024);
  const edited = await pageScenario(page);
  assert.equal((await pageResult(page)).gpu.device_total_bytes, cli(edited).gpu.device_total_bytes);
  await page.waitForFunction(() => window.__vramplan.lastMatrixMs !== null);
  await settled(page);
  assert.deepEqual(wasm.filter((p) => p === '/vramplan-full.wasm').length, 1, `downloads: ${wasm}`);
  // The link restores it: the page waits for vramplan-full instead of dropping the model.
  const other = await openPage(chrome.browser, page.url());
  assert.deepEqual(await pageScenario(other.page), edited);
  assert.equal((await pageResult(other.page)).params.total, bloom.params);
  assert.equal(await other.page.locator('#notice').isHidden(), true);
  assert.deepEqual([...problems, ...other.problems], []);
  await other.context.close();
  await context.close();
});

test('the widget estimates a family read on demand', async () => {
  const { page, problems, context } = await openPage(chrome.browser, null);
  const scenario = JSON.stringify({ model: bloom.config, train: { method: 'lora' } }).replaceAll("'", '&#39;');
  const html = `<!doctype html><meta charset="utf-8"><script type="module" src="./embed.js"></script>
    <vramplan-estimate id="w" scenario='${scenario}'></vramplan-estimate>`;
  await page.route(`${server.base}/widget-test.html`, (route) => route.fulfill({ contentType: 'text/html', body: html }));
  await page.goto(`${server.base}/widget-test.html`);
  await page.waitForFunction(() => document.getElementById('w').result?.ok === true, null, { timeout: 15000 });
  const r = await page.evaluate(() => document.getElementById('w').result);
  assert.equal(r.params.total, bloom.params);
  assert.deepEqual(problems, []);
  await context.close();
});
