// A/B timing of the `plan` op in two builds of vramplan-full (e.g. a copy of build-wasm/site made
// before a change, and build-wasm/site after it), loaded into one node process with their calls
// alternated, so that the machine's other load weighs on both alike (on a shared machine that is
// the only fair comparison; absolute times there vary 2x from run to run). Prints per build the
// fastest and median wall and CPU time of the runs, and the median of the last ten runs (after
// V8 has tiered the hot functions up, bench/plan_wasm_timing.mjs).
// Usage: node [--no-liftoff] bench/plan_wasm_ab.mjs SITE_A SITE_B [runs, default 40] [8b|70b]
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [siteA, siteB] = process.argv.slice(2, 4).map((p) => path.resolve(p));
const RUNS = Number(process.argv[4] ?? 40);
const REQUESTS = {
  '8b': '{"scenario":{"model":"meta-llama/Llama-3.1-8B","mode":"train","train":{"method":"lora","precision":"bf16","micro_batch_size":4,"seq_len":4096},"gpu":"rtx-4090-24gb"},"max_plans":8}',
  '70b': '{"scenario":{"model":"meta-llama/Meta-Llama-3-70B","mode":"train","train":{"method":"full","precision":"bf16"},"parallel":{"gpus":8,"zero":3},"gpu":"h100-sxm-80gb"},"max_plans":8}',
};
const request = REQUESTS[process.argv[5] ?? '8b'];
const load = async (site) => {
  const { default: create } = await import(pathToFileURL(path.join(site, 'vramplan-full.mjs')).href);
  return create({ wasmBinary: fs.readFileSync(path.join(site, 'vramplan-full.wasm')) });
};
const mods = [await load(siteA), await load(siteB)];
const strip = (reply) => { const r = JSON.parse(reply); delete r.search; return JSON.stringify(r); };
const first = mods.map((m) => m.call('plan', request));  // the warm-up call
const times = mods.map(() => ({ wall: [], cpu: [] }));
for (let r = 0; r < RUNS; ++r) {
  for (let i = 0; i < mods.length; ++i) {
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    mods[i].call('plan', request);
    const t1 = process.hrtime.bigint();
    const c = process.cpuUsage(c0);
    times[i].wall.push(Number(t1 - t0) / 1e6);
    times[i].cpu.push((c.user + c.system) / 1e3);
  }
}
const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const f = (x) => x.toFixed(1);
times.forEach((t, i) => {
  console.log(`${[siteA, siteB][i]}: wall fastest ${f(Math.min(...t.wall))} median ${f(median(t.wall))} ms, ` +
              `cpu fastest ${f(Math.min(...t.cpu))} median ${f(median(t.cpu))} ms, last ten: wall ${f(median(t.wall.slice(-10)))} cpu ${f(median(t.cpu.slice(-10)))} ms; ` +
              `estimates ${JSON.parse(first[i]).search.estimates}`);
});
console.log(`replies identical but for search: ${strip(first[0]) === strip(first[1])}`);
