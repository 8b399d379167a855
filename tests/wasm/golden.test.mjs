// The WASM module gives the golden results byte for byte (tests/golden/, checked natively by
// tests/core/golden_test.cpp): every scenario of the golden set (~2 s).
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { loadModule, ROOT } from './load_module.mjs';

const GOLDEN = path.join(ROOT, 'tests/golden');

const mod = await loadModule();

function goldenCases() {
  const dir = path.join(GOLDEN, 'scenarios');
  const cases = [];
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl')).sort()) {
    const group = file.slice(0, -'.jsonl'.length);
    for (const line of fs.readFileSync(path.join(dir, file), 'utf8').split('\n')) {
      if (!line) continue;
      const entry = JSON.parse(line);
      // The scenario exactly as written, as golden_test.cpp passes it (JSON.stringify would turn
      // an inline config's 1.0 into 1, which the result echoes).
      const key = ', "scenario": ';
      const text = entry.text ?? line.slice(line.indexOf(key) + key.length, -1);
      cases.push({ group, name: entry.name, text });
    }
  }
  return cases;
}

// As in golden_test.cpp: the build id in "version" is written as <build> in the golden files.
function normalizeVersion(out) {
  const version = mod.version();
  return out.replace(`"version":"${version}"`, `"version":"${version.split('+')[0]}+<build>"`);
}

test('estimate gives the golden bytes on every golden scenario', () => {
  const cases = goldenCases();
  assert.ok(cases.length >= 300, `only ${cases.length} golden scenarios`);
  const differing = [];
  for (const c of cases) {
    const want = fs.readFileSync(path.join(GOLDEN, 'expected', c.group, `${c.name}.json`), 'utf8');
    const got = `${normalizeVersion(mod.estimate(c.text))}\n`;
    if (got !== want) {
      let at = 0;
      while (at < want.length && want[at] === got[at]) at += 1;
      differing.push(`${c.name}: first difference at byte ${at}: expected …${want.slice(Math.max(0, at - 40), at + 60)}… got …${got.slice(Math.max(0, at - 40), at + 60)}…`);
    }
  }
  assert.deepEqual(differing, [], `${differing.length} of ${cases.length} golden results differ in WASM`);
});
