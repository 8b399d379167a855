// Link format v=1 (web/state.js), without a browser: types, arrays, inline configs, bad input.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './harness.mjs';
import { encodeScenario, decodeScenario, dropPath, packConfig, unpackConfig } from '../../web/state.js';

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
