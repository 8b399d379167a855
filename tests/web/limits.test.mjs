// Hostile and absurd input to the page: a cfg= link that inflates to 100 MB, a 50 MB paste, drop
// and file, megabyte link values, a core that throws. Each is refused (or reported) with a visible
// notice, and the page keeps answering: the longest main-thread task is measured with a
// long-task observer and a requestAnimationFrame probe and bounded generously (the machine
// running the tests may be shared; the figures are printed as `# …`).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { startServer, startBrowser, openPage, gotoReady, configOutcome, pageScenario, settled, TINY_LLAMA } from './harness.mjs';
import { b64urlEncode } from '../../web/state.js';
import { CONFIG_MAX_BYTES } from '../../web/limits.js';

let server; let chrome;
before(async () => { server = await startServer(); chrome = await startBrowser(); });
after(async () => { await chrome?.close(); await server?.close(); });

// Records main-thread blocking from the first script on: long tasks (> 50 ms, as the browser
// reports them) and the largest gap between two animation frames.
const PROBE = () => {
  const p = { tasks: [], maxGap: 0, frames: 0 };
  window.__probe = p;
  new PerformanceObserver((list) => { for (const e of list.getEntries()) p.tasks.push(e.duration); }).observe({ type: 'longtask', buffered: true });
  let last = performance.now();
  const tick = (t) => { p.maxGap = Math.max(p.maxGap, t - last); last = t; p.frames++; requestAnimationFrame(tick); };
  requestAnimationFrame(tick);
};
const resetProbe = (page) => page.evaluate(() => { window.__probe.tasks = []; window.__probe.maxGap = 0; window.__probe.frames = 0; });
const readProbe = (page) => page.evaluate(() => ({ longest: Math.max(0, ...window.__probe.tasks), maxGap: window.__probe.maxGap, frames: window.__probe.frames }));
const nextFrames = (page, n = 3) => page.evaluate((k) => new Promise((r) => { let i = 0; const f = () => (++i >= k ? r() : requestAnimationFrame(f)); requestAnimationFrame(f); }), n);

async function probedPage(url) {
  const { page, problems, context } = await openPage(chrome.browser, null);
  await context.addInitScript(PROBE);
  if (url) await gotoReady(page, url);
  return { page, problems, context };
}

// A deflate bomb as a cfg= value: 100 MiB of one repeated byte inside a JSON string.
function bombLink(mib = 100) {
  const json = Buffer.concat([Buffer.from('{"model_type":"llama","pad":"'), Buffer.alloc(mib * 1024 * 1024, 0x61), Buffer.from('"}')]);
  return b64urlEncode(new Uint8Array(zlib.deflateRawSync(json, { level: 9 })));
}

// A valid config padded to about `bytes` with the shape that costs the core the most per byte
// (tens of thousands of small keys; measured against long arrays, label maps and nested maps).
function paddedConfig(bytes) {
  const cfg = { ...TINY_LLAMA };
  for (let i = 0; JSON.stringify(cfg).length < bytes - 40; i++) cfg[`extra_key_${i}`] = i;
  return cfg;
}

test('a cfg= link that inflates to 100 MB is refused with a notice; the page stays responsive', async () => {
  const cfg = bombLink();
  assert.ok(cfg.length > 100000 && cfg.length < 200000, `the bomb is a ${cfg.length}-character link`);
  const baseline = await probedPage(null);
  let started = Date.now();
  await gotoReady(baseline.page, `${server.base}/?v=1&model=meta-llama/Llama-3.1-8B`);
  await nextFrames(baseline.page);
  const base = { ...(await readProbe(baseline.page)), wall: Date.now() - started };
  await baseline.context.close();

  const { page, problems, context } = await probedPage(null);
  started = Date.now();
  await gotoReady(page, `${server.base}/?v=1&train.seq_len=2048&cfg=${cfg}`);
  const wall = Date.now() - started;
  await nextFrames(page);
  const bomb = await readProbe(page);
  const notice = await page.locator('#notice').textContent();
  assert.match(notice, /cfg: the inline config\.json in the link inflates to more than 128 KiB/);
  const s = await pageScenario(page);
  assert.equal(s.model, 'meta-llama/Llama-3.1-8B', 'the default model is shown');
  assert.equal(s.train.seq_len, 2048, 'the rest of the link is loaded');
  console.log(`# 100 MiB cfg= bomb (${cfg.length} chars): ready in ${wall} ms, longest task ${bomb.longest.toFixed(0)} ms, longest frame gap ${bomb.maxGap.toFixed(0)} ms`
    + ` (plain link: ${base.wall} ms, ${base.longest.toFixed(0)} ms, ${base.maxGap.toFixed(0)} ms)`);
  assert.ok(wall < 15000, `ready in ${wall} ms`);
  assert.ok(bomb.longest < 1500, `longest main-thread task ${bomb.longest} ms`);

  // The decode alone, on a loaded page: the inflate is streamed and stopped at the cap.
  await resetProbe(page);
  const decode = await page.evaluate(async (c) => {
    const { unpackConfig } = await import('./state.js');
    const t = performance.now();
    let message = '';
    try { await unpackConfig(c); } catch (e) { message = e.message; }
    return { ms: performance.now() - t, message };
  }, cfg);
  await nextFrames(page);
  const during = await readProbe(page);
  console.log(`# bomb decode alone: refused after ${decode.ms.toFixed(1)} ms, longest task ${during.longest.toFixed(0)} ms, longest frame gap ${during.maxGap.toFixed(0)} ms`);
  assert.match(decode.message, /inflates to more than/);
  assert.ok(decode.ms < 1000, `refused after ${decode.ms} ms`);
  assert.ok(during.longest < 200, `longest task while decoding ${during.longest} ms`);
  assert.deepEqual(problems, []);
  await context.close();
});

test('a 50 MB paste, drop or file is refused at once with a notice, nothing read or inserted', async () => {
  const { page, problems, context } = await probedPage(`${server.base}/`);
  await page.locator('#cfg-box summary').click();
  await resetProbe(page);
  const r = await page.evaluate(() => {
    const big = `{"model_type":"llama","pad":"${'x'.repeat(50 * 1024 * 1024)}"}`;
    const out = {};
    const box = document.getElementById('cfg-text');
    // Paste.
    let dt = new DataTransfer();
    dt.setData('text/plain', big);
    let ev = new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true });
    let t = performance.now();
    box.dispatchEvent(ev);
    out.pasteMs = performance.now() - t;
    out.pastePrevented = ev.defaultPrevented;
    out.paste = document.getElementById('cfg-status').textContent;
    out.boxLength = box.value.length;
    // Drop of a 50 MB file on the model group.
    dt = new DataTransfer();
    dt.items.add(new File([new Uint8Array(50 * 1024 * 1024)], 'huge-config.json', { type: 'application/json' }));
    ev = new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true });
    t = performance.now();
    document.getElementById('g-model').dispatchEvent(ev);
    out.dropMs = performance.now() - t;
    out.drop = document.getElementById('cfg-status').textContent;
    // The same file chosen with the file input.
    const input = document.getElementById('cfg-file');
    input.files = dt.files;
    document.getElementById('cfg-status').textContent = '';
    t = performance.now();
    input.dispatchEvent(new Event('change', { bubbles: true }));
    out.fileMs = performance.now() - t;
    out.file = document.getElementById('cfg-status').textContent;
    return out;
  });
  console.log(`# 50 MiB paste refused in ${r.pasteMs.toFixed(1)} ms, drop in ${r.dropMs.toFixed(1)} ms, file in ${r.fileMs.toFixed(1)} ms (handler time)`);
  assert.match(r.paste, /^Pasted text: not read, too large \(50\.0 MiB; this page accepts a config\.json of at most 128 KiB/);
  assert.equal(r.pastePrevented, true, 'the paste is not inserted');
  assert.equal(r.boxLength, 0);
  assert.match(r.drop, /^huge-config\.json: not read, too large \(50\.0 MiB/);
  assert.match(r.file, /^huge-config\.json: not read, too large \(50\.0 MiB/);
  for (const ms of [r.pasteMs, r.dropMs, r.fileMs]) assert.ok(ms < 100, `refused in ${ms} ms`);

  // Text already in the box (typed, or pasted before the limit) is checked on "Use".
  await page.evaluate((n) => { document.getElementById('cfg-text').value = `{"pad":"${'y'.repeat(n)}"}`; }, CONFIG_MAX_BYTES);
  await page.click('#cfg-use');
  assert.match(await configOutcome(page), /^Pasted config: not read, too large \(131,082 bytes; this page accepts a config\.json of at most 128 KiB/);
  assert.equal(typeof (await pageScenario(page)).model, 'string', 'the model did not change');
  assert.deepEqual(problems, []);
  await context.close();
});

// Seven edits of the sequence length; returns the sorted input-to-render times.
async function editTimes(page) {
  const times = [];
  for (const v of ['1024', '2048', '3072', '1536', '2560', '4096', '512']) {
    const n = await page.evaluate(() => window.__vramplan.renders);
    await page.fill('#f-train-seq_len', v);
    await page.waitForFunction((k) => window.__vramplan.renders > k, n);
    times.push(await page.evaluate(() => window.__vramplan.lastRenderMs));
  }
  return times.sort((a, b) => a - b);
}
const timesText = (t) => `min ${t[0].toFixed(1)} / median ${t[3].toFixed(1)} / max ${t.at(-1).toFixed(1)} ms`;

test('a config at the size limit is checked off the main thread and keeps edits within a few frames', async () => {
  const cfg = paddedConfig(CONFIG_MAX_BYTES - 1024);
  const text = JSON.stringify(cfg);
  const { page, problems, context } = await probedPage(`${server.base}/`);
  const plain = await editTimes(page); // the same edits with a preset model, for comparison
  await page.locator('#cfg-box summary').click();
  await page.evaluate((t) => { document.getElementById('cfg-text').value = t; }, text);
  await nextFrames(page);
  await resetProbe(page);
  const renders = await page.evaluate(() => window.__vramplan.renders);
  await page.click('#cfg-use');
  assert.match(await configOutcome(page), /loaded/);
  await page.waitForFunction((n) => window.__vramplan.renders > n, renders);
  await settled(page);
  await nextFrames(page);
  const accept = await readProbe(page);
  assert.equal((await pageScenario(page)).model.extra_key_0, 0);
  // Edits with the config in use: each recompute sends the whole scenario to the core.
  await resetProbe(page);
  const times = await editTimes(page);
  await nextFrames(page);
  const edits = await readProbe(page);
  console.log(`# config at the limit (${text.length} bytes, ${Object.keys(cfg).length} keys): accepted with longest task ${accept.longest.toFixed(0)} ms;`
    + ` edits: input-to-render ${timesText(times)}, longest task ${edits.longest.toFixed(0)} ms (with a preset model: ${timesText(plain)})`);
  assert.ok(times[3] < 120, `median input-to-render ${times[3]} ms`);
  assert.ok(accept.longest < 1000 && edits.longest < 1000, 'no task near a second');
  assert.deepEqual(problems, []);
  await context.close();
});

test('megabyte link values are refused by length with a short notice', async () => {
  const long = 'x'.repeat(100000);
  const q = `v=1&model=${long}&gpu.name=${'n'.repeat(5000)}&${'k'.repeat(200000)}=1&train.seq_len=2048`;
  const { page, problems, context } = await probedPage(`${server.base}/?${q}`);
  const notice = await page.locator('#notice').textContent();
  assert.match(notice, /model: the value is 100,000 characters long \(at most 1000\); it was ignored/);
  assert.match(notice, /gpu\.name: the value is 5,000 characters long/);
  assert.match(notice, /link parameter name of 200,000 characters/);
  assert.ok(notice.length < 2000, `the notice is ${notice.length} characters`);
  const s = await pageScenario(page);
  assert.equal(s.train.seq_len, 2048);
  assert.equal(s.model, 'meta-llama/Llama-3.1-8B');
  const probe = await readProbe(page);
  console.log(`# megabyte link values: longest task ${probe.longest.toFixed(0)} ms`);
  assert.deepEqual(problems, []);
  await context.close();
});

test('a core call that throws is shown as an error, and the page goes on', async () => {
  const { page, problems, context } = await openPage(chrome.browser, `${server.base}/`);
  const before = await pageScenario(page);
  await page.evaluate(async () => {
    const core = await (await import('./core.js')).loadCore();
    core.realEstimate = core.estimate;
    core.estimate = () => { throw new RangeError('<img src=x onerror=alert(1)> Maximum call stack size exceeded'); };
  });
  await page.fill('#f-train-seq_len', '4096');
  await page.locator('#field-errors:not([hidden])').waitFor();
  assert.match(await page.locator('#field-errors').textContent(), /the estimator failed: <img src=x onerror=alert\(1\)> Maximum call stack/);
  assert.equal(await page.locator('#field-errors img').count(), 0);
  assert.deepEqual(await pageScenario(page), before, 'the last good scenario stays');
  await page.evaluate(async () => { const core = await (await import('./core.js')).loadCore(); core.estimate = core.realEstimate; });
  await page.fill('#f-train-seq_len', '2048');
  await page.locator('#field-errors').waitFor({ state: 'hidden' });
  assert.equal((await pageScenario(page)).train.seq_len, 2048);
  assert.deepEqual(problems, []);
  await context.close();
});

test('a module that does not load is reported, not a blank page', async () => {
  const { page, problems, context } = await openPage(chrome.browser, null);
  await page.route('**/vramplan.mjs', (route) => route.fulfill({ status: 500, body: 'broken' }));
  await page.goto(`${server.base}/`);
  await page.locator('#loading.bad').waitFor({ timeout: 10000 });
  assert.match(await page.locator('#loading').textContent(), /The estimator could not be loaded/);
  assert.ok(problems.every((p) => /vramplan\.mjs|Failed to load|500/.test(p)), problems.join('\n'));
  await context.close();
});
