// Link format v=1 (web/state.js), without a browser: types, arrays, inline configs, bad input.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './harness.mjs';
import zlib from 'node:zlib';
import { encodeScenario, decodeScenario, dropPath, packConfig, unpackConfig, scenarioJson, b64urlEncode } from '../../web/state.js';
import { CONFIG_MAX_BYTES, CFG_PARAM_MAX_CHARS, LINK_VALUE_MAX_CHARS, LimitError } from '../../web/limits.js';

const schema = JSON.parse(fs.readFileSync(path.join(ROOT, 'docs/scenario.schema.json'), 'utf8'));

test('round trip of typed values', async () => {
  const s = {
    model: 'meta-llama/Llama-3.1-8B', mode: 'train',
    train: { method: 'qlora', qlora_bits: 4, seq_len: 2048, gradient_checkpointing: 'selective', lora: { targets: ['q_proj', 'v_proj'], alpha: 16.5, modules_to_save: [] } },
    parallel: { fsdp: true, zero: 0 }, gpu: { name: 'My GPU & co', memory_bytes: 25769803776 },
  };
  const q = await encodeScenario(s, null, { ladder: 'Qwen2.5' });
  assert.match(q, /^v=1&model=meta-llama\/Llama-3\.1-8B&/);
  assert.match(q, /train\.lora\.targets=q_proj,v_proj/);
  assert.match(q, /gpu\.name=My%20GPU%20%26%20co/);
  const back = await decodeScenario(`?${q}`, schema);
  assert.deepEqual(back.problems, []);
  assert.deepEqual(back.scenario, s);
  assert.deepEqual(back.page, { v: '1', ladder: 'Qwen2.5' });
});

test('booleans, selective and all-linear', async () => {
  const { scenario } = await decodeScenario('?train.gradient_checkpointing=true&train.lora.targets=all-linear&parallel.fsdp=false', schema);
  assert.deepEqual(scenario, { train: { gradient_checkpointing: true, lora: { targets: 'all-linear' } }, parallel: { fsdp: false } });
});

test('defaults are not written', async () => {
  const d = { model: 'x', train: { method: 'lora', seq_len: 1024 } };
  assert.equal(await encodeScenario({ model: 'x', train: { method: 'lora', seq_len: 4096 } }, d), 'v=1&model=x&train.seq_len=4096');
});

test('inline config compresses and round-trips', async () => {
  const cfg = { model_type: 'llama', hidden_size: 4096, note: 'é ü 中'.repeat(200) };
  const packed = await packConfig(cfg);
  assert.match(packed, /^[A-Za-z0-9_-]+$/);
  assert.ok(packed.length < JSON.stringify(cfg).length / 4);
  assert.deepEqual(await unpackConfig(packed), cfg);
  const { scenario } = await decodeScenario(`?cfg=${packed}`, schema);
  assert.deepEqual(scenario.model, cfg);
});

test('bad links report problems and keep the rest', async () => {
  const { scenario, problems } = await decodeScenario('?v=9&cfg=%%%&nope=1&train.seq_len=abc&train.micro_batch_size=2', schema);
  assert.deepEqual(problems.map((p) => p.field_path), ['v', 'cfg', 'nope']);
  assert.equal(scenario.train.seq_len, 'abc', 'unconvertible values go to the core, which names them');
  assert.equal(scenario.train.micro_batch_size, 2);
  assert.equal(dropPath(scenario, 'train.seq_len'), true);
  assert.deepEqual(scenario, { train: { micro_batch_size: 2 } });
  assert.equal(dropPath(scenario, 'parallel.tp'), false);
});

// cfg= values built directly with zlib (the page's own packConfig is not the only way to make one).
const deflated = (text, level = 9) => b64urlEncode(new Uint8Array(zlib.deflateRawSync(Buffer.from(text), { level })));
const padded = (bytes) => { const head = '{"model_type":"llama","pad":"'; return `${head}${'a'.repeat(bytes - head.length - 2)}"}`; };

test('inline config limits: inflated size, cfg= length, streamed inflate', async () => {
  // Exactly at the limit: accepted; one byte more: refused.
  assert.equal(padded(CONFIG_MAX_BYTES).length, CONFIG_MAX_BYTES);
  assert.equal((await unpackConfig(deflated(padded(CONFIG_MAX_BYTES)))).model_type, 'llama');
  await assert.rejects(unpackConfig(deflated(padded(CONFIG_MAX_BYTES + 1))), (e) => e instanceof LimitError && /inflates to more than 128 KiB/.test(e.message));
  // A deflate bomb (100 MiB in a 136 KB link) is stopped at the limit, not inflated.
  const bomb = deflated(padded(100 * 1024 * 1024));
  assert.ok(bomb.length < CFG_PARAM_MAX_CHARS, 'the bomb passes the length check; the inflate limit stops it');
  const t = performance.now();
  await assert.rejects(unpackConfig(bomb), LimitError);
  const ms = performance.now() - t;
  console.log(`# 100 MiB deflate bomb (${bomb.length} chars) refused after ${ms.toFixed(1)} ms`);
  assert.ok(ms < 2000, `refused after ${ms} ms`);
  // Too long to be a config under the limit: refused before decoding (not even valid base64).
  await assert.rejects(unpackConfig('!'.repeat(CFG_PARAM_MAX_CHARS + 1)), (e) => e instanceof LimitError && /too long/.test(e.message));
  // An incompressible config just under the limit still fits the cfg= length limit.
  const noise = Buffer.from(Array.from({ length: CONFIG_MAX_BYTES }, (_, i) => 97 + ((i * 2654435761) >>> 28)));
  const text = `{"pad":"${noise.toString('latin1').slice(0, CONFIG_MAX_BYTES - 10)}"}`;
  assert.ok(deflated(text, 0).length <= CFG_PARAM_MAX_CHARS, 'stored (uncompressed) deflate of a config at the limit fits');
  assert.equal((await unpackConfig(deflated(text, 0))).pad.length, CONFIG_MAX_BYTES - 10);
  // Damaged streams are not LimitErrors (the page calls them damaged).
  await assert.rejects(unpackConfig(deflated('{"a":1}').slice(0, 4)), (e) => !(e instanceof LimitError));
});

test('decodeScenario refuses over-long link values and names them', async () => {
  const long = 'm'.repeat(LINK_VALUE_MAX_CHARS + 1);
  const q = `?model=${long}&train.seq_len=${'9'.repeat(5000)}&${'k'.repeat(50000)}=1&train.micro_batch_size=2&cfg=${deflated(padded(CONFIG_MAX_BYTES + 10))}`;
  const { scenario, problems } = await decodeScenario(q, schema);
  assert.deepEqual(scenario, { train: { micro_batch_size: 2 } });
  const byPath = Object.fromEntries(problems.map((p) => [p.field_path.slice(0, 20), p.message]));
  assert.match(byPath.model, /1,001 characters long \(at most 1000\)/);
  assert.match(byPath['train.seq_len'], /5,000 characters long/);
  assert.match(byPath.cfg, /inflates to more than/);
  const keyProblem = problems.find((p) => p.field_path.startsWith('kkk'));
  assert.match(keyProblem.message, /link parameter name of 50,000 characters/);
  assert.ok(keyProblem.field_path.length < 300, 'the long key is quoted cut short');
  // At the limit: kept.
  const ok = await decodeScenario(`?model=${'m'.repeat(LINK_VALUE_MAX_CHARS)}`, schema);
  assert.equal(ok.scenario.model.length, LINK_VALUE_MAX_CHARS);
});

test('scenarioJson is JSON.stringify with the inline config spliced in once', () => {
  const cfg = { model_type: 'llama', hidden_size: 64, nested: { a: [1, 2, { b: 'x"y' }] } };
  for (const s of [
    { model: cfg }, { model: cfg, train: { seq_len: 2048 }, gpu: { name: 'a"b', memory_bytes: 1 } }, { train: { method: 'lora' }, model: cfg },
    { model: 'meta-llama/Llama-3.1-8B', mode: 'inference' }, {},
  ]) assert.deepEqual(JSON.parse(scenarioJson(s)), JSON.parse(JSON.stringify(s)));
  assert.equal(scenarioJson('{"model":"x"}'), '{"model":"x"}', 'text is passed through');
});

test('integer lists (parallel.pp_layers) and the model-parallel fields round-trip typed', async () => {
  // The schema the page reads at run time (the CLI's), which has every field of the core it was built from.
  const { execFileSync } = await import('node:child_process');
  const { CLI } = await import('./harness.mjs');
  const live = JSON.parse(execFileSync(CLI, ['schema'], { encoding: 'utf8' }));
  const q = 'v=1&model=x&framework.trainer=megatron&parallel.pp=4&parallel.vpp=2&parallel.pp_schedule=gpipe&parallel.pp_layers=9,8,8,7&parallel.cp_kind=ulysses&parallel.etp=1';
  const back = await decodeScenario(`?${q}`, live);
  assert.deepEqual(back.problems, []);
  assert.deepEqual(back.scenario, {
    model: 'x', framework: { trainer: 'megatron' },
    parallel: { pp: 4, vpp: 2, pp_schedule: 'gpipe', pp_layers: [9, 8, 8, 7], cp_kind: 'ulysses', etp: 1 },
  });
  assert.equal(await encodeScenario(back.scenario, null), q);
  // An item that is not a number is passed on as text, for the core to name (parallel.pp_layers[1]).
  assert.deepEqual((await decodeScenario('?parallel.pp_layers=9,x', live)).scenario.parallel.pp_layers, [9, 'x']);
});
