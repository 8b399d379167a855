// What a new user tripped over, and the page's structure: the .wasm is downloaded once (the worker
// gets the page's bytes), one estimate per edit, the GPU picker next to the model picker, error
// text in the error colour, engine-appropriate names for the totals, host RAM labelled per GPU
// (and per node when the result has it), training's "GPUs needed" when the result has it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, startBrowser, openPage, gotoReady, pageResult, settled } from './harness.mjs';
import { contrast } from './contrast.mjs';

let server; let chrome;
before(async () => { server = await startServer(); chrome = await startBrowser(); });
after(async () => { await chrome?.close(); await server?.close(); });

const rerendered = async (page, act) => {
  const before = await page.evaluate(() => window.__vramplan.renders);
  await act();
  await page.waitForFunction((n) => window.__vramplan.renders > n, before, { timeout: 5000 });
};

test('the .wasm is requested once: the matrix worker gets the page\'s bytes', async () => {
  const { page, problems, context } = await openPage(chrome.browser, null);
  const wasm = [];
  const js = [];
  context.on('request', (r) => {
    const p = new URL(r.url()).pathname;
    if (p.endsWith('.wasm')) wasm.push(p);
    if (p.endsWith('vramplan.mjs')) js.push(p);
  });
  await page.goto(`${server.base}/`);
  await page.waitForFunction(() => window.__vramplan?.ready === true, null, { timeout: 20000 });
  await page.waitForFunction(() => window.__vramplan.lastMatrixMs !== null); // the worker's core answered
  await page.fill('#f-train-seq_len', '4096');
  await page.waitForFunction(() => window.__vramplan.scenario.train.seq_len === 4096);
  await page.waitForTimeout(300);
  assert.deepEqual(wasm, ['/vramplan.wasm'], `requests for the .wasm (page and worker): ${wasm}`);
  assert.ok(js.length >= 1);
  assert.deepEqual(problems, []);
  await context.close();
});

test('one estimate per edit', async () => {
  const { page, problems, context } = await openPage(chrome.browser, `${server.base}/`);
  for (const [sel, value] of [['#f-train-seq_len', '1024'], ['#f-train-micro_batch_size', '3'], ['#f-train-lora-rank', '32']]) {
    const before = await page.evaluate(() => window.__vramplan.estimates);
    await rerendered(page, () => page.fill(sel, value));
    await page.waitForTimeout(100); // anything the edit might still run later
    assert.equal(await page.evaluate(() => window.__vramplan.estimates) - before, 1, `estimates for ${sel} = ${value}`);
  }
  // The "what fits" answers come from that one estimate.
  assert.equal(typeof (await pageResult(page)).training.max_micro_batch_fits, 'number');
  assert.match(await page.locator('#inference-box').textContent(), /Largest micro-batch/);
  assert.deepEqual(problems, []);
  await context.close();
});

test('the GPU picker is next to the model picker, on the first screen', async () => {
  const { page, problems, context } = await openPage(chrome.browser, `${server.base}/`, { viewport: { width: 1280, height: 900 } });
  assert.equal(await page.evaluate(() => document.getElementById('g-model').nextElementSibling.id), 'g-gpu');
  const box = await page.locator('#gpu').boundingBox();
  assert.ok(box && box.y + box.height <= 900, `the GPU select is visible without scrolling (bottom at ${box?.y + box?.height}px)`);
  assert.deepEqual(problems, []);
  await context.close();
});

test('error text is drawn in the error colour (status lines and field errors)', async () => {
  for (const colorScheme of ['light', 'dark']) {
    const { page, problems, context } = await openPage(chrome.browser, `${server.base}/`, { colorScheme });
    const bad = await page.evaluate(() => { const p = document.createElement('p'); p.className = 'bad'; document.body.append(p); const c = getComputedStyle(p).color; p.remove(); return c; });
    await page.locator('#hub-box summary').click();
    await page.fill('#hub-id', 'not a valid id!');
    await page.click('#hub-load');
    await page.locator('#hub-status.bad').waitFor();
    assert.equal(await page.locator('#hub-status').evaluate((n) => getComputedStyle(n).color), bad, `${colorScheme}: hub status error colour`);
    await page.locator('#cfg-box summary').click();
    await page.fill('#cfg-text', '{"model_type": "llama"}');
    await page.click('#cfg-use');
    await page.locator('#cfg-status.bad').waitFor();
    assert.equal(await page.locator('#cfg-status').evaluate((n) => getComputedStyle(n).color), bad, `${colorScheme}: config status error colour`);
    await page.fill('#f-train-lora-rank', '0');
    await page.locator('.field-error').first().waitFor();
    assert.equal(await page.locator('.field-error').first().evaluate((n) => getComputedStyle(n).color), bad, `${colorScheme}: field error colour`);
    assert.deepEqual(problems, []);
    await context.close();
  }
});

test('the totals are named in the engine\'s own terms', async () => {
  const foot = (page) => page.locator('#breakdown tfoot').textContent();
  const { page, problems, context } = await openPage(chrome.browser, `${server.base}/?v=1&model=meta-llama/Llama-3.1-8B`);
  assert.match(await foot(page), /torch\.cuda\.max_memory_allocated\(\)/, 'training runs on PyTorch');
  await rerendered(page, () => page.selectOption('#f-mode', 'inference'));
  await rerendered(page, () => page.selectOption('#f-inference-engine', 'transformers'));
  assert.match(await foot(page), /torch\.cuda\.max_memory_allocated\(\)/, 'transformers runs on PyTorch');
  await rerendered(page, () => page.selectOption('#f-inference-engine', 'vllm'));
  assert.doesNotMatch(await foot(page), /torch\.cuda/);
  assert.match(await foot(page), /vLLM/);
  await rerendered(page, () => page.selectOption('#f-inference-engine', 'llama_cpp'));
  assert.doesNotMatch(await foot(page), /torch/);
  assert.match(await foot(page), /llama\.cpp/);
  // Nothing visible names PyTorch for an engine that has none.
  const visible = await page.evaluate(() => document.getElementById('app').innerText);
  assert.doesNotMatch(visible, /torch\.cuda|PyTorch can use/);
  assert.deepEqual(problems, []);
  await context.close();
});

test('the vLLM release range is on the form (vLLM only) and moves the KV pool', async () => {
  const { page, problems, context } = await openPage(chrome.browser, `${server.base}/?v=1&model=meta-llama/Llama-3.1-8B&mode=inference&inference.engine=vllm`);
  const field = page.locator('#f-inference-vllm_version');
  assert.equal(await field.count(), 1);
  const options = await field.locator('option').evaluateAll((os) => os.map((o) => o.value));
  for (const v of ['0.21+', '0.8-0.20', '0.6-0.10_v0']) assert.ok(options.includes(v), `option ${v} in ${options}`);
  const kv = () => page.evaluate(() => window.__vramplan.result.inference.kv_token_capacity);
  const inside = await kv();  // 0.21+: the CUDA graphs come out of the KV budget
  await rerendered(page, () => page.selectOption('#f-inference-vllm_version', '0.8-0.20'));
  assert.equal(await page.evaluate(() => window.__vramplan.scenario.inference.vllm_version), '0.8-0.20');
  assert.ok(await kv() > inside, 'graphs on top of gpu_memory_utilization leave a larger KV pool');
  await settled(page);
  assert.match(decodeURIComponent(page.url()), /inference\.vllm_version=0\.8-0\.20/);
  // Another engine hides it.
  await rerendered(page, () => page.selectOption('#f-inference-engine', 'llama_cpp'));
  assert.equal(await page.locator('#f-inference-vllm_version').isVisible(), false);
  assert.deepEqual(problems, []);
  await context.close();
});

test('host RAM is labelled per GPU, and per node from the core\'s cpu.node_bytes', async () => {
  // One GPU: no node line. Eight GPUs with ZeRO-3 and optimizer offload: each rank offloads its
  // shard, and the node holds eight such processes (cpu.node_bytes = 8 x cpu.bytes).
  const one = await openPage(chrome.browser, `${server.base}/?v=1&model=meta-llama/Llama-3.1-8B&train.method=full&parallel.zero=2&parallel.offload_optimizer=cpu`);
  const single = await pageResult(one.page);
  assert.ok(single.cpu.bytes > 0);
  assert.doesNotMatch(await one.page.locator('#cpu-box').textContent(), /per node:/);
  await one.context.close();
  const q = '?v=1&model=meta-llama/Llama-3.1-8B&train.method=full&parallel.gpus=8&parallel.zero=3&parallel.offload_optimizer=cpu';
  const { page, problems, context } = await openPage(chrome.browser, `${server.base}/${q}`);
  const r = await pageResult(page);
  const cpu = r.cpu.bytes;
  assert.ok(cpu > 0);
  assert.equal(r.cpu.node_processes, 8);
  assert.equal(r.cpu.node_bytes, 8 * cpu);
  const text = await page.locator('#cpu-box').textContent();
  assert.match(text, new RegExp(`Host RAM per GPU: ${(cpu / 1024 ** 3).toFixed(1)} GiB`));
  assert.match(text, new RegExp(`Host RAM per node: ${((8 * cpu) / 1024 ** 3).toFixed(1)} GiB \\(8 GPU processes per node`));
  assert.deepEqual(problems, []);
  await context.close();
});

test('training shows the core\'s "GPUs needed", and ZeRO-3\'s answer when its own sharding cannot fit', async () => {
  const { page, problems, context } = await openPage(chrome.browser, `${server.base}/?v=1&model=meta-llama/Llama-3.1-8B&train.method=full`);
  const box = page.locator('#inference-box');
  const r = await pageResult(page);
  assert.equal(typeof r.training.min_gpus, 'number');
  const row = box.locator('dt', { hasText: 'GPUs needed (this parallel set-up)' });
  assert.equal(await row.count(), 1);
  assert.equal(await row.locator('xpath=following-sibling::dd[1]').textContent(), r.training.min_gpus > 0 ? String(r.training.min_gpus) : '—');
  // Same style as serving's answer: a row of the same definition list.
  assert.equal(await box.locator('dl.kv').count(), 1);
  // 70B full fine-tuning without ZeRO: no GPU count fits (every rank holds everything); ZeRO-3 does.
  await gotoReady(page, `${server.base}/?v=1&model=meta-llama/Llama-3.1-70B-Instruct&train.method=full`);
  const big = await pageResult(page);
  assert.equal(big.training.min_gpus, 0);
  assert.ok(big.training.min_gpus_zero3 > 1);
  const z3 = box.locator('dt', { hasText: 'GPUs needed with ZeRO-3' });
  assert.equal(await z3.locator('xpath=following-sibling::dd[1]').textContent(), big.training.min_gpus_zero3.toLocaleString('en-US'));
  assert.deepEqual(problems, []);
  await context.close();
});

test('matrix cells and the verdict badge as drawn reach 4.5:1 in both themes', async () => {
  const hex = (rgb) => `#${rgb.match(/\d+/g).slice(0, 3).map((n) => Number(n).toString(16).padStart(2, '0')).join('')}`;
  for (const colorScheme of ['light', 'dark']) {
    const { page, problems, context } = await openPage(chrome.browser, `${server.base}/?v=1&model=Qwen/Qwen2.5-7B&gpu=a100-sxm-80gb`, { colorScheme });
    await page.waitForFunction(() => document.querySelector('#matrix button.cell.fits') && document.querySelector('#matrix button.cell.nofit'));
    const pairs = await page.evaluate(() => ['#matrix button.cell.fits', '#matrix button.cell.nofit', '#verdict .badge']
      .map((sel) => { const st = getComputedStyle(document.querySelector(sel)); return [sel, st.color, st.backgroundColor]; }));
    for (const [sel, fg, bg] of pairs) {
      const ratio = contrast(hex(fg), hex(bg));
      assert.ok(ratio >= 4.5, `${colorScheme}: ${sel} ${fg} on ${bg} = ${ratio.toFixed(2)}:1`);
    }
    assert.deepEqual(problems, []);
    await context.close();
  }
});

test('the optimizer help on the page states the bytes per parameter per precision mode', async () => {
  const { page, problems, context } = await openPage(chrome.browser, `${server.base}/`);
  const help = await page.locator('#f-train-optimizer-help').textContent();
  assert.match(help, /4 B with pure bf16\/fp16 \(the default\)/);
  assert.match(help, /8 B with fp32 or AMP/);
  assert.doesNotMatch(help, /2 fp32 states per trainable param \(8 B\)/);
  assert.deepEqual(problems, []);
  await context.close();
});

test('serving names the format answer for what it is: the highest-precision format that fits', async () => {
  const { page, problems, context } = await openPage(chrome.browser, `${server.base}/?v=1&model=meta-llama/Llama-3.1-8B&mode=inference`);
  const r = await pageResult(page);
  const box = page.locator('#inference-box');
  assert.equal(await box.locator('dt', { hasText: 'Smallest weight format' }).count(), 0);
  const row = box.locator('dt', { hasText: 'Highest-precision weight format that fits' });
  assert.equal(await row.count(), 1);
  assert.equal(await row.locator('xpath=following-sibling::dd[1]').textContent(), r.inference.smallest_format_fits || 'none');
  assert.deepEqual(problems, []);
  await context.close();
});
