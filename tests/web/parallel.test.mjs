// Model-parallel training in the page: the Megatron fields (trainer, pipeline schedule, virtual
// stages, uneven split, context-parallel kind, expert tensor parallelism), the per-rank table of a
// pipeline job (one row per stage, the worst highlighted, numbers as the native CLI gives them),
// the core's errors for invalid degrees next to their field, and the new fields in the URL.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, startBrowser, openPage, cli, pageScenario, pageResult, settled } from './harness.mjs';

let server; let chrome;
before(async () => { server = await startServer(); chrome = await startBrowser(); });
after(async () => { await chrome?.close(); await server?.close(); });

const gib1 = (b) => (b / 1024 ** 3).toFixed(1);

async function change(page, act, what) {
  const n = await page.evaluate(() => window.__vramplan.renders);
  await act();
  await page.waitForFunction((k) => window.__vramplan.renders > k, n, { timeout: 5000 })
    .catch(async () => assert.fail(`no re-render after ${what}: ${await page.locator('#field-errors').textContent()}`));
  await settled(page);
}

// The rank table as shown: [{role, gpus, total, headroom, worst, tag}]. The table's module
// (ranks.js) is loaded when the first result with several rank roles arrives.
const shownRanks = async (page) => (await page.locator('#ranks').waitFor()) ?? page.locator('#ranks tbody tr').evaluateAll((rows) => rows.map((tr) => ({
  role: tr.dataset.role,
  gpus: tr.cells[1].textContent,
  total: tr.cells[2].textContent,
  headroom: tr.cells[3].textContent,
  worst: tr.classList.contains('worst'),
  tag: tr.querySelector('th .tag')?.textContent ?? null,
})));

test('a Megatron pipeline job set in the form shows one row per stage, the worst highlighted', async () => {
  const { page, problems, context } = await openPage(chrome.browser, `${server.base}/`);
  assert.equal(await page.locator('#ranks-box').isHidden(), true, 'one GPU: no per-rank table');
  assert.equal(await page.locator('#f-parallel-vpp').isHidden(), true, 'pipeline fields hidden without pp');
  await change(page, () => page.selectOption('#f-train-method', 'full'), 'method full');
  await change(page, () => page.selectOption('#f-framework-trainer', 'megatron'), 'trainer megatron');
  await change(page, () => page.fill('#f-parallel-gpus', '8'), 'gpus 8');
  await change(page, () => page.fill('#f-parallel-pp', '4'), 'pp 4');
  for (const id of ['#f-parallel-vpp', '#f-parallel-pp_schedule', '#f-parallel-pp_layers', '#f-framework-grad_reduce_in_fp32']) {
    assert.equal(await page.locator(id).isVisible(), true, `${id} shown for a Megatron pipeline job`);
  }
  const s = await pageScenario(page);
  assert.equal(s.framework.trainer, 'megatron');
  assert.equal(s.parallel.pp, 4);
  const ref = cli(s);
  assert.equal(ref.ok, true);
  const r = await pageResult(page);
  assert.deepEqual(r.ranks.map((k) => k.device_total_bytes), ref.ranks.map((k) => k.device_total_bytes));
  assert.equal(ref.ranks.length, 4);

  const rows = await shownRanks(page);
  const cap = ref.gpu.capacity_bytes;
  const worst = ref.ranks.findIndex((k) => k.device_total_bytes === ref.gpu.device_total_bytes);
  assert.deepEqual(rows, ref.ranks.map((k, i) => ({
    role: k.role, gpus: String(k.count), total: gib1(k.device_total_bytes),
    headroom: cap >= k.device_total_bytes ? gib1(cap - k.device_total_bytes) : `${gib1(k.device_total_bytes - cap)} short`,
    worst: i === worst, tag: i === worst ? 'worst' : null,
  })));
  assert.deepEqual(rows.map((x) => x.role), ['stage 0', 'stage 1', 'stage 2', 'stage 3']);
  assert.equal(rows.filter((x) => x.worst).length, 1);
  // The verdict is the worst rank's.
  assert.match(await page.locator('#verdict .big strong').textContent(), new RegExp(`^${gib1(ref.gpu.device_total_bytes)} GiB$`));

  // An uneven split typed into the form moves the worst rank with it.
  await change(page, () => page.fill('#f-parallel-pp_layers', '5,9,9,9'), 'pp_layers');
  assert.deepEqual((await pageScenario(page)).parallel.pp_layers, [5, 9, 9, 9]);
  const uneven = cli(await pageScenario(page));
  const rows2 = await shownRanks(page);
  assert.equal(rows2.findIndex((x) => x.worst), uneven.ranks.findIndex((k) => k.device_total_bytes === uneven.gpu.device_total_bytes));
  assert.deepEqual(rows2.map((x) => x.total), uneven.ranks.map((k) => gib1(k.device_total_bytes)));

  // Back to one stage: the table goes away.
  await change(page, () => page.fill('#f-parallel-pp_layers', ''), 'even split');
  await change(page, () => page.fill('#f-parallel-pp', '1'), 'pp 1');
  assert.equal(await page.locator('#ranks-box').isHidden(), true);
  assert.deepEqual(problems, []);
  await context.close();
});

test('the 70B Megatron job from a link: four stages of 16 GPUs, host RAM per node', async () => {
  const q = '?v=1&model=meta-llama/Llama-2-70b-hf&parallel.gpus=64&parallel.tp=4&parallel.pp=4&parallel.sequence_parallel=true'
    + '&parallel.zero=1&train.method=full&train.precision=mixed_bf16&train.micro_batch_size=1&train.seq_len=4096'
    + '&train.grad_accum_steps=32&train.gradient_checkpointing=false&train.attention=flash&framework.trainer=megatron';
  const { page, problems, context } = await openPage(chrome.browser, `${server.base}/${q}`);
  assert.equal(await page.locator('#notice').isHidden(), true);
  const ref = cli(await pageScenario(page));
  const rows = await shownRanks(page);
  assert.deepEqual(rows.map((x) => [x.role, x.gpus]), ref.ranks.map((k) => [k.role, String(k.count)]));
  assert.deepEqual(rows.map((x) => x.gpus), ['16', '16', '16', '16']);
  const worst = ref.ranks.findIndex((k) => k.device_total_bytes === ref.gpu.device_total_bytes);
  assert.deepEqual(rows.map((x) => x.worst), ref.ranks.map((_, i) => i === worst));
  assert.equal(await page.inputValue('#f-framework-trainer'), 'megatron');
  assert.equal(await page.inputValue('#f-parallel-pp'), '4');
  // Host RAM per node is shown whenever the core gives the rank some host RAM.
  const cpu = (await pageResult(page)).cpu;
  assert.equal(await page.locator('#cpu-box').isHidden(), !(cpu.bytes > 0));
  if (cpu.bytes > 0 && cpu.node_processes > 1) assert.match(await page.locator('#cpu-box .node-ram').textContent(), new RegExp(`${gib1(cpu.node_bytes)} GiB`));
  assert.deepEqual(problems, []);
  await context.close();
});

test('the per-rank table fits a 375 px screen in both themes', async () => {
  for (const colorScheme of ['light', 'dark']) {
    const { page, problems, context } = await openPage(chrome.browser,
      `${server.base}/?v=1&model=meta-llama/Llama-3.1-8B&train.method=full&framework.trainer=megatron&parallel.gpus=8&parallel.pp=4&parallel.pp_layers=5,9,9,9`,
      { viewport: { width: 375, height: 800 }, colorScheme });
    assert.equal((await shownRanks(page)).length, 4);
    assert.equal(await page.evaluate(() => document.documentElement.scrollWidth), 375, `${colorScheme}: no horizontal scrolling`);
    assert.deepEqual(problems, []);
    await context.close();
  }
});

test('an invalid degree is named next to its field as you type (pp 3 on a 32-layer model)', async () => {
  const { page, problems, context } = await openPage(chrome.browser, `${server.base}/`);
  await change(page, () => page.selectOption('#f-framework-trainer', 'megatron'), 'trainer megatron');
  await change(page, () => page.fill('#f-parallel-gpus', '12'), 'gpus 12');
  const before = await pageScenario(page);
  await page.fill('#f-parallel-pp', '3');
  await page.locator('#field-errors:not([hidden])').waitFor();
  assert.match(await page.locator('#field-errors').textContent(), /parallel\.pp\b/);
  assert.equal(await page.locator('#f-parallel-pp').getAttribute('aria-invalid'), 'true');
  assert.match(await page.locator('[data-field="parallel.pp"] .field-error').textContent(), /parallel\.pp \(3\) must divide the layers \(32\)/);
  assert.deepEqual(await pageScenario(page), before, 'the rejected degree is not applied');

  // HF Trainer runs no pipeline schedule: the core says so at parallel.pp.
  await page.fill('#f-parallel-pp', '4');
  await page.locator('#field-errors').waitFor({ state: 'hidden' });
  await page.selectOption('#f-framework-trainer', 'hf');
  await page.locator('[data-field="parallel.pp"] .field-error').waitFor();
  assert.match(await page.locator('[data-field="parallel.pp"] .field-error').textContent(), /framework\.trainer/);
  await page.selectOption('#f-framework-trainer', 'megatron');
  await page.locator('#field-errors').waitFor({ state: 'hidden' });

  // A split that does not match the stages is named at parallel.pp_layers, an element too.
  await page.fill('#f-parallel-pp_layers', '8,8,8');
  await page.locator('[data-field="parallel.pp_layers"] .field-error').waitFor();
  assert.equal(await page.locator('#f-parallel-pp_layers').getAttribute('aria-invalid'), 'true');
  assert.match(await page.locator('#field-errors').textContent(), /parallel\.pp_layers/);
  await page.fill('#f-parallel-pp_layers', '8,8,8,x');
  await page.locator('#field-errors:has-text("pp_layers[3]")').waitFor();
  assert.equal(await page.locator('#f-parallel-pp_layers').getAttribute('aria-invalid'), 'true');
  await page.fill('#f-parallel-pp_layers', '8,8,8,8');
  await page.locator('#field-errors').waitFor({ state: 'hidden' });
  assert.deepEqual((await pageScenario(page)).parallel.pp_layers, [8, 8, 8, 8]);
  await page.fill('#f-parallel-pp_layers', '');
  await page.waitForFunction(() => !('pp_layers' in window.__vramplan.scenario.parallel));

  // pp x vpp must divide the layers.
  await page.fill('#f-parallel-vpp', '3');
  await page.locator('[data-field="parallel.vpp"] .field-error').waitFor();
  assert.match(await page.locator('[data-field="parallel.vpp"] .field-error').textContent(), /parallel\.pp x parallel\.vpp \(12\) must divide the layers \(32\)/);
  await page.fill('#f-parallel-vpp', '2');
  await page.locator('#field-errors').waitFor({ state: 'hidden' });
  assert.equal((await pageScenario(page)).parallel.vpp, 2);
  assert.deepEqual(problems, []);
  await context.close();
});

test('the Megatron fields round-trip through the URL', async () => {
  const { page, problems, context } = await openPage(chrome.browser, `${server.base}/`);
  await change(page, () => page.selectOption('#f-framework-trainer', 'megatron'), 'trainer');
  await change(page, () => page.fill('#f-parallel-gpus', '16'), 'gpus 16');
  await change(page, () => page.fill('#f-parallel-pp', '4'), 'pp 4');
  await change(page, () => page.selectOption('#f-parallel-pp_schedule', 'gpipe'), 'gpipe');
  await change(page, () => page.fill('#f-parallel-pp_layers', '7,9,9,7'), 'pp_layers');
  await change(page, () => page.fill('#f-parallel-cp', '2'), 'cp 2');
  await change(page, () => page.selectOption('#f-parallel-cp_kind', 'ulysses'), 'ulysses');
  await change(page, () => page.selectOption('#f-framework-grad_reduce_in_fp32', 'false'), 'grad reduce bf16');
  const url = page.url();
  console.log(`# Megatron link: ${url.slice(url.indexOf('?'))}`);
  for (const k of ['framework.trainer=megatron', 'parallel.pp_schedule=gpipe', 'parallel.pp_layers=7,9,9,7', 'parallel.cp_kind=ulysses', 'framework.grad_reduce_in_fp32=false']) {
    assert.ok(url.includes(k), `${k} in ${url}`);
  }
  const want = await pageScenario(page);
  assert.deepEqual(want.parallel.pp_layers, [7, 9, 9, 7]);
  const other = await openPage(chrome.browser, url);
  assert.equal(await other.page.locator('#notice').isHidden(), true);
  assert.deepEqual(await pageScenario(other.page), want);
  assert.equal(await other.page.inputValue('#f-parallel-pp_layers'), '7,9,9,7');
  assert.equal(await other.page.inputValue('#f-parallel-cp_kind'), 'ulysses');
  assert.equal(await other.page.inputValue('#f-parallel-pp_schedule'), 'gpipe');
  assert.equal(await other.page.inputValue('#f-framework-grad_reduce_in_fp32'), 'false');
  assert.equal((await pageResult(other.page)).gpu.device_total_bytes, cli(want).gpu.device_total_bytes);
  // Expert tensor parallelism is offered once experts are split (an MoE model).
  assert.equal(await other.page.locator('#f-parallel-etp').isHidden(), true);
  assert.deepEqual([...problems, ...other.problems], []);
  await other.context.close();
  await context.close();
});

test('an MoE job with expert and expert-tensor parallelism', async () => {
  const { page, problems, context } = await openPage(chrome.browser,
    `${server.base}/?v=1&model=mistralai/Mixtral-8x7B-v0.1&train.method=full&framework.trainer=megatron&parallel.gpus=16&parallel.tp=2&parallel.ep=4&parallel.sequence_parallel=true`);
  assert.equal(await page.locator('#notice').isHidden(), true, await page.locator('#notice').textContent());
  assert.equal(await page.locator('#f-parallel-etp').isVisible(), true);
  assert.equal(await page.inputValue('#f-parallel-etp'), '2', 'etp defaults to tp');
  await change(page, () => page.fill('#f-parallel-etp', '1'), 'etp 1');
  const s = await pageScenario(page);
  assert.equal(s.parallel.etp, 1);
  assert.equal((await pageResult(page)).gpu.device_total_bytes, cli(s).gpu.device_total_bytes);
  assert.match(page.url(), /parallel\.etp=1/);
  assert.deepEqual(problems, []);
  await context.close();
});
