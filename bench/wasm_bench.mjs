// Node benchmark of the built WASM module (build-wasm/site): microseconds per call, median of
// five repetitions, each the mean over a timed loop; wall time and this process's CPU time (the
// figure comparable to Google Benchmark's CPU column on a shared machine).
// Usage: node bench/wasm_bench.mjs [path/to/site]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SITE = process.argv[2] ? path.resolve(process.argv[2]) : path.join(ROOT, 'build-wasm/site');
const { default: createVramplan } = await import(pathToFileURL(path.join(SITE, 'vramplan.mjs')).href);
const m = await createVramplan({ wasmBinary: fs.readFileSync(path.join(SITE, 'vramplan.wasm')) });

// The same target scenarios as bench/estimate_bench.cpp (kTargets).
const TARGETS = {
  '70B LoRA': '{"model":"meta-llama/Llama-3.1-70B-Instruct","mode":"train","train":{"method":"lora","precision":"amp_bf16","micro_batch_size":1,"seq_len":2048}}',
  '405B full': '{"model":"meta-llama/Llama-3.1-405B","mode":"train","train":{"method":"full","precision":"bf16","optimizer":"adamw","gradient_checkpointing":true,"seq_len":4096},"parallel":{"gpus":8,"zero":3}}',
};

function timeIt(fn, minMs = 200) {
  for (let i = 0; i < 200; ++i) fn();  // warm-up (JIT, allocator)
  const wall = [], cpu = [];
  for (let r = 0; r < 5; ++r) {
    let n = 0;
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    let t1 = t0;
    while (Number(t1 - t0) < minMs * 1e6) {
      for (let i = 0; i < 50; ++i) fn();
      n += 50;
      t1 = process.hrtime.bigint();
    }
    const c = process.cpuUsage(c0);
    wall.push(Number(t1 - t0) / 1e3 / n);
    cpu.push((c.user + c.system) / n);
  }
  const median = (a) => a.sort((x, y) => x - y)[2];
  return [median(wall), median(cpu)];
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
console.log(`${'call'.padEnd(34)} ${'wall us'.padStart(9)} ${'cpu us'.padStart(9)}   (medians of 5)`);
for (const [name, [wall, cpu]] of rows) console.log(`${name.padEnd(34)} ${wall.toFixed(2).padStart(9)} ${cpu.toFixed(2).padStart(9)}`);
