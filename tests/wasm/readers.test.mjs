// Readers on demand (docs/web.md): the page's module links only the readers of the presets'
// families; a config of another family answers `reader_on_demand` there, and vramplan-full, which
// the page then loads, reads it exactly. Checked against every sourced count row.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { loadModule, loadFullModule, ROOT } from './load_module.mjs';

const page = await loadModule();
const full = await loadFullModule();
const call = (m, op, text) => JSON.parse(m.call(op, text));

const rows = ['param_counts.json', 'param_counts_hybrid.json'].flatMap((f) =>
  JSON.parse(fs.readFileSync(path.join(ROOT, 'tests/fixtures', f), 'utf8')).models);

test('every preset is read by the page module itself', () => {
  const presets = call(page, 'presets', '').presets;
  assert.ok(presets.length >= 40);
  for (const p of presets) {
    const r = call(page, 'estimate', JSON.stringify({ model: p.id }));
    assert.equal(r.ok, true, `${p.id}: ${JSON.stringify(r.errors)}`);
  }
});

test('a family read on demand: the page module says so, vramplan-full counts it exactly', () => {
  const onDemand = new Set();
  let inPage = 0;
  for (const row of rows) {
    const text = JSON.stringify(row.config);
    const fromPage = call(page, 'parse_config', text);
    const fromFull = call(full, 'parse_config', text);
    assert.equal(fromFull.ok, true, `${row.id}: ${JSON.stringify(fromFull.errors)}`);
    // The hybrid rows' params count the MTP layer the model does not load (hybrid_param_count_test.cpp).
    assert.equal(fromFull.params.total + (row.not_loaded_params ?? 0), row.params, row.id);
    if (fromPage.ok) {
      inPage++;
      assert.deepEqual(fromPage, fromFull, row.id);
      continue;
    }
    assert.equal(fromPage.errors.length, 1, row.id);
    const [e] = fromPage.errors;
    assert.equal(e.code, 'reader_on_demand', `${row.id}: ${e.message}`);
    assert.match(e.field_path, /model_type$/, row.id);
    const type = /model_type "([^"]+)"/.exec(e.message)?.[1];
    assert.ok(type === row.config.model_type || type === row.config.text_config?.model_type, `${row.id}: ${e.message}`);
    onDemand.add(type);
  }
  // Both kinds are exercised: the presets' families in the page, the 2021-2023 decoders (BLOOM,
  // OPT, GPT-J...) and the other families without a preset on demand.
  assert.ok(inPage >= 100, `${inPage} rows read in the page module`);
  for (const type of ['bloom', 'opt', 'gptj', 'mpt', 'mamba', 'dbrx', 'internlm2', 'kimi_linear']) {
    assert.ok(onDemand.has(type), `${type} is read on demand (${[...onDemand].join(', ')})`);
  }
});

test('the estimate op answers reader_on_demand too, and vramplan-full estimates', () => {
  const bloom = rows.find((r) => r.config.model_type === 'bloom');
  const text = JSON.stringify({ model: bloom.config, train: { method: 'lora' } });
  const fromPage = call(page, 'estimate', text);
  assert.equal(fromPage.ok, false);
  assert.equal(fromPage.errors[0].code, 'reader_on_demand');
  assert.equal(fromPage.errors[0].field_path, 'model.model_type');
  const fromFull = call(full, 'estimate', text);
  assert.equal(fromFull.ok, true, JSON.stringify(fromFull.errors));
  assert.equal(fromFull.params.total, bloom.params);
});
