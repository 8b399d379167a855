// Node benchmark of the built WASM module (build-wasm/site): microseconds per call, median of
// five repetitions, each the mean over a timed loop. Usage: node bench/wasm_bench.mjs
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SITE = path.join(ROOT, 'build-wasm/site');
const { default: createVramplan } = await import(pathToFileURL(path.join(SITE, 'vramplan.mjs')).href);
const m = await createVramplan({ wasmBinary: fs.readFileSync(path.join(SITE, 'vramplan.wasm')) });

// The same target scenarios as bench/estimate_bench.cpp (kTargets).
const TARGETS = {
  '70B LoRA': '{"model":"meta-llama/Llama-3.1-70B-Instruct","mode":"train","train":{"method":"lora","precision":"amp_bf16","micro_batch_size":1,"seq_len":2048}}',
  '405B full': '{"model":"meta-llama/Llama-3.1-405B","mode":"train","train":{"method":"full","precision":"bf16","optimizer":"adamw","gradient_checkpointing":true,"seq_len":4096},"parallel":{"gpus":8,"zero":3}}',
};

function timeIt(fn, minMs = 200) {
  for (let i = 0; i < 200; ++i) fn();  // warm-up (JIT, allocator)
  const reps = [];
  for (let r = 0; r < 5; ++r) {
    let n = 0;
    const t0 = process.hrtime.bigint();
    let t1 = t0;
    while (Number(t1 - t0) < minMs * 1e6) {
      for (let i = 0; i < 50; ++i) fn();
      n += 50;
      t1 = process.hrtime.bigint();
    }
    reps.push(Number(t1 - t0) / 1e3 / n);
  }
  reps.sort((a, b) => a - b);
  return reps[2];
}

const rows = [];
for (const [name, json] of Object.entries(TARGETS)) {
  const check = JSON.parse(m.estimateSummary(json));
  if (!check.ok) throw new Error(`${name}: ${JSON.stringify(check.errors)}`);
  rows.push([`estimateSummary ${name}`, timeIt(() => m.estimateSummary(json))]);
  if (typeof m.call === 'function') rows.push([`call('summary') ${name}`, timeIt(() => m.call('summary', json))]);
  rows.push([`estimateFast ${name}`, timeIt(() => m.estimateFast(json))]);
  rows.push([`estimate ${name}`, timeIt(() => m.estimate(json))]);
}
for (const [name, us] of rows) console.log(`${name.padEnd(34)} ${us.toFixed(2).padStart(9)} us (median of 5)`);
