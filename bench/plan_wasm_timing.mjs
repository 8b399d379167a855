// Node timing of the planner in the built WASM module that carries it (build-wasm/site/vramplan-full): the whole `plan` op on
// the benchmark's two scenarios (bench/estimate_bench.cpp kPlans: 8B LoRA batch 4 x 4096 on an
// RTX 4090, 70B full ZeRO-3 on 8x H100), each run timed alone after one warm-up call; prints
// the fastest and the median of the runs, wall time and this process's CPU time, and the median
// of the first ten and of the last ten runs: V8 runs a function in its baseline compiler
// (Liftoff) until the function has used its tiering budget, then in TurboFan code, so the first
// calls of a fresh module are slower than later ones (`node --no-liftoff` compiles everything
// with TurboFan at once: the first ten then equal the last ten, but without the baseline tier's
// feedback TurboFan inlines less and the steady state is slower; docs/planner.md, "Speed").
// Usage: node [--no-liftoff] bench/plan_wasm_timing.mjs [path/to/site] [runs, default 30] [offload]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SITE = process.argv[2] ? path.resolve(process.argv[2]) : path.join(ROOT, 'build-wasm/site');
const RUNS = Math.max(20, Number(process.argv[3] ?? 30));
const { default: createVramplan } = await import(pathToFileURL(path.join(SITE, 'vramplan-full.mjs')).href);
const m = await createVramplan({ wasmBinary: fs.readFileSync(path.join(SITE, 'vramplan-full.wasm')) });

const PLANS = {
  '8B LoRA b4 4k, RTX 4090': '{"scenario":{"model":"meta-llama/Llama-3.1-8B","mode":"train","train":{"method":"lora","precision":"bf16","micro_batch_size":4,"seq_len":4096},"gpu":"rtx-4090-24gb"},"max_plans":8}',
  '70B full ZeRO-3, 8x H100': '{"scenario":{"model":"meta-llama/Meta-Llama-3-70B","mode":"train","train":{"method":"full","precision":"bf16"},"parallel":{"gpus":8,"zero":3},"gpu":"h100-sxm-80gb"},"max_plans":8}',
};
// The same with the activation-offload lever (`levers.activation_offload: true`, off by default:
// it doubles the training search).
if (process.argv[4] === 'offload') {
  for (const k of Object.keys(PLANS)) PLANS[k] = PLANS[k].replace('"max_plans":8', '"max_plans":8,"levers":{"activation_offload":true}');
}

const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const ms = (x) => x.toFixed(1).padStart(8);
console.log(`${'plan'.padEnd(28)} ${'min ms'.padStart(8)} ${'median'.padStart(8)} ${'first10'.padStart(8)} ${'last10'.padStart(8)} ${'cpu min'.padStart(8)} ${'cpu med'.padStart(8)}  estimates  (${RUNS} runs, wall ms unless cpu)`);
for (const [name, request] of Object.entries(PLANS)) {
  const reply = JSON.parse(m.call('plan', request));
  if (!reply.ok) throw new Error(`${name}: ${JSON.stringify(reply.errors)}`);
  const wall = [], cpu = [];
  for (let r = 0; r < RUNS; ++r) {
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    m.call('plan', request);
    const t1 = process.hrtime.bigint();
    const c = process.cpuUsage(c0);
    wall.push(Number(t1 - t0) / 1e6);
    cpu.push((c.user + c.system) / 1e3);
  }
  console.log(`${name.padEnd(28)} ${ms(Math.min(...wall))} ${ms(median(wall))} ${ms(median(wall.slice(0, 10)))} ${ms(median(wall.slice(-10)))} ${ms(Math.min(...cpu))} ${ms(median(cpu))}  ${reply.search.estimates}`);
}
