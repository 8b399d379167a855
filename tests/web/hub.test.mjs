// Loading a config.json from the Hub, against a stub served on the page's own origin
// (?hub=/hub-stub): 200, 401/403 (gated), 404, a broken body, a dropped connection, offline.
// The real Hub is never contacted.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, startBrowser, openPage, cli, pageScenario, pageResult, hubRequests } from './harness.mjs';

let server; let chrome;
before(async () => { server = await startServer(); chrome = await startBrowser(); });
after(async () => { await chrome?.close(); await server?.close(); });

async function load(page, id) {
  await page.fill('#hub-id', id);
  await page.click('#hub-load');
  await page.waitForFunction(() => !document.getElementById('hub-load').disabled && !/^Loading/.test(document.getElementById('hub-status').textContent));
  return page.locator('#hub-status').textContent();
}

test('Hub loading: 200, gated, missing, broken, unreachable, offline', async () => {
  const { page, problems, context } = await openPage(chrome.browser, `${server.base}/?hub=/hub-stub`);
  const realHub = [];
  await context.route('https://huggingface.co/**', (route) => { realHub.push(route.request().url()); route.abort(); });
  await page.locator('#hub-box summary').click();

  let msg = await load(page, 'ok/tiny-llama');
  assert.match(msg, /loaded/i);
  const s = await pageScenario(page);
  assert.equal(s.model.hidden_size, 512);
  assert.equal((await pageResult(page)).gpu.device_total_bytes, cli(s).gpu.device_total_bytes);
  assert.ok(hubRequests.some((u) => u === '/hub-stub/ok/tiny-llama/resolve/main/config.json'));

  msg = await load(page, 'gated/llama');
  assert.match(msg, /gated or private \(HTTP 401\)/);
  msg = await load(page, 'forbidden/model');
  assert.match(msg, /HTTP 403/);
  msg = await load(page, 'missing/model');
  assert.match(msg, /not found.*404/);
  msg = await load(page, 'broken/model');
  assert.match(msg, /not accepted/);
  msg = await load(page, 'drop/model');
  assert.match(msg, /Could not reach the Hub/);
  const before = hubRequests.length;
  msg = await load(page, '../../etc/passwd');
  assert.match(msg, /Enter a model id/);
  assert.equal(hubRequests.length, before, 'an invalid id is not fetched');
  await context.setOffline(true);
  msg = await load(page, 'ok/tiny-llama');
  assert.match(msg, /offline/i);
  await context.setOffline(false);
  assert.equal((await pageScenario(page)).model.hidden_size, 512, 'failures keep the last good model');
  assert.deepEqual(realHub, []);
  // The failed fetches log "Failed to load resource" (the browser's own network log); nothing else.
  assert.deepEqual(problems.filter((p) => !/Failed to load resource|net::ERR_/.test(p)), []);
  await context.close();
});
