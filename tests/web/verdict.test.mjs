// The verdict badge and the "longest that fits" answers say what bounds them (docs/api.md,
// "Verdict"); the matrix shows what differs between its cells (docs/web.md, "Matrix").
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, startBrowser, openPage, cli, pageScenario, pageResult } from './harness.mjs';

let server; let chrome;
before(async () => { server = await startServer(); chrome = await startBrowser(); });
after(async () => { await chrome?.close(); await server?.close(); });

const ddOf = (box, label) => box.locator('dt', { hasText: label }).locator('xpath=following-sibling::dd[1]');

test('a prompt beyond the model\'s context is no plain "Fits", and the longest context stops at the limit', async () => {
  const { page, problems, context } = await openPage(chrome.browser,
    `${server.base}/?v=1&model=meta-llama/Llama-3.1-8B&mode=inference&gpu=h100-sxm-80gb&inference.prompt_len=200000&inference.new_tokens=256`);
  const r = await pageResult(page);
  assert.equal(r.verdict, 'exceeds_model_context');
  assert.equal(await page.locator('#verdict .badge').textContent(), 'Fits in memory, but beyond the model\'s 131,072-token context');
  assert.equal(await page.locator('#verdict').evaluate((v) => v.classList.contains('queued')), true);
  const ref = cli(await pageScenario(page));
  assert.equal(ref.inference.max_context_fits, 131072);
  assert.equal(await ddOf(page.locator('#inference-box'), 'Longest context that fits').textContent(), '131,072 tokens (the model\'s context limit)');
  assert.ok(r.warnings.some((w) => w.code === 'exceeds_model_context'));
  assert.deepEqual(problems, []);
  await context.close();
});

test('vLLM requests that queue say so in the badge', async () => {
  const { page, problems, context } = await openPage(chrome.browser,
    `${server.base}/?v=1&model=meta-llama/Llama-3.1-8B&mode=inference&gpu=rtx-4090-24gb&inference.engine=vllm&inference.batch_size=16&inference.prompt_len=32000&inference.new_tokens=768&inference.max_model_len=32768`);
  const r = await pageResult(page);
  const ref = cli(await pageScenario(page));
  assert.equal(ref.verdict, 'fits_queued');
  assert.equal(await page.locator('#verdict .badge').textContent(), `Fits, ${ref.inference.concurrent_sequences} of 16 requests at once; the rest queue`);
  assert.equal(r.inference.concurrent_sequences, ref.inference.concurrent_sequences);
  assert.match(await ddOf(page.locator('#inference-box'), 'KV cache pool, all requests together').textContent(), /^[\d,]+ tokens$/);
  assert.deepEqual(problems, []);
  await context.close();
});

test('the matrix merges identical columns, hides formats the engine cannot run, and shows vLLM\'s KV pool', async () => {
  const { page, problems, context } = await openPage(chrome.browser, `${server.base}/?v=1&model=meta-llama/Llama-3.1-8B&mode=inference&gpu=h100-sxm-80gb`);
  await page.waitForFunction(() => window.__vramplan.lastMatrixMs !== null);
  const heads = await page.locator('#matrix thead th').allTextContents();
  const rows = await page.locator('#matrix tbody th').allTextContents();
  assert.ok(!rows.some((x) => x.startsWith('GGUF')), `transformers runs no GGUF: ${rows}`);
  // No two columns show the same cells.
  const columns = await page.evaluate(() => {
    const trs = [...document.querySelectorAll('#matrix tbody tr')];
    const n = trs[0].querySelectorAll('td').length;
    return [...Array(n).keys()].map((c) => trs.map((tr) => tr.querySelectorAll('td')[c].textContent).join('/'));
  });
  assert.equal(new Set(columns).size, columns.length, `columns: ${heads}`);
  // Llama 3 8B and 3.1 8B are one column with both names in its title.
  const merged = await page.locator('#matrix thead th[title*="the same estimates"]').count();
  assert.ok(merged >= 1);

  await page.selectOption('#f-inference-engine', 'vllm');
  await page.waitForFunction(() => /[kM]$/.test(document.querySelector('#matrix button.cell')?.textContent ?? ''));
  const cells = await page.locator('#matrix button.cell').allTextContents();
  assert.ok(new Set(cells).size > 1, `vLLM cells differ by their KV pool: ${cells}`);
  const cell = page.locator('#matrix button.cell').first();
  const model = await cell.getAttribute('data-model');
  const s = structuredClone(await pageScenario(page));
  s.model = model;
  s.inference.weights = 'bf16';
  const ref = cli(s);
  const kv = ref.inference.kv_token_capacity;
  assert.equal(await cell.textContent(), kv >= 1e6 ? `${(kv / 1e6).toFixed(1)}M` : `${Math.round(kv / 1e3)}k`);
  assert.deepEqual(problems, []);
  await context.close();
});
