// The form's help text states bytes per trainable parameter for the optimizer states; the core
// (core/src/train/optimizer.cpp: AdamW's exp_avg + exp_avg_sq in the parameters' dtype, plus the
// fp32 master copy of mixed precision) must compute exactly what the help says, per precision mode.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FIELDS } from '../../web/fields.js';
import { loadModule } from '../wasm/load_module.mjs';

const help = FIELDS.find((f) => f.path === 'train.optimizer').help;
const stated = (re) => { const m = re.exec(help); assert.ok(m, `the help states ${re}: ${help}`); return Number(m[1]); };

test('the AdamW help says what the estimate computes, per precision mode', async () => {
  const core = await loadModule();
  const perParam = (train) => {
    const r = JSON.parse(core.estimate(JSON.stringify({ model: 'meta-llama/Llama-3.1-8B', train: { optimizer: 'adamw', ...train } })));
    assert.equal(r.ok, true, JSON.stringify(r.errors));
    return r.gpu.breakdown.optimizer_states / r.params.trainable;
  };
  const schemaDefault = JSON.parse(core.estimate(JSON.stringify({ model: 'meta-llama/Llama-3.1-8B' }))).scenario.train.precision;
  const pure = stated(/(\d+) B with pure bf16\/fp16 \(the default\)/);
  assert.equal(schemaDefault, 'bf16', 'the help calls pure bf16 the default');
  for (const precision of ['bf16', 'fp16']) assert.equal(perParam({ method: 'full', precision }), pure, precision);
  const wide = stated(/(\d+) B with fp32 or AMP/);
  for (const precision of ['fp32', 'amp_bf16', 'amp_fp16']) assert.equal(perParam({ method: 'full', precision }), wide, precision);
  const mixed = stated(/(\d+) B with mixed/);
  for (const precision of ['mixed_bf16', 'mixed_fp16']) assert.equal(perParam({ method: 'full', precision }), mixed, precision);
  const adapters = stated(/fp32 LoRA adapters \(the default\) (\d+) B/);
  assert.equal(perParam({ method: 'lora' }), adapters, 'LoRA with fp32 adapters under bf16');
  const eightBit = stated(/8-bit AdamW ~(\d+) B/);
  assert.ok(Math.abs(perParam({ method: 'full', optimizer: 'adamw_8bit' }) - eightBit) < 0.1, '8-bit AdamW');
  assert.equal(perParam({ method: 'full', optimizer: 'sgd' }), 0, 'SGD keeps no state');
});

// The page's module carries no field docs (core/src/scenario/fields.cpp, DOC): the form's help is
// the only explanation a field gets, so every field it shows needs one.
test('every field the form shows has its own help', () => {
  const missing = FIELDS.filter((f) => typeof f.help !== 'string' || f.help.trim() === '').map((f) => f.path);
  assert.deepEqual(missing, []);
});
