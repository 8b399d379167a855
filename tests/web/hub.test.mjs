// Loading a config.json from the Hub against a stub (Playwright routes answer for the allowed Hub
// origins; see harness.mjs): 200, 401/403 (gated), 404, a broken body, a body over the size
// limit, a dropped connection, offline. And the Hub base a link may choose (?hub=): only the
// allowed https origins; anything else is refused with a notice and no request goes anywhere else.
// Nothing is contacted outside this machine: every request to another origin is aborted and
// recorded, and the test asserts there were none.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startServer, startBrowser, openPage, cli, pageScenario, pageResult, hubRequests, hubStub, routeHub, settled, ROOT } from './harness.mjs';
import { parseHubBase, HUB_ORIGINS, DEFAULT_HUB } from '../../web/hub.js';

let server; let chrome;
before(async () => { server = await startServer(); chrome = await startBrowser(); });
after(async () => { await chrome?.close(); await server?.close(); });

// Opens a page whose requests to anything but the test server and the stubbed Hub origins are
// aborted and recorded in `foreign`.
async function hubPage(url) {
  const { page, problems, context } = await openPage(chrome.browser, null);
  const foreign = [];
  await context.route((u) => u.origin !== server.base && !HUB_ORIGINS.includes(u.origin), (route) => { foreign.push(route.request().url()); route.abort(); });
  await routeHub(context);
  await page.goto(url);
  await page.waitForFunction(() => window.__vramplan?.ready === true, null, { timeout: 20000 });
  return { page, problems, context, foreign };
}

async function load(page, id) {
  await page.fill('#hub-id', id);
  await page.click('#hub-load');
  await page.waitForFunction(() => !document.getElementById('hub-load').disabled && !/^Loading/.test(document.getElementById('hub-status').textContent)
    && document.getElementById('hub-status').dataset.state !== 'busy');
  return page.locator('#hub-status').textContent();
}

test('Hub loading: 200, gated, missing, broken, too large, unreachable, offline', async () => {
  const { page, problems, context, foreign } = await hubPage(`${server.base}/`);
  await page.locator('#hub-box summary').click();

  let msg = await load(page, 'ok/tiny-llama');
  assert.match(msg, /loaded/i);
  const s = await pageScenario(page);
  assert.equal(s.model.hidden_size, 512);
  assert.equal((await pageResult(page)).gpu.device_total_bytes, cli(s).gpu.device_total_bytes);
  assert.ok(hubRequests.includes(`${DEFAULT_HUB}/ok/tiny-llama/resolve/main/config.json`));

  msg = await load(page, 'gated/llama');
  assert.match(msg, /gated or private \(HTTP 401\)/);
  msg = await load(page, 'forbidden/model');
  assert.match(msg, /HTTP 403/);
  msg = await load(page, 'missing/model');
  assert.match(msg, /not found.*404/);
  msg = await load(page, 'broken/model');
  assert.match(msg, /not accepted/);
  msg = await load(page, 'big/model');
  assert.match(msg, /not read, too large \(.*at most 128 KiB/);
  msg = await load(page, 'drop/model');
  assert.match(msg, /Could not reach the Hub/);
  const before = hubRequests.length;
  msg = await load(page, '../../etc/passwd');
  assert.match(msg, /Enter a model id/);
  assert.equal(hubRequests.length, before, 'an invalid id is not fetched');
  await context.setOffline(true);
  hubStub.offline = true; // the routes answer before the browser's offline check
  msg = await load(page, 'ok/tiny-llama');
  assert.match(msg, /offline/i);
  hubStub.offline = false;
  await context.setOffline(false);
  assert.equal((await pageScenario(page)).model.hidden_size, 512, 'failures keep the last good model');
  assert.deepEqual(foreign, []);
  // The failed fetches log "Failed to load resource" (the browser's own network log); nothing else.
  assert.deepEqual(problems.filter((p) => !/Failed to load resource|net::ERR_/.test(p)), []);
  await context.close();
});

test('an allowed mirror in the link is used', async () => {
  const { page, problems, context, foreign } = await hubPage(`${server.base}/?hub=https://hf-mirror.com`);
  assert.equal(await page.locator('#notice').isHidden(), true);
  await page.locator('#hub-box summary').click();
  assert.match(await load(page, 'ok/tiny-llama'), /loaded/i);
  assert.equal(hubRequests.at(-1), 'https://hf-mirror.com/ok/tiny-llama/resolve/main/config.json');
  await settled(page);
  assert.match(page.url(), /[?&]hub=https:\/\/hf-mirror\.com/, 'the mirror stays in the link');
  assert.deepEqual(foreign, []);
  assert.deepEqual(problems, []);
  await context.close();
});

// Values a link could try; each must be refused, named in the notice, and the page must keep
// fetching from the default Hub only.
const BAD_HUBS = [
  '/\\evil.example', '//evil.example', '\\\\evil.example', '/hub-stub', 'https://evil.example', 'http://huggingface.co',
  'https://user:pw@huggingface.co', 'https://huggingface.co@evil.example', 'https://huggingface.co.evil.example',
  'https://huggingface.co/../../evil', 'https://huggingface.co/path', 'https://huggingface.co?x=1', 'https://huggingface.co#x',
  'https://huggingface.co:8443', 'https://HUGGINGFACE.CO', ' https://huggingface.co', 'https://huggingface.co\\',
  'javascript:alert(1)', 'data:application/json,{}', 'wss://huggingface.co', 'https://evil.example/huggingface.co', 'h'.repeat(5000),
];

test('the Hub base is checked as an allowed https origin (unit)', () => {
  for (const good of ['https://huggingface.co', 'https://huggingface.co/', 'https://hf-mirror.com', 'https://hf-mirror.com/', undefined, '']) {
    assert.equal(parseHubBase(good).ok, true, `accepted: ${good}`);
  }
  for (const bad of BAD_HUBS) assert.equal(parseHubBase(bad).ok, false, `refused: ${bad}`);
  assert.equal(parseHubBase('https://hf-mirror.com/').base, 'https://hf-mirror.com');
});

test('the CSP connect-src allows exactly the Hub origins the page accepts', () => {
  const html = fs.readFileSync(path.join(ROOT, 'web/index.html'), 'utf8');
  const csp = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)[1];
  const connect = /connect-src ([^;]+)/.exec(csp)[1].split(/\s+/).filter((x) => x !== "'self'");
  assert.deepEqual(connect.sort(), [...HUB_ORIGINS].sort());
});

test('bad ?hub= values are refused with a notice; no request leaves to another origin', async () => {
  const started = Date.now();
  const { page, problems, context, foreign } = await hubPage(`${server.base}/`);
  await page.locator('#hub-box summary').click();
  const sample = ['/\\evil.example', '//evil.example', 'https://evil.example', 'http://huggingface.co', 'https://huggingface.co@evil.example',
    'https://huggingface.co.evil.example', 'javascript:alert(1)', 'h'.repeat(5000)];
  for (const bad of sample) {
    await page.goto(`${server.base}/?${new URLSearchParams({ v: '1', hub: bad })}`);
    await page.waitForFunction(() => window.__vramplan?.ready === true);
    const notice = page.locator('#notice');
    assert.equal(await notice.isVisible(), true, `a notice for hub=${bad.slice(0, 40)}`);
    const text = await notice.textContent();
    assert.match(text, bad.length > 1000 ? /hub: the value is 5,000 characters long \(at most 1000\)/
      : /hub: .*not an allowed Hub; allowed: https:\/\/huggingface\.co, https:\/\/hf-mirror\.com/);
    assert.ok(text.length < 1000, 'the notice quotes a long value cut short');
    const n = hubRequests.length;
    await page.locator('#hub-box summary').click();
    assert.match(await load(page, 'ok/tiny-llama'), /loaded/i);
    assert.equal(hubRequests.length, n + 1);
    assert.equal(hubRequests.at(-1), `${DEFAULT_HUB}/ok/tiny-llama/resolve/main/config.json`, `hub=${bad.slice(0, 40)} fell back to the default Hub`);
    await settled(page);
    assert.doesNotMatch(page.url(), /[?&]hub=/, 'a refused hub is not written back into the link');
  }
  assert.deepEqual(foreign, [], 'no request to any other origin');
  assert.deepEqual(problems, []);
  console.log(`# ${sample.length} bad hub values refused in ${Date.now() - started} ms`);
  await context.close();
});
