// The page's launch-config box (web/launch-config.js): a pasted vLLM command line is detected,
// applied (the estimate is the native CLI's for the imported scenario) and its notes listed; a
// config naming no preset keeps the page's model; bad input shows the error naming the key and
// changes nothing; the export menu writes the shown scenario as the chosen config, as the CLI does.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer, startBrowser, openPage, gotoReady, settled, pageScenario, pageResult, cli, CLI } from './harness.mjs';

let server; let chrome;
before(async () => { server = await startServer(); chrome = await startBrowser(); });
after(async () => { await chrome?.close(); await server?.close(); });

async function importText(page, text) {
  await page.fill('#launch-text', text);
  await page.click('#launch-import');
  await settled(page);
  return page.locator('#launch-import-status').textContent();
}

test('import applies a pasted config and lists its notes; export writes the shown scenario', async () => {
  const { page, problems } = await openPage(chrome.browser, null);
  await gotoReady(page, `${server.base}/`);
  await page.locator('#launch-box summary').click();

  const status = await importText(page, 'vllm serve Qwen/Qwen2.5-7B-Instruct \\\n  --max-model-len 8192 --gpu-memory-utilization 0.85 --port 8000\n');
  assert.match(status, /Read as vllm\./);
  assert.match(status, /ignored: --port/);
  const scenario = await pageScenario(page);
  assert.equal(scenario.model, 'Qwen/Qwen2.5-7B-Instruct');
  assert.equal(scenario.mode, 'inference');
  assert.equal(scenario.inference.engine, 'vllm');
  assert.equal(scenario.inference.max_model_len, 8192);
  const native = cli(scenario);
  assert.equal((await pageResult(page)).gpu.device_total_bytes, native.gpu.device_total_bytes);

  // The export menu follows the mode; its text is the CLI's export of the same scenario.
  assert.equal(await page.locator('#launch-to').inputValue(), 'vllm');
  await page.click('#launch-export');
  const text = await page.locator('#launch-out').inputValue();
  assert.match(text, /^vllm serve Qwen\/Qwen2\.5-7B-Instruct \\\n/m);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'launch-'));
  fs.writeFileSync(path.join(dir, 's.json'), JSON.stringify(scenario));
  const expected = execFileSync(CLI, ['export', '--to', 'vllm', path.join(dir, 's.json')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  assert.equal(text, expected);
  assert.equal(await page.locator('#launch-copy').isDisabled(), false);

  // A config that names no preset (a DeepSpeed JSON) keeps the page's model.
  const ds = await importText(page, '{"zero_optimization": {"stage": 3}, "bf16": {"enabled": true}, "train_batch_size": 16, "train_micro_batch_size_per_gpu": 2}');
  assert.match(ds, /Read as deepspeed\..*model on the page is kept/s);
  const trained = await pageScenario(page);
  assert.equal(trained.model, 'Qwen/Qwen2.5-7B-Instruct');
  assert.equal(trained.parallel.zero, 3);
  assert.equal(trained.parallel.gpus, 8);
  assert.equal(await page.locator('#launch-to').inputValue(), 'llamafactory');

  // Bad input: the error names the key, the scenario stays.
  const bad = await importText(page, 'finetuning_type: lora\nlora_rank: "<img src=x onerror=alert(1)>"\n');
  assert.match(bad, /lora_rank: expected an integer/);
  assert.equal(await page.locator('#launch-import-status img').count(), 0, 'text only');
  assert.deepEqual(await pageScenario(page), trained);
  assert.deepEqual(problems, []);
});
