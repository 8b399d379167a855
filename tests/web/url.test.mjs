// Shareable state: the scenario round-trips through the URL, back/forward restore it, bad or old
// links load with a visible message naming the problem.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, startBrowser, openPage, gotoReady, cli, pageScenario, pageResult, settled } from './harness.mjs';

let server; let chrome;
before(async () => { server = await startServer(); chrome = await startBrowser(); });
after(async () => { await chrome?.close(); await server?.close(); });

async function change(page, act) {
  const n = await page.evaluate(() => window.__vramplan.renders);
  await act();
  await page.waitForFunction((k) => window.__vramplan.renders > k, n, { timeout: 5000 })
    .catch(async () => assert.fail(`no re-render: ${await page.locator('#field-errors').textContent()}`));
  await settled(page);
}

test('URL round trip restores the exact scenario; the link is readable and versioned', async () => {
  const { page, problems, context } = await openPage(chrome.browser, `${server.base}/`);
  await change(page, () => page.selectOption('#f-train-method', 'qlora'));
  await change(page, () => page.fill('#f-train-seq_len', '2048'));
  await change(page, () => page.fill('#f-train-micro_batch_size', '4'));
  await change(page, () => page.fill('#f-train-lora-targets', 'all-linear'));
  await change(page, () => page.check('#f-train-lora-modules_to_save-lm_head'));
  await change(page, () => page.selectOption('#f-train-gradient_checkpointing', 'selective'));
  await change(page, () => page.selectOption('#gpu', 'rtx-4090-24gb'));
  await page.locator('#g-framework summary').click();
  await change(page, () => page.selectOption('#f-framework-preset', 'torch_1_13_hf_4_44'));
  const url = page.url();
  console.log(`# example link: ${url.slice(url.indexOf('?'))}`);
  assert.match(url, /[?&]v=1(&|$)/);
  assert.match(url, /model=meta-llama\/Llama-3\.1-8B/);
  assert.match(url, /train\.method=qlora/);
  assert.match(url, /train\.seq_len=2048/);
  assert.match(url, /gpu=rtx-4090-24gb/);
  assert.doesNotMatch(url, /train\.optimizer=/, 'defaults are not written');
  const want = await pageScenario(page);
  const other = await openPage(chrome.browser, url);
  assert.deepEqual(await pageScenario(other.page), want);
  assert.equal((await pageResult(other.page)).gpu.device_total_bytes, cli(want).gpu.device_total_bytes);
  assert.equal(await other.page.locator('#notice').isHidden(), true);
  assert.equal(await other.page.inputValue('#f-train-seq_len'), '2048');
  assert.equal(await other.page.inputValue('#f-train-method'), 'qlora');
  assert.deepEqual([...problems, ...other.problems], []);
  await other.context.close();
  await context.close();
});

test('inline config and custom GPU travel in the URL', async () => {
  const { page, problems, context } = await openPage(chrome.browser, `${server.base}/?v=1&mode=inference&gpu.name=My%20card&gpu.memory_bytes=25769803776`);
  let s = await pageScenario(page);
  assert.deepEqual(s.gpu, { name: 'My card', memory_bytes: 25769803776 });
  assert.equal(s.mode, 'inference');
  const config = { model_type: 'qwen2', architectures: ['Qwen2ForCausalLM'], hidden_size: 896, intermediate_size: 4864, num_hidden_layers: 24,
    num_attention_heads: 14, num_key_value_heads: 2, vocab_size: 151936, tie_word_embeddings: true, max_position_embeddings: 32768, note: 'x'.repeat(3000) };
  await page.locator('#cfg-box summary').click();
  await page.fill('#cfg-text', JSON.stringify(config));
  await change(page, () => page.click('#cfg-use'));
  const url = page.url();
  assert.match(url, /[?&]cfg=[A-Za-z0-9_-]+/);
  assert.ok(url.length < 1500, `compressed link is short (${url.length} chars for a ${JSON.stringify(config).length}-char config)`);
  s = await pageScenario(page);
  const other = await openPage(chrome.browser, url);
  assert.deepEqual(await pageScenario(other.page), s);
  assert.deepEqual(problems.concat(other.problems), []);
  await other.context.close();
  await context.close();
});

test('back and forward restore earlier scenarios', async () => {
  const { page, problems, context } = await openPage(chrome.browser, `${server.base}/`);
  const s0 = await pageScenario(page);
  await change(page, () => page.selectOption('#f-train-method', 'full'));
  const s1 = await pageScenario(page);
  await change(page, () => page.fill('#f-train-seq_len', '8192'));
  await page.locator('#f-train-seq_len').blur(); // ends the typing gesture (change event)
  const s2 = await pageScenario(page);
  assert.equal(s2.train.seq_len, 8192);
  await change(page, () => page.goBack());
  assert.deepEqual(await pageScenario(page), s1);
  assert.equal(await page.inputValue('#f-train-seq_len'), String(s1.train.seq_len));
  await change(page, () => page.goBack());
  assert.deepEqual(await pageScenario(page), s0);
  assert.equal(await page.inputValue('#f-train-method'), 'lora');
  await change(page, () => page.goForward());
  assert.deepEqual(await pageScenario(page), s1);
  await change(page, () => page.goForward());
  assert.deepEqual(await pageScenario(page), s2);
  assert.deepEqual(problems, []);
  await context.close();
});

test('bad and old links load with a visible message naming the problem', async () => {
  const { page, problems, context } = await openPage(chrome.browser,
    `${server.base}/?v=7&model=no-such/model&train.seq_len=0&train.method=fullish&train.bogus=1&train.micro_batch_size=2&cfg=!!!`);
  const notice = page.locator('#notice');
  assert.equal(await notice.isVisible(), true);
  const text = await notice.textContent();
  for (const needle of ['v=7', 'model', 'no-such/model', 'train.seq_len', 'train.method', 'train.bogus', 'cfg']) assert.ok(text.includes(needle), `notice names ${needle}: ${text}`);
  const s = await pageScenario(page);
  assert.equal(s.train.micro_batch_size, 2, 'the good part of the link is kept');
  assert.equal(await page.locator('#verdict .badge').isVisible(), true, 'an estimate is shown');
  assert.deepEqual(problems, []);
  await context.close();
});

test('copy link puts the current URL on the clipboard', async () => {
  const { page, problems, context } = await openPage(chrome.browser, `${server.base}/`);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.base });
  await change(page, () => page.selectOption('#f-train-method', 'freeze'));
  await page.click('#copy-link');
  await page.locator('#copy-status', { hasText: 'Link copied' }).waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), page.url());
  assert.deepEqual(problems, []);
  await context.close();
});
