// The calculator: first estimate, live recompute matching the native CLI, preset search, config
// paste, layout at 375 px, no console errors; saves a screenshot (docs/screenshot.png only with
// UPDATE_SCREENSHOT=1, so that running the tests leaves the work tree clean).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startServer, startBrowser, openPage, gotoReady, cli, pageScenario, pageResult, settled, configOutcome, ROOT, TINY_LLAMA } from './harness.mjs';

let server; let chrome;
before(async () => { server = await startServer(); chrome = await startBrowser(); });
after(async () => { await chrome?.close(); await server?.close(); });

const gibText = (b) => `${(b / 1024 ** 3).toFixed(1)} GiB`;

async function expectMatchesCli(page, what) {
  const scenario = await pageScenario(page);
  const shown = await pageResult(page);
  const ref = cli(scenario);
  assert.equal(ref.ok, true, `CLI rejected the page's scenario (${what})`);
  assert.equal(shown.gpu.device_total_bytes, ref.gpu.device_total_bytes, `device_total_bytes differs from the CLI after ${what}`);
  assert.equal(shown.gpu.fits, ref.gpu.fits, `fits differs from the CLI after ${what}`);
  assert.equal(await page.locator('#verdict .big strong').textContent(), gibText(ref.gpu.device_total_bytes), `shown total after ${what}`);
  return scenario;
}

test('page loads and shows an estimate; time to first estimate', async () => {
  const started = Date.now();
  const { page, problems, context } = await openPage(chrome.browser, `${server.base}/`);
  const wall = Date.now() - started;
  const t = await page.evaluate(() => window.__vramplan.firstEstimateMs);
  console.log(`# time to first estimate: ${t.toFixed(0)} ms in page (module start -> first render), ${wall} ms wall incl. navigation`);
  await page.locator('#verdict .badge').waitFor();
  assert.match(await page.locator('#verdict .badge').textContent(), /^(Fits|Does not fit)$/);
  assert.ok(await page.locator('#breakdown tbody tr').count() > 0);
  await page.waitForFunction(() => window.__vramplan.lastMatrixMs !== null); // drawn when the worker answers
  assert.equal(await page.locator('#matrix button.cell').count() > 0, true);
  await expectMatchesCli(page, 'load');
  assert.deepEqual(problems, []);
  await context.close();
});

test('changing inputs recomputes live and matches the native CLI', async () => {
  const { page, problems, context } = await openPage(chrome.browser, `${server.base}/`);
  const steps = [
    ['method = full', () => page.selectOption('#f-train-method', 'full')],
    ['seq_len = 4096', () => page.fill('#f-train-seq_len', '4096')],
    ['micro_batch_size = 4', () => page.fill('#f-train-micro_batch_size', '4')],
    ['gradient checkpointing on', () => page.selectOption('#f-train-gradient_checkpointing', 'true')],
    ['optimizer = adamw_8bit', () => page.selectOption('#f-train-optimizer', 'adamw_8bit')],
    ['precision = bf16', () => page.selectOption('#f-train-precision', 'bf16')],
    ['GPU = rtx-4090-24gb', () => page.selectOption('#gpu', 'rtx-4090-24gb')],
    ['ZeRO-3 on 8 GPUs', async () => { await page.fill('#f-parallel-gpus', '8'); await page.selectOption('#f-parallel-zero', '3'); }],
    ['ZeRO bucket 2e8 elements', () => page.fill('#f-parallel-reduce_bucket_size', '200000000')],
    ['overlap_comm off', () => page.selectOption('#f-parallel-overlap_comm', 'false')],
    ['overlap_comm back to auto', () => page.selectOption('#f-parallel-overlap_comm', '')],
    ['method = qlora', () => page.selectOption('#f-train-method', 'qlora')],
    ['qlora_bits = 8', () => page.selectOption('#f-train-qlora_bits', '8')],
    ['GPTQ base', () => page.selectOption('#f-train-qlora_backend', 'gptq')],
    ['DoRA on', () => page.check('#f-train-lora-use_dora')],
    ['lora rank = 64', () => page.fill('#f-train-lora-rank', '64')],
    ['FSDP instead of ZeRO', async () => { await page.selectOption('#f-parallel-zero', '0'); await page.check('#f-parallel-fsdp'); }],
    ['FSDP1 frozen-unit hooks off', () => page.selectOption('#f-parallel-fsdp_frozen_unit_hooks', 'false')],
    ['qlora_bits = 4', () => page.selectOption('#f-train-qlora_bits', '4')],
    ['torchao base', () => page.selectOption('#f-train-qlora_backend', 'torchao')],
    ['one GPU', async () => { await page.uncheck('#f-parallel-fsdp'); await page.fill('#f-parallel-gpus', '1'); }],
    ['torchtune 0.1 load', async () => {
      const select = page.locator('#f-framework-model_load');
      if (!(await select.isVisible())) await page.locator('details.sub:has(#f-framework-model_load) > summary').click();
      await select.selectOption('torchtune_0_1');
    }],
    ['mode = inference', () => page.selectOption('#f-mode', 'inference')],
    ['weights = int8', () => page.selectOption('#f-inference-weights', 'int8')],
    ['prompt_len = 8192', () => page.fill('#f-inference-prompt_len', '8192')],
    ['custom GPU 40 GiB', async () => { await page.selectOption('#gpu', 'custom'); await page.fill('#gpu-mem', '40'); }],
  ];
  const times = [];
  const expected = {
    'method = full': (s) => s.train.method === 'full', 'seq_len = 4096': (s) => s.train.seq_len === 4096,
    'micro_batch_size = 4': (s) => s.train.micro_batch_size === 4, 'GPU = rtx-4090-24gb': (s) => s.gpu === 'rtx-4090-24gb',
    'ZeRO-3 on 8 GPUs': (s) => s.parallel.gpus === 8 && s.parallel.zero === 3, 'qlora_bits = 8': (s) => s.train.qlora_bits === 8,
    'ZeRO bucket 2e8 elements': (s) => s.parallel.reduce_bucket_size === 200000000,
    'overlap_comm off': (s) => s.parallel.overlap_comm === false,
    'overlap_comm back to auto': (s) => !('overlap_comm' in s.parallel),
    'FSDP1 frozen-unit hooks off': (s) => s.parallel.fsdp === true && s.parallel.fsdp_frozen_unit_hooks === false,
    'GPTQ base': (s) => s.train.qlora_backend === 'gptq', 'DoRA on': (s) => s.train.lora.use_dora === true,
    'torchao base': (s) => s.train.qlora_backend === 'torchao' && s.train.qlora_bits === 4,
    'torchtune 0.1 load': (s) => s.framework.model_load === 'torchtune_0_1' && s.parallel.gpus === 1,
    'mode = inference': (s) => s.mode === 'inference', 'weights = int8': (s) => s.inference.weights === 'int8',
    'custom GPU 40 GiB': (s) => typeof s.gpu === 'object' && s.gpu.memory_bytes === 40 * 1024 ** 3,
  };
  for (const [what, act] of steps) {
    const before = await page.evaluate(() => window.__vramplan.renders);
    await act();
    await page.waitForFunction((n) => window.__vramplan.renders > n, before, { timeout: 5000 })
      .catch(async () => assert.fail(`no re-render after ${what}: ${await page.locator('#field-errors').textContent()}`));
    const s = await expectMatchesCli(page, what);
    if (expected[what]) assert.ok(expected[what](s), `scenario after ${what}: ${JSON.stringify(s)}`);
    times.push(await page.evaluate(() => window.__vramplan.lastRenderMs));
  }
  // vLLM's speculative decoding controls (inference.speculative): shown in inference mode on vLLM,
  // the method offers none / mtp (and vLLM's per-model names), the draft tokens only with mtp.
  await page.selectOption('#f-inference-engine', 'vllm');
  const spec = page.locator('#f-inference-speculative-method');
  await spec.waitFor({ state: 'visible', timeout: 5000 }).catch(() => {});
  assert.ok(await spec.isVisible(), 'speculative decoding control shown for vLLM');
  // vLLM's per-model method names are accepted as aliases of mtp.
  assert.deepEqual((await spec.locator('option').evaluateAll((os) => os.map((o) => o.value).filter((v) => v))).slice(0, 2), ['none', 'mtp']);
  assert.equal(await page.locator('#f-inference-speculative-num_speculative_tokens').isVisible(), false);
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)];
  console.log(`# input-to-render: median ${median.toFixed(1)} ms, max ${times.at(-1).toFixed(1)} ms over ${times.length} changes (one frame = 16.7 ms)`);
  assert.ok(median < 50, `median input-to-render ${median} ms`);
  const m = await page.evaluate(() => ({ ms: window.__vramplan.lastMatrixMs, c: window.__vramplan.lastMatrixComputeMs, n: window.__vramplan.lastMatrixCells }));
  console.log(`# matrix recompute: ${m.c.toFixed(1)} ms compute for ${m.n} estimates in the worker, ${m.ms.toFixed(1)} ms request-to-drawn`);
  assert.deepEqual(problems, []);
  await context.close();
});

test('an invalid input is named next to the field and not applied', async () => {
  const { page, problems, context } = await openPage(chrome.browser, `${server.base}/`);
  const before = await pageScenario(page);
  await page.fill('#f-train-lora-rank', '0');
  await page.locator('#field-errors:not([hidden])').waitFor();
  assert.match(await page.locator('#field-errors').textContent(), /train\.lora\.rank/);
  assert.equal(await page.locator('#f-train-lora-rank').getAttribute('aria-invalid'), 'true');
  assert.deepEqual(await pageScenario(page), before);
  await page.fill('#f-train-lora-rank', '32');
  await page.locator('#field-errors').waitFor({ state: 'hidden' });
  assert.equal((await pageScenario(page)).train.lora.rank, 32);
  assert.deepEqual(problems, []);
  await context.close();
});

test('the layer-kernels select sets train.kernels, matches the CLI and shrinks the saved activations', async () => {
  const { page, problems, context } = await openPage(chrome.browser, `${server.base}/`);
  const select = page.locator('#f-train-kernels');
  assert.equal(await select.isVisible(), true, 'shown with the other memory savers');
  assert.deepEqual(await select.locator('option').evaluateAll((os) => os.map((o) => o.value).filter((v) => v)), ['pytorch', 'unsloth', 'liger']);
  const saved = {};
  for (const kernels of ['liger', 'unsloth', 'pytorch']) {
    const before = await page.evaluate(() => window.__vramplan.renders);
    await select.selectOption(kernels);
    await page.waitForFunction((n) => window.__vramplan.renders > n, before, { timeout: 5000 });
    const s = await expectMatchesCli(page, `kernels = ${kernels}`);
    assert.equal(s.train.kernels ?? 'pytorch', kernels);
    saved[kernels] = (await pageResult(page)).gpu.saved_activation_bytes;
  }
  // The default scenario (LoRA, RMSNorm, SwiGLU): both kernel sets save less than transformers + PEFT.
  assert.ok(saved.liger < saved.pytorch && saved.unsloth < saved.pytorch, JSON.stringify(saved));
  await page.selectOption('#f-mode', 'inference');
  assert.equal(await select.isVisible(), false, 'training only');
  assert.deepEqual(problems, []);
  await context.close();
});

test('preset search filters and picks a model', async () => {
  const { page, problems, context } = await openPage(chrome.browser, `${server.base}/`);
  await page.fill('#preset-search', 'qwen2.5 7b');
  const options = await page.locator('#preset option').allTextContents();
  assert.ok(options.length >= 1, 'some match');
  assert.ok(options.every((t) => /qwen2\.5/i.test(t) && /7B/.test(t)), `only Qwen2.5 7B presets: ${options}`);
  await page.press('#preset-search', 'Enter');
  await page.waitForFunction(() => /qwen2\.5-7b/i.test(window.__vramplan.scenario.model));
  const s = await expectMatchesCli(page, 'preset Qwen2.5 7B');
  assert.match(s.model, /Qwen2\.5-7B/i);
  assert.match(await page.locator('#model-info').textContent(), /Qwen2\.5/);
  await page.fill('#preset-search', 'no such model zzz');
  assert.match(await page.locator('#preset').textContent(), /No preset matches/);
  // Picking from the list with the keyboard.
  await page.fill('#preset-search', 'llama 70b');
  await page.press('#preset-search', 'ArrowDown');
  await page.keyboard.press('ArrowDown');
  await page.waitForFunction(() => /70b/i.test(window.__vramplan.scenario.model));
  assert.deepEqual(problems, []);
  await context.close();
});

test('pasted config.json is validated by the core and used', async () => {
  const { page, problems, context } = await openPage(chrome.browser, `${server.base}/`);
  await page.locator('#cfg-box summary').click();
  await page.fill('#cfg-text', '{"model_type": "llama", "hidden_size": ');
  await page.click('#cfg-use');
  assert.match(await configOutcome(page), /not accepted/);
  assert.equal(typeof (await pageScenario(page)).model, 'string', 'invalid config not applied');
  await page.fill('#cfg-text', JSON.stringify({ model_type: 'llama' }));
  await page.click('#cfg-use');
  assert.match(await configOutcome(page), /not accepted/);
  await page.fill('#cfg-text', JSON.stringify(TINY_LLAMA, null, 2));
  await page.click('#cfg-use');
  assert.match(await configOutcome(page), /loaded/);
  assert.equal(typeof (await pageScenario(page)).model, 'object');
  const s = await expectMatchesCli(page, 'pasted config');
  assert.equal(s.model.hidden_size, 512);
  await settled(page);
  assert.match(page.url(), /[?&]cfg=/);
  assert.deepEqual(problems, []);
  await context.close();
});

test('usable at 375 px, dark mode, screenshot', async () => {
  const { page, problems, context } = await openPage(chrome.browser, `${server.base}/?v=1&model=meta-llama/Llama-3.1-8B&train.method=lora&train.seq_len=2048&train.micro_batch_size=4&gpu=rtx-4090-24gb`, { viewport: { width: 375, height: 800 }, colorScheme: 'dark' });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `no horizontal scrolling at 375 px (overflow ${overflow}px)`);
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.notEqual(bg, 'rgb(251, 251, 253)', 'dark background');
  // Every visible control has a label.
  const unlabeled = await page.evaluate(() => [...document.querySelectorAll('input, select, textarea')]
    .filter((c) => c.offsetParent && c.type !== 'hidden' && !c.labels?.length && !c.getAttribute('aria-label') && !c.getAttribute('aria-labelledby')).map((c) => c.id));
  assert.deepEqual(unlabeled, []);
  await context.close();
  const wide = await openPage(chrome.browser, `${server.base}/?v=1&model=meta-llama/Llama-3.1-8B&train.method=lora&train.seq_len=2048&train.micro_batch_size=4&gpu=rtx-4090-24gb`, { viewport: { width: 1280, height: 1000 } });
  await wide.page.waitForTimeout(200);
  const shot = process.env.UPDATE_SCREENSHOT === '1' ? path.join(ROOT, 'docs/screenshot.png') : path.join(ROOT, 'build/screenshot.png');
  const png = await wide.page.screenshot({ path: shot });
  assert.ok(png.length > 10000, `screenshot has content (${png.length} B)`);
  assert.deepEqual([...problems, ...wide.problems], []);
  await wide.context.close();
});
