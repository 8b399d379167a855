// The methods x sizes matrix: rows and columns, values equal to the CLI, click loads the cell.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, startBrowser, openPage, cli, pageScenario, pageResult, settled } from './harness.mjs';

let server; let chrome;
before(async () => { server = await startServer(); chrome = await startBrowser(); });
after(async () => { await chrome?.close(); await server?.close(); });

test('matrix cells equal the CLI and a click loads the cell', async () => {
  const { page, problems, context } = await openPage(chrome.browser, `${server.base}/?v=1&model=Qwen/Qwen2.5-7B&train.seq_len=2048&gpu=rtx-4090-24gb`);
  await page.waitForFunction(() => window.__vramplan.lastMatrixMs !== null);
  assert.equal(await page.inputValue('#ladder'), 'Qwen2.5', 'the ladder of the current model');
  const rows = await page.locator('#matrix tbody th').allTextContents();
  assert.deepEqual(rows, ['Full (AMP)', 'Full (16-bit)', 'Freeze', 'LoRA', 'QLoRA 8-bit', 'QLoRA 4-bit', 'QLoRA 2-bit']);
  const cols = await page.locator('#matrix thead th').count();
  assert.ok(cols >= 4, 'several sizes');
  const m = await page.evaluate(() => ({ ms: window.__vramplan.lastMatrixMs, c: window.__vramplan.lastMatrixComputeMs, n: window.__vramplan.lastMatrixCells }));
  console.log(`# first matrix: ${m.c.toFixed(1)} ms compute for ${m.n} estimates, ${m.ms.toFixed(1)} ms request-to-drawn (includes starting the worker's core)`);

  const base = await pageScenario(page);
  // The 4-bit QLoRA cell of the largest model.
  const cell = page.locator('#matrix tbody tr').nth(5).locator('button.cell').last();
  const model = await cell.getAttribute('data-model');
  const expected = structuredClone(base);
  expected.model = model;
  expected.train.method = 'qlora';
  expected.train.qlora_bits = 4;
  const ref = cli(expected);
  assert.equal(await cell.textContent(), (ref.gpu.device_total_bytes / 1024 ** 3).toFixed(1));
  assert.equal(await cell.evaluate((b, cls) => b.classList.contains(cls), ref.gpu.fits ? 'fits' : 'nofit'), true);
  await cell.click();
  await page.waitForFunction((m) => window.__vramplan.scenario.model === m, model);
  const s = await pageScenario(page);
  assert.equal(s.train.method, 'qlora');
  assert.equal(s.train.qlora_bits, 4);
  assert.equal(s.train.seq_len, 2048, 'keeps the user settings');
  assert.equal((await pageResult(page)).gpu.device_total_bytes, ref.gpu.device_total_bytes);
  await settled(page);
  assert.match(page.url(), /train\.method=qlora/);
  assert.equal(await page.inputValue('#f-train-method'), 'qlora');
  await page.waitForFunction(() => document.querySelector('#matrix button.cell.current') !== null);

  // Full (AMP) row uses amp_bf16.
  const amp = page.locator('#matrix tbody tr').nth(0).locator('button.cell').first();
  await amp.click();
  await page.waitForFunction(() => window.__vramplan.scenario.train.method === 'full');
  assert.equal((await pageScenario(page)).train.precision, 'amp_bf16');

  // Another ladder; inference mode has weight-format rows.
  await page.selectOption('#ladder', 'Llama 3.x');
  await page.waitForFunction(() => document.querySelector('#matrix thead').textContent.includes('70B'));
  await page.selectOption('#f-mode', 'inference');
  await page.waitForFunction(() => document.querySelector('#matrix tbody th')?.textContent === 'bf16');
  assert.ok((await page.locator('#matrix tbody th').allTextContents()).includes('AWQ 4-bit'));
  assert.deepEqual(problems, []);
  await context.close();
});
