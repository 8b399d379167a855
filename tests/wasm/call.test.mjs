// The modules' one entry point, call(op, json): every op of the page module's table (the core ops)
// and of the full module's (every op: plan, import, export too) replies with the envelope and
// matches the native CLI's `vramplan call`; the older names are the same ops; the page module
// refuses the full module's ops with an unknown_op error that says where they are.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { loadModule, loadFullModule, CLI } from './load_module.mjs';

const mod = await loadModule();
const full = await loadFullModule();

const OPS = ['estimate', 'estimate_fast', 'summary', 'presets', 'gpus', 'schema', 'parse_config', 'version'];
const FULL_ONLY = ['plan', 'import', 'export'];
const ALL_OPS = ['estimate', 'estimate_fast', 'summary', 'presets', 'gpus', 'schema', 'parse_config', 'plan', 'version', 'import', 'export'];
const TRAIN = JSON.stringify({ model: 'meta-llama/Llama-3.1-8B', train: { method: 'qlora', micro_batch_size: 2 } });
const SERVE = JSON.stringify({ model: 'Qwen/Qwen2.5-0.5B', mode: 'inference', inference: { engine: 'vllm', max_model_len: 4096 } });
const CONFIG = JSON.stringify({ model_type: 'llama', hidden_size: 5120, intermediate_size: 13824, num_attention_heads: 40,
  num_hidden_layers: 40, vocab_size: 32000 });
const IMPORT = JSON.stringify({ format: 'auto', text: 'llama-server -m Qwen3-8B-Q4_K_M.gguf -c 8192 -fa on' });
const EXPORT = JSON.stringify({ to: 'axolotl', scenario: JSON.parse(TRAIN) });
const REQUEST = { estimate: TRAIN, estimate_fast: SERVE, summary: TRAIN, parse_config: CONFIG, plan: TRAIN, import: IMPORT, export: EXPORT };

// The module embeds the catalogues without their source notes (cmake/slim_catalogue.py: the same
// rule); everything else of the native catalogue is there, in the same order.
const NOTE_KEY = /^(about|source|sources|notes?)$|_(source|sources|notes?|observations)$/;
const withoutNotes = (entry) => Object.fromEntries(Object.entries(entry).filter(([k]) => !NOTE_KEY.test(k)));

function cliCall(op, input) {
  const r = spawnSync(CLI, ['call', op, '-'], { input, encoding: 'utf8' });
  return { code: r.status, json: JSON.parse(r.stdout) };
}

// The page's module is built without the field table's docs (core/src/scenario/fields.cpp, DOC):
// its schema is the native one without the fields' "description" keys.
function withoutDescriptions(node) {
  if (Array.isArray(node)) return node.map(withoutDescriptions);
  if (node === null || typeof node !== 'object') return node;
  return Object.fromEntries(Object.entries(node).filter(([k]) => k !== 'description').map(([k, v]) => [k, withoutDescriptions(v)]));
}

function matchesCli(module, ops, { fieldDocs = true } = {}) {
  for (const op of ops) {
    const request = REQUEST[op] ?? '';
    let r = JSON.parse(module.call(op, request));
    assert.equal(r.ok, true, `${op}: ${JSON.stringify(r.errors)}`);
    const native = cliCall(op, request);
    assert.equal(native.code, 0, op);
    if (op === 'gpus') native.json.gpus = native.json.gpus.map(withoutNotes);
    if (op === 'schema' && !fieldDocs) {
      native.json.schema = withoutDescriptions(native.json.schema);
      r = { ...r, schema: withoutDescriptions(r.schema) };
    }
    assert.deepEqual(r, native.json, op);
  }
}

test('every op of the page module replies with the envelope, as the native CLI does', () => matchesCli(mod, OPS, { fieldDocs: false }));

test('the page module\'s schema has no field docs; the full module\'s has them all', () => {
  const page = JSON.parse(mod.schema()), whole = JSON.parse(full.call('schema', '')).schema;
  const seqLen = (s) => s.properties.train.properties.seq_len;
  assert.equal(seqLen(page).description, undefined);
  assert.match(seqLen(whole).description, /tokens per sequence/);
  assert.equal(seqLen(page).maximum, seqLen(whole).maximum, 'types and ranges stay');
});

test('every op of the full module replies with the envelope, as the native CLI does', () => {
  matchesCli(full, ALL_OPS);
  assert.equal(full.version(), mod.version(), 'both modules come from one build of the core');
  assert.equal(full.plan(TRAIN), full.call('plan', TRAIN));
});

test('the page module leaves plan, import and export to the full module', () => {
  for (const op of FULL_ONLY) {
    const r = JSON.parse(mod.call(op, REQUEST[op]));
    assert.equal(r.ok, false, op);
    assert.equal(r.errors[0].code, 'unknown_op', op);
    assert.match(r.errors[0].message, /vramplan-full/, op);
  }
  assert.equal(mod.plan, undefined, 'no plan() alias in the page module');
});

test('the listing ops carry their payload under their name', () => {
  assert.ok(JSON.parse(mod.call('presets', '')).presets.find((p) => p.id === 'Qwen/Qwen2.5-0.5B').params === 494032768);
  assert.ok(JSON.parse(mod.call('gpus', '')).gpus.length >= 30);
  assert.equal(JSON.parse(mod.call('schema', '')).schema.title, 'vramplan scenario v1');
  assert.equal(JSON.parse(mod.call('version', '')).version, mod.version());
  assert.equal(JSON.parse(mod.call('parse_config', CONFIG)).params.total, 13015864320);
});

test('the older names are aliases of the ops', () => {
  assert.equal(mod.estimate(TRAIN), mod.call('estimate', TRAIN));
  assert.equal(mod.estimateFast(SERVE), mod.call('estimate_fast', SERVE));
  assert.equal(mod.estimateSummary(TRAIN), mod.call('summary', TRAIN));
  assert.equal(mod.parseHfConfig(CONFIG), mod.call('parse_config', CONFIG));
  assert.deepEqual(JSON.parse(mod.listPresets()), JSON.parse(mod.call('presets', '')).presets);
  assert.deepEqual(JSON.parse(mod.listGpus()), JSON.parse(mod.call('gpus', '')).gpus);
  assert.deepEqual(JSON.parse(mod.schema()), JSON.parse(mod.call('schema', '')).schema);
});

test('an unknown op and bad JSON are error values', () => {
  for (const op of ['', 'plans', 'Estimate', 'x'.repeat(10000)]) {
    const r = JSON.parse(mod.call(op, TRAIN));
    assert.equal(r.ok, false);
    assert.equal(r.errors[0].code, 'unknown_op');
    assert.equal(r.errors[0].field_path, 'op');
    for (const name of OPS) assert.ok(r.errors[0].message.includes(name), r.errors[0].message);
    assert.ok(r.errors[0].message.length < 400);
    const f = JSON.parse(full.call(op, TRAIN));
    assert.equal(f.errors[0].code, 'unknown_op');
    for (const name of ALL_OPS) assert.ok(f.errors[0].message.includes(name), f.errors[0].message);
  }
  for (const op of ['estimate', 'estimate_fast', 'summary', 'parse_config']) {
    for (const bad of ['', 'not json', '{"model":', '[1]']) {
      const r = JSON.parse(mod.call(op, bad));
      assert.equal(r.ok, false, `${op} ${bad}`);
      assert.ok(r.errors.length > 0 && typeof r.errors[0].code === 'string' && typeof r.errors[0].field_path === 'string');
    }
  }
});
