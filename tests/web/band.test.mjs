// The band of the estimate (gpu.band: low / expected / high and its own verdict; docs/api.md,
// "Verdict", docs/frameworks.md, "The band") on the page and the widget: a whisker over the memory
// bar from low to high, labelled with the three totals and the basis, and a "tight" note when the
// band straddles the capacity. The badge stays the expected verdict (gpu.fits).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, startBrowser, openPage, cli, pageScenario, pageResult } from './harness.mjs';

let server; let chrome;
before(async () => { server = await startServer(); chrome = await startBrowser(); });
after(async () => { await chrome?.close(); await server?.close(); });

const gibText = (b) => `${(b / 1024 ** 3).toFixed(1)} GiB`;
const LORA_8B = '?v=1&model=meta-llama/Llama-3.1-8B&mode=train&gpu=rtx-4090-24gb&train.method=lora';

// The whisker's line, the bar's width and the capacity line's x, in the bar's own units.
function whiskerGeometry(svgRoot) {
  const bar = svgRoot.querySelector('.bar-bg');
  const line = svgRoot.querySelector('.whisker .whisker-line');
  const cap = svgRoot.querySelector('.cap-line');
  if (!line) return null;
  const box = line.getBBox();
  return {
    width: Number(bar.getAttribute('width')), x0: box.x, x1: box.x + box.width, cap: Number(cap.getAttribute('x1')),
    title: svgRoot.querySelector('.whisker > title').textContent, label: svgRoot.querySelector(':scope > title').textContent,
  };
}

// The whisker runs from low to high on the bar's scale (max of total, capacity, high end).
function assertSpans(geo, gpu) {
  const b = gpu.band;
  const scale = Math.max(gpu.device_total_bytes, gpu.capacity_bytes, b.high_bytes);
  const x = (bytes) => Math.min(geo.width - 1.5, (bytes / scale) * geo.width);
  assert.ok(Math.abs(geo.x0 - x(b.low_bytes)) < 0.05, `low end at ${geo.x0}, expected ${x(b.low_bytes)}`);
  assert.ok(Math.abs(geo.x1 - x(b.high_bytes)) < 0.05, `high end at ${geo.x1}, expected ${x(b.high_bytes)}`);
  const text = `low ${gibText(b.low_bytes)}, expected ${gibText(b.expected_bytes)}, high ${gibText(b.high_bytes)}; ${b.basis}`;
  assert.equal(geo.title, `Range of the estimate: ${text}`);
  assert.match(geo.label, new RegExp(`; range: ${text.replace(/[.+()]/g, '\\$&')}$`));
}

test('a band that straddles the capacity: "Fits" stays, a tight note, the whisker spans low..high across the capacity', async () => {
  const { page, problems, context } = await openPage(chrome.browser, `${server.base}/${LORA_8B}&train.seq_len=4096`);
  const r = await pageResult(page);
  const ref = cli(await pageScenario(page));
  assert.deepEqual(r.gpu.band, ref.gpu.band);
  assert.equal(ref.gpu.band.verdict, 'tight');
  assert.equal(ref.gpu.fits, true, 'the expected total fits: the scenario is the tight case the badge must not change');
  assert.equal(await page.locator('#verdict .badge').textContent(), 'Fits');
  const b = ref.gpu.band;
  assert.equal(await page.locator('#verdict .tight-note').textContent(),
    `Tight: the range (low ${gibText(b.low_bytes)}, expected ${gibText(b.expected_bytes)}, high ${gibText(b.high_bytes)}; ${b.basis}) straddles the ${gibText(ref.gpu.capacity_bytes)} capacity`);
  await page.locator('#bar .whisker').waitFor({ state: 'attached' });
  const geo = await page.locator('#bar svg').evaluate(whiskerGeometry);
  assertSpans(geo, ref.gpu);
  assert.ok(geo.x0 < geo.cap && geo.cap < geo.x1, `the capacity line (${geo.cap}) lies inside the whisker (${geo.x0}..${geo.x1})`);
  assert.equal(await page.locator('#bar .whisker').getAttribute('class'), 'whisker tight');
  assert.deepEqual(problems, []);
  await context.close();
});

test('a scenario that fits comfortably: no tight note, the whisker below the capacity; the note goes when the band stops straddling', async () => {
  const { page, problems, context } = await openPage(chrome.browser, `${server.base}/${LORA_8B}&train.seq_len=512`);
  const ref = cli(await pageScenario(page));
  assert.equal(ref.gpu.band.verdict, 'fits');
  assert.equal(await page.locator('#verdict .badge').textContent(), 'Fits');
  assert.equal(await page.locator('#verdict .tight-note').count(), 0);
  await page.locator('#bar .whisker').waitFor({ state: 'attached' });
  const geo = await page.locator('#bar svg').evaluate(whiskerGeometry);
  assertSpans(geo, ref.gpu);
  assert.ok(geo.x1 < geo.cap, 'the whole band is left of the capacity');

  // Edit to the tight length and back: the note follows the result.
  await page.fill('#f-train-seq_len', '4096');
  await page.waitForFunction(() => window.__vramplan.result?.gpu?.band?.verdict === 'tight');
  await page.locator('#verdict .tight-note').waitFor();
  await page.fill('#f-train-seq_len', '512');
  await page.waitForFunction(() => window.__vramplan.result?.gpu?.band?.verdict === 'fits');
  assert.equal(await page.locator('#verdict .tight-note').count(), 0);
  assert.deepEqual(problems, []);
  await context.close();
});

test('the widget draws the same whisker and says "tight" (unpacked batches: the low end at the typical length)', async () => {
  const scenario = { model: 'meta-llama/Llama-3.1-8B', mode: 'train', gpu: 'rtx-4090-24gb', train: { method: 'lora', seq_len: 6144, packing: false, typical_seq_len: 1024 } };
  const comfy = { ...scenario, train: { method: 'lora', seq_len: 512 } };
  const html = `<!doctype html><meta charset="utf-8"><script type="module" src="./embed.js"></script>
    <vramplan-estimate id="tight" scenario='${JSON.stringify(scenario)}'></vramplan-estimate>
    <vramplan-estimate id="comfy" scenario='${JSON.stringify(comfy)}'></vramplan-estimate>`;
  const { page, problems, context } = await openPage(chrome.browser, null);
  await page.route(`${server.base}/band-widget.html`, (route) => route.fulfill({ contentType: 'text/html', body: html }));
  await page.goto(`${server.base}/band-widget.html`);
  for (const id of ['tight', 'comfy']) await page.waitForFunction((i) => document.getElementById(i).dataset.band, id, { timeout: 10000 });

  const ref = cli(scenario);
  assert.equal(ref.gpu.band.verdict, 'tight');
  assert.ok(ref.gpu.band.low_bytes < ref.gpu.capacity_bytes && ref.gpu.band.high_bytes > ref.gpu.capacity_bytes);
  assert.equal(await page.evaluate(() => document.getElementById('tight').dataset.band), 'tight');
  const shadow = (id, sel) => page.locator(`#${id}`).locator(sel);
  assert.match(await shadow('tight', '.tight-note').textContent(), /^Tight: the range \(low [\d.]+ GiB, expected [\d.]+ GiB, high [\d.]+ GiB; .*typical batch.*\) straddles the capacity$/);
  assertSpans(await shadow('tight', 'svg').evaluate(whiskerGeometry), ref.gpu);

  assert.equal(await page.evaluate(() => document.getElementById('comfy').dataset.band), 'fits');
  assert.equal(await shadow('comfy', '.tight-note').count(), 0);
  assertSpans(await shadow('comfy', 'svg').evaluate(whiskerGeometry), cli(comfy).gpu);
  assert.deepEqual(problems, []);
  await context.close();
});
