// The <vramplan-estimate> widget (web/embed.js) on web/embed-demo.html, and ?embed=1 mode.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, startBrowser, openPage, cli } from './harness.mjs';

let server; let chrome;
before(async () => { server = await startServer(); chrome = await startBrowser(); });
after(async () => { await chrome?.close(); await server?.close(); });

const gibText = (b) => `${(b / 1024 ** 3).toFixed(1)} GiB`;
const total = (page, id) => page.evaluate((i) => document.getElementById(i).dataset.totalBytes, id);

test('embed demo renders the widgets and updates when an attribute changes', async () => {
  const { page, problems, context } = await openPage(chrome.browser, null);
  const started = Date.now();
  await page.goto(`${server.base}/embed-demo.html`);
  for (const id of ['w1', 'w2', 'w3']) await page.waitForFunction((i) => document.getElementById(i).dataset.totalBytes !== undefined, id);
  console.log(`# widget first estimate: ${Date.now() - started} ms wall incl. navigation`);
  const ref = cli({ model: 'meta-llama/Llama-3.1-8B', train: { method: 'lora', seq_len: 2048, micro_batch_size: 4 }, gpu: 'rtx-4090-24gb', mode: 'train' });
  assert.equal(Number(await total(page, 'w1')), ref.gpu.device_total_bytes);
  const w1 = page.locator('#w1');
  assert.equal(await w1.locator('.total').textContent(), gibText(ref.gpu.device_total_bytes));
  assert.match(await w1.locator('.badge').textContent(), /^(Fits|Does not fit)$/);
  const href = await w1.locator('a').getAttribute('href');
  assert.match(href, /index\.html\?v=1&model=meta-llama\/Llama-3\.1-8B.*train\.seq_len=2048/);

  // Attribute change -> re-render with the new numbers.
  await page.selectOption('#demo-seq', '8192');
  await page.waitForFunction(() => document.getElementById('w1').result?.scenario?.train?.seq_len === 8192);
  const ref2 = cli({ model: 'meta-llama/Llama-3.1-8B', train: { method: 'lora', seq_len: 8192, micro_batch_size: 4 }, gpu: 'rtx-4090-24gb', mode: 'train' });
  assert.equal(Number(await total(page, 'w1')), ref2.gpu.device_total_bytes);
  await page.evaluate(() => document.getElementById('w1').setAttribute('gpu', 'h100-sxm-80gb'));
  await page.waitForFunction(() => document.getElementById('w1').result?.scenario?.gpu === 'h100-sxm-80gb');
  assert.match(await w1.locator('.head').textContent(), /H100/);

  // Inference widget and scenario-attribute widget.
  const r2 = await page.evaluate(() => document.getElementById('w2').result);
  assert.equal(r2.scenario.inference.weights, 'awq_4bit');
  assert.equal(Number(await total(page, 'w2')), cli(r2.scenario).gpu.device_total_bytes);
  const r3 = await page.evaluate(() => document.getElementById('w3').result);
  assert.equal(r3.scenario.parallel.gpus, 2);
  assert.equal(r3.scenario.gpu, 'a100-sxm-80gb');

  // Bad attribute: the problem is named, as text.
  await page.evaluate(() => document.getElementById('w1').setAttribute('seq-len', '<img src=x onerror=alert(1)>'));
  await page.waitForFunction(() => document.getElementById('w1').result?.ok === false);
  assert.match(await w1.locator('.card').textContent(), /train\.seq_len/);
  assert.equal(await page.evaluate(() => document.getElementById('w1').shadowRoot.querySelectorAll('img').length), 0);

  // The compact iframe mode shows results only.
  const frame = page.frameLocator('#frame');
  await frame.locator('#verdict .badge').waitFor();
  assert.equal(await frame.locator('#inputs').isVisible(), false);
  assert.deepEqual(problems, []);
  await context.close();
});

// A host page with widgets whose scenarios the core cannot take (or that make a core call throw):
// each widget shows an error card, never "Loading the estimate…" for good.
async function widgetPage(html) {
  const { page, problems, context } = await openPage(chrome.browser, null);
  await page.route(`${server.base}/widget-test.html`, (route) => route.fulfill({ contentType: 'text/html', body: html }));
  await page.goto(`${server.base}/widget-test.html`);
  return { page, problems, context };
}
const cardText = (page, id) => page.evaluate((i) => document.getElementById(i).shadowRoot.textContent, id);
const settledWidget = (page, id) => page.waitForFunction((i) => document.getElementById(i).result !== null
  && !/Loading the estimate/.test(document.getElementById(i).shadowRoot.textContent), id, { timeout: 10000 });

test('the widget shows an error for a broken scenario and never hangs', async () => {
  const nest = (depth) => `${'['.repeat(depth)}"q_proj"${']'.repeat(depth)}`;
  const html = `<!doctype html><meta charset="utf-8"><script type="module" src="./embed.js"></script>
    <vramplan-estimate id="deep" scenario='{"train":{"method":"lora","lora":{"targets":${nest(100000)}}}}'></vramplan-estimate>
    <vramplan-estimate id="nested" scenario='{"train":{"method":"lora","lora":{"targets":${nest(100)}}}}'></vramplan-estimate>
    <vramplan-estimate id="badjson" scenario='{"train":'></vramplan-estimate>
    <vramplan-estimate id="ok" method="lora"></vramplan-estimate>`;
  const { page, problems, context } = await widgetPage(html);
  for (const id of ['deep', 'nested', 'badjson', 'ok']) await settledWidget(page, id);
  for (const id of ['deep', 'nested']) {
    const r = await page.evaluate((i) => document.getElementById(i).result, id);
    assert.equal(r.ok, false, `${id}: not an estimate`);
    assert.ok(r.errors.length > 0 && r.errors.every((e) => typeof e.message === 'string' && e.message.length > 0), `${id}: errors named`);
    const text = await cardText(page, id);
    assert.match(text, /^vramplan: (this scenario was not accepted|no estimate)/, `${id}: ${text.slice(0, 200)}`);
    assert.ok(text.length < 2000, `${id}: the card is short (${text.length} characters)`);
    assert.equal(await page.evaluate((i) => document.getElementById(i).dataset.totalBytes, id), undefined);
  }
  assert.match(await cardText(page, 'badjson'), /scenario: the scenario attribute is not valid JSON/);
  assert.ok(await page.evaluate(() => document.getElementById('ok').dataset.totalBytes), 'a good widget next to them still works');

  // A core call that throws (a value with markup in its message): shown as text, and the widget
  // recovers on the next change once the core answers again.
  await page.evaluate(async () => {
    const core = await (await import('./core.js')).loadCore();
    core.realEstimate = core.estimate;
    core.estimate = () => { throw new Error('<img src=x onerror=alert(1)>boom'); };
    document.getElementById('ok').setAttribute('seq-len', '4096');
  });
  await page.waitForFunction(() => document.getElementById('ok').result?.ok === false);
  assert.match(await cardText(page, 'ok'), /vramplan: no estimatethe estimator failed: <img src=x onerror=alert\(1\)>boom/);
  assert.equal(await page.evaluate(() => document.getElementById('ok').shadowRoot.querySelectorAll('img').length), 0);
  await page.evaluate(async () => {
    const core = await (await import('./core.js')).loadCore();
    core.estimate = core.realEstimate;
    document.getElementById('ok').setAttribute('seq-len', '2048');
  });
  await page.waitForFunction(() => document.getElementById('ok').result?.ok === true);
  assert.deepEqual(problems, []);
  await context.close();
});

test('the widget reports a module that does not load', async () => {
  const { page, problems, context } = await openPage(chrome.browser, null);
  await page.route('**/vramplan.mjs', (route) => route.fulfill({ status: 500, body: 'broken' }));
  await page.goto(`${server.base}/embed-demo.html`);
  for (const id of ['w1', 'w2', 'w3']) {
    await page.waitForFunction((i) => /could not load/.test(document.getElementById(i).shadowRoot.textContent), id, { timeout: 10000 });
    assert.equal(await page.evaluate((i) => document.getElementById(i).result.ok, id), false);
  }
  assert.ok(problems.every((p) => /vramplan\.mjs|Failed to load|500/.test(p)), problems.join('\n'));
  await context.close();
});
